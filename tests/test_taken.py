"""`StepsTaken`: the events of the steps of the state stepped last, observed once and handed over."""

from __future__ import annotations

from steersim.core.model import Action, Event
from steersim.core.taken import StepsTaken


def test_events_are_observed_once_per_step_of_the_state_stepped_last():
    calls: list[tuple] = []

    def observe(state, action, extra):
        calls.append((state, action, extra))
        return (Event("a", "b", f"{state}.{action.kind}", {}),)

    taken, go, stop = StepsTaken(), Action("x", "go"), Action("x", "stop")
    first = taken.events_of("s", go, observe, 1)
    assert taken.events_of("s", go, observe, 2) is first  # kept: not observed again
    taken.events_of("s", stop, observe, 3)
    assert taken.of("s") == {go: first, stop: (Event("a", "b", "s.stop", {}),)}
    taken.events_of("t", go, observe, 4)  # another state: what was kept of "s" is let go
    assert calls == [("s", go, 1), ("s", stop, 3), ("t", go, 4)]
    assert taken.of("t").keys() == {go}
