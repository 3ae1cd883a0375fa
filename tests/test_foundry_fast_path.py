"""The Foundry model's fast path against the plain computation: over every reachable state of small
configurations, for every bug variant, `successor_facts` and `step_facts` give what `actions`,
`next_state`, `observe` and `facts` give, the remembered start() outcome is the one decided afresh,
and each step property filtered by `kinds=` holds on every step of a kind it leaves out."""

from __future__ import annotations

import pytest

import steersim.models.foundry.model
from steersim.core.model import Action, Always
from steersim.core.product import Product
from steersim.models.foundry import SPEC
from steersim.models.foundry.model import FoundryModel
from steersim.models.foundry.spec import BUGS
from steersim.models.foundry.state import FoundryState
from tests.checking import breadth_first

SMALL = {"callers": 3, "queue_cap": 1}
SETTINGS = [
    SMALL,
    {**SMALL, "shutdowns": 1},
    {**SMALL, "surface": "responses"},
    {**SMALL, "steerable": False},
    {**SMALL, "callers_in_order": False},
    {**SMALL, "explicit_cancel_outcome": "always_cancelled", "queued_cancels": 2},
    {**SMALL, "last_input_id_advances_on": "execute", "precancel_if_successors": False},
]
CASES = [(params, None) for params in SETTINGS] + [(SMALL, bug.name) for bug in BUGS]
IDS = [f"{params}-{bug}" for params, bug in CASES]


def build(params: dict, bug: str | None) -> FoundryModel:
    return FoundryModel(SPEC.resolve(params, bug), bug)


def reachable(model: FoundryModel) -> list[FoundryState]:
    """Every state the plain protocol reaches, breadth-first."""
    return breadth_first(model.init_states(), lambda s: (model.next_state(s, a) for a in model.actions(s)))


def plain_steps(model: FoundryModel, s: FoundryState) -> list[tuple[Action, FoundryState, tuple]]:
    steps = []
    for a in model.actions(s):
        t = model.next_state(s, a)
        steps.append((a, t, tuple(f for e in model.observe(s, a, t) for f in model.facts(e))))
    return steps


def fast_path_problems(model: FoundryModel) -> list[str]:
    """Where the fast path and the plain computation differ, over every reachable state."""
    problems = []
    for s in reachable(model):
        plain = plain_steps(model, s)
        if model.successor_facts(s) != plain:
            problems.append(f"successor_facts of {s}")
        if [(a, *model.step_facts(s, a)) for a, _, _ in plain] != plain:
            problems.append(f"step_facts of {s}")
        for a, _, _ in plain:
            if a.kind == "caller.start" and model.start_outcome(s, *a.args) != model.decide_start(s, a.args[1]):
                problems.append(f"start_outcome of {a} in {s}")
    return problems


@pytest.mark.parametrize(("params", "bug"), CASES, ids=IDS)
def test_the_fast_path_gives_the_plain_steps_and_facts(params, bug):
    assert fast_path_problems(build(params, bug)) == []


@pytest.mark.parametrize(("params", "bug"), CASES, ids=IDS)
def test_each_kind_filter_leaves_out_only_steps_its_property_holds_on(params, bug):
    model = build(params, bug)
    filtered = [p for p in model.properties() if isinstance(p, Always) and p.kinds is not None]
    assert filtered
    for s in reachable(model):
        for a in model.actions(s):
            t = model.next_state(s, a)
            broken = [p.name for p in filtered if a.kind not in p.kinds and not p.step(s, a, t)]
            assert broken == [], f"{a} in {s}"


@pytest.mark.parametrize(("params", "bug"), [(SMALL, None), ({**SMALL, "shutdowns": 1}, None)])
def test_the_events_the_properties_read_are_those_observed(params, bug):
    """As the engine judges them: a state's steps taken first (`successor_facts`), then each asked for
    twice; and a step the search did not take (a trace's), asked for on its own."""
    model = build(params, bug)
    observer = build(params, bug)  # a model of its own, so that nothing is kept between the two
    other = build(params, bug)  # one that takes no step
    for s in reachable(model):
        steps = model.successor_facts(s)
        for a, t, _ in steps:
            assert model.events_of(s, a, t) is model.events_of(s, a, t)
            assert model.events_of(s, a, t) == tuple(observer.observe(s, a, t))
        for a, t, _ in steps:
            assert other.events_of(s, a, t) == tuple(observer.observe(s, a, t))


def test_a_start_outcome_remembered_by_too_small_a_key_is_caught(monkeypatch):
    """The queue's length decides whether the queue is full: a key without it answers a start() on a full
    queue as one on an empty queue was answered."""
    monkeypatch.setattr(steersim.models.foundry.model, "start_key",
                        lambda s, if_last: (s.proc, s.status, s.turn, s.last, if_last))
    assert fast_path_problems(build(SMALL, None))


class FirstFacts(FoundryModel):
    """A fast path that reuses the facts of a state's first step for all its steps."""

    def successor_facts(self, s):
        steps = super().successor_facts(s)
        return [(a, t, steps[0][2]) for a, t, _ in steps]


def test_a_successor_facts_that_mixes_up_facts_is_caught():
    assert fast_path_problems(FirstFacts(SPEC.resolve(SMALL, None)))


def test_the_search_takes_the_fast_path():
    """No step property reads the engine's events, so a search asks the model for facts alone."""
    product = Product(build(SMALL, None))
    assert product._successor_facts is not None and product._step_facts is not None

