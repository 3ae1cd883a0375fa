"""The teaching model's checks over what it emits: each fails on the defect it guards against, written
as a small change of the model (the mutants the mutation benchmark found surviving before them)."""

from __future__ import annotations

import pytest

from models.teaching.model import IDLE, TeachingModel
from sim.checking.engines import check
from sim.checking.explorer import CheckOptions
from sim.core.model import Event


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


class IdleAfterDelivery(TeachingModel):
    """A boundary that delivered steers goes idle instead of calling the model with them."""

    def next_state(self, s, a):
        t = super().next_state(s, a)
        return t._replace(phase=IDLE) if a.kind == "agent.clear" and s.pend else t


@pytest.mark.parametrize(("model", "caught_by"), [
    (LaunchWithoutStart, "truthful-results"),
    (SkipReadAsReal, "truthful-results"),
    (StatusSwapped, "status-tells-steered"),
    (IdleAfterDelivery, "delivered-steers-called"),
])
def test_each_check_over_emitted_facts_catches_its_defect(model: type[TeachingModel], caught_by: str) -> None:
    result = check(model(3, 3, 2, 3), CheckOptions(keep_going=True, engine="generic"))
    statuses = {p.name: p.status for p in result.properties}
    assert statuses[caught_by] == "violated"
    assert check(TeachingModel(3, 3, 2, 3), CheckOptions(engine="generic")).status == "ok"
