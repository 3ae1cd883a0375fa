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

from sim.facts import Fact
from sim.model import Action, Always, Event, Eventually, Model, Property, Sometimes
from sim.monitors import CORE_MONITORS, Monitor, MonitorViolation

PState = tuple[Hashable, tuple]


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
    """A model composed with the core monitors (and any extra fact monitors the model declares)."""

    def __init__(self, model: Model, monitors: Sequence[Monitor] = CORE_MONITORS) -> None:
        self.model = model
        self.monitors = tuple(monitors) + tuple(getattr(model, "monitors", lambda: ())())
        props: Sequence[Property] = model.properties()
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
        self.fair_patterns = tuple(getattr(model, "fair_actors", ()))
        self._fair_cache: dict[str, str | None] = {}
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
        return [(s, initial) for s in self.model.init_states()]

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
        return self.model.actions(pstate[0])

    def step(self, pstate: PState, action: Action) -> Transition | None:
        state, mstates = pstate
        model = self.model
        nxt = model.next_state(state, action)
        if nxt is None:
            return None
        events = tuple(model.observe(state, action, nxt))
        to_facts = model.facts
        facts = tuple([f for e in events for f in to_facts(e)])
        violations: list[Violation] = []
        if facts:
            new_mstates = list(mstates)
            for fact in facts:
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

    def successors(self, pstate: PState) -> list[Transition]:
        out = []
        for action in self.model.actions(pstate[0]):
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
