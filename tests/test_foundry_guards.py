"""The Foundry checks over what the model emits, and its vacuity guards: each check fails on the defect it
guards against, and each guard fails when the behaviour it stands for is switched off, both written as a
small change of the model."""

from __future__ import annotations

import pytest

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.core.model import Action, Event
from steersim.models.foundry import SPEC
from steersim.models.foundry.model import FoundryModel
from steersim.models.foundry.state import (
    CANCELLED,
    DEFERRED,
    EXITED,
    IDLE,
    IN_PROGRESS,
    NOBODY,
    STOPPING,
    SUSPENDED,
    UP,
    WAITING,
    with_,
)

SMALL = {"callers": 3, "queue_cap": 1, "shutdowns": 0}
SHUTDOWN = {**SMALL, "shutdowns": 1, "crashes": 0}


class Without(FoundryModel):
    """The model without the actions `removed` names: (kind, predicate over the state) pairs."""

    removed: tuple[tuple[str, object], ...] = ()

    def actions(self, s):
        return [a for a in super().actions(s)
                if not any(a.kind == kind and (when is None or when(s, a)) for kind, when in self.removed)]


def without(*removed: tuple[str, object]) -> type[FoundryModel]:
    return type("Without", (Without,), {"removed": removed})


class ExtraCancel(FoundryModel):
    """One TaskRun.cancel() more than queued_cancels allows."""

    def actions(self, s):
        out = list(super().actions(s))
        if s.proc == UP and s.cancels == self.max_cancels:
            out += [Action(f"caller:{c}", "caller.cancel", (c,))
                    for c in range(self.n) if s.callers[c] == WAITING and s.queued[c]]
        return out


class OwnInputAsPrecondition(FoundryModel):
    """Callers pass their own input's id as if_last_input_id, an input no caller has sent yet."""

    def actions(self, s):
        return [Action(a.actor, a.kind, (a.args[0], a.args[0])) if a.kind == "caller.start" else a
                for a in super().actions(s)]


class CallersOutOfOrder(FoundryModel):
    """Any idle caller may call while callers_in_order says they call in index order."""

    def actions(self, s):
        out = list(super().actions(s))
        if s.proc == UP:
            out += [Action(f"caller:{c}", "caller.start", (c, NOBODY))
                    for c in range(self.n) if s.callers[c] == IDLE and IDLE in s.callers[:c]]
        return out


class DeferralAsHandler(FoundryModel):
    """A turn that left with exit_for_recovery gives its handle TaskDeferred whatever deferred_outcome says."""

    def handle_outcome(self, s):
        return DEFERRED if s.outcome == DEFERRED else super().handle_outcome(s)


class ExplicitCancelIgnored(FoundryModel):
    """An explicit cancel of a running turn never makes its handle TaskCancelled."""

    def handle_outcome(self, s):
        return self.deferred_outcome if s.outcome == DEFERRED else s.outcome


class PromotionIgnoresShutdown(FoundryModel):
    """A turn that ends during a shutdown promotes the queue head, whatever promote_during_shutdown says."""

    def _advance(self, s):
        if s.proc != STOPPING:
            return super()._advance(s)
        return with_(super()._advance(with_(s, proc=UP)), proc=STOPPING)


class StopCancelsQueuedWaiters(FoundryModel):
    """The end of the grace period gives waiters on queued inputs TaskCancelled, whatever
    queued_handle_at_shutdown says."""

    def observe(self, s, a, t):
        events = super().observe(s, a, t)
        if a.kind != "process.stop":
            return events
        return [Event(e.source, e.target, e.name, {**e.data, "outcome": CANCELLED})
                if e.name == "TaskRun.result" else e for e in events]


class EnqueueBeforeRecovery(FoundryModel):
    """A start() on a chain left in progress by a crash enqueues before the recovery scan re-enters the
    interrupted turn, so the enqueue signals nothing."""

    def _start(self, s, c, if_last):
        if not self.needs_recovery(s):
            return super()._start(s, c, if_last)
        return with_(super()._start(with_(s, proc=UP), c, if_last), proc=s.proc)


