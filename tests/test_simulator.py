"""The simulator: deterministic per seed, GSMP clocks, every run a path of the explored graph."""

from __future__ import annotations

import numpy as np
import pytest

from steersim.core.fingerprint import fingerprint
from steersim.core.product import Product
from steersim.models.teaching import SPEC as TEACHING
from steersim.simulate.simulator import QUIESCENT, VIOLATION, Simulator, simulate
from steersim.simulate.timing import Clocks, TimingProfile


def explored_graph(model):
    """Every (state fingerprint, action label, target fingerprint) edge of the explored graph."""
    product = Product(model)
    edges = set()
    frontier = list(product.init_states())
    seen = {fingerprint(s) for s in frontier}
    while frontier:
        state = frontier.pop()
        for t in product.successors(state):
            edges.add((fingerprint(state), t.action.label(), fingerprint(t.target)))
            fp = fingerprint(t.target)
            if fp not in seen:
                seen.add(fp)
                frontier.append(t.target)
    return seen, edges


@pytest.mark.parametrize("bug", [None, *sorted(TEACHING.bugs)])
def test_every_simulated_trace_is_a_path_of_the_explored_graph(bug):
    model = TEACHING.build({"K": 3, "N": 3, "P": 2}, bug)
    states, edges = explored_graph(model)
    simulator = Simulator(model)
    for seed in range(40):
        run = simulator.run(seed, record=True)
        state = Product(model).init_states()[run.init_index]
        assert fingerprint(state) in states
        for step in run.steps:
            edge = (fingerprint(state), step.transition.action.label(), fingerprint(step.transition.target))
            assert edge in edges
            state = step.transition.target


def test_same_seed_same_run_and_different_seed_different_run():
    model = TEACHING.build({})
    a, b, c = (simulate(model, seed) for seed in (7, 7, 8))
    assert [(s.t, s.transition.action) for s in a.steps] == [(s.t, s.transition.action) for s in b.steps]
    assert [(s.t, s.transition.action) for s in a.steps] != [(s.t, s.transition.action) for s in c.steps]


def test_time_never_goes_back_and_the_run_ends_quiescent():
    run = simulate(TEACHING.build({}), 3)
    times = [s.t for s in run.steps]
    assert times == sorted(times)
    assert run.end == QUIESCENT and not run.violations


def test_violation_stops_the_run_at_the_violating_step():
    model = TEACHING.build({}, "launch-after-steer")
    run = next(r for r in (simulate(model, s) for s in range(50)) if r.violations)
    assert run.end == VIOLATION
    assert run.steps[-1].transition.violations[0].property == "steer-before-launch"


def test_step_and_time_bounds_say_so():
    model = TEACHING.build({})
    assert simulate(model, 1, max_steps=3).end == "step-limit"
    assert simulate(model, 1, max_time=0.01).end == "time-limit"


def test_a_kind_stream_does_not_depend_on_other_kinds():
    profile = TimingProfile.from_mapping({"default": {"dist": "exponential", "mean": 1.0}})
    alone = Clocks(profile, 5)
    mixed = Clocks(profile, 5)
    first = [alone.delay("tool.finish") for _ in range(5)]
    mixed.delay("user.steer")
    mixed.delay("something.new")
    assert [mixed.delay("tool.finish") for _ in range(5)] == first


def test_distributions_have_their_documented_means():
    profile = TimingProfile.from_mapping({
        "c": {"dist": "constant", "value": 2.0}, "u": {"dist": "uniform", "low": 1.0, "high": 3.0},
        "e": {"dist": "exponential", "mean": 2.0}, "l": {"dist": "lognormal", "median": 2.0, "sigma": 0.1},
        "i": {"dist": "immediate"}})
    clocks = Clocks(profile, 0)
    for kind, mean in [("c", 2.0), ("u", 2.0), ("e", 2.0), ("l", 2.0), ("i", 0.0)]:
        draws = np.array([clocks.delay(kind) for _ in range(4000)])
        assert draws.mean() == pytest.approx(mean, rel=0.06, abs=1e-9)


def test_ties_go_to_the_action_listed_first():
    profile = TimingProfile.from_mapping({"default": {"dist": "constant", "value": 1.0}})
    run = Simulator(TEACHING.build({"N": 1}), profile).run(0, record=True)
    # at t=1 the user's steer and the agent's model call tie; the user is listed first
    assert run.steps[0].transition.action.kind == "user.steer"
    assert run.steps[1].t == run.steps[0].t
