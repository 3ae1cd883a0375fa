"""Native events of the Foundry model, in the package's own words (their facts: `facts.py`).

The harness records the real package in exactly this vocabulary, so trace validation compares like
with like: `start` and its result (`TaskRun` with `is_queued`, or the exception class), the handler's
view of its context at entry and at each safe point (`entry_mode`, `is_steered_turn`,
`ctx.cancel.is_set()`, `pending_input_count`, ...), how it left, and each handle's outcome. With
`surface = responses` a start() is a POST to the Responses host and its result the HTTP reply.

A step's events are a function of a few values of its state (the start()'s outcome, the turn's context
view, the handle it resolves), and a search meets the same few values again and again: `Observer` builds
each distinct tuple of events once, from those values, and every step that shows it shares it (an
event's data is never mutated once built), with the facts of its events read once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from steersim.core.facts import Fact
from steersim.core.model import Action, Event
from steersim.models.foundry.state import (
    CANCELLED,
    DEFERRED,
    FAILED,
    NOBODY,
    RETURNED,
    RUNNING,
    WAITING,
    FoundryState,
    input_id,
)

if TYPE_CHECKING:
    from steersim.models.foundry.model import FoundryModel

CHAIN = "c1"
REJECTION_EVENTS = ("SteeringQueueFull", "LastInputIdPreconditionFailed", "TaskConflictError")
HOW_STATUS = {"return": "returned", "raise": "failed", "exit_for_recovery": "deferred", "cancelled": "cancelled"}
HOW = {RETURNED: "return", FAILED: "raise", DEFERRED: "exit_for_recovery"}
HTTP_REPLY = {
    "fresh": (200, None, "in_progress"),
    "resumed": (200, None, "in_progress"),
    "queued": (200, None, "queued"),
    "LastInputIdPreconditionFailed": (409, "conversation_fork_not_supported", None),
    "TaskConflictError": (409, "conversation_locked", None),
    "SteeringQueueFull": (429, "busy", None),
}
NO_EVENTS: tuple[Event, ...] = ()


def _id(c: int) -> str | None:
    return None if c == NOBODY else input_id(c)


def start_events(surface: str, c: int, if_last: int, outcome: str, last: int) -> list[Event]:
    """A start() by caller `c` naming `if_last`, answered `outcome` while the chain's head is `last`."""
    caller, mid = f"caller:{c}", input_id(c)
    if surface == "responses":
        status, code, response_status = HTTP_REPLY[outcome]
        reply: dict[str, Any] = {"caller": mid, "status": status}
        if code is not None:
            reply["code"] = code
        if response_status is not None:
            reply["response_status"] = response_status
        return [Event(caller, "host", "POST /responses", {"caller": mid, "previous_response_id": _id(if_last)}),
                Event("host", caller, "http.response", reply)]
    call = Event(caller, "chain", "start", {"caller": mid, "input_id": mid, "if_last_input_id": _id(if_last)})
    if outcome in ("fresh", "resumed", "queued"):
        result = Event("chain", caller, "TaskRun", {"caller": mid, "input_id": mid, "is_queued": outcome == "queued"})
    elif outcome == "LastInputIdPreconditionFailed":
        result = Event("chain", caller, outcome, {"caller": mid, "actual_last_input_id": _id(last)})
    elif outcome == "TaskConflictError":
        result = Event("chain", caller, outcome, {"caller": mid, "current_status": "in_progress"})
    else:
        result = Event("chain", caller, outcome, {"caller": mid})
    return [call, result]


def handle_result(c: int, outcome: str, value: int, queued: bool, entered: bool) -> Event:
    return Event("chain", f"caller:{c}", "TaskRun.result", {
        "caller": input_id(c), "outcome": outcome, "value": _id(value), "queued": queued, "entered": entered,
    })


def context_view(cancel: bool, requested: bool, seen: int) -> dict[str, Any]:
    return {"cancel": cancel, "cancel_requested": requested, "pending_input_count": seen}


def cancel_events(c: int, queued: bool) -> list[Event]:
    """TaskRun.cancel() on caller `c`'s handle; a handle still queued resolves at once, cancelled."""
    out = [Event(f"caller:{c}", "chain", "TaskRun.cancel", {"caller": input_id(c)})]
    if queued:
        out.append(handle_result(c, CANCELLED, NOBODY, True, False))
    return out


def check_events(active: int, cancel: bool, requested: bool, seen: int) -> list[Event]:
    return [Event("handler", "handler", "handler.check", {"input": input_id(active),
                                                          **context_view(cancel, requested, seen)})]


def exit_events(active: int, how: str) -> list[Event]:
    return [Event("handler", "chain", "handler.exit", {"input": input_id(active), "how": how})]


def enter_events(active: int, ctx_input_id: str, mode: str, steered: bool, cancel: bool, requested: bool,
                 seen: int, first: bool, queued: bool) -> list[Event]:
    data: dict[str, Any] = {"input": input_id(active), "input_id": ctx_input_id, "entry_mode": mode}
    if mode != "recovered":
        data["is_steered_turn"] = steered
    data.update(context_view(cancel, requested, seen))
    data["first"] = first
    data["queued"] = queued
    return [Event("chain", "handler", "handler.enter", data)]


