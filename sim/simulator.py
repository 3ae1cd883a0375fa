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

from dataclasses import dataclass, field

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


class _Node:
    """What the simulator knows of one product state: its enabled actions, the transitions taken from
    it so far, and the `sometimes` properties it satisfies. Models are pure, so this is computed once
    per state and shared by every seed that passes through it."""

    __slots__ = ("actions", "reached", "transitions")

    def __init__(self, actions: list[Action], reached: frozenset[str]) -> None:
        self.actions = actions
        self.reached = reached
        self.transitions: dict[Action, Transition | None] = {}


class Simulator:
    """Runs seeds of one model under one timing profile. `cache_states` bounds the memo of visited
    states (cleared when full), which makes sweeps over many seeds cheap without unbounded memory."""

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
            node = self._nodes[state] = _Node(list(self.product.actions(state)), reached)
        return node

    def _step(self, node: _Node, state: PState, action: Action) -> Transition | None:
        transitions = node.transitions
        if action in transitions:
            return transitions[action]
        transition = transitions[action] = self.product.step(state, action)
        return transition

    def run(self, seed: int, record: bool = False) -> SimRun:
        product = self.product
        clocks = Clocks(self.timing, seed, self._kinds)
        inits = product.init_states()
        init_index = 0 if len(inits) == 1 else int(clocks.delay("init") * 1e9) % len(inits)
        state = inits[init_index]
        node = self._node(state)
        reached = set(node.reached)
        violations = list(product.state_violations(state))
        steps: list[TimedStep] = []
        pending: dict[Action, float] = {}
        now = 0.0
        count = 0
        end = VIOLATION if violations else QUIESCENT
        while not violations:
            if count >= self.max_steps:
                end = STEP_LIMIT
                break
            enabled: dict[Action, float] = {}
            for action in node.actions:
                when = pending.get(action)
                enabled[action] = now + clocks.delay(action.kind) if when is None else when
            transition = None
            while enabled:
                action = min(enabled, key=enabled.__getitem__)  # first minimum: the earlier listed wins ties
                when = enabled.pop(action)
                transition = self._step(node, state, action)
                if transition is not None:
                    break
            if transition is None:
                end = QUIESCENT
                violations.extend(product.end_violations(state))
                if violations:
                    end = VIOLATION
                break
            if self.max_time is not None and when > self.max_time:
                end = TIME_LIMIT
                break
            now = when
            pending = enabled
            count += 1
            state = transition.target
            node = self._node(state)
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
