"""Codex's own promises about steering, as properties over the model's state, and their vacuity guards.

The core invariants already demand that an accepted steer reaches the model exactly once or the client is
told it did not (`no-lost-steers`), that the thread takes each message once and steers in acceptance order
(`ordered-history`), one active turn and paired tool results. These add what Codex's protocol says on top:
what `turn/steer` acknowledged is in the thread, every item it started completes, Codex writes steers in
the order it accepted them, and it accepts only steers that name the active turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from steersim.core.model import Action, Always, Event, Property, Sometimes
from steersim.models.codex import facts as codex_facts
from steersim.models.codex import protocol as P
from steersim.models.codex.state import (
    BOUNDARY,
    EMPTY_INPUT,
    IDLE,
    INTERRUPTED,
    NO_ACTIVE_TURN,
    SAMPLING,
    THREAD,
    TOOL,
    TURN_MISMATCH,
    CodexState,
)


def persisted(s: CodexState, carry: bool) -> bool:
    """Every acknowledged steer is in the thread's history, or still waiting to be written there; with no
    turn active, only `interrupt_pending=carry` lets one wait (for the next turn/start): the pinned build
    writes an interrupted turn's steers before its turn/completed."""
    waiting = s.pending if carry or s.phase != IDLE else ()
    return all(m in s.history or m in waiting for m in s.accepted)


def items_complete(s: CodexState) -> bool:
    """No turn ends with an item it started still open (a command the interrupt let run on is apart)."""
    return s.phase != IDLE or not s.open_items


def items_as_shown(s: CodexState, a: Action, t: CodexState, events: Sequence[Event]) -> bool:
    """The agentMessage items a step starts and completes are exactly the ones it opens and closes, in that
    order: the open items started-items-complete judges are the ones the client saw start and not end."""
    started: list[str] = []
    completed: list[str] = []
    for e in events:
        if e.name in ("item/started", "item/completed") and e.data["type"] == P.AGENT_MESSAGE:
            (started if e.name == "item/started" else completed).append(e.data["item"])
    if not started and not completed and s.open_items == t.open_items:
        return True
    return started == [i for i in t.open_items if i not in s.open_items] \
        and completed == [i for i in s.open_items if i not in t.open_items]


def preempted(s: CodexState) -> bool:
    """A steer waits to be written at a boundary that a stream ended early: the model must be asked again,
    although every message of the thread was carried by the turn's last request (no prompt to send yet) and
    no command of the turn ran (no output to send). Only an abandoned stream leaves a turn so."""
    return s.phase == BOUNDARY and bool(s.pending) and s.need_request and s.calls == 0 and s.sent == s.history


def command_at_interrupt(runs_on: bool) -> Callable[..., bool]:
    """A command running when the turn is interrupted completes after turn/completed, when it ends
    (`tool_on_interrupt=runs_on`, the pinned build), or its item/completed comes before turn/completed
    (`stops`)."""
    def fits(s: CodexState, a: Action, t: CodexState, events: Sequence[Event]) -> bool:
        if s.phase != TOOL or a.kind != "client.interrupt":
            return True
        call = P.call_id(s.requests)
        names = [e.name for e in events if e.name == "turn/completed"
                 or (e.name == "item/completed" and e.data["type"] == P.COMMAND and e.data["item"] == call)]
        if runs_on:
            return names == ["turn/completed"] and t.running_tool == call
        return names == ["item/completed", "turn/completed"] and not t.running_tool
    return fits


def acceptance_order(s: CodexState) -> bool:
    written = [m for m in s.history if m in s.accepted]
    return written == [m for m in s.accepted if m in written]


def steer_answer_fits(s: CodexState, a: Action, t: CodexState, events: Sequence[Event]) -> bool:
    """Each turn/steer reply fits the request and the thread: accepted (with the active turn's id) only
    when a turn is active, expectedTurnId names it and the input is not empty; each documented error
    only when its condition holds."""
    for e in events:
        if e.name != "turn/steer":
            continue
        d = e.data
        outcome = d["outcome"]
        if outcome == P.ACCEPTED and (s.phase == IDLE or d["expected"] != P.ACTIVE or d["empty"]
                                      or d["turn"] != P.turn_id(s.turns)):
            return False
        if (outcome == NO_ACTIVE_TURN and s.phase != IDLE) or (outcome == EMPTY_INPUT and not d["empty"]) \
                or (outcome == TURN_MISMATCH and d["expected"] == P.ACTIVE):
            return False
    return True