def statuses(model: type[FoundryModel], params: dict, bug: str | None = None) -> dict[str, str]:
    result = check(model(SPEC.resolve(params, bug), bug), CheckOptions(keep_going=True))
    return {p.name: p.status for p in result.properties}


@pytest.mark.parametrize(("model", "params", "caught_by"), [
    (ExtraCancel, SMALL, "within-parameters"),
    (OwnInputAsPrecondition, SMALL, "within-parameters"),
    (OwnInputAsPrecondition, {**SMALL, "surface": "responses"}, "within-parameters"),
    (CallersOutOfOrder, SMALL, "within-parameters"),
    (DeferralAsHandler, {**SHUTDOWN, "deferred_outcome": "TaskCancelled"}, "handle-outcome"),
    (ExplicitCancelIgnored, {**SMALL, "explicit_cancel_outcome": "always_cancelled"}, "handle-outcome"),
    (PromotionIgnoresShutdown, SHUTDOWN, "shutdown-promotion"),
    (StopCancelsQueuedWaiters, SHUTDOWN, "handle-outcome"),
    (EnqueueBeforeRecovery, {**SMALL, "precancel_if_successors": False}, "recovered-turn-signalled"),
])
def test_each_check_over_emitted_events_catches_its_defect(model, params, caught_by):
    assert statuses(model, params)[caught_by] == "violated"
    assert statuses(FoundryModel, params)[caught_by] == "holds"


@pytest.mark.parametrize("params", [{**SMALL, "surface": "responses"},
                                    {**SMALL, "surface": "responses", "steerable": False}])
def test_reply_facts_catches_replies_read_as_no_fact(monkeypatch, params):
    """The defect lives in the fact mapping (`facts.py`), which the model and its properties both read: the
    Responses host's replies read as no fact at all."""
    import steersim.models.foundry.model
    import steersim.models.foundry.properties
    from steersim.models.foundry.facts import facts

    def unread(event):
        return [] if event.name == "http.response" else facts(event)

    assert statuses(FoundryModel, params)["reply-facts"] == "holds"
    monkeypatch.setattr(steersim.models.foundry.model, "facts", unread)
    monkeypatch.setattr(steersim.models.foundry.properties, "facts", unread)
    assert statuses(FoundryModel, params)["reply-facts"] == "violated"


def _queue_full(s, a):
    return s.status == IN_PROGRESS and len(s.queue) >= 1


# (guard, configuration, the model with the behaviour switched off)
SWITCHED_OFF = [
    ("turn-returns", SMALL, without(("handler.return", None))),
    ("turn-raises", SMALL, without(("handler.raise", None))),
    ("raise-with-queue", SMALL, without(("handler.raise", None))),
    ("steer-lands-mid-turn", SMALL, without(("caller.start", lambda s, a: s.status == IN_PROGRESS))),
    ("steered-turn-steered-again", SMALL, without(("caller.start", lambda s, a: s.steered))),
    ("queue-full", SMALL, without(("caller.start", _queue_full))),
    ("stale-precondition", SMALL, without(("caller.start", lambda s, a: a.args[1] != NOBODY))),
    ("conflict", {**SMALL, "steerable": False}, without(("caller.start", lambda s, a: s.status == IN_PROGRESS))),
    ("queued-input-cancelled", SMALL, without(("caller.cancel", None))),
    ("running-turn-cancelled", SMALL, without(("caller.cancel", lambda s, a: a.args[0] not in s.queue))),
    ("handler-sees-signal", SMALL, without(("handler.check", None))),
    ("crash-with-queue", SMALL, without(("fault.crash", None))),
    ("recovered-turn-runs", SMALL, without(("fault.crash", None))),
    ("exit-for-recovery", SHUTDOWN, without(("handler.exit_for_recovery", None))),
    ("turn-ends-in-shutdown-with-queue", SHUTDOWN,
     without(("handler.return", lambda s, a: s.proc == STOPPING), ("handler.raise", lambda s, a: s.proc == STOPPING),
             ("process.shutdown", lambda s, a: s.turn == EXITED))),
    ("queued-waiter-at-stop", SHUTDOWN, without(("process.shutdown", lambda s, a: bool(s.queue)))),
    ("suspended-chain-resumes", SMALL, without(("caller.start", lambda s, a: s.status == SUSPENDED))),
    ("out-of-order-call", {**SMALL, "callers_in_order": False},
     without(("caller.start", lambda s, a: "idle" in s.callers[: a.args[0]]))),
]


