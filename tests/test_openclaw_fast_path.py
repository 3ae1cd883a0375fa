"""The OpenClaw model's fast path against the plain computation, over every reachable state of small
checks: `successor_facts` and `step_facts` (through the step memo, `memo.StepMemo`) give exactly
`step`'s next states and the facts of its events, `events_of` gives `step`'s events, and each event
property judged on some kinds alone (`properties.sent_by`) holds on every step of the other kinds."""

from __future__ import annotations

import pytest

from steersim.core.model import Action, Always
from steersim.models.openclaw import SPEC
from steersim.models.openclaw.memo import Outcome, StepMemo
from steersim.models.openclaw.model import OpenClawModel
from steersim.models.openclaw.properties import properties
from steersim.models.openclaw.state import OpenClawState
from tests.checking import breadth_first

SETTINGS = (
    {"messages": 2},
    {"messages": 2, "tool_execution": "sequential", "abort": True},
    {"messages": 2, "mode": "interrupt", "stop_after_turn": True},
    {"messages": 3, "mode": "collect", "routes": 2, "cap": 1, "blocked_call": 0},
    {"messages": 2, "runtime": "codex"},
    {"messages": 2, "mode": "followup", "cap": 1, "drop": "old", "agent_follow_ups": 1},
)
CASES = [(settings, bug) for settings in SETTINGS for bug in (None, *SPEC.bugs)]


def build(settings: dict, bug: str | None) -> OpenClawModel:
    return SPEC.build(SPEC.resolve(settings, bug), bug)


def reachable(model: OpenClawModel) -> list[OpenClawState]:
    """Every reachable state, breadth-first, stepped the plain way."""
    return breadth_first(model.init_states(), lambda s: (model.step(s, a)[0] for a in model.actions(s)))


def plain_facts(model: OpenClawModel, s: OpenClawState, a: Action) -> tuple:
    nxt, events = model.step(s, a)
    return nxt, tuple(fact for event in events for fact in model.facts(event))


@pytest.mark.parametrize(("settings", "bug"), CASES)
def test_the_fast_path_gives_the_plain_steps_facts_and_events(settings: dict, bug: str | None) -> None:
    model, fresh = build(settings, bug), build(settings, bug)
    for s in reachable(build(settings, bug)):
        fast = model.successor_facts(s)
        assert fast == [(a, *plain_facts(model, s, a)) for a in model.actions(s)]
        assert all(list(model.events_of(s, a)) == list(model.step(s, a)[1]) for a, _, _ in fast)
        assert all(fresh.step_facts(s, a) == plain_facts(fresh, s, a) for a in fresh.actions(s))


@pytest.mark.parametrize(("settings", "bug"), CASES)
def test_a_property_judged_on_some_kinds_holds_on_every_step_of_the_others(settings: dict, bug: str | None
                                                                           ) -> None:
    model = build(settings, bug)
    unfiltered = {p.name: p.step for p in properties(model.cfg, lambda s, a: model.step(s, a)[1])
                  if isinstance(p, Always) and p.step is not None}
    filtered = [p for p in model.properties() if isinstance(p, Always) and p.kinds is not None]
    for s in reachable(model):
        for a in model.actions(s):
            t = model.step(s, a)[0]
            for prop in filtered:
                if a.kind not in prop.kinds:
                    assert unfiltered[prop.name](s, a, t), (prop.name, a, s)


def test_a_handler_that_reads_a_field_the_memo_did_not_key_on_is_caught() -> None:
    """A mutation of the memo's key: were the fields read not recorded (every state's step of an action
    filed as the first one's), the fast path would give another state's step, which the ground truth
    above tells apart."""
    model = build({"messages": 2}, None)

    class Forgetful(StepMemo):
        def _file(self, a: Action, reads: list, outcome: Outcome) -> None:
            super()._file(a, [], outcome)

    model._memo = Forgetful(model._apply, model.cfg)
    wrong = [(s, a) for s in reachable(build({"messages": 2}, None)) for a in model.actions(s)
             if model.step_facts(s, a) != plain_facts(model, s, a)]
    assert wrong

