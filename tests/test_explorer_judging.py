"""How the generic explorer judges what it reaches: each state by the state properties once, when it
is first reached, with the verdicts and counterexamples of judging every step; the sometimes-properties
through their unwrapped predicates, a raising one still named; the cyclic collector off during the
search, young garbage still freed, and the caller's setting restored."""

from __future__ import annotations

import gc
import weakref

import pytest

from steersim import Action, Always, CheckOptions, ModelBase, Sometimes
from steersim.checking.explorer import Explorer
from steersim.errors import ModelError
from steersim.models.teaching import SPEC as TEACHING


class Grid(ModelBase):
    """A walk on an n x n grid, right or up: most states are reached by two steps. `bad` cells break
    the state property `off-bad`, `goal` is a sometimes-property; each predicate counts its calls."""

    def __init__(self, n: int = 6, bad: frozenset = frozenset(), goal: tuple | None = None) -> None:
        super().__init__()
        self.n, self.bad, self.goal = n, bad, goal
        self.judged: list[tuple[int, int]] = []

    def init_states(self):
        return [(0, 0)]

    def actions(self, s):
        x, y = s
        return [Action("walker", "walk.right")] * (x < self.n - 1) + [Action("walker", "walk.up")] * (y < self.n - 1)

    def step(self, s, a):
        x, y = s
        return ((x + 1, y) if a.kind == "walk.right" else (x, y + 1)), ()

    def facts(self, event):
        return ()

    def off_bad(self, s) -> bool:
        self.judged.append(s)
        return s not in self.bad

    def properties(self):
        props = [Always("off-bad", state=self.off_bad, doc="the walk avoids the bad cells")]
        if self.goal is not None:
            props.append(Sometimes("at-goal", state=lambda s: s == self.goal))
        return props


def test_each_state_is_judged_by_a_state_property_once() -> None:
    model = Grid()
    result = Explorer(model, CheckOptions(liveness=False)).run()
    assert result.status == "ok" and result.transitions > result.states
    assert sorted(model.judged) == sorted({(x, y) for x in range(6) for y in range(6)})


def _every_step_judged(model: Grid, options: CheckOptions) -> Explorer:
    """An explorer that judges the state reached on every step, as under symmetry (`Product.search`
    with `judge_every`)."""
    explorer = Explorer(model, options)
    explorer.judge_targets = False
    return explorer


@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
@pytest.mark.parametrize("bad", [frozenset({(2, 3)}), frozenset({(1, 1), (4, 0), (0, 5)}), frozenset({(0, 0)})])
def test_judging_each_state_once_finds_what_judging_every_step_finds(strategy: str, bad: frozenset) -> None:
    for keep_going in (False, True):
        options = CheckOptions(strategy=strategy, keep_going=keep_going, liveness=False)
        once = Explorer(Grid(bad=bad), options).run()
        every = _every_step_judged(Grid(bad=bad), options).run()
        assert once.status == every.status == "violation"
        assert [p.to_json() for p in once.properties] == [p.to_json() for p in every.properties]
        assert (once.states, once.transitions) == (every.states, every.transitions)


def test_the_teaching_bugs_get_the_same_report_either_way() -> None:
    for bug in (None, *TEACHING.bugs):
        options = CheckOptions(keep_going=True)
        once = Explorer(TEACHING.build({"K": 3, "N": 3, "P": 2}, bug), options).run()
        every = _every_step_judged(TEACHING.build({"K": 3, "N": 3, "P": 2}, bug), options).run()
        assert [p.to_json() for p in once.properties] == [p.to_json() for p in every.properties], bug


def test_a_sometimes_property_that_raises_is_named() -> None:
    class Broken(Grid):
        def properties(self):
            return [Sometimes("far-corner", state=lambda s: 1 / (s[0] - 3) > 0)]

    with pytest.raises(ModelError, match="property 'far-corner' raised ZeroDivisionError"):
        Explorer(Broken(), CheckOptions(liveness=False)).run()
    result = Explorer(Grid(goal=(4, 4)), CheckOptions(liveness=False)).run()
    reached = next(p for p in result.properties if p.name == "at-goal")
    assert reached.status == "reached" and len(reached.counterexample.actions) == 8


class Litter(Grid):
    """Drops a reference cycle at every state it expands, and notes the collector's state meanwhile."""

    def __init__(self) -> None:
        super().__init__(n=40)
        self.freed = 0
        self.freed_during = 0
        self.collector_on: set[bool] = set()

    def actions(self, s):
        self.collector_on.add(gc.isenabled())
        self.freed_during = self.freed
        cycle: list = []
        cycle.append(cycle)
        weakref.finalize(_Held(cycle), self._free)
        return super().actions(s)

    def _free(self) -> None:
        self.freed += 1


class _Held:
    def __init__(self, cycle: list) -> None:
        self.cycle = cycle
        cycle.append(self)


def test_the_collector_is_off_during_a_search_young_garbage_is_freed_and_the_setting_restored() -> None:
    model = Litter()
    result = Explorer(model, CheckOptions(liveness=False)).run()
    assert result.states == 1600 and model.collector_on == {False} and gc.isenabled()
    assert model.freed_during > 1000  # freed at the looks at the limits, every 256 expansions
    gc.disable()
    try:
        quiet = Litter()
        Explorer(quiet, CheckOptions(liveness=False)).run()
        assert quiet.freed_during == 0 and not gc.isenabled()  # the caller turned it off: no collection
    finally:
        gc.enable()