def start_answer_fits(steer: bool) -> Callable[..., bool]:
    """turn/start starts a turn only when none is active; while one is, it adds its input to that turn
    (`start_while_active=steer`, what TurnStartParams documents and the pinned build does) or is refused
    (`reject`)."""
    def fits(s: CodexState, a: Action, t: CodexState, events: Sequence[Event]) -> bool:
        for e in events:
            if e.name == "turn/start":
                expected = P.STARTED if s.phase == IDLE else P.STEERED if steer else "refused"
                if e.data["outcome"] != expected:
                    return False
        return True
    return fits


def messages_shown(s: CodexState, a: Action, t: CodexState, events: Sequence[Event]) -> bool:
    """The user messages a step adds to the thread are exactly the userMessage items it completes, in that
    order: a message is in the thread (and in thread/read) when, and only when, its item is shown."""
    shown = [e.data["item"] for e in events if e.name == "item/completed" and e.data["type"] == P.USER_MESSAGE]
    return shown == list(t.history[len(s.history):])


def _running(s: CodexState) -> tuple[str, ...]:
    """The commands running in `s`: the active turn's, or one an interrupt let run on (never both: a turn
    starts only once that one ended)."""
    if s.phase == TOOL:
        return (P.call_id(s.requests),)
    return (s.running_tool,) if s.running_tool else ()


Told = list[tuple[str, tuple[tuple[str, object], ...]]]


def _done(s: CodexState, a: Action, t: CodexState, events: Sequence[Event]) -> Told:
    """What the step did to the thread, as the facts of the common vocabulary that tell it, from the states
    alone (a refusal's code is the reply's own)."""
    kind = a.kind
    out: Told = []
    submitted = P.prompt_id(t.prompts) if kind == "client.turn_start" and s.phase != IDLE else \
        P.steer_id(t.steers) if kind in ("client.steer", "client.bad_steer") else None
    if submitted is not None:
        out.append(("steer.submitted", (("id", submitted), ("target", THREAD))))
        if submitted in t.accepted and submitted not in s.accepted:
            out.append(("steer.accepted", (("id", submitted),)))
        else:
            out += [("steer.rejected", (("id", submitted), ("code", e.data["outcome"]))) for e in events
                    if e.name in ("turn/steer", "turn/start")][:1]
    if t.turns > s.turns:
        out.append(("turn.started", (("turn", P.turn_id(t.turns)), ("chain", THREAD))))
    left = [m for m in s.unsent if m not in t.unsent]
    if s.phase != IDLE and t.phase == IDLE:
        interrupted = kind == "client.interrupt"
        if interrupted:
            out += [("steer.failed", (("id", m), ("code", INTERRUPTED))) for m in left]
        out.append(("turn.ended", (("turn", P.turn_id(s.turns)), ("status", INTERRUPTED if interrupted
                                                                          else "completed"))))
    if kind == "codex.request":
        turn = P.turn_id(t.turns)
        out += [("steer.applied", (("id", m), ("turn", turn))) for m in t.history if m in left]
    if t.phase == TOOL and s.phase != TOOL:
        call = P.call_id(t.requests)
        out += [("tool.requested", (("call", call), ("turn", P.turn_id(t.turns)))), ("tool.started", (("call", call),))]
    ran, runs = _running(s), _running(t)
    out += [("tool.result", (("call", call), ("synthetic", False))) for call in ran if call not in runs]
    out += [("history.appended", (("chain", THREAD), ("item", m))) for m in t.history[len(s.history):]]
    return out


def _by_name(item: tuple[str, object]) -> str:
    return item[0]