@pytest.mark.parametrize(("guard", "params", "model"), SWITCHED_OFF, ids=[g for g, _, _ in SWITCHED_OFF])
def test_each_guard_fails_when_its_behaviour_is_switched_off(guard, params, model):
    assert statuses(FoundryModel, params)[guard] == "reached"
    assert statuses(model, params)[guard] == "unreached"


def test_every_guard_of_the_matrix_configurations_has_a_switched_off_test():
    configurations = [SMALL, SHUTDOWN, {**SMALL, "steerable": False}, {**SMALL, "callers_in_order": False}]
    guards = {p.name for params in configurations for p in SPEC.build(params).properties()
              if p.kind == "sometimes"}
    assert guards == {g for g, _, _ in SWITCHED_OFF}


def test_queued_handle_at_shutdown_is_told_apart_by_the_core_invariants():
    assert statuses(FoundryModel, {**SHUTDOWN, "queued_handle_at_shutdown": "TaskCancelled"})["no-lost-steers"] == (
        "violated")
    assert statuses(FoundryModel, SHUTDOWN)["no-lost-steers"] == "holds"


def _run(params: dict, path: list[Action]) -> list[Event]:
    """The events of one path from the initial state, each action taken as the model offers it."""
    model = SPEC.build({**SMALL, **params})
    s, events = model.init_states()[0], []
    for action in path:
        assert action in model.actions(s), f"{action} is not enabled"
        t = model.next_state(s, action)
        events += model.observe(s, action, t)
        s = t
    return events


def test_last_input_id_advances_on_is_told_apart_by_the_precondition_reply():
    """m0 runs, m1 queues behind it, m2 names m0 as the chain head: the head is m1 if it advanced on
    accept, still m0 if it advances only when an input executes."""
    path = [Action("caller:0", "caller.start", (0, NOBODY)), Action("framework", "framework.enter"),
            Action("caller:1", "caller.start", (1, NOBODY)), Action("caller:2", "caller.start", (2, 0))]
    on_accept = _run({"queue_cap": 2}, path)[-1]
    on_execute = _run({"queue_cap": 2, "last_input_id_advances_on": "execute"}, path)[-1]
    assert (on_accept.name, on_accept.data["actual_last_input_id"]) == ("LastInputIdPreconditionFailed", "m1")
    assert (on_execute.name, on_execute.data["is_queued"]) == ("TaskRun", True)
    assert statuses(FoundryModel, {**SMALL, "last_input_id_advances_on": "execute"})["if-match"] == "holds"


def test_precancel_if_successors_is_told_apart_by_the_promoted_turn_entry():
    """m0 runs with m1 and m2 queued behind it, returns, and m1 is promoted: it enters with ctx.cancel set iff
    promoted turns start cancelled while inputs remain behind them."""
    path = [Action("caller:0", "caller.start", (0, NOBODY)), Action("framework", "framework.enter"),
            Action("caller:1", "caller.start", (1, NOBODY)), Action("caller:2", "caller.start", (2, NOBODY)),
            Action("handler", "handler.return"), Action("framework", "framework.resolve"),
            Action("framework", "framework.advance"), Action("framework", "framework.enter")]
    entries = {precancel: _run({"queue_cap": 2, "precancel_if_successors": precancel}, path)[-1]
               for precancel in (True, False)}
    assert {precancel: (e.name, e.data["input"], e.data["cancel"]) for precancel, e in entries.items()} == {
        True: ("handler.enter", "m1", True), False: ("handler.enter", "m1", False)}
