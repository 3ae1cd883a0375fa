"""The explorer: exact state counts, shortest counterexamples, liveness under fairness, limits."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import pytest

from steersim import Action, CheckOptions, Eventually, check
from steersim.core.fingerprint import fingerprint
from steersim.core.product import Product
from steersim.models.teaching import SPEC as TEACHING

SIZES = [(3, 2, 2, 3), (4, 3, 2, 4), (4, 3, 2, 1), (3, 2, 1, 2), (6, 4, 2, 6), (5, 3, 3, 2)]


@pytest.mark.parametrize("engine", ["generic", "vector"])
@pytest.mark.parametrize(("K", "N", "Q", "P"), SIZES)
def test_state_counts_match_the_reference_bfs(bench_bfs, K, N, Q, P, engine):
    """Both count the states of one system: the Promela twin's variable valuations. The product state adds
    only monitor states that are functions of the model state (no steer is ever lost without the bug), so
    the counts agree exactly, and so do the transition counts (one action per d_step)."""
    init, succ = bench_bfs.make_tuple_model(K, N, Q, P, 0)
    states, transitions, _, error = bench_bfs.bfs(init, succ)
    assert error is None
    result = check(TEACHING.build({"K": K, "N": N, "Q": Q, "P": P}), CheckOptions(engine=engine))
    assert result.status == "ok"
    assert (result.states, result.transitions) == (states, transitions)


def shortest_violation_depth(model, prop: str) -> int:
    """Independent oracle: plain BFS over the product; the depth of the first step that violates `prop`
    (a transition's violation, or a dead end the monitors reject)."""
    product = Product(model)
    seen = set()
    queue = deque()
    for init in product.init_states():
        seen.add(fingerprint(init))
        queue.append((init, 0))
    while queue:
        state, depth = queue.popleft()
        transitions = product.successors(state)
        if not transitions and any(v.property == prop for v in product.end_violations(state)):
            return depth
        for t in transitions:
            if any(v.property == prop for v in t.violations):
                return depth + 1
        for t in transitions:
            fp = fingerprint(t.target)
            if fp not in seen:
                seen.add(fp)
                queue.append((t.target, depth + 1))
    raise AssertionError(f"{prop} is never violated")


@pytest.mark.parametrize("bug", sorted(TEACHING.bugs))
def test_every_bug_gives_a_shortest_counterexample(bug):
    model = TEACHING.build({}, bug)
    result = check(model, CheckOptions(keep_going=True))
    assert result.status == "violation" and result.exit_code == 1
    catcher = TEACHING.bug_catchers[bug]
    prop = next(p for p in result.properties if p.name == catcher)
    assert prop.status == "violated"
    path = prop.counterexample
    assert path.violation.property == catcher
    # shortest for BFS, and among dead-end violations the oracle's depth is the same measure
    assert len(path.steps) == shortest_violation_depth(model, catcher)


def test_the_correct_model_holds_everything_and_reaches_its_guards():
    result = check(TEACHING.build({}), CheckOptions())
    assert result.status == "ok"
    statuses = {p.name: p.status for p in result.properties}
    assert statuses["steer-skips-a-call"] == "reached"
    assert statuses["no-lost-steers.eventually"] == "holds"
    assert all(s in ("holds", "reached") for s in statuses.values())


@dataclass(frozen=True, slots=True)
class Spin:
    done: bool
    phase: int


class SpinModel:
    """A worker can spin forever; only the server's `finish` reaches the goal. Under weak fairness of the
    server the endless spin is unfair (finish stays enabled and never fires), so the property holds;
    without that fairness the spin is a counterexample lasso."""

    name = "spin"

    def __init__(self, fair: tuple[str, ...]) -> None:
        self.fair_actors = fair

    def init_states(self):
        return [Spin(False, 0)]

    def actions(self, s):
        return [] if s.done else [Action("worker", "spin"), Action("server", "finish")]

    def next_state(self, s, a):
        return Spin(False, 1 - s.phase) if a.kind == "spin" else Spin(True, s.phase)

    def observe(self, s, a, t):
        return []

    def facts(self, e):
        return []

    def properties(self):
        return [Eventually("finishes", goal=lambda s: s.done)]

    def default_timing(self):
        return {}


def test_liveness_fair_cycle_passes():
    result = check(SpinModel(fair=("server", "worker")))
    assert {p.name: p.status for p in result.properties}["finishes"] == "holds"


def test_liveness_unfair_cycle_is_a_lasso():
    result = check(SpinModel(fair=("worker",)))
    prop = next(p for p in result.properties if p.name == "finishes")
    assert prop.status == "violated"
    path = prop.counterexample
    assert path.loop_start is not None
    loop = path.states[path.loop_start :]
    assert loop[0] == loop[-1] and len(loop) > 1
    assert all(step.action.kind == "spin" for step in path.steps[path.loop_start :])


def test_limits_give_incomplete_not_ok():
    result = check(TEACHING.build({"K": 6, "N": 4}), CheckOptions(max_states=500))
    assert result.status == "incomplete" and result.exit_code == 3
    assert result.states <= 500
    assert any("state limit" in note for note in result.notes)
    result = check(TEACHING.build({}), CheckOptions(max_depth=5))
    assert result.status == "incomplete"
    assert any("depth limit" in note for note in result.notes)


def test_dfs_finds_the_same_verdicts():
    for bug in [None, *sorted(TEACHING.bugs)]:
        bfs = check(TEACHING.build({}, bug), CheckOptions(keep_going=True))
        dfs = check(TEACHING.build({}, bug), CheckOptions(keep_going=True, strategy="dfs"))
        assert bfs.status == dfs.status
        assert bfs.states == dfs.states
        assert {p.name: p.status for p in bfs.properties} == {p.name: p.status for p in dfs.properties}
