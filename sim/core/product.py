"""The product of a model with the fact monitors: the one system both engines run.

A product state is `(model_state, monitor_states)`. Stepping it runs the model, maps the native events
to facts, feeds the facts to every monitor and judges the model's own safety properties. The explorer
and the simulator both step through here, so they see exactly the same transitions, violations and
verdicts: a simulated trace is a path of the explored graph by construction.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

from sim.core.facts import Fact, FactError, fact_problem
from sim.core.model import (
    Action,
    Always,
    Event,
    Eventually,
    Model,
    ModelBase,
    Property,
    Sometimes,
    as_model_base,
    model_error,
)
from sim.core.monitors import CORE_MONITORS, Monitor, MonitorViolation
from sim.errors import ModelError

PState = tuple[Hashable, tuple]
ADMITTED_LIMIT = 100_000  # facts remembered as checked; past it the memo starts again


class Violation(NamedTuple):
    """A property broken by a step, or by a state in which nothing more can happen."""

    property: str
    message: str


class Transition(NamedTuple):
    """One step of the product: named tuples, because both engines make one per transition."""

    action: Action
    target: PState
    events: tuple[Event, ...]
    facts: tuple[Fact, ...]
    violations: tuple[Violation, ...]


@dataclass(frozen=True)
class PropertyInfo:
    """A row of the verdict table: a property's name, kind and one line of meaning."""

    name: str
    kind: str
    doc: str


class Product:
    """A model composed with the core monitors (and any extra fact monitors the model declares). Every
    call into model code goes through here and is guarded: an exception there, or a fact outside the
    vocabulary, becomes a `ModelError` naming the action and the state (the engines add the path)."""

    def __init__(self, model: Model | ModelBase, monitors: Sequence[Monitor] = CORE_MONITORS) -> None:
        self.model = model = as_model_base(model)
        try:
            extra, own = tuple(model.monitors()), tuple(model.properties())
        except Exception as broken:
            raise model_error(broken, None, what="properties() or monitors()") from broken
        self.monitors = tuple(monitors) + extra
        props: Sequence[Property] = tuple(_guarded(p) for p in own)
        self.state_props = tuple(p for p in props if isinstance(p, Always) and p.state is not None)
        self.step_props = tuple(p for p in props if isinstance(p, Always) and p.step is not None)
        self.sometimes = tuple(p for p in props if isinstance(p, Sometimes))
        self.eventually = tuple(p for p in props if isinstance(p, Eventually))
        self.liveness = tuple(_on_model_state(p) for p in self.eventually) + tuple(
            Eventually(f"{m.name}.eventually", goal=_settled(i, m), trigger=_unsettled(i, m),
                       doc=f"eventually: {m.doc}")
            for i, m in enumerate(self.monitors)
            if type(m).settled is not Monitor.settled
        )
        self.fair_patterns = tuple(model.fair_actors)
        self._fair_cache: dict[str, str | None] = {}
        self._admitted: set[Fact] = set()
        self._routes: dict[str, tuple[int, ...]] = {}
        for index, monitor in enumerate(self.monitors):
            for name in sorted(monitor.watches):
                self._routes[name] = (*self._routes.get(name, ()), index)
        names = [info.name for info in self.property_infos()]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"model {model.name!r} declares property names twice: {', '.join(duplicates)}")

    def property_infos(self) -> list[PropertyInfo]:
        infos = [PropertyInfo(m.name, "always", m.doc) for m in self.monitors]
        infos += [PropertyInfo(p.name, p.kind, p.doc) for p in self.state_props + self.step_props]
        infos += [PropertyInfo(p.name, p.kind, p.doc) for p in self.sometimes]
        infos += [PropertyInfo(p.name, p.kind, p.doc) for p in self.liveness]
        return infos

    def init_states(self) -> list[PState]:
        initial = tuple(m.initial() for m in self.monitors)
        try:
            states = self.model.init_states()
        except Exception as broken:
            raise model_error(broken, None, what="init_states()") from broken
        return [(s, initial) for s in states]

    def state_violations(self, pstate: PState) -> tuple[Violation, ...]:
        state = pstate[0]
        return tuple(
            Violation(p.name, p.doc or f"{p.name} does not hold") for p in self.state_props if not p.state(state)
        )

    def end_violations(self, pstate: PState) -> tuple[Violation, ...]:
        """What the monitors say of a state in which the system can do nothing more."""
        found = []
        for monitor, mstate in zip(self.monitors, pstate[1], strict=True):
            message = monitor.at_end(mstate)
            if message:
                found.append(Violation(monitor.name, message))
        return tuple(found)

    def actions(self, pstate: PState) -> Sequence[Action]:
        try:
            return self.model.actions(pstate[0])
        except Exception as broken:
            raise model_error(broken, pstate[0], what="actions()") from broken

    def step(self, pstate: PState, action: Action) -> Transition | None:
        state, mstates = pstate
        model = self.model
        try:
            out = model.step(state, action)
            if out is None:
                return None
            nxt, events = out
            events = tuple(events)
            to_facts = model.facts
            facts = tuple([f for e in events for f in to_facts(e)])
        except Exception as broken:
            raise model_error(broken, state, action) from broken
        violations: list[Violation] = []
        if facts:
            new_mstates = list(mstates)
            admitted = self._admitted
            for fact in facts:
                try:
                    checked = fact in admitted
                except TypeError:  # an unhashable field: `_admit` says so
                    checked = False
                if not checked:
                    self._admit(fact, state, action)
                for index in self._routes.get(fact.name, ()):
                    monitor = self.monitors[index]
                    try:
                        new_mstates[index] = monitor.step(new_mstates[index], fact)
                    except MonitorViolation as broken:
                        violations.append(Violation(monitor.name, f"{fact}: {broken}"))
            mstates = tuple(new_mstates)
        for prop in self.step_props:
            if not prop.step(state, action, nxt):
                violations.append(Violation(prop.name, prop.doc or f"{prop.name} broken by {action.label()}"))
        target = (nxt, mstates)
        if self.state_props:
            violations.extend(self.state_violations(target))
        return Transition(action, target, events, facts, tuple(violations))

    def _admit(self, fact: Any, state: Hashable, action: Action) -> None:
        """Check a fact not met before against the vocabulary (the facts met are few, so each is checked
        once), or raise the ModelError that names the action that emitted it."""
        try:
            hash(fact)
        except TypeError:
            raise model_error(FactError(f"{fact!r}, which is not hashable (a fact's fields are strings, "
                                        "numbers or booleans)"), state, action) from None
        problem = fact_problem(fact)
        if problem is not None:
            raise model_error(FactError(problem), state, action)
        if len(self._admitted) >= ADMITTED_LIMIT:
            self._admitted.clear()
        self._admitted.add(fact)

    def successors(self, pstate: PState) -> list[Transition]:
        out = []
        for action in self.actions(pstate):
            transition = self.step(pstate, action)
            if transition is not None:
                out.append(transition)
        return out

    def fairness_class(self, action: Action) -> str | None:
        """The weak-fairness class of an action: its actor, if the model declares that actor fair."""
        actor = action.actor
        if actor not in self._fair_cache:
            fair = any(fnmatchcase(actor, pattern) for pattern in self.fair_patterns)
            self._fair_cache[actor] = actor if fair else None
        return self._fair_cache[actor]


