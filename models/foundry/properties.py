"""The Foundry properties: the safety invariants of spec section 6, named after them, the vacuity
guards and handle liveness of section 7.

Each invariant judges one step (state, action, next state) or one state of the model. The core
monitors (`no-lost-steers`, `one-active-turn`, `ordered-history`) cover invariants 1-3 over facts;
these cover what only Foundry promises, in its own words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from models.foundry.events import HTTP_REPLY
from models.foundry.state import (
    DOWN,
    ENTERING,
    EXITED,
    FAILED,
    FRESH,
    FULL,
    IN_PROGRESS,
    NOBODY,
    PRECONDITION,
    QUEUED,
    REJECTIONS,
    RUNNING,
    SUSPENDED,
    UP,
    WAITING,
    FoundryState,
    input_id,
    needs_recovery,
)
from sim.core.model import Action, Always, Event, Eventually, Property, Sometimes

S = FoundryState
IN_FLIGHT = (ENTERING, RUNNING)
REPLY_OUTCOME = {(status, code): outcome for outcome, (status, code, _) in HTTP_REPLY.items() if code is not None}
RECORD_FIELDS = ("status", "last", "active", "queue", "turn", "cancel", "requested", "seen", "futures", "handle")


def start_outcome(events: Sequence[Event]) -> str:
    """What a start() answered, as its events show it on either surface: a rejection's name, `queued`,
    or `fresh` for an input that runs at once (a resumed chain shows as one)."""
    result = events[1]
    data = result.data
    if result.name == "http.response":
        if "code" in data:
            return REPLY_OUTCOME[(data["status"], data["code"])]
        return QUEUED if data.get("response_status") == QUEUED else FRESH
    if result.name == "TaskRun":
        return QUEUED if data["is_queued"] else FRESH
    return result.name


def properties(params: Mapping[str, Any], bug: str | None = None) -> list[Property]:
    """The invariants and guards of one configuration (the bug variant changes the model, not what it
    must satisfy). What start() answered and the `ctx.input_id` a turn sees are read from the step's
    events, which the engine hands the properties that need them."""
    cap, steerable, precancel = params["queue_cap"], params["steerable"], params["precancel_if_successors"]

    def fifo(s: S, a: Action, t: S) -> bool:
        return not (t.active != s.active and t.active >= 0 and s.queue and t.active != s.queue[0])

    def own_outcome(s: S, a: Action, t: S) -> bool:
        return a.kind != "framework.resolve" or s.handle in (NOBODY, s.active)

    def resolution_order(s: S, a: Action, t: S) -> bool:
        return a.kind != "framework.advance" or s.resolved

    def cooperative(s: S, a: Action, t: S) -> bool:
        return not (s.turn == RUNNING and t.turn == ENTERING)

    def signal(s: S, a: Action, t: S) -> bool:
        enqueued = a.kind == "caller.start" and len(t.queue) > len(s.queue) and s.turn in IN_FLIGHT
        return not enqueued or (t.cancel and t.seen >= 1)

    def cause_first(s: S, a: Action, t: S) -> bool:
        same_context = s.turn in IN_FLIGHT and s.active == t.active and s.mode == t.mode
        newly_set = t.turn in IN_FLIGHT and t.cancel and not (same_context and s.cancel)
        return not newly_set or t.seen > 0 or t.requested

    def turn_identity(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        return a.kind != "framework.enter" or events[0].data["input_id"] == input_id(s.active)

    def pre_cancel(s: S, a: Action, t: S) -> bool:
        set_up = t.turn == ENTERING and (s.turn != ENTERING or s.active != t.active)
        if a.kind == "caller.start" and needs_recovery(s):
            return True  # recovered, then signalled by the enqueue in the same start(): the signal rule judges it
        return not set_up or t.cancel == (bool(t.queue) and precancel)

    def side_effect_free(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        if a.kind != "caller.start" or needs_recovery(s) or start_outcome(events) not in REJECTIONS:
            return True
        return all(getattr(s, name) == getattr(t, name) for name in RECORD_FIELDS)

    def if_match(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        if a.kind != "caller.start":
            return True
        if_last = a.args[1]
        stale = if_last != NOBODY and s.last != NOBODY and if_last != s.last
        return not stale or start_outcome(events) == PRECONDITION

    def non_steerable(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        if steerable or a.kind != "caller.start" or s.status != IN_PROGRESS or s.proc != UP:
            return True
        return start_outcome(events) != QUEUED

    def queued_cancel(s: S, a: Action, t: S) -> bool:
        if a.kind != "caller.cancel" or a.args[0] not in s.queue:
            return True
        c = a.args[0]
        return (t.queue == tuple(x for x in s.queue if x != c) and t.active == s.active and t.turn == s.turn
                and t.cancel == s.cancel)

    def recovery(s: S, a: Action, t: S) -> bool:
        recovering = needs_recovery(s) and a.kind in ("framework.recover", "caller.start")
        return not recovering or (t.active == s.active and t.queue[: len(s.queue)] == s.queue)

    props: list[Property] = [
        Always("fifo", step=fifo, doc="queued inputs are entered in acceptance order; none jumps the queue"),
        Always("own-outcome", step=own_outcome, doc="each handle resolves with its own input's turn outcome"),
        Always("resolution-order", step=resolution_order,
               doc="turn k's handle is resolved before turn k+1 is promoted"),
        Always("cooperative", step=cooperative, doc="a turn is set up only after the previous handler returned"),
        Always("signal", step=signal, doc="an enqueue behind a running turn sets its cancel with the count >= 1"),
        Always("cause-first", step=cause_first,
               doc="whenever the framework sets ctx.cancel, pending_input_count > 0 or cancel_requested is visible"),
        Always("live-count", state=lambda s: s.turn != RUNNING or s.seen == len(s.queue),
               doc="ctx.pending_input_count equals the persisted queue length while the handler runs"),
        Always("turn-identity", step=turn_identity, with_events=True, doc="ctx.input_id is the turn's own input id"),
        Always("pre-cancel", step=pre_cancel, doc="a promoted or recovered turn starts cancelled iff inputs wait"),
        Always("side-effect-free-rejection", step=side_effect_free, with_events=True,
               doc="a refused start() changes neither the record, the queue, the signals nor any handle"),
        Always("bound", state=lambda s: len(s.queue) <= cap, doc=f"at most {cap} inputs wait"),
        Always("if-match", step=if_match, with_events=True,
               doc="a stale if_last_input_id is refused with LastInputIdPreconditionFailed before anything else"),
        Always("non-steerable", step=non_steerable, with_events=True,
               doc="start() on an in-flight non-steerable chain raises TaskConflictError"),
        Always("chain-survives", state=lambda s: not (s.status == SUSPENDED and s.queue),
               doc="no chain is suspended while inputs wait"),
        Always("queued-cancel", step=queued_cancel,
               doc="cancelling a queued handle removes exactly its input and leaves the running turn alone"),
        Always("recovery", step=recovery,
               doc="after a crash the interrupted turn is re-entered before any queued input"),
        Eventually("handles-resolve", trigger=lambda s: WAITING in s.callers, goal=lambda s: WAITING not in s.callers,
                   doc="while its process lives, every handle eventually resolves"),
    ]
    props.extend(_guards(params, FULL, PRECONDITION))
    return props


def _guards(params: Mapping[str, Any], full: str, precondition: str) -> list[Property]:
    """The vacuity guards of spec section 7 that the configuration can reach."""
    out: list[Property] = []
    callers, cap = params["callers"], params["queue_cap"]
    if params["steerable"]:
        out += [
            Sometimes("steer-lands-mid-turn", state=lambda s: s.turn == RUNNING and bool(s.queue),
                      doc="an input queues while a handler runs"),
            Sometimes("steered-turn-steered-again", state=lambda s: s.turn == RUNNING and s.steered and bool(s.queue),
                      doc="a steered turn is itself steered"),
            Sometimes("raise-with-queue", state=lambda s: s.turn == EXITED and s.outcome == FAILED and bool(s.queue),
                      doc="a handler raises with inputs queued"),
        ]
        if callers > cap + 1:
            out.append(Sometimes("queue-full", state=lambda s: s.rejection == full,
                                 doc="an enqueue finds the queue full"))
        if params["crashes"]:
            out.append(Sometimes("crash-with-queue", state=lambda s: s.proc == DOWN and bool(s.queue),
                                 doc="the process crashes with inputs queued"))
    if params["preconditions"] and callers > 2:
        out.append(Sometimes("stale-precondition", state=lambda s: s.rejection == precondition,
                             doc="a caller's if_last_input_id goes stale"))
    return out
