"""The openai-ws model's shortcuts give what the plain computation gives: a step remembered from another
state (`OpenAIWsModel._remembered_step`) is the step `_Step` builds, and the client's view made for
some types of frames (`VIEW_FIELDS`) judges those frames as the whole view does, over every reachable
step of every bug variant; the step routes of `STEP_TRIGGERS` are checked in
`test_openai_ws_routing.py`. Each check is shown to catch a shortcut that forgets what it depends on."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import pytest

from steersim.core.model import Action, Event
from steersim.models.openai_ws import SPEC
from steersim.models.openai_ws import client as client_module
from steersim.models.openai_ws.client import judge
from steersim.models.openai_ws.model import FOOTPRINTS, OpenAIWsModel
from steersim.models.openai_ws.properties import view_of_state
from steersim.models.openai_ws.state import WsState

VARIANTS = [None, *sorted(SPEC.bugs)]


def small(bug: str | None) -> dict:
    """The defaults for the model itself; for a bug variant without the default's follow-up requests
    (which grow the graph thirtyfold) unless the variant needs them."""
    return {} if bug is None else {"followups": 0, **SPEC.bug_params.get(bug, {})}


def steps(model: OpenAIWsModel) -> Iterator[tuple[WsState, Action, WsState, tuple[Event, ...]]]:
    """Every step of the model's reachable state space, breadth first, as `step` takes it."""
    seen = set(model.init_states())
    queue = deque(seen)
    while queue:
        state = queue.popleft()
        for action in model.actions(state):
            nxt, events = model.step(state, action)
            yield state, action, nxt, events
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)


def step_disagreements(model: OpenAIWsModel) -> list[tuple[WsState, Action]]:
    """The remembered steps where `step` differs from the step `_Step` builds: in the next state, in which
    responses stay the same objects (properties rely on it), or in the events."""
    out = []
    for state, action, nxt, events in steps(model):
        if action.kind not in FOOTPRINTS:
            continue
        built, built_events = model._built_step(state, action)
        kept = [a is b for a, b in zip(nxt.responses, state.responses, strict=False)]
        built_kept = [a is b for a, b in zip(built.responses, state.responses, strict=False)]
        if (nxt, kept, events) != (built, built_kept, built_events):
            out.append((state, action))
    return out


@pytest.mark.parametrize("bug", VARIANTS)
def test_a_remembered_step_is_the_step_built_anew(bug: str | None) -> None:
    model = SPEC.build(small(bug), bug)
    assert step_disagreements(model) == []
    assert len(model._remembered_steps) > 0


RESTARTING = {"completed_steer": "successor", "steers": 1, "lanes": 2, "followups": 2, "hosted_tools": 0,
              "reconnects": 0, "client_tools": 0}


def test_a_remembered_steer_at_a_restartable_response_is_the_step_built_anew(monkeypatch) -> None:
    """With A4's restart reading a steer's outcome depends on the newer responses of its target's lane
    (on two lanes, a state with a newer response on the other lane has the same key otherwise), which its
    footprint names; a footprint of the target alone is caught."""
    assert step_disagreements(SPEC.build(RESTARTING, None)) == []
    monkeypatch.setitem(FOOTPRINTS, "client.steer", lambda s, a: ((a.args[0],), ()))
    assert step_disagreements(SPEC.build(RESTARTING, None))


class _KeyedWithoutTheSequence(dict):
    """Steps remembered as if the connection's sequence counter (the key's seventh entry) did not
    matter: a steer refused for a response of an earlier connection is numbered by it."""

    def get(self, key, default=None):
        return super().get(key[:6] + key[7:], default)

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key[:6] + key[7:], value)


def test_the_agreement_check_sees_steps_remembered_without_the_sequence_counter(monkeypatch) -> None:
    model = SPEC.build({}, None)
    monkeypatch.setattr(model, "_remembered_steps", _KeyedWithoutTheSequence())
    assert step_disagreements(model)


def view_disagreements(model: OpenAIWsModel) -> list[tuple[WsState, Action]]:
    """The client steps whose frames the view made for their types judges otherwise than the whole view."""
    out = []
    for state, action, _, events in steps(model):
        frames = [e.data for e in events if e.source == "client" and "type" in e.data]
        if not frames:
            continue
        whole = view_of_state(model.params, state)
        part = view_of_state(model.params, state, {frame["type"] for frame in frames})
        if [judge(whole, frame) for frame in frames] != [judge(part, frame) for frame in frames]:
            out.append((state, action))
    return out


@pytest.mark.parametrize("bug", VARIANTS)
def test_a_view_made_for_some_frames_judges_them_as_the_whole_view(bug: str | None) -> None:
    assert view_disagreements(SPEC.build(small(bug), bug)) == []


def test_the_view_check_sees_a_view_that_leaves_out_a_field_the_rules_read(monkeypatch) -> None:
    monkeypatch.setitem(client_module.VIEW_FIELDS, "response.steer", ("unresolved",))
    assert view_disagreements(SPEC.build({}, "steer-stale-parent"))
