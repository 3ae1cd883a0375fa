"""Shrinking simulated counterexamples: from a long violating run to a short one that still violates.

A simulated run that breaks a property is usually long, with many steps that have nothing to do with
the failure. Shrinking is delta debugging (Zeller's ddmin) over the run's action sequence: drop a chunk
of actions, replay what is left through `steersim.core.product.Product` from the same initial state, and keep the
candidate only if it replays as a path of the model and the same property is still violated (by a step,
or at the end of a run in which nothing more can happen). A replay stops at the first violation, so every
candidate is also cut to the step that violates. Chunks halve until single steps, so the result is
1-minimal: removing any one more step loses the violation. A last pass removes every contiguous
segment (not only the aligned chunks ddmin tries) and moves every step elsewhere, and takes the shortest
result, then the one with the smallest total delay, until nothing shrinks: the fewest steps, then the
smallest delays. A candidate step whose actor can do nothing at that point is dropped on replay.
Between the two, a shortcut pass splices in shorter routes between states of the run, found by a small
breadth-first search from each of them: path shortening as model checkers do it for their trails, which
reaches what removing and moving steps cannot (a run that must end where nothing more can happen).

Actions are matched exactly first; an action whose arguments name something counted (the third steer)
falls back to the first enabled action of the same actor and kind, so that dropping an earlier steer
does not make every later one unmatchable, and then to the first enabled action of the same actor, so
that a deterministic participant (an agent loop) takes the step its new state calls for. Whatever a
candidate is made of, it is kept only if it replays as a path of the model and violates the property.

Each kept step keeps the delay it had in the simulated run (the time since the step before it), and the
shrunk trace's times are those delays added up: a trace `steersim replay` accepts like any other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steersim.checking.search import Visitor, breadth_first
from steersim.core.model import Action, Model
from steersim.core.product import Product, Transition, Violation
from steersim.core.registry import get_model_spec
from steersim.traces.trace import Trace, make_trace, read_trace, write_trace

SEGMENT_PASS_STEPS = 80
MOVE_PASS_STEPS = 40
SHORTCUT_DEPTH = 8
SHORTCUT_STATES = 5_000


@dataclass(frozen=True)
class Shrunk:
    """A violating run: the transitions from initial state `init`, each step's delay, and the
    violations found at its end (when the property is violated by quiescence rather than a step)."""

    init: int
    transitions: tuple[Transition, ...]
    delays: tuple[float, ...]
    end_violations: tuple[Violation, ...]
    property: str

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(t.action for t in self.transitions)

    @property
    def total_delay(self) -> float:
        return math.fsum(self.delays)  # rounded once: the same on every Python (sum() changed in 3.12)

    def times(self) -> list[float]:
        out, now = [], 0.0
        for delay in self.delays:
            now += delay
            out.append(now)
        return out


class _Replayer:
    """Replays candidate action sequences and says whether they still violate `prop`."""

    def __init__(self, model: Model, init: int, prop: str) -> None:
        self.product = Product(model)
        self.init = init
        self.prop = prop
        self.attempts = 0

    def attempt(self, actions: Sequence[Action], delays: Sequence[float]) -> Shrunk | None:
        self.attempts += 1
        product = self.product
        state = product.init_states()[self.init]
        taken: list[Transition] = []
        kept: list[float] = []
        for wanted, delay in zip(actions, delays, strict=True):
            action = _match(product.actions(state), wanted)
            transition = None if action is None else product.step(state, action)
            if transition is None:
                continue
            taken.append(transition)
            kept.append(delay)
            if transition.violations:
                if not any(v.property == self.prop for v in transition.violations):
                    return None
                return Shrunk(self.init, tuple(taken), tuple(kept), (), self.prop)
            state = transition.target
        if product.successors(state):
            return None
        ends = product.end_violations(state)
        if not any(v.property == self.prop for v in ends):
            return None
        return Shrunk(self.init, tuple(taken), tuple(kept), tuple(ends), self.prop)


def _match(offered: Sequence[Action], wanted: Action) -> Action | None:
    """The enabled action closest to `wanted`: itself, else the first of the same actor and kind, else
    the first of the same actor; None (the step is dropped) when its actor can do nothing."""
    if wanted in offered:
        return wanted
    same_actor = [a for a in offered if a.actor == wanted.actor]
    return next((a for a in same_actor if a.kind == wanted.kind), same_actor[0] if same_actor else None)


def _without(values: Sequence, start: int, stop: int) -> list:
    return [*values[:start], *values[stop:]]


def _ddmin(replayer: _Replayer, best: Shrunk) -> Shrunk:
    """Zeller's ddmin: remove chunks of a halving size until no single step can go."""
    chunks = 2
    while len(best.transitions) >= 2:
        actions, delays = best.actions, best.delays
        size = max(1, len(actions) // chunks)
        found = None
        for start in range(0, len(actions), size):
            candidate = replayer.attempt(_without(actions, start, start + size), _without(delays, start, start + size))
            if candidate is not None and len(candidate.transitions) < len(actions):
                found = candidate
                break
        if found is not None:
            best = found
            chunks = max(chunks - 1, 2)
        elif size > 1:
            chunks = min(chunks * 2, len(actions))
        else:
            break
    return best


def _moved(values: Sequence, source: int, target: int) -> list:
    """`values` with the item at `source` moved to position `target`."""
    out = list(values)
    out.insert(target, out.pop(source))
    return out


def _segments(replayer: _Replayer, best: Shrunk, max_steps: int = SEGMENT_PASS_STEPS) -> Shrunk:
    """Remove every contiguous segment in turn, not only ddmin's aligned chunks, and move every step to
    every other place, and take the best result: the shortest, then the one with the smallest total
    delay; repeat while anything shrinks. Cutting a whole stretch at once is what lets a deterministic
    participant's later steps re-derive from an earlier state, and moving a step (a steer sent earlier)
    is what lets the system react sooner. Removal is quadratic in the run's length and moving cubic, so
    removal covers runs up to `max_steps` and moving runs up to MOVE_PASS_STEPS (ddmin has made most
    runs that short already); longer ones get single-step removal only."""
    while True:
        actions, delays = best.actions, best.delays
        n = len(actions)
        lengths = range(1, n + 1) if n <= max_steps else range(1, 2)
        edits = [(_without, i, i + k) for k in lengths for i in range(n - k + 1)]
        if n <= MOVE_PASS_STEPS:
            edits += [(_moved, i, j) for i in range(n) for j in range(n) if j != i]
        found = None
        for edit, a, b in edits:
            candidate = replayer.attempt(edit(actions, a, b), edit(delays, a, b))
            if candidate is not None and len(candidate.transitions) < n and (
                    found is None or (len(candidate.transitions), candidate.total_delay)
                    < (len(found.transitions), found.total_delay)):
                found = candidate
        if found is None:
            return best
        best = found


def _shortcuts(replayer: _Replayer, best: Shrunk, depth: int = SHORTCUT_DEPTH,
               max_states: int = SHORTCUT_STATES) -> Shrunk:
    """Splice in shorter routes between states of the run: a bounded breadth-first search from each
    state looks for a later state of the run that it reaches in fewer steps than the run takes. The
    states after the splice are the same product states (model and monitors), so the rest of the run,
    and its violation, stay as they were. Spliced steps were never simulated, so they take no delay."""
    product = replayer.product
    transitions = list(best.transitions)
    states = [product.init_states()[best.init], *(t.target for t in transitions)]
    position = {state: i for i, state in enumerate(states)}
    for start, origin in enumerate(states):
        route = _route_to_later(product, origin, start, position, depth, max_states)
        if route is not None:
            target, steps = route
            actions = [*best.actions[:start], *(t.action for t in steps), *best.actions[target:]]
            delays = [*best.delays[:start], *([0.0] * len(steps)), *best.delays[target:]]
            candidate = replayer.attempt(actions, delays)
            if candidate is not None and len(candidate.transitions) < len(transitions):
                return _shortcuts(replayer, candidate, depth, max_states)
    return best


def _route_to_later(product: Product, origin: Any, start: int, position: dict[Any, int], depth: int,
                    max_states: int) -> tuple[int, tuple[Transition, ...]] | None:
    """The route from `origin` (the run's state `start`) that skips the most steps of the run."""
    shortcut = _Shortcut(start, position)
    search = breadth_first([origin], lambda state: [(t, None if t.violations else t.target)
                                                   for t in product.successors(state)],
                           visitor=shortcut, max_states=max_states, max_depth=depth, paths=True)
    if shortcut.best is None:
        return None
    later, _, key = shortcut.best
    return later, search.path(key)


class _Shortcut(Visitor[Any, Any, Transition]):
    """The first state found, of those the run reaches later than the route does, that saves the most steps;
    a route goes through no step that breaks a property."""

    def __init__(self, start: int, position: dict[Any, int]) -> None:
        self.start = start
        self.position = position
        self.best: tuple[int, int, Any] | None = None  # the run's index of the state, the route's length, the state

    def discovered(self, node: Any, key: Any, depth: int) -> None:
        later = self.position.get(node, -1)
        if depth and later - self.start > depth and (self.best is None or later - depth > self.best[0] - self.best[1]):
            self.best = (later, depth, key)


def shrink_run(model: Model, init: int, actions: Sequence[Action], delays: Sequence[float], prop: str) -> Shrunk:
    """The shortest run found by shrinking `actions` (taken from initial state `init`) that still
    violates `prop`. Raises ValueError when the given run does not violate `prop` in the first place."""
    replayer = _Replayer(model, init, prop)
    start = replayer.attempt(actions, delays)
    if start is None:
        raise ValueError(f"the run to shrink does not violate {prop!r}")
    return _segments(replayer, _shortcuts(replayer, _segments(replayer, _ddmin(replayer, start))))


def trace_property(trace: Trace) -> str:
    """The property a trace violates first: the one on its violating step, else at its end."""
    for step in trace.steps:
        if step.violations:
            return step.violations[0]["property"]
    if trace.violations:
        return trace.violations[0]["property"]
    raise ValueError("the trace violates no property, so there is nothing to shrink")


def shrink_trace(trace: Trace, prop: str | None = None) -> Trace:
    """A shrunk copy of a violating trace of a registered model, violating the same property."""
    prop = prop or trace_property(trace)
    model = get_model_spec(trace.model).build(trace.params, trace.bug)
    actions = [Action(s.action["actor"], s.action["kind"], _as_args(s.action.get("args", ()))) for s in trace.steps]
    times = [s.t or 0.0 for s in trace.steps]
    delays = [t - before for t, before in zip(times, [0.0, *times[:-1]], strict=True)]
    shrunk = shrink_run(model, trace.init, actions, delays, prop)
    return make_trace(trace.model, trace.params, trace.bug, shrunk.init, shrunk.transitions, shrunk.times(),
                      None, trace.timing, "violation", shrunk.end_violations)


def shrunk_path(path: Path) -> Path:
    """Where the shrunk copy of trace `path` goes: beside it."""
    return path.with_name(f"{path.stem}-shrunk{path.suffix}")


def shrink_file(path: str | Path, prop: str | None = None) -> tuple[Path, Trace]:
    """Shrink the trace at `path` and write the result beside it; return where, and the trace."""
    source = Path(path)
    shrunk = shrink_trace(read_trace(source), prop)
    target = shrunk_path(source)
    write_trace(target, shrunk)
    return target, shrunk


def _as_args(value: object) -> tuple:
    """JSON lists back to the tuples actions are made of."""
    if isinstance(value, list):
        return tuple(_as_args(v) for v in value)
    return value  # type: ignore[return-value]
