"""The simulator: the model as a generalised semi-Markov process in virtual time.

When an action becomes enabled it draws a firing delay from the timing profile for its kind (its own
numpy stream, see `sim.timing`); the earliest clock fires; ties go to the action listed first by
`actions()`; an action that stays enabled keeps its clock, and one that is disabled loses it. Every
step goes through `sim.product.Product`, the same stepping the explorer uses, so a simulated run is a
path of the explored graph. The run stops at quiescence (no action enabled), at the step or time bound,
or at the first violation, and says which. No wall clock is read: same model, profile and seed give the
same run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sim.model import Action, Model
from sim.product import Product, PState, Transition, Violation
from sim.timing import Clocks, Delay, TimingProfile

QUIESCENT, STEP_LIMIT, TIME_LIMIT, VIOLATION = "quiescent", "step-limit", "time-limit", "violation"


@dataclass
class TimedStep:
    t: float
    transition: Transition


@dataclass
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


_UNKNOWN = object()  # an edge not yet taken
INF = float("inf")


class _Node:
    """What the simulator knows of one product state: its enabled actions and their kinds, the
    `sometimes` properties it satisfies, and per action the edge taken from it (computed the first
    time). Models are pure, so a node serves every seed that passes through its state."""

    __slots__ = ("actions", "edges", "kinds", "positions", "reached")

    def __init__(self, actions: Sequence[Action], reached: frozenset[str]) -> None:
        self.actions = tuple(actions)
        self.kinds = tuple(a.kind for a in self.actions)
        self.positions = {a: i for i, a in enumerate(self.actions)}
        self.reached = reached
        self.edges: list[Any] = [_UNKNOWN] * len(self.actions)


class _Edge(NamedTuple):
    """A transition, the node it leads to, and how clocks move along it: `carry` pairs (position in the
    target, position in the source) of the actions that stay enabled and keep their clocks; `fresh` the
    positions of the actions that draw new ones (newly enabled, or the fired action enabled again)."""

    transition: Transition
    target: _Node
    carry: tuple[tuple[int, int], ...]
    fresh: tuple[int, ...]


class Simulator:
    """Runs seeds of one model under one timing profile. `cache_states` bounds the memo of visited
    states (cleared when full; nodes a running seed still holds are dropped when it ends)."""

    def __init__(self, model: Model, timing: TimingProfile | None = None,
                 max_steps: int = 100_000, max_time: float | None = None, cache_states: int = 100_000) -> None:
        self.product = Product(model)
        self.timing = timing or TimingProfile.from_mapping(model.default_timing())
        self.max_steps = max_steps
        self.max_time = max_time
        self.cache_states = cache_states
        self._nodes: dict[PState, _Node] = {}
        self._kinds: dict[str, tuple[Delay, int]] = {}

    def _node(self, state: PState) -> _Node:
        node = self._nodes.get(state)
        if node is None:
            if len(self._nodes) >= self.cache_states:
                self._nodes.clear()
            model_state = state[0]
            reached = frozenset(p.name for p in self.product.sometimes if p.state(model_state))
            node = self._nodes[state] = _Node(self.product.actions(state), reached)
        return node

    def _edge(self, node: _Node, state: PState, index: int) -> _Edge | None:
        """Take action `index` from `node` for the first time; None when it is a no-op there (it keeps
        its clock but cannot fire from this state)."""
        fired = node.actions[index]
        transition = self.product.step(state, fired)
        edge = None
        if transition is not None:
            target = self._node(transition.target)
            carry, fresh = [], []
            for position, action in enumerate(target.actions):
                source = node.positions.get(action)
                if source is None or action == fired:
                    fresh.append(position)
                else:
                    carry.append((position, source))
            edge = _Edge(transition, target, tuple(carry), tuple(fresh))
        node.edges[index] = edge
        return edge

    def run(self, seed: int, record: bool = False) -> SimRun:
        product = self.product
        clocks = Clocks(self.timing, seed, self._kinds)
        buffers = clocks.buffers
        inits = product.init_states()
        init_index = 0 if len(inits) == 1 else int(clocks.delay("init") * 1e9) % len(inits)
        state = inits[init_index]
        node = self._node(state)
        reached = set(node.reached)
        violations = list(product.state_violations(state))
        steps: list[TimedStep] = []
        now = 0.0
        count = 0
        end = VIOLATION if violations else QUIESCENT
        times = [clocks.delay(kind) for kind in node.kinds]
        while not violations:
            if count >= self.max_steps:
                end = STEP_LIMIT
                break
            edge = None
            while times:
                when = min(times)
                if when == INF:
                    break
                index = times.index(when)  # the first minimum: the action listed first wins ties
                edge = node.edges[index]
                if edge is _UNKNOWN:
                    edge = self._edge(node, state, index)
                if edge is not None:
                    break
                times[index] = INF
            if edge is None:
                violations.extend(product.end_violations(state))
                end = VIOLATION if violations else QUIESCENT
                break
            if self.max_time is not None and when > self.max_time:
                end = TIME_LIMIT
                break
            now = when
            count += 1
            transition, node, carry, fresh = edge
            state = transition.target
            following = [INF] * len(node.kinds)
            for position, source in carry:
                following[position] = times[source]
            for position in fresh:
                kind = node.kinds[position]
                buffer = buffers.get(kind)
                following[position] = now + (buffer.pop() if buffer else clocks.delay(kind))
            times = following
            if record:
                steps.append(TimedStep(now, transition))
            if transition.violations:
                violations.extend(transition.violations)
                end = VIOLATION
                break
            if node.reached:
                reached |= node.reached
        return SimRun(seed, init_index, end, now, count, violations, frozenset(reached), steps, state)


def simulate(model: Model, seed: int, timing: TimingProfile | None = None, max_steps: int = 100_000,
             max_time: float | None = None, record: bool = True) -> SimRun:
    """Run one seed of `model` (recorded: the run's steps are kept for a trace)."""
    return Simulator(model, timing, max_steps, max_time).run(seed, record)