def facts_tell_the_step(s: CodexState, a: Action, t: CodexState, events: Sequence[Event]) -> bool:
    """The facts a step's events read as (`facts.py`, which maps recorded runs too) tell what the step did:
    the message it submits and whether turn/steer (or turn/start) acknowledged it, the turn it starts or
    ends and how, the steers a model request carries first and those an interrupt cuts, the command it
    starts and each command that ends (a real result: the item carries the command's own output), and the
    user messages it writes into the thread, each in the order it happened. A step whose events tell
    another story than its thread shows the client (and the common properties) something that did not
    happen."""
    told = [(fact.name, fact.fields) for event in events for fact in codex_facts.facts(event)]
    return sorted(told, key=_by_name) == sorted(_done(s, a, t, events), key=_by_name)


# what each malformed steer of the scenario sends: (expectedTurnId, whether the input is empty)
MALFORMED = {P.STALE: (P.STALE, False), P.BOGUS: (P.BOGUS, False), "empty": (P.ACTIVE, True)}


def within_parameters(params: Mapping[str, Any]) -> Callable[..., bool]:
    """The client and the backend stay within the scenario the parameters name, so that the check explores
    that environment and no other."""
    def within(s: CodexState, a: Action, t: CodexState, events: Sequence[Event]) -> bool:
        if s.read and a.kind.startswith("client."):  # thread/read ends the client's run
            return False
        if a.kind == "client.steer" and s.turns == 0:  # a steer names the latest turn: there must be one
            return False
        if a.kind == "client.bad_steer" and any((e.data["expected"], e.data["empty"]) != MALFORMED[a.args[0]]
                                                for e in events if e.name == "turn/steer"):
            return False
        if a.kind == "client.bad_steer" and (not params["bad_steers"] or s.phase == IDLE
                                             or (a.args == (P.STALE,) and s.turns < 2) or a.args[0] in s.bad):
            return False
        if a.kind == "client.read" and (s.phase != IDLE or s.turns == 0 or s.running_tool or s.pending):
            return False
        if a.kind == "client.steer" and any(e.data["expected"] != P.ACTIVE or e.data["empty"]
                                            for e in events if e.name == "turn/steer"):
            return False
        return (t.prompts <= params["turns"] and t.steers - len(t.bad) <= params["steers"]
                and t.interrupts <= params["interrupts"] and t.calls <= params["tool_calls"])
    return within


