"""The `claude-code` model's specification: its parameters (the ambiguities of Claude Code 2.1.332's
message queue, with the reading the pinned build takes as default), its bug variants and the property each
must be caught by, and its timing profile. `steersim.models.claude_code.SPEC` puts them together."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

from steersim.core.registry import Bug, Param, Reading

PRIORITIES = ("now", "next", "later", "default")

PARAMS = (
    Param("messages", 3, "user messages the client sends on stdin (the first starts the first turn)", low=1, high=4),
    Param("priorities", "now,next,later", "the priorities the client may give a message, comma-separated in this "
          "order: now, next, later, default (no priority field: the session's own default)",
          choices=tuple(",".join(c) for n in range(1, 5) for c in combinations(PRIORITIES, n))),
    Param("tool_calls", 1, "Bash tool calls the model may make in one turn", low=0, high=2),
    Param("interrupts", 1, "interrupt control requests the client sends (each while a turn runs)", low=0, high=2),
    Param("cancel_queued", False, "the client's interrupts set cancel_queued (the SDK's Stop): the queued "
          "messages are cancelled too, and the response lists them under cancelled"),
    Param("default_priority", "next", "what a message without a priority field is: the SDK says \"omit it for "
          "the session's own default\"; the pinned build treats it as `next`", choices=("next", "later")),
    Param("batch_turn_start", True, "a turn that starts takes in every waiting message of the highest priority "
          "waiting, as one prompt (the pinned build joins their texts with newlines), not only the oldest"),
    Param("now_during_tool", "waits", "a `now` message that arrives while the Bash tool runs: `waits` lets the "
          "command end and then stops the turn (the pinned build: harness/repro/now_waits_for_running_command.py), "
          "`stops` ends the command at once as an interrupt does", choices=("waits", "stops")),
)

BUGS = (
    Bug("interrupt-drops-queue", "an interrupt also discards the messages still waiting in the queue, though "
        "its response lists them as still_queued", "no-lost-steers"),
    Bug("interrupt-forgets-tool-result", "an interrupt while the Bash tool runs ends the turn without a "
        "tool_result for the call", "paired-tool-results", {"messages": 1}),
    Bug("later-joins-turn", "a `later` message joins the running turn at a tool result instead of waiting for "
        "its end", "later-waits-for-turn-end", {"interrupts": 0}),
    Bug("next-waits-for-turn-end", "a `next` message waits for the turn to end instead of joining it at the "
        "next tool result", "next-joins-at-tool-result", {"interrupts": 0}),
    Bug("now-joins-turn", "a `now` message joins the running turn at a tool result instead of stopping it",
        "now-starts-own-turn", {"interrupts": 0}),
    Bug("dequeue-newest-first", "a turn starts with the newest waiting message of the highest priority, not the "
        "oldest", "ordered-history", {"interrupts": 0, "tool_calls": 0}),
    Bug("interrupt-cancels-queue", "an interrupt cancels the queued messages although the client did not set "
        "cancel_queued", "interrupt-cancels-queue-iff-asked"),
    Bug("now-ends-running-command", "a `now` message ends the running Bash command at once although the pinned "
        "build lets it end (now_during_tool=waits)", "now-during-tool", {"interrupts": 0}),
    Bug("turn-start-takes-one", "a starting turn takes only the oldest waiting message of the highest priority, "
        "although batch_turn_start", "turn-start-takes-waiting", {"interrupts": 0, "tool_calls": 0}),
    Bug("joined-message-not-completed", "a message that joined the turn at a tool result is never reported "
        "completed when the turn ends", "turn-messages-settled", {"interrupts": 0}),
    Bug("interrupted-command-result-real", "the tool_result Claude Code writes for a command an interrupt ended "
        "is marked as the command's own output", "synthetic-iff-command-ended", {"messages": 1}),
    Bug("message-ids-from-zero", "the messages are named from m0, not in the harness's renaming m1, m2, ...",
        "ids-in-order", {"messages": 1, "interrupts": 0, "tool_calls": 0}),
    Bug("request-carries-only-new", "a model request carries only the messages no request carried yet, not the "
        "conversation so far", "request-carries-conversation", {"interrupts": 0}),
    Bug("default-taken-as-next", "a message sent without a priority field is queued as `next` although the "
        "session's own default is `later`", "queued-as-sent",
        {"priorities": "now,next,later,default", "default_priority": "later", "interrupts": 0}),
    Bug("interrupts-uncounted", "the client's interrupts are not counted, so it interrupts more often than "
        "interrupts allows", "within-parameters", {"messages": 1}),
)

DEFAULT_TIMING: Mapping[str, Any] = {
    "default": {"dist": "exponential", "mean": 0.05},
    "client.send": {"dist": "exponential", "mean": 1.0},
    "client.interrupt": {"dist": "exponential", "mean": 3.0},
    "model.text": {"dist": "lognormal", "median": 0.6, "sigma": 0.5},
    "model.end": {"dist": "lognormal", "median": 1.5, "sigma": 0.5},
    "model.tool_use": {"dist": "lognormal", "median": 0.6, "sigma": 0.5},
    "model.tool_input": {"dist": "lognormal", "median": 0.4, "sigma": 0.5},
    "tool.finish": {"dist": "lognormal", "median": 1.0, "sigma": 1.0},
}

def priorities(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The client's priorities (the parameter's choices spell them in the order of PRIORITIES)."""
    return tuple(str(params["priorities"]).split(","))


def kinds_not_enabled(params: Mapping[str, Any]) -> dict[str, str]:
    """Action kinds these parameters cannot fire, with what enables each."""
    out: dict[str, str] = {}
    if params["interrupts"] == 0:
        out["client.interrupt"] = "interrupts>=1"
    if params["tool_calls"] == 0:
        for kind in ("model.tool_use", "model.tool_input", "tool.finish", "cli.tool_result", "cli.request"):
            out[kind] = "tool_calls>=1"
    if "now" not in priorities(params):
        out["cli.stop_for_now"] = "priorities with now"
    return out

READINGS = (
    Reading({"cancel_queued": True}, "interrupts cancel the queued messages too, as the SDK's Stop does"),
    Reading({"batch_turn_start": False}, "a starting turn takes only the oldest waiting message"),
    Reading({"now_during_tool": "stops"}, "a `now` message ends a running Bash command at once"),
    Reading({"priorities": "now,next,later,default", "default_priority": "later"},
            "messages may omit the priority, and the session's own default is `later`"),
)
