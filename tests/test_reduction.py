"""Partial-order reduction and symmetry: smaller graphs, the same safety verdicts."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from steersim import Action, Always, CheckOptions, Sometimes, check
from steersim.checking.reduction import local_action_problems
from steersim.models.teaching import SPEC as TEACHING

# distinct states of Spin's partial-order reduction on the Promela twin (shared/bench/measurements.md)
SPIN_POR_STATES = {(6, 4): 855, (8, 5): 2243}


@pytest.mark.parametrize(("K", "N"), sorted(SPIN_POR_STATES))
def test_por_shrinks_the_teaching_model_like_spin(K, N):
    params = {"K": K, "N": N, "Q": 2, "P": K}
    full = check(TEACHING.build(params), CheckOptions(liveness=False))
    reduced = check(TEACHING.build(params), CheckOptions(liveness=False, por=True))
    assert full.status == reduced.status == "ok"
    assert reduced.states == SPIN_POR_STATES[(K, N)] < full.states


@pytest.mark.parametrize("bug", sorted(TEACHING.bugs))
def test_por_keeps_every_bug(bug):
    result = check(TEACHING.build({"K": 4, "N": 3, "P": 4}, bug), CheckOptions(liveness=False, por=True,
                                                                               keep_going=True))
    statuses = {p.name: p.status for p in result.properties}
    assert statuses[TEACHING.bug_catchers[bug]] == "violated"


def test_por_is_turned_off_for_liveness_and_says_so():
    result = check(TEACHING.build({}), CheckOptions(por=True))
    assert any("not sound for liveness" in note for note in result.notes)
    assert result.states == 405


def test_the_teaching_local_actions_commute():
    assert local_action_problems(TEACHING.build({"K": 4, "N": 3, "P": 2})) == []


class WrongLocal:
    """Declares the user's steer local although it changes the queue the agent reads."""

    def __new__(cls):
        model = TEACHING.build({"K": 2, "N": 2, "P": 2})
        model.is_local = lambda action: action.kind in ("tool.finish", "user.steer")
        return model


def test_a_wrong_local_declaration_is_reported():
    problems = local_action_problems(WrongLocal())
    assert any("user: user.steer" in p for p in problems)


@dataclass(frozen=True, slots=True)
class Pool:
    work: tuple[int, ...]


class PoolModel:
    """M interchangeable workers, each doing two units of work. Workers are named w0..w{M-1}; the
    symmetry sorts their progress and renames them to match."""

    name = "pool"
    fair_actors = ()

    def __init__(self, m: int, bad_total: int | None = None) -> None:
        self.m = m
        self.bad_total = bad_total

    def init_states(self):
        return [Pool((0,) * self.m)]

    def actions(self, s):
        return [Action(f"worker:w{i}", "work", (i,)) for i, w in enumerate(s.work) if w < 2]

    def next_state(self, s, a):
        i = a.args[0]
        return Pool(s.work[:i] + (s.work[i] + 1,) + s.work[i + 1 :])

    def observe(self, s, a, t):
        return []

    def facts(self, e):
        return []

    def symmetry(self, s):
        order = sorted(range(self.m), key=lambda i: (s.work[i], i))
        renaming = {f"w{old}": f"w{new}" for new, old in enumerate(order) if old != new}
        return Pool(tuple(s.work[i] for i in order)), renaming

    def properties(self):
        props = [Sometimes("all-done", lambda s: all(w == 2 for w in s.work))]
        if self.bad_total is not None:
            props.append(Always("total-below", state=lambda s: sum(s.work) < self.bad_total))
        return props

    def default_timing(self):
        return {}


def test_symmetry_explores_each_class_once():
    full = check(PoolModel(4))
    reduced = check(PoolModel(4), CheckOptions(symmetry=True))
    assert (full.states, reduced.states) == (3**4, 15)  # multisets of size 4 over {0, 1, 2}
    assert full.status == reduced.status == "ok"


def test_symmetry_keeps_violations_and_their_depth():
    full = check(PoolModel(3, bad_total=4))
    reduced = check(PoolModel(3, bad_total=4), CheckOptions(symmetry=True))
    a = next(p for p in full.properties if p.name == "total-below")
    b = next(p for p in reduced.properties if p.name == "total-below")
    assert a.status == b.status == "violated"
    assert len(a.counterexample.steps) == len(b.counterexample.steps) == 4