def properties(params: Mapping[str, Any], bug: str | None = None) -> Sequence[Property]:
    carry = params["interrupt_pending"] == "carry"
    out: list[Property] = [
        Always("acknowledged-steer-persisted", state=lambda s: persisted(s, carry),
               doc="a steer turn/steer acknowledged (it returned the turnId that accepted the input) is written "
                   "into the thread as a userMessage item, also when the turn is interrupted first: before its "
                   "turn/completed (under interrupt_pending=carry, by the next turn/start)"),
        Always("started-items-complete", state=items_complete,
               doc="every item/started is followed by its item/completed before its turn/completed"),
        Always("items-shown-as-open", step=items_as_shown, with_events=True,
               doc="an agentMessage item is open from its item/started to its item/completed, and only then: "
                   "a step that ends a stream (the response ends, a steer preempts it, an interrupt) shows the "
                   "item/completed of each item it closes"),
        Always("requests-numbered", step=lambda s, a, t, events: all(
                   e.data["index"] == s.requests + 1 for e in events if e.name == P.REQUEST),
               with_events=True, kinds=("codex.request",),
               doc="each model request Codex sends is a new one, numbered one past the last: the agentMessage "
                   "and command items a request streams are named for it, so a number used twice shows two "
                   "items of the thread under one id"),
        Always("steers-in-acceptance-order", state=acceptance_order,
               doc="Codex writes steers into the thread in the order it acknowledged them"),
        Always("steer-preconditions", step=steer_answer_fits, with_events=True, events=("turn/steer",),
               doc="turn/steer succeeds only when expectedTurnId names the active turn and the input is not empty, "
                   "and answers each documented error (no active turn, turn mismatch, empty input) only when it "
                   "holds"),
        Always("start-while-active", step=start_answer_fits(params["start_while_active"] == "steer"),
               with_events=True, events=("turn/start",),
               doc="turn/start starts a turn only when none is active; while one is, it adds its input to that "
                   "turn (under start_while_active=reject, it is refused)"),
        Always("messages-shown-as-items", step=messages_shown, with_events=True,
               doc="a user message enters the thread exactly when its userMessage item completes, in that order, "
                   "so thread/read returns the messages whose items the client saw"),
        Always("within-parameters", step=within_parameters(params), with_events=True,
               kinds=("client.turn_start", "client.steer", "client.bad_steer", "client.interrupt", "client.read",
                      "model.tool_call"),
               doc="the client sends at most turns turn/starts, steers well-formed steers (naming the latest turn, "
                   "input not empty) and interrupts "
                   "interrupts, malformed steers only with bad_steers, only to an active turn and each kind once "
                   "(a stale one names an earlier turn, so only once there is one), reads the thread back "
                   "(thread/read) only at the end of its run (after a turn, none active, no command running on, "
                   "no acknowledged steer waiting), and the model makes at most tool_calls calls per turn: the "
                   "check explores the environment its parameters name"),
        Always("command-at-interrupt", step=command_at_interrupt(params["tool_on_interrupt"] == "runs_on"),
               with_events=True, kinds=("client.interrupt",),
               doc="turn/interrupt does not stop a running command (\"this does not terminate background "
                   "terminals\"): its item/completed follows turn/completed, when it ends (under "
                   "tool_on_interrupt=stops, it comes before turn/completed)"),
        Always("facts-tell-the-step", step=facts_tell_the_step, with_events=True,
               doc="the facts each step's events read as (the common vocabulary the harness reads recorded runs "
                   "in) tell what the step did to the thread: the steer it submits and its answer, the turn it "
                   "starts or ends, the steers a model request carries first or an interrupt cuts, the command "
                   "it starts and the real result of each command that ends, the user messages it writes"),
        Always("tool-output-sent-back",
               step=lambda s, a, t: a.kind != "codex.end_turn" or (not s.need_request and s.sent == s.history),
               kinds=("codex.end_turn",),
               doc="a turn completes only after a model request has carried every command output and every user "
                   "message of the thread, its prompt and every steer written since the last request (the "
                   "response it ends on saw them)"),
    ]
    if params["turns"] > params["interrupts"]:
        out.append(Sometimes("turn-completes", state=lambda s: s.read and s.turns > s.interrupts,
                             doc="some turn ends with turn/completed status completed (not interrupted) and the "
                                 "client reads the thread back"))
    if params["tool_calls"] > 0:
        out.append(Sometimes("command-runs", state=lambda s: s.phase == TOOL,
                             doc="the model runs a command (exec_command) in some turn"))
        out.append(Sometimes("tool-output-reaches-model",
                             state=lambda s: s.phase == SAMPLING and s.calls > 0 and len(s.history) == s.turns,
                             doc="some model request of a turn carries the output of a command it ran, asked for "
                                 "by the command's end itself (the thread holds only the turns' prompts, so no "
                                 "written steer asked for it)"))
    if params["steers"] > 0:
        out.append(Sometimes("steer-reaches-model-mid-turn",
                             state=lambda s: any(m in s.sent for m in s.accepted if m.startswith("s")),
                             doc="some steer turn/steer acknowledged is carried by a model request of its turn"))
    if params["steers"] > 0 and params["preempt_stream"]:
        out.append(Sometimes("steer-preempts-stream", state=preempted,
                             doc="a steer acknowledged while the model streams ends that request at once: Codex "
                                 "abandons the stream and writes the steer before it samples again "
                                 "(preempt_stream)"))
    if params["steers"] > 0 and params["interrupts"] > 0:
        out.append(Sometimes("interrupt-with-pending-steer",
                             state=lambda s: s.phase == IDLE and s.interrupts > 0 and bool(s.accepted)
                             and not all(m in s.sent for m in s.accepted),
                             doc="some turn is interrupted after it acknowledged a steer no request carried yet"))
    if params["bad_steers"]:
        out.append(Sometimes("malformed-steer-refused", state=lambda s: len(s.bad) == 3,
                             doc="a stale, a bogus and an empty steer have each been refused"))
    return out
