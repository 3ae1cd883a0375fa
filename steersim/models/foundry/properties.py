"""The Foundry properties: the safety invariants of spec section 6, named after them, the vacuity
guards and handle liveness of section 7.

Each invariant judges one step (state, action, next state) or one state of the model. The core
monitors (`no-lost-steers`, `one-active-turn`, `ordered-history`) cover invariants 1-3 over facts;
these cover what only Foundry promises, in its own words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from steersim.core.identity import ByIdentity
from steersim.core.model import Action, Always, Event, Eventually, Property, Sometimes
from steersim.models.foundry.events import HTTP_REPLY
from steersim.models.foundry.facts import facts
from steersim.models.foundry.state import (
    CANCELLED,
    CONFLICT,
    DEFERRED,
    DONE,
    DOWN,
    ENTERING,
    EXITED,
    FAILED,
    FRESH,
    FULL,
    IDLE,
    IN_PROGRESS,
    NOBODY,
    NONE,
    PRECONDITION,
    QUEUED,
    REJECTIONS,
    RESUMED,
    RETURNED,
    RUNNING,
    STOPPING,
    SUSPENDED,
    UP,
    WAITING,
    FoundryState,
    input_id,
    needs_recovery,
)

S = FoundryState
IN_FLIGHT = (ENTERING, RUNNING)
REPLY_OUTCOME = {(status, code): outcome for outcome, (status, code, _) in HTTP_REPLY.items() if code is not None}
RECORD_FIELDS = ("status", "last", "active", "queue", "turn", "cancel", "requested", "seen", "futures", "handle")
record = attrgetter(*RECORD_FIELDS)
EventsOf = Callable[[FoundryState, Action, FoundryState], Sequence[Event]]
"""The events of the step (state, action, next state): `FoundryModel.events_of`, which hands over those the
step built when the search took it, so that no property observes a step again and the engine can step
the model by `successor_facts`, facts alone. A property asks for them only where the states leave its
verdict open."""
# the action kinds whose steps can break a step property, as `next_state` and `observe` make them: a
# kind left out keeps what the property reads as it was (tests/test_foundry_fast_path.py)
ENTERS_TURN = ("caller.start", "framework.advance", "framework.recover")  # set up a turn, change `active`
# the environment's choices: its budgets, and who calls start() naming what
SPENDS_BUDGET = ("caller.start", "caller.cancel", "fault.crash", "process.shutdown", "handler.check")
RESOLVES_HANDLES = ("caller.cancel", "framework.resolve", "process.stop")  # the kinds that send TaskRun.result


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


def properties(params: Mapping[str, Any], bug: str | None, shown: EventsOf) -> list[Property]:
    """The invariants and guards of one configuration (the bug variant changes the model, not what it
    must satisfy). What start() answered and the `ctx.input_id` a turn sees are read from the step's
    events, as `shown` (the model's `events_of`) gives them."""
    cap, steerable, precancel = params["queue_cap"], params["steerable"], params["precancel_if_successors"]
    advance_on_accept = params["last_input_id_advances_on"] == "accept"
    answered = ByIdentity(start_outcome)

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

    def turn_identity(s: S, a: Action, t: S) -> bool:
        return a.kind != "framework.enter" or shown(s, a, t)[0].data["input_id"] == input_id(s.active)

    def pre_cancel(s: S, a: Action, t: S) -> bool:
        set_up = t.turn == ENTERING and (s.turn != ENTERING or s.active != t.active)
        if not set_up or (a.kind == "caller.start" and needs_recovery(s)):
            return True  # recovered, then signalled by the enqueue in the same start(): the signal rule judges it
        return t.cancel == (bool(t.queue) and precancel)

    def side_effect_free(s: S, a: Action, t: S) -> bool:
        if a.kind != "caller.start" or needs_recovery(s) or answered(shown(s, a, t)) not in REJECTIONS:
            return True
        return record(s) == record(t)

    def if_match(s: S, a: Action, t: S) -> bool:
        if a.kind != "caller.start":
            return True
        if_last = a.args[1]
        stale = if_last != NOBODY and s.last != NOBODY and if_last != s.last
        return not stale or answered(shown(s, a, t)) == PRECONDITION

    def non_steerable(s: S, a: Action, t: S) -> bool:
        if steerable or a.kind != "caller.start" or s.status != IN_PROGRESS or s.proc != UP:
            return True
        return answered(shown(s, a, t)) != QUEUED

    def queued_cancel(s: S, a: Action, t: S) -> bool:
        if a.kind != "caller.cancel" or a.args[0] not in s.queue:
            return True
        c = a.args[0]
        return (t.queue == tuple(x for x in s.queue if x != c) and t.active == s.active and t.turn == s.turn
                and t.cancel == s.cancel)

    def last_input_id(s: S, a: Action, t: S) -> bool:
        """The step leaves last_input_id where spec 4.5 puts it: at an accepted start()'s input (at a fresh or
        resumed turn's in either reading, at a queued one's iff it advances on accept), at the entered
        input if it advances on execute, else where it was (a refusal, a turn's end, a crash keep it)."""
        expected = s.last
        if a.kind == "caller.start":
            outcome = answered(shown(s, a, t))
            if outcome == FRESH or (outcome == QUEUED and advance_on_accept):
                expected = a.args[0]
        elif a.kind == "framework.enter" and not advance_on_accept:
            expected = s.active
        return t.last == expected

    def explicit_cancel(s: S, a: Action, t: S) -> bool:
        if a.kind != "caller.cancel" or a.args[0] != s.active or s.turn not in IN_FLIGHT:
            return True
        return t.requested and t.cancel and t.turn == s.turn and t.active == s.active

    def request_starts_clear(s: S, a: Action, t: S) -> bool:
        new_turn = t.turn == ENTERING and (s.turn != ENTERING or s.active != t.active)
        return not (new_turn and t.requested)

    def deferred_turn_kept(s: S, a: Action, t: S) -> bool:
        """exit_for_recovery leaves the record in progress on the same turn, its queue as it was (spec 4.9)."""
        if a.kind != "framework.advance" or s.outcome != DEFERRED:
            return True
        return t.status == IN_PROGRESS and t.active == s.active and t.queue == s.queue and t.turn == NONE

    def turn_budget(s: S, a: Action, t: S) -> bool:
        """A turn that is set up has all its handler_steps safe points ahead of it."""
        set_up = t.turn == ENTERING and (s.turn != ENTERING or s.active != t.active)
        return not set_up or t.checks == 0

    def recovery(s: S, a: Action, t: S) -> bool:
        recovering = a.kind in ("framework.recover", "caller.start") and needs_recovery(s)
        return not recovering or (t.active == s.active and t.queue[: len(s.queue)] == s.queue)

    props: list[Property] = [
        Always("fifo", step=fifo, kinds=ENTERS_TURN,
               doc="queued inputs are entered in acceptance order; none jumps the queue"),
        Always("own-outcome", step=own_outcome, kinds=("framework.resolve",),
               doc="each handle resolves with its own input's turn outcome"),
        Always("resolution-order", step=resolution_order, kinds=("framework.advance",),
               doc="turn k's handle is resolved before turn k+1 is promoted"),
        Always("cooperative", step=cooperative, kinds=ENTERS_TURN,
               doc="a turn is set up only after the previous handler returned"),
        Always("signal", step=signal, kinds=("caller.start",),
               doc="an enqueue behind a running turn sets its cancel with the count >= 1"),
        Always("cause-first", step=cause_first, kinds=(*ENTERS_TURN, "caller.cancel"),
               doc="whenever the framework sets ctx.cancel, pending_input_count > 0 or cancel_requested is visible"),
        Always("live-count", state=lambda s: s.turn != RUNNING or s.seen == len(s.queue),
               doc="ctx.pending_input_count equals the persisted queue length while the handler runs"),
        Always("turn-identity", step=turn_identity, kinds=("framework.enter",),
               doc="ctx.input_id is the turn's own input id"),
        Always("pre-cancel", step=pre_cancel, kinds=ENTERS_TURN,
               doc="a promoted or recovered turn starts cancelled iff inputs wait"),
        Always("side-effect-free-rejection", step=side_effect_free, kinds=("caller.start",),
               doc="a refused start() changes neither the record, the queue, the signals nor any handle"),
        Always("bound", state=lambda s: len(s.queue) <= cap, doc=f"at most {cap} inputs wait"),
        Always("if-match", step=if_match, kinds=("caller.start",),
               doc="a stale if_last_input_id is refused with LastInputIdPreconditionFailed before anything else"),
        Always("last-input-id", step=last_input_id,
               doc="last_input_id is the last accepted input's id: it advances on create, resume and enqueue (on "
                   "execution instead if last_input_id_advances_on=execute) and survives refusals, turn ends, "
                   "failures and crashes (spec 4.5, invariant 14)"),
        Always("non-steerable", step=non_steerable, kinds=("caller.start",),
               doc="start() on an in-flight non-steerable chain raises TaskConflictError"),
        Always("chain-survives", state=lambda s: not (s.status == SUSPENDED and s.queue),
               doc="no chain is suspended while inputs wait"),
        Always("queued-cancel", step=queued_cancel, kinds=("caller.cancel",),
               doc="cancelling a queued handle removes exactly its input and leaves the running turn alone"),
        Always("explicit-cancel", step=explicit_cancel, kinds=("caller.cancel",),
               doc="TaskRun.cancel() on the handle of the turn in flight sets its ctx.cancel_requested and "
                   "ctx.cancel and lets the handler run on, whatever ctx.cancel was (spec 2 TaskRun.cancel(), 4.4)"),
        Always("recovery", step=recovery, kinds=("framework.recover", "caller.start"),
               doc="after a crash the interrupted turn is re-entered before any queued input"),
        Always("cancel-request-starts-clear", step=request_starts_clear, kinds=ENTERS_TURN,
               doc="a turn enters with ctx.cancel_requested clear: only TaskRun.cancel() on its own handle sets "
                   "it, so a promoted or recovered turn does not inherit the one of the turn before"),
        Always("deferred-turn-kept", step=deferred_turn_kept, kinds=("framework.advance",),
               doc="a turn that returned ctx.exit_for_recovery() stays the record's turn in progress, its queue "
                   "preserved, so the next lifetime re-enters it as recovered before any queued input (spec 4.9: "
                   "\"leaves the record in_progress ... the next process re-enters the turn\")"),
        Always("turn-budget", step=turn_budget, kinds=ENTERS_TURN,
               doc="every turn, fresh, resumed, steered or recovered, is set up with all its handler_steps safe "
                   "points ahead of it: a promoted turn runs with \"a fresh timeout budget\" (spec 4.3), so its "
                   "handler can read ctx.cancel as the first turn's can"),
        Eventually("handles-resolve", trigger=lambda s: WAITING in s.callers, goal=lambda s: WAITING not in s.callers,
                   doc="while its process lives, every handle eventually resolves"),
    ]
    props.extend(_guards(params, FULL, PRECONDITION))
    props.extend(_observations(params, shown))
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
            out.append(Sometimes("crash-with-queue",
                                 state=lambda s: s.proc == DOWN and bool(s.queue) and s.shutdowns == 0,
                                 doc="the process crashes with inputs queued (before any graceful shutdown, whose "
                                     "end leaves the process down too)"))
    if params["preconditions"] and callers > 2:
        out.append(Sometimes("stale-precondition", state=lambda s: s.rejection == precondition,
                             doc="a caller's if_last_input_id goes stale"))
    return out


def _observations(params: Mapping[str, Any], shown: EventsOf) -> list[Property]:
    """Properties over what a step emits (its native events and their facts), besides those above that
    read the record: each judges an event the caller, the handler or a recorded trace would see, so a
    step that emits the wrong thing is seen even when the state it reaches is right."""
    budgets = ByIdentity(_budget_reading)
    calls = ByIdentity(_call_reading)
    results_of = ByIdentity(_results)
    reply_read_as_spec = ByIdentity(lambda events: _reply_read_as_spec(params, events))
    recovered_entries_cancelled = ByIdentity(_recovered_entries_cancelled)
    max_cancels, max_crashes, max_shutdowns = params["queued_cancels"], params["crashes"], params["shutdowns"]
    max_checks, at_stop = params["handler_steps"], params["queued_handle_at_shutdown"]
    in_order, preconditions = params["callers_in_order"], params["preconditions"]

    def call_within_parameters(s: S, caller: int, if_last: int) -> bool:
        """Each caller sends its one input once, in index order if `callers_in_order`, naming in
        if_last_input_id no input or, if `preconditions`, one some caller has sent already."""
        if s.callers[caller] != IDLE or (in_order and IDLE in s.callers[:caller]):
            return False
        return if_last == NOBODY or (preconditions and s.callers[if_last] != IDLE)

    def within_parameters(s: S, a: Action, t: S) -> bool:
        events = shown(s, a, t)
        if a.kind == "caller.start":
            return call_within_parameters(s, *calls(events))
        cancels, crashes, shutdowns, checked, cancelled, idle_crash = budgets(events)
        if idle_crash:
            return False
        if (t.cancels - s.cancels != cancels or t.cancels > max_cancels or t.crashes - s.crashes != crashes
                or t.crashes > max_crashes or t.shutdowns - s.shutdowns != shutdowns or t.shutdowns > max_shutdowns):
            return False
        if checked and not (t.checks == s.checks + 1 <= max_checks):
            return False
        return all(s.callers[c] == WAITING and (s.queued[c] or (c == s.active and s.turn in (ENTERING, RUNNING)))
                   for c in cancelled)

    def handle_outcome(s: S, a: Action, t: S) -> bool:
        results, kind = results_of(shown(s, a, t)), a.kind
        if not results and kind != "process.stop":
            return True
        if any(s.callers[c] != WAITING for c, _, _, _ in results):
            return False  # a handle resolves at most once
        if kind == "caller.cancel":
            return all(outcome == CANCELLED and not entered for _, outcome, _, entered in results)
        if kind == "framework.resolve":
            return all(c == s.handle and outcome == _finished(params, s)
                       and value == (input_id(s.active) if outcome == RETURNED else None)
                       for c, outcome, value, _ in results)
        if kind == "process.stop":
            waiting = sorted(c for c, phase in enumerate(s.callers) if phase == WAITING)
            expected = [CANCELLED if s.turn == RUNNING and c == s.handle else at_stop for c, _, _, _ in results]
            return sorted(c for c, _, _, _ in results) == waiting and [r[1] for r in results] == expected
        return False

    def reply_facts(s: S, a: Action, t: S) -> bool:
        return a.kind != "caller.start" or reply_read_as_spec(shown(s, a, t))

    def recovered_turn_signalled(s: S, a: Action, t: S) -> bool:
        return not any(c in s.queue for c in s.futures) or recovered_entries_cancelled(shown(s, a, t))

    def shutdown_promotion(s: S, a: Action, t: S) -> bool:
        ends_with_queue = (a.kind == "framework.advance" and s.proc == STOPPING and bool(s.queue)
                           and s.outcome != DEFERRED)
        return not ends_with_queue or (t.turn == ENTERING) == params["promote_during_shutdown"]

    props: list[Property] = [
        Always("within-parameters", step=within_parameters, kinds=SPENDS_BUDGET,
               doc="the environment stays within its parameters: each caller calls start() once, in index order "
                   "if callers_in_order, its if_last_input_id (previous_response_id) naming no input or, if "
                   "preconditions, one already sent; at most queued_cancels TaskRun.cancel() calls, each on a "
                   "queued unresolved handle or the running turn's; at most crashes crashes, each while a "
                   "handler runs, shutdowns shutdowns and handler_steps safe points per turn"),
        Always("handle-outcome", step=handle_outcome, kinds=RESOLVES_HANDLES,
               doc="each handle resolves once, with what spec 4.4/4.9 give it: the handler's value or TaskFailed, "
                   "deferred_outcome after exit_for_recovery, TaskCancelled after a queued cancel, after an "
                   "explicit cancel iff explicit_cancel_outcome=always_cancelled, and when the grace period ends "
                   "mid-turn; queued waiters at the end of a shutdown get queued_handle_at_shutdown"),
        Always("reply-facts", step=reply_facts, kinds=("caller.start",),
               doc="every start() reply is read as spec 5 says: a queued handle is a submitted and accepted steer, "
                   "a refusal a submitted and rejected one with the reply's code, a fresh or resumed turn no steer"),
        Always("recovered-turn-signalled", step=recovered_turn_signalled, kinds=("framework.enter",),
               doc="a recovered turn enters with ctx.cancel set if an input accepted in this lifetime waits "
                   "behind it: start() recovers the chain inline before it enqueues (spec 4.8, 4.2)"),
        Always("shutdown-promotion", step=shutdown_promotion, kinds=("framework.advance",),
               doc="a turn that ends during a graceful shutdown with inputs queued promotes the head iff "
                   "promote_during_shutdown"),
    ]
    return props + _behaviour_guards(params)


def _behaviour_guards(params: Mapping[str, Any]) -> list[Property]:
    """One guard per behaviour a parameter enables: a check at a configuration that enables it, which
    never reaches it, proved nothing about it."""
    out: list[Property] = [
        Sometimes("turn-returns", state=lambda s: s.turn == EXITED and s.outcome == RETURNED and not s.resolved,
                  doc="a handler returns while its caller waits"),
        Sometimes("turn-raises", state=lambda s: s.turn == EXITED and s.outcome == FAILED and not s.resolved,
                  doc="a handler raises while its caller waits"),
    ]
    if not params["steerable"]:
        out.append(Sometimes("conflict", state=lambda s: s.rejection == CONFLICT,
                             doc="a start() on a busy non-steerable chain raises TaskConflictError"))
    if params["steerable"] and params["queued_cancels"]:
        out += [
            Sometimes("queued-input-cancelled",
                      state=lambda s: s.shutdowns == 0 and any(
                          s.queued[c] and s.callers[c] == DONE and c not in s.entered
                          for c in range(params["callers"])),
                      doc="a queued input is cancelled before its turn"),
            Sometimes("running-turn-cancelled", state=lambda s: s.turn == EXITED and s.requested,
                      doc="a turn whose handle was cancelled while it ran finishes (explicit_cancel_outcome decides)"),
        ]
    if params["steerable"] and params["handler_steps"]:
        out.append(Sometimes("handler-sees-signal", state=lambda s: s.turn == RUNNING and s.checks > 0 and s.cancel,
                             doc="a handler reads ctx.cancel set at a safe point"))
    if params["crashes"]:
        out.append(Sometimes("recovered-turn-runs",
                             state=lambda s: s.turn == RUNNING and s.mode == "recovered" and s.shutdowns == 0,
                             doc="after a crash the interrupted turn runs again, recovered (before any graceful "
                                 "shutdown, after which the next lifetime recovers a turn too)"))
    if params["shutdowns"]:
        out += [
            Sometimes("exit-for-recovery",
                      state=lambda s: s.turn == EXITED and s.outcome == DEFERRED and s.handle != NOBODY,
                      doc="a handler leaves with exit_for_recovery while its caller waits"),
        ]
        if params["steerable"]:
            out += [
                Sometimes("turn-ends-in-shutdown-with-queue",
                          state=lambda s: s.proc == STOPPING and s.turn == EXITED and bool(s.queue)
                          and s.outcome != DEFERRED,
                          doc="a turn ends during a shutdown with inputs queued (promote_during_shutdown decides)"),
                Sometimes("queued-waiter-at-stop",
                          state=lambda s: s.proc == STOPPING and s.turn in (NONE, RUNNING) and any(
                              s.callers[c] == WAITING and c != s.handle for c in range(params["callers"])),
                          doc="the process stops while a caller waits on a queued input "
                              "(queued_handle_at_shutdown decides)"),
            ]
    if params["callers"] > 1:
        out.append(Sometimes("suspended-chain-resumes",
                             state=lambda s: s.turn == RUNNING and s.mode == RESUMED and not s.steered,
                             doc="a start() on a suspended chain (its last turn ended with nothing queued) resumes "
                                 "it with a new turn"))
    if not params["callers_in_order"] and params["callers"] > 1:
        out.append(Sometimes("out-of-order-call", state=lambda s: any(
            s.callers[k] != IDLE and IDLE in s.callers[:k] for k in range(params["callers"])),
            doc="a caller calls before one with a lower index"))
    return out


def _budget_reading(events: Sequence[Event]) -> tuple[int, int, int, bool, tuple[int, ...], bool]:
    """What within-parameters reads of a step's events: how many queued cancels, crashes and shutdowns
    they show, whether a handler reached a safe point, whose handles were cancelled, and whether a crash
    hit while no handler ran (its process.crash names no turn)."""
    names = [e.name for e in events]
    return (names.count("TaskRun.cancel"), names.count("process.crash"), names.count("process.shutdown"),
            "handler.check" in names, tuple(_caller(e) for e in events if e.name == "TaskRun.cancel"),
            any(e.name == "process.crash" and e.data["turn"] is None for e in events))


def _call_reading(events: Sequence[Event]) -> tuple[int, int]:
    """What within-parameters reads of a start()'s events: the caller, and the input its
    if_last_input_id (on the Responses surface, previous_response_id) names, or NOBODY."""
    data = events[0].data
    named = data.get("if_last_input_id", data.get("previous_response_id"))
    return _caller(events[0]), NOBODY if named is None else int(named.removeprefix("m"))


def _results(events: Sequence[Event]) -> tuple[tuple[int, str, str | None, bool], ...]:
    """The handles a step's events resolve: (caller, outcome, value, entered) of each TaskRun.result."""
    return tuple((_caller(e), e.data["outcome"], e.data["value"], e.data["entered"])
                 for e in events if e.name == "TaskRun.result")


def _reply_read_as_spec(params: Mapping[str, Any], events: Sequence[Event]) -> bool:
    """A start()'s reply read as spec 5 says (its events are the call and the reply)."""
    reply = events[-1].data if params["surface"] == "responses" else {"status": 200 if events[-1].name == "TaskRun"
                                                                     else events[-1].name}
    queued = reply.get("response_status") == "queued" or bool(events[-1].data.get("is_queued"))
    names = [f.name for e in events for f in facts(e)]
    if reply["status"] == 200:
        return names == (["steer.submitted", "steer.accepted"] if queued else [])
    code = reply.get("code", reply["status"])
    rejected = [f for e in events for f in facts(e) if f.name == "steer.rejected"]
    return names == ["steer.submitted", "steer.rejected"] and rejected[0]["code"] == code


def _recovered_entries_cancelled(events: Sequence[Event]) -> bool:
    """Every recovered turn a step's events enter starts with ctx.cancel set."""
    return all(e.data["cancel"] for e in events if e.name == "handler.enter" and e.data["entry_mode"] == "recovered")


def _caller(event: Event) -> int:
    return int(event.data["caller"].removeprefix("m"))


def _finished(params: Mapping[str, Any], s: S) -> str:
    """What the finished turn's handle gets (spec 4.4): the handler's outcome, `deferred_outcome` after
    exit_for_recovery, TaskCancelled after an explicit cancel iff so configured."""
    if s.outcome == DEFERRED:
        return params["deferred_outcome"]
    return CANCELLED if s.requested and params["explicit_cancel_outcome"] == "always_cancelled" else s.outcome
