"""Native events of the Foundry model, in the package's own words (their facts: `facts.py`).

The harness records the real package in exactly this vocabulary, so trace validation compares like
with like: `start` and its result (`TaskRun` with `is_queued`, or the exception class), the handler's
view of its context at entry and at each safe point (`entry_mode`, `is_steered_turn`,
`ctx.cancel.is_set()`, `pending_input_count`, ...), how it left, and each handle's outcome. With
`surface = responses` a start() is a POST to the Responses host and its result the HTTP reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from models.foundry.state import (
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
from sim.core.model import Action, Event

if TYPE_CHECKING:
    from models.foundry.model import FoundryModel

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


def _id(c: int) -> str | None:
    return None if c == NOBODY else input_id(c)


def start_events(model: FoundryModel, s: FoundryState, c: int, if_last: int, outcome: str) -> list[Event]:
    caller, mid = f"caller:{c}", input_id(c)
    if model.surface == "responses":
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
        result = Event("chain", caller, outcome, {"caller": mid, "actual_last_input_id": _id(s.last)})
    elif outcome == "TaskConflictError":
        result = Event("chain", caller, outcome, {"caller": mid, "current_status": "in_progress"})
    else:
        result = Event("chain", caller, outcome, {"caller": mid})
    return [call, result]


def handle_result(c: int, outcome: str, value: int, queued: bool, entered: bool) -> Event:
    return Event("chain", f"caller:{c}", "TaskRun.result", {
        "caller": input_id(c), "outcome": outcome, "value": _id(value), "queued": queued, "entered": entered,
    })


def context_view(s: FoundryState) -> dict[str, Any]:
    return {"cancel": s.cancel, "cancel_requested": s.requested, "pending_input_count": s.seen}


def observe(model: FoundryModel, s: FoundryState, a: Action, t: FoundryState) -> list[Event]:
    kind = a.kind
    if kind == "caller.start":
        c, if_last = a.args
        return start_events(model, s, c, if_last, model.start_outcome(s, c, if_last))
    if kind == "caller.cancel":
        c = a.args[0]
        out = [Event(f"caller:{c}", "chain", "TaskRun.cancel", {"caller": input_id(c)})]
        if c in s.queue:
            out.append(handle_result(c, CANCELLED, NOBODY, True, False))
        return out
    if kind == "handler.check":
        return [Event("handler", "handler", "handler.check", {"input": input_id(s.active), **context_view(s)})]
    if kind in ("handler.return", "handler.raise", "handler.exit_for_recovery"):
        return [Event("handler", "chain", "handler.exit", {"input": input_id(s.active), "how": HOW[t.outcome]})]
    if kind == "framework.enter":
        data: dict[str, Any] = {"input": input_id(s.active), "input_id": model.ctx_input_id(s), "entry_mode": s.mode}
        if s.mode != "recovered":
            data["is_steered_turn"] = s.steered
        data.update(context_view(s))
        data["first"] = s.active not in s.entered
        data["queued"] = s.queued[s.active]
        return [Event("chain", "handler", "handler.enter", data)]
    if kind == "framework.resolve":
        if s.handle >= 0 and s.callers[s.handle] == WAITING:
            outcome = model.handle_outcome(s)
            value = s.active if outcome == RETURNED else NOBODY
            return [handle_result(s.handle, outcome, value, s.queued[s.handle], True)]
        return []
    if kind == "fault.crash":
        return [Event("fault", "process", "process.crash", {"turn": _id(s.active) if s.turn == RUNNING else None})]
    if kind in ("process.restart", "process.shutdown"):
        return [Event("process", "chain", kind, {})]
    if kind == "process.stop":
        return stop_events(model, s)
    return []


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
