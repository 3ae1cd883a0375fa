"""The openai-ws step properties are judged in one pass per step, which runs only the properties a
step concerns (`STEP_TRIGGERS`): on every step of these configurations, each property's verdict is the
one its own function gives when judged alone, so a trigger that leaves out a step it must judge fails."""

from __future__ import annotations

from collections import deque

import pytest

from models.openai_ws import SPEC
from models.openai_ws.properties import STEP_TRIGGERS, properties, reading_properties, step_invariants

SLOW = pytest.mark.slow
CONFIGURATIONS = [
    pytest.param({}, None, id="defaults"),
    *(pytest.param({}, bug, id=bug) for bug in sorted(SPEC.bugs)),
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


def verdict(judge, *step):
    try:
        return bool(judge(*step))
    except Exception as broken:  # a property that raises must raise alike in one pass
        return type(broken).__name__


@pytest.mark.parametrize(("params", "bug"), CONFIGURATIONS)
def test_one_pass_gives_every_property_its_own_verdict(params, bug):
    model = SPEC.build(params, bug)
    alone = {p.name: p.step for p in step_invariants(model.params) + reading_properties(model.params)}
    judged = {p.name: p.step for p in properties(model.params, bug) if getattr(p, "step", None) is not None}
    assert list(judged) == list(alone)
    differ = set()
    for step in transitions(model):
        differ |= {name for name in alone if verdict(alone[name], *step) != verdict(judged[name], *step)}
    assert not differ


def test_every_trigger_names_a_step_property():
    names = {p.name for p in step_invariants(SPEC.build().params) + reading_properties(SPEC.build().params)}
    assert set(STEP_TRIGGERS) <= names
