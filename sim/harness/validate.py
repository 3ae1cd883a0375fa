"""Trace validation: is an observed run a behaviour the model allows? (design section 6)

A harness records what a real implementation did as native events. The validator tracks every
configuration (product state, number of observed events explained so far) that the model can reach
while producing exactly the observed events in order; model steps that emit no event are free. If some
configuration explains the whole observation, the run conforms. Otherwise the divergence names the
first observed event no configuration can produce, the shortest model path that explains the prefix
before it, and the events the model could have produced there instead.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sim.core.fingerprint import fingerprint
from sim.core.model import Event, Model
from sim.core.product import Product, PState, Transition


def default_match(expected: Event, observed: Event) -> bool:
    """Same name, and every field both carry has the same value (the harness decides which fields it
    records; ids it cannot predict it should rename to the model's before validating)."""
    if expected.name != observed.name:
        return False
    data = expected.data
    return all(data[key] == value for key, value in observed.data.items() if key in data)


@dataclass(frozen=True)
class Divergence:
    """The observation left the model at `position`: `observed` is the first unexplained event,
    `explained` the shortest model path through the prefix, `expected` what the model offered."""

    position: int
    observed: Event
    explained: tuple[Transition, ...]
    expected: tuple[Event, ...]

    def summary(self) -> str:
        offered = ", ".join(sorted({e.name for e in self.expected})) or "nothing (the model was done)"
        return (f"observed event {self.position} {self.observed.name} {dict(self.observed.data)} is not a "
                f"behaviour of the model; after {len(self.explained)} model steps it could produce: {offered}")


@dataclass(frozen=True)
class Validation:
    ok: bool
    path: tuple[Transition, ...]  # the explaining path (whole run if ok, else the prefix)
    divergence: Divergence | None
    configurations: int


def validate(
    model: Model,
    observed: Sequence[Event],
    match: Callable[[Event, Event], bool] | None = None,
    require_quiescent: bool = False,
    max_configurations: int = 1_000_000,
) -> Validation:
    """Breadth-first over (product state, events explained): the first full explanation is a shortest
    one. With `require_quiescent` the explaining run must also end where the model can do nothing.
    `match` defaults to the model's own `match_event`, if it has one, else `default_match`."""
    product = Product(model)
    match = match or product.model.match_event or default_match
    parent: dict[tuple[int, int], tuple[tuple[int, int], Transition] | None] = {}
    states: dict[tuple[int, int], PState] = {}
    queue: deque[tuple[int, int]] = deque()
    for init in product.init_states():
        key = (fingerprint(init), 0)
        if key not in parent:
            parent[key] = None
            states[key] = init
            queue.append(key)
    best = next(iter(parent))
    total = len(observed)
    while queue:
        key = queue.popleft()
        pstate, position = states[key], key[1]
        if position > best[1]:
            best = key
        transitions = product.successors(pstate)
        if position == total and (not require_quiescent or not transitions):
            return Validation(True, _path(parent, key), None, len(parent))
        for transition in transitions:
            advanced = _advance(transition.events, observed, position, match)
            if advanced is None:
                continue
            next_key = (fingerprint(transition.target), advanced)
            if next_key in parent:
                continue
            parent[next_key] = (key, transition)
            states[next_key] = transition.target
            queue.append(next_key)
            if len(parent) > max_configurations:
                raise RuntimeError(f"trace validation needed more than {max_configurations:,} configurations")
    position = best[1]
    expected = tuple(e for t in product.successors(states[best]) for e in t.events[:1])
    if position >= total:
        divergence = Divergence(total - 1, observed[-1], _path(parent, best), expected) if total else None
    else:
        divergence = Divergence(position, observed[position], _path(parent, best), expected)
    return Validation(False, _path(parent, best), divergence, len(parent))


def _advance(events: Sequence[Event], observed: Sequence[Event], position: int,
             match: Callable[[Event, Event], bool]) -> int | None:
    if position + len(events) > len(observed):
        return None
    for offset, event in enumerate(events):
        if not match(event, observed[position + offset]):
            return None
    return position + len(events)


def _path(parent: dict[Any, Any], key: Any) -> tuple[Transition, ...]:
    steps = []
    while parent[key] is not None:
        key, transition = parent[key]
        steps.append(transition)
    return tuple(reversed(steps))
