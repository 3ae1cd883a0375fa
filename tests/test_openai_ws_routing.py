"""The openai-ws step properties are routed by their triggers (`STEP_TRIGGERS`): the engines judge each
on the steps that send an event of its trigger's names or are of its kinds, and on no other. On every step
of these configurations, a property not routed to the step holds by its own function, so a trigger that
leaves out a step the property must judge fails here."""

from __future__ import annotations

from collections import deque

import pytest

from steersim.core.model import Always
from steersim.models.openai_ws import SPEC
from steersim.models.openai_ws.properties import STEP_TRIGGERS, properties, reading_properties, step_invariants

SLOW = pytest.mark.slow
CONFIGURATIONS = [
    pytest.param({}, None, id="defaults"),
    # the bug variants without the default's follow-up requests (thirtyfold the graph) unless they need them
    *(pytest.param({"followups": 0, **SPEC.bug_params.get(bug, {})}, bug, id=bug) for bug in sorted(SPEC.bugs)),
    pytest.param({"lanes": 2, "steers": 1, "stream_ids": "default"}, None, id="two-lanes", marks=SLOW),
    pytest.param({"steers": 2, "client_tools": 2, "followups": 1, "invalid_input": True, "response_failures": True,
                  "completed_steer": "successor", "waiting_steer": "queue", "sequence_scope": "connection"}, None,
                 id="other-readings", marks=SLOW),
]


def transitions(model):
    """Every step of the model's reachable state space, with its events."""
    seen = set(model.init_states())
    queue = deque(seen)
    while queue:
        state = queue.popleft()
        for action in model.actions(state):
            taken = model.step(state, action)
            if taken is None:
                continue
            nxt, events = taken
            yield state, action, nxt, tuple(events)
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)


@pytest.mark.parametrize(("params", "bug"), CONFIGURATIONS)
def test_a_property_holds_on_every_step_it_is_not_routed_to(params, bug):
    model = SPEC.build(params, bug)
    routed = [p for p in properties(model.params, bug) if isinstance(p, Always) and p.step is not None
              and (p.kinds is not None or p.events is not None)]
    assert {p.name for p in routed} == set(STEP_TRIGGERS)
    broken, judged = set(), 0
    for state, action, nxt, events in transitions(model):
        names = [event.name for event in events]
        for prop in routed:
            if not prop.judges(action.kind, names):
                judged += 1
                try:
                    if not prop.step(state, action, nxt, events):
                        broken.add(prop.name)
                except Exception:  # the engines would never learn that it raises there
                    broken.add(prop.name)
    assert judged and not broken


def test_every_trigger_names_a_step_property():
    names = {p.name for p in step_invariants(SPEC.build().params) + reading_properties(SPEC.build().params)}
    assert set(STEP_TRIGGERS) <= names
