"""The `codex` model's specification: its parameters (the documented ambiguities of Codex app-server
0.171.0, with the reading the pinned build takes as default), its bug variants and the property each must
be caught by, and its timing profile. `steersim.models.codex.SPEC` puts them together with the model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.core.registry import Bug, Param, Reading

PARAMS = (
    Param("turns", 2, "turn/start requests the client sends", low=1, high=3),
    Param("steers", 2, "well-formed turn/steer requests the client sends, each naming the latest turn (active, or "
          "ended: then it is refused no-active-turn)", low=0, high=4),
    Param("tool_calls", 1, "exec_command calls the model may make in one turn", low=0, high=2),
    Param("interrupts", 1, "turn/interrupt requests the client sends", low=0, high=2),
    Param("bad_steers", True, "the client also sends a stale, a bogus and an empty steer to the active turn"),
    Param("cautious_interrupt", False, "the client sends turn/interrupt only once every steer it had acknowledged "
          "has its userMessage item (a client policy, not Codex's)"),
    Param("start_while_active", "steer", "turn/start while a turn is active: `steer` adds its input to that turn "
          "(TurnStartParams: \"ignored when this request adds input to an active turn\") or `reject` refuses it",
          choices=("steer", "reject")),
    Param("preempt_stream", True, "a steer that arrives while the model streams ends that sampling request at "
          "once and Codex samples again with the steer (false: the steer waits for the response to end)"),
    Param("interrupt_pending", "persist", "accepted steers not yet written when the turn is interrupted: "
          "`persist` writes them into the interrupted turn (the next turn's request carries them), `carry` keeps "
          "them for the next turn/start", choices=("persist", "carry")),
    Param("tool_on_interrupt", "runs_on", "a command running when the turn is interrupted: `runs_on` completes "
          "after turn/completed (\"this does not terminate background terminals\"), `stops` completes before it",
          choices=("runs_on", "stops")),
)

BUGS = (
    Bug("drop-pending-on-interrupt", "an interrupt discards the acknowledged steers Codex has not written yet",
        "acknowledged-steer-persisted", {"bad_steers": False}),
    Bug("abandon-streaming-item", "an abandoned stream (a steer preempts it, or an interrupt) leaves its "
        "agentMessage item started and never completed", "started-items-complete", {"bad_steers": False}),
    Bug("record-newest-first", "steers acknowledged together are written newest first", "steers-in-acceptance-order",
        {"tool_calls": 1, "bad_steers": False}),
    Bug("accept-stale-turn-id", "turn/steer accepts an expectedTurnId naming an earlier turn",
        "steer-preconditions", {"bad_steers": True, "steers": 0, "interrupts": 0}),
    Bug("end-turn-with-pending", "the turn completes at the end of a response although a steer is waiting to be "
        "written", "no-lost-steers", {"interrupts": 0, "bad_steers": False}),
    Bug("output-request-keeps-index", "the model request that carries a command's output keeps the number of the "
        "request that asked for the command, so a second command of the turn shows the first one's call id",
        "requests-numbered", {"interrupts": 0, "bad_steers": False}),
    Bug("record-steer-twice", "a steer is written into the thread twice", "ordered-history",
        {"interrupts": 0, "bad_steers": False}),
    Bug("start-while-active-starts-turn", "turn/start while a turn is active starts a second turn",
        "one-active-turn", {"steers": 0, "interrupts": 0, "bad_steers": False}),
    Bug("end-turn-before-tool-output", "a turn whose model ran a command may complete once the command ends, "
        "without a model request carrying its output", "tool-output-sent-back",
        {"steers": 0, "interrupts": 0, "bad_steers": False}),
    Bug("accept-empty-steer", "turn/steer acknowledges a steer whose input is empty", "steer-preconditions",
        {"bad_steers": True, "steers": 0, "interrupts": 0}),
    Bug("write-steer-without-item", "a steer written at a sampling boundary enters the thread (the next request "
        "carries it, thread/read returns it) without a userMessage item", "messages-shown-as-items",
        {"interrupts": 0, "bad_steers": False}),
    Bug("interrupt-keeps-pending", "an interrupt leaves the acknowledged steers Codex has not written for the next "
        "turn/start, although the pinned build writes them before turn/completed", "acknowledged-steer-persisted",
        {"bad_steers": False}),
    Bug("forget-running-tool", "an interrupt reports the running command completed and drops it, so its real "
        "result never arrives", "paired-tool-results",
        {"steers": 0, "turns": 1, "bad_steers": False}),
    Bug("complete-command-still-running", "an interrupt shows the running command's item/completed although the "
        "command runs on (\"this does not terminate background terminals\"), and its real end later shows nothing",
        "facts-tell-the-step", {"steers": 0, "turns": 1, "bad_steers": False}),
    Bug("interrupt-drops-streaming-item", "an interrupt while the model streams ends the turn without the "
        "agentMessage item's item/completed: the client never sees the item end", "items-shown-as-open",
        {"steers": 0, "turns": 1, "bad_steers": False}),
    Bug("interrupt-stops-command", "turn/interrupt terminates the running command, whose item/completed comes "
        "before turn/completed, although the protocol says an interrupt does not terminate background terminals",
        "command-at-interrupt", {"steers": 0, "turns": 1, "bad_steers": False}),
)

DEFAULT_TIMING: Mapping[str, Any] = {
    "default": {"dist": "exponential", "mean": 0.05},
    "client.steer": {"dist": "exponential", "mean": 1.0},
    "client.interrupt": {"dist": "exponential", "mean": 3.0},
    "client.turn_start": {"dist": "exponential", "mean": 2.0},
    "model.text_delta": {"dist": "lognormal", "median": 0.6, "sigma": 0.5},
    "model.text_done": {"dist": "lognormal", "median": 1.5, "sigma": 0.5},
    "tool.finish": {"dist": "lognormal", "median": 1.0, "sigma": 1.0},
}


def kinds_not_enabled(params: Mapping[str, Any]) -> dict[str, str]:
    """Action kinds these parameters cannot fire, with what enables each: without bad steers the client
    sends only well-formed ones (each bad steer triples the client's choices, which the default
    check still affords)."""
    return {} if params["bad_steers"] else {"client.bad_steer": "bad_steers=true"}

READINGS = (
    Reading({"bad_steers": False, "tool_on_interrupt": "stops"},
            "a command running at turn/interrupt completes before turn/completed"),
    Reading({"bad_steers": False, "interrupt_pending": "carry"},
            "accepted steers not yet written at turn/interrupt wait for the next turn/start"),
    Reading({"bad_steers": False, "preempt_stream": False},
            "a steer waits for the model's response to end instead of cutting its stream"),
    Reading({"bad_steers": False, "start_while_active": "reject"},
            "turn/start while a turn is active is refused instead of adding its input to that turn"),
    Reading({"bad_steers": False, "cautious_interrupt": True},
            "the client interrupts only once every acknowledged steer has its userMessage item"),
)