def resolve_events(c: int, outcome: str, value: int, queued: bool) -> list[Event]:
    return [handle_result(c, outcome, value, queued, True)]


def crash_events(turn: str | None) -> list[Event]:
    return [Event("fault", "process", "process.crash", {"turn": turn})]


def process_events(kind: str) -> list[Event]:
    return [Event("process", "chain", kind, {})]


BUILDERS: dict[str, Callable[..., list[Event]]] = {
    "start": start_events, "cancel": cancel_events, "check": check_events, "exit": exit_events,
    "enter": enter_events, "resolve": resolve_events, "crash": crash_events, "process": process_events,
}


class Observer:
    """The events of one model's steps, each distinct tuple of them built once (`built`, keyed by the
    builder's name and the values it reads, so its size is bounded by the parameters: a few hundred
    tuples at the benchmark's sizes) and shared; the end of a grace period, rare and of many shapes, is
    built afresh. `facts` reads an event's facts once for every event built here (by identity: they are
    kept, so their ids stay theirs) and afresh for any other event (a recorded one, say)."""

    def __init__(self, model: FoundryModel, read_facts: Callable[[Event], Sequence[Fact]]) -> None:
        self.model = model
        self.read_facts = read_facts
        self.mine: dict[int, Event] = {}
        self.read: dict[int, Sequence[Fact]] = {}
        self.shown: dict[int, tuple[Fact, ...]] = {id(NO_EVENTS): ()}
        self.built = lru_cache(maxsize=None, typed=True)(self._build)

    def _build(self, what: str, *values: Any) -> tuple[Event, ...]:
        events = tuple(BUILDERS[what](*values))
        for event in events:
            self.mine[id(event)] = event
        self.shown[id(events)] = self._read_all(events)
        return events

    def facts_of(self, events: Sequence[Event]) -> tuple[Fact, ...]:
        """The facts of a step's events, in order: looked up for a tuple built here (whose facts were read
        when it was built), read afresh for any other."""
        read = self.shown.get(id(events))
        return self._read_all(events) if read is None else read

    def _read_all(self, events: Sequence[Event]) -> tuple[Fact, ...]:
        return tuple([fact for event in events for fact in self.facts(event)])

    def facts(self, event: Event) -> Sequence[Fact]:
        read = self.read.get(id(event))
        if read is None:
            read = self.read_facts(event)
            if self.mine.get(id(event)) is event:
                self.read[id(event)] = read
        return read

    def observe(self, s: FoundryState, a: Action, t: FoundryState) -> tuple[Event, ...]:
        model, kind = self.model, a.kind
        if kind == "caller.start":
            c, if_last = a.args
            return self.built("start", model.surface, c, if_last, model.start_outcome(s, c, if_last), s.last)
        if kind == "framework.advance":  # the next most frequent step, and a silent one
            return NO_EVENTS
        if kind == "caller.cancel":
            c = a.args[0]
            return self.built("cancel", c, c in s.queue)
        if kind == "handler.check":
            return self.built("check", s.active, s.cancel, s.requested, s.seen)
        if kind in ("handler.return", "handler.raise", "handler.exit_for_recovery"):
            return self.built("exit", s.active, HOW[t.outcome])
        if kind == "framework.enter":
            return self.built("enter", s.active, model.ctx_input_id(s), s.mode, s.steered, s.cancel, s.requested,
                              s.seen, s.active not in s.entered, s.queued[s.active])
        if kind == "framework.resolve":
            if s.handle >= 0 and s.callers[s.handle] == WAITING:
                outcome = model.handle_outcome(s)
                value = s.active if outcome == RETURNED else NOBODY
                return self.built("resolve", s.handle, outcome, value, s.queued[s.handle])
            return NO_EVENTS
        if kind == "fault.crash":
            return self.built("crash", _id(s.active) if s.turn == RUNNING else None)
        if kind in ("process.restart", "process.shutdown"):
            return self.built("process", kind)
        if kind == "process.stop":
            return tuple(stop_events(model, s))
        return NO_EVENTS


def stop_events(model: FoundryModel, s: FoundryState) -> list[Event]:
    out = []
    if s.turn == RUNNING:
        out.append(Event("handler", "chain", "handler.exit", {"input": input_id(s.active), "how": "cancelled"}))
        if s.handle >= 0 and s.callers[s.handle] == WAITING:
            out.append(handle_result(s.handle, CANCELLED, NOBODY, s.queued[s.handle], True))
    for c, phase in enumerate(s.callers):
        if phase == WAITING and not (s.turn == RUNNING and c == s.handle):
            out.append(handle_result(c, model.queued_at_shutdown, NOBODY, s.queued[c], c in s.entered))
    out.append(Event("process", "chain", "process.stop", {}))
    return out
