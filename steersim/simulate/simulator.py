"""The simulator: the model as a generalised semi-Markov process in virtual time.

When an action becomes enabled it draws a firing delay from the timing profile for its kind (its own
numpy stream, see `steersim.simulate.timing`); the earliest clock fires; ties go to the action listed first by
`actions()`; an action that stays enabled keeps its clock, and one that is disabled loses it. Every
step goes through `steersim.core.product.Product`, the same stepping the explorer uses, so a simulated run is a
path of the explored graph. The run stops at quiescence (no action enabled), at the step or time bound,
or at the first violation, and says which. No wall clock is read: same model, profile and seed give the
same run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

from steersim.core.facts import Fact
from steersim.core.model import Action, Model
from steersim.core.product import Product, PState, Transition, Violation
from steersim.errors import ModelError, UsageError
from steersim.simulate.timing import Clocks, TimingProfile

QUIESCENT, STEP_LIMIT, TIME_LIMIT, VIOLATION = "quiescent", "step-limit", "time-limit", "violation"


@dataclass
class TimedStep:
    t: float
    transition: Transition


@dataclass(slots=True)
class SimRun:
    """One simulated run. `steps` is filled only when the run was recorded."""

    seed: int
    init_index: int
    end: str
    time: float
    step_count: int
    violations: list[Violation]
    reached: frozenset[str]
    steps: list[TimedStep] = field(default_factory=list)
    final: PState | None = None
    observed: list[tuple[float, Fact]] = field(default_factory=list)


INF = float("inf")
_UNKNOWN, _NO_OP = None, ()  # an edge not yet taken, and an action that is a no-op: both falsy, one test


class _Node:
    """What the simulator knows of one product state: its enabled actions and their kinds, the
    `sometimes` properties it satisfies, per action the edge taken from it (computed the first time),
    and what the monitors say if the run ends there. Models are pure, so a node serves every seed that
    passes through its state."""

    __slots__ = ("actions", "edges", "ending", "kinds", "positions", "reached", "state")

    def __init__(self, state: PState, actions: Sequence[Action], reached: frozenset[str]) -> None:
        self.state = state
        self.actions = tuple(actions)
        self.kinds = tuple(a.kind for a in self.actions)
        self.positions = {a: i for i, a in enumerate(self.actions)}
        self.reached = reached
        self.edges: list[Any] = [_UNKNOWN] * len(self.actions)
        self.ending: tuple[Violation, ...] | None = None


class _Edge(NamedTuple):
    """A transition and how clocks move along it. The first four fields are what every step reads (the
    rest only the steps that record, break a property or reach one, and the slow path): the target's
    edges; `carry`, which picks for each action of the target the clock it keeps from the source (the
    actions that draw new ones take a placeholder); `fresh`, the (position, kind) of the actions that
    draw new clocks (newly enabled, or the fired action enabled again); and `notable`, whether the step
    breaks a property or reaches one the source did not (`gain`)."""

    edges: list[Any]
    carry: Callable[[Sequence[float]], Sequence[float]] | None
    fresh: tuple[tuple[int, str], ...]
    notable: bool
    transition: Transition
    target: _Node
    gain: frozenset[str]


def _picker(sources: tuple[int, ...]) -> Callable[[Sequence[float]], Sequence[float]]:
    """`itemgetter(*sources)` as a function that always returns a tuple (itemgetter returns the item
    itself for a single index, and takes no empty list)."""
    if len(sources) >= 2:
        return itemgetter(*sources)
    if sources:
        source = sources[0]
        return lambda times: (times[source],)
    return lambda times: ()


def check_run_bounds(max_steps: int, max_time: float | None) -> None:
    """Refuse bounds under which no run could take a step: such a sweep would judge only initial states
    and report every `sometimes` property unreached."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise UsageError(f"--max-steps must be a whole number of at least 1, not {max_steps!r}")
    if max_time is not None and not (0 < max_time < INF):
        raise UsageError(f"--max-time must be a finite number of virtual seconds above 0, not {max_time!r}")


