"""The teaching model's checks over what it emits: each fails on the defect it guards against, written
as a small change of the model (the mutants the mutation benchmark found surviving before them)."""

from __future__ import annotations

import pytest

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.core.model import Action, Event
from steersim.models.teaching.model import IDLE, TeachingModel


class LaunchWithoutStart(TeachingModel):
    """The launch emits no tool.start: the call's real result then comes from a call that never started."""

    def observe(self, s, a, t):
        return [] if a.kind == "agent.launch" else super().observe(s, a, t)


class SkipReadAsReal(TeachingModel):
    """A skipped call's synthetic result is read as a real one."""

    def facts(self, e):
        if e.name == "tool.skipped":
            return super().facts(Event(e.source, e.target, "tool.result", {"call": e.data["call"], "synthetic": False}))
        return super().facts(e)


class StatusSwapped(TeachingModel):
    """A turn cut short by a steer ends 'completed', and one that ran every call ends 'steered'."""

    def observe(self, s, a, t):
        events = super().observe(s, a, t)
        if a.kind != "agent.clear":
            return events
        swapped = {"steered": "completed", "completed": "steered"}
        return [Event(e.source, e.target, e.name, {**e.data, "status": swapped[e.data["status"]]})
                if e.name == "turn.end" else e for e in events]


class AlwaysSteered(TeachingModel):
    """Every turn ends 'steered', also one whose calls all ran: only the converse half of the status check,
    a turn with no skipped call ends 'completed', sees it."""

    def observe(self, s, a, t):
        return [Event(e.source, e.target, e.name, {**e.data, "status": "steered"}) if e.name == "turn.end" else e
                for e in super().observe(s, a, t)]


class IdleAfterDelivery(TeachingModel):
    """A boundary that delivered steers goes idle instead of calling the model with them."""

    def next_state(self, s, a):
        t = super().next_state(s, a)
        return t._replace(phase=IDLE) if a.kind == "agent.clear" and s.pend else t


class NumberedFromZero(TeachingModel):
    """The user's steers are numbered from 0: the first steer sent shows as s0."""

    def _steer_action(self, s):
        return self._steer_actions[s.sent] if s.sent < self.N else None


@pytest.mark.parametrize(("model", "caught_by"), [
    (NumberedFromZero, "steers-as-sent"),
    (LaunchWithoutStart, "truthful-results"),
    (SkipReadAsReal, "truthful-results"),
    (StatusSwapped, "status-tells-steered"),
    (AlwaysSteered, "status-tells-steered"),
    (IdleAfterDelivery, "delivered-steers-called"),
])
def test_each_check_over_emitted_facts_catches_its_defect(model: type[TeachingModel], caught_by: str) -> None:
    result = check(model(3, 3, 2, 3), CheckOptions(keep_going=True, engine="generic"))
    statuses = {p.name: p.status for p in result.properties}
    assert statuses[caught_by] == "violated"
    assert check(TeachingModel(3, 3, 2, 3), CheckOptions(engine="generic")).status == "ok"


class Without(TeachingModel):
    """The model without the actions `removed` names: (kind, predicate over state and action) pairs."""

    removed: tuple = ()

    def actions(self, s):
        return [a for a in super().actions(s)
                if not any(a.kind == kind and (when is None or when(s, a)) for kind, when in self.removed)]


def without(*removed) -> type[TeachingModel]:
    return type("Without", (Without,), {"removed": removed})


def _second_call(s, a):
    return s.nl > s.c


# (guard, K N Q P, the model with the behaviour switched off)
SWITCHED_OFF = [
    ("steer-skips-a-call", (3, 3, 2, 3), without(("agent.skip", None))),
    ("steer-delivered-mid-run", (3, 3, 2, 3), without(("user.steer", lambda s, a: s.phase != "idle"))),
    ("turn-completes", (3, 3, 2, 3), without(("agent.deliver", lambda s, a: not s.intr))),
    ("steer-wakes-idle-agent", (3, 3, 2, 3), without(("user.steer", lambda s, a: s.phase in ("idle", "clear")))),
    ("steer-rejected", (3, 3, 2, 3), without(("user.steer", lambda s, a: len(s.q) >= 2))),
    ("calls-in-parallel", (3, 3, 2, 3), without(("agent.launch", _second_call))),
]


@pytest.mark.parametrize(("guard", "size", "model"), SWITCHED_OFF, ids=[g for g, _, _ in SWITCHED_OFF])
def test_each_guard_fails_when_its_behaviour_is_switched_off(guard, size, model):
    def status(factory):
        result = check(factory(*size), CheckOptions(keep_going=True, engine="generic"))
        return {p.name: p.status for p in result.properties}[guard]

    assert status(TeachingModel) == "reached"
    assert status(model) == "unreached"


def test_every_guard_has_a_switched_off_test():
    guards = {p.name for p in TeachingModel(3, 3, 2, 3).properties() if p.kind == "sometimes"}
    assert guards == {g for g, _, _ in SWITCHED_OFF}


class OneSteerTooMany(TeachingModel):
    """The user may send N+1 steers: the check then claims for N what it explored for N+1."""

    def actions(self, s):
        out = super().actions(s)
        if s.sent == self.N:
            out.append(Action("user", "user.steer", (s.sent + 1,)))
        return out


def test_an_environment_beyond_its_parameters_is_caught():
    result = check(OneSteerTooMany(3, 3, 2, 3), CheckOptions(keep_going=True, engine="generic"))
    assert {p.name: p.status for p in result.properties}["within-parameters"] == "violated"
    for engine in ("generic", "vector"):
        assert check(TeachingModel(3, 3, 2, 3), CheckOptions(engine=engine)).status == "ok"


@pytest.mark.parametrize("engine", ["generic", "auto"])
def test_a_completed_turn_reported_steered_is_caught_by_both_engines(engine: str) -> None:
    """The seeded variant: steers delivered at a boundary make a turn whose calls all ran end 'steered'."""
    result = check(TeachingModel(3, 3, 2, 3, "completed-turn-reported-steered"),
                   CheckOptions(keep_going=True, engine=engine))
    assert {p.name: p.status for p in result.properties}["status-tells-steered"] == "violated"


@pytest.mark.parametrize("engine", ["generic", "auto"])
def test_a_steer_id_reused_after_a_rejection_is_caught_by_both_engines(engine: str) -> None:
    """The seeded variant: the steer sent after a rejected one takes its id (Q=1, the bug's own parameter)."""
    result = check(TeachingModel(3, 3, 1, 3, "steer-id-reused-after-rejection"),
                   CheckOptions(keep_going=True, engine=engine))
    assert {p.name: p.status for p in result.properties}["steers-as-sent"] == "violated"
    assert check(TeachingModel(3, 3, 1, 3), CheckOptions(engine=engine)).status == "ok"


@pytest.mark.parametrize("engine", ["generic", "vector"])
def test_skipped_calls_without_a_result_are_caught_by_both_engines(engine: str) -> None:
    """The seeded variant: calls a steer skips get no result, so at the boundary they have one fewer than the
    calls that ran."""
    result = check(TeachingModel(3, 3, 2, 3, "no-skip-result"), CheckOptions(keep_going=True, engine=engine))
    assert {p.name: p.status for p in result.properties}["results-recorded"] == "violated"
    clean = check(TeachingModel(3, 3, 2, 3), CheckOptions(engine=engine))
    assert {p.name: p.status for p in clean.properties}["results-recorded"] == "holds"