def _guarded(prop: Property) -> Property:
    """`prop` with its predicates raising a ModelError that names the property, when they raise."""

    def guard(judge: Any) -> Any:
        if judge is None:
            return None

        def judged(state: Any, *rest: Any) -> bool:
            try:
                return judge(state, *rest)
            except Exception as broken:
                action = rest[0] if rest else None
                raise model_error(broken, state, action, what=f"property {prop.name!r}") from broken

        return judged

    if isinstance(prop, Always):
        return Always(prop.name, guard(prop.state), guard(prop.step), prop.doc)
    if isinstance(prop, Sometimes):
        return Sometimes(prop.name, guard(prop.state), prop.doc)
    if isinstance(prop, Eventually):
        return Eventually(prop.name, guard(prop.goal), guard(prop.trigger), prop.doc)
    raise ModelError(f"properties() returned {prop!r}, which is not an Always, Sometimes or Eventually")


def _unsettled(index: int, monitor: Monitor) -> Any:
    def trigger(pstate: PState) -> bool:
        return not monitor.settled(pstate[1][index])

    return trigger


def _settled(index: int, monitor: Monitor) -> Any:
    def goal(pstate: PState) -> bool:
        return monitor.settled(pstate[1][index])

    goal.__name__ = f"{monitor.name}_settled"
    return goal


def _on_model_state(prop: Eventually) -> Eventually:
    """A model's leads-to property, restated over product states like the monitors' own."""
    goal, trigger = prop.goal, prop.trigger
    return Eventually(
        prop.name,
        goal=lambda pstate: goal(pstate[0]),
        trigger=None if trigger is None else (lambda pstate: trigger(pstate[0])),
        doc=prop.doc,
    )