class Simulator:
    """Runs seeds of one model under one timing profile. `cache_states` bounds the memo of visited
    states (cleared when full; nodes a running seed still holds are dropped when it ends). `watch` names
    facts each run keeps with their times in `SimRun.observed` (what `steersim.simulate.queries` measures): a step
    that emits one is marked notable, so the steps that emit none cost what they cost without it."""

    def __init__(self, model: Model, timing: TimingProfile | None = None,
                 max_steps: int = 100_000, max_time: float | None = None, cache_states: int = 100_000,
                 watch: frozenset[str] = frozenset()) -> None:
        check_run_bounds(max_steps, max_time)
        self.product = Product(model)
        self.watch = watch
        self.timing = TimingProfile.for_model(model, timing)
        self.max_steps = max_steps
        self.max_time = max_time
        # a step fires at `when < limit`: `when > max_time` ends the run, and INF means nothing can fire
        self._limit = INF if max_time is None else math.nextafter(max_time, INF)
        self.cache_states = cache_states
        self._nodes: dict[PState, _Node] = {}
        self._shared: dict[Any, Any] = {}
        self._inits: list[tuple[_Node, tuple[Violation, ...]]] | None = None

    def _node(self, state: PState) -> _Node:
        node = self._nodes.get(state)
        if node is None:
            if len(self._nodes) >= self.cache_states:
                self._nodes.clear()
                self._shared.clear()
                self._inits = None
            model_state = state[0]
            reached = frozenset(p.name for p in self.product.sometimes if p.state(model_state))
            node = self._nodes[state] = _Node(state, self.product.actions(state), reached)
        return node

    def _share(self, key: Any, make: Callable[[], Any] | None = None) -> Any:
        """The one instance of an edge's part that many edges have alike (a carry, a fresh list, a gain):
        there are few distinct ones, and sharing them keeps them in the CPU's cache when the runs spread
        over many states."""
        shared = self._shared.get(key)
        if shared is None:
            shared = self._shared[key] = key if make is None else make()
        return shared

    def _edge(self, node: _Node, index: int) -> _Edge | tuple[()]:
        """Take action `index` from `node` for the first time; `_NO_OP` when it is a no-op there (it keeps
        its clock but cannot fire from this state)."""
        fired = node.actions[index]
        transition = self.product.step(node.state, fired)
        edge: _Edge | tuple[()] = _NO_OP
        if transition is not None:
            target = self._node(transition.target)
            sources, fresh = [], []
            for position, action in enumerate(target.actions):
                source = node.positions.get(action)
                if source is None or action == fired:
                    sources.append(None)
                    fresh.append(self._share((position, action.kind)))
                else:
                    sources.append(source)
            carry = None  # every kept clock stays where it is: the source's list serves, updated
            if len(sources) != len(node.actions) or any(s not in (None, p) for p, s in enumerate(sources)):
                picks = tuple(0 if s is None else s for s in sources)
                carry = self._share(("carry", *picks), lambda: _picker(picks))
            gain = self._share(target.reached - node.reached)
            watched = bool(self.watch) and any(f.name in self.watch for f in transition.facts)
            edge = _Edge(target.edges, carry, self._share(tuple(fresh)),
                         bool(transition.violations or gain or watched), transition, target, gain)
        node.edges[index] = edge
        return edge

    def _choose(self, node: _Node, times: list[float]) -> tuple[float, _Edge | None]:
        """The next step the slow way, when the quick look in `run` found no edge ready to take: the first
        earliest clock, computing edges not yet taken and dropping the clocks of actions that are no-ops
        here; None when no clock is left, or the earliest is past the time bound."""
        while times:
            when = min(times)
            if when == INF:
                self._refuse_overflow(node, times)
                break
            index = times.index(when)  # the first minimum: the action listed first wins ties
            edge = node.edges[index]
            if edge is _UNKNOWN:
                edge = self._edge(node, index)
            if edge:
                return when, (edge if when < self._limit else None)
            times[index] = INF
        return INF, None

    def _refuse_overflow(self, node: _Node, times: list[float]) -> None:
        """A clock at infinity is a no-op's dropped clock, unless its action can fire: then virtual time
        overflowed, and a run that stopped there would pass for a quiescent one (and its open obligations
        for a violation). Such a run gets no verdict."""
        for index, when in enumerate(times):
            if when != INF:
                continue
            edge = node.edges[index]
            if edge is _UNKNOWN:
                edge = self._edge(node, index)
            if edge:
                raise UsageError(f"virtual time overflowed to infinity before {node.actions[index].label()}: the "
                                 "timing profile's delays are too large to simulate; use smaller delays")

    def _start(self, clocks: Clocks) -> tuple[int, _Node, tuple[Violation, ...]]:
        """The run's initial state (drawn from the `init` stream when there are several) as a node, and
        the properties it breaks. They are the same for every seed, so computed once (again after the
        memo of states is cleared)."""
        inits = self._inits
        if inits is None:
            product = self.product
            inits = [(self._node(state), product.state_violations(state)) for state in product.init_states()]
            self._inits = inits
        index = 0 if len(inits) == 1 else int(clocks.delay("init") * 1e9) % len(inits)
        return index, *inits[index]

    def run(self, seed: int, record: bool = False) -> SimRun:
        """One run. A ModelError (model code raised) ends it with the path of the run so far: a run that
        was not recording is run again, recording, to find it (runs are deterministic, and the memo
        holds no part of the failing step)."""
        steps: list[TimedStep] = []
        try:
            return self._run(seed, record, steps)
        except ModelError as error:
            if not record:
                return self.run(seed, record=True)
            raise error.with_path(tuple(s.transition.action.label() for s in steps),
                                  f"the initial state of simulated seed {seed}") from None

    def _run(self, seed: int, record: bool, steps: list[TimedStep]) -> SimRun:
        """The loop is the simulator's hot path, so it is written for speed: each step looks up the
        earliest clock's edge and moves the clocks along it, reading only the edge's first four fields,
        and leaves everything unusual to `_choose` and to the edge's `notable` flag."""
        clocks = Clocks(self.timing, seed)
        watch = self.watch
        observed: list[tuple[float, Fact]] = []
        init_index, node, initial_violations = self._start(clocks)
        violations = list(initial_violations)
        reached = node.reached
        now = 0.0
        count = 0
        end = VIOLATION if violations else STEP_LIMIT
        times = [clocks.delay(kind) for kind in node.kinds]
        edges = node.edges
        edge: Any = None  # the last edge taken
        limit = self._limit
        max_steps = 0 if violations else self.max_steps  # a run that starts broken takes no step
        while count < max_steps:
            # the first earliest clock (the action listed first wins ties); two clocks are the commonest
            # case, and cheaper to compare than to hand to min()
            if len(times) == 2:
                when, other = times
                index = 0
                if other < when:
                    when, index = other, 1
            elif times:
                when = min(times)
                index = times.index(when)
            else:
                when, index = INF, 0
            step = edges[index] if when < limit else _UNKNOWN
            if not step:
                when, step = self._choose(edge.target if edge else node, times)
                if step is None:
                    end = TIME_LIMIT if when < INF else QUIESCENT
                    break
            edge = step
            edges = edge[0]
            if edge[1]:
                times = [*edge[1](times)]
            for position, kind in edge[2]:
                try:
                    times[position] = when + clocks[kind]()
                except IndexError:
                    times[position] = when + clocks.refill(kind)
            now = when
            count += 1
            if record:
                steps.append(TimedStep(now, edge.transition))
            if edge[3]:
                if watch:
                    observed.extend((now, f) for f in edge.transition.facts if f.name in watch)
                if edge.transition.violations:
                    violations.extend(edge.transition.violations)
                    end = VIOLATION
                    break
                reached = reached | edge.gain
        if edge:
            node = edge.target
        if end == QUIESCENT:
            if node.ending is None:
                node.ending = self.product.end_violations(node.state)
            violations.extend(node.ending)
            end = VIOLATION if violations else QUIESCENT
        return SimRun(seed, init_index, end, now, count, violations, reached, steps, node.state, observed)


def simulate(model: Model, seed: int, timing: TimingProfile | None = None, max_steps: int = 100_000,
             max_time: float | None = None, record: bool = True) -> SimRun:
    """Run one seed of `model` (recorded: the run's steps are kept for a trace)."""
    return Simulator(model, timing, max_steps, max_time).run(seed, record)
