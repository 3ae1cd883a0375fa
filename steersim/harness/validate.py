"""Trace validation: is an observed run a behaviour the model allows? (design section 6)

A harness records what a real implementation did as native events. The validator tracks every
configuration (product state, number of observed events explained so far) that the model can reach
while producing exactly the observed events in order; model steps that emit no event are free. If some
configuration explains the whole observation, the run conforms. Otherwise the divergence names the
first observed event no configuration can produce, the shortest model path that explains the prefix
before it, and the events the model could have produced there instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from steersim.checking.search import STOP, Control, Edges, Visitor, breadth_first
from steersim.core.fingerprint import fingerprint
from steersim.core.model import Event, Model
from steersim.core.product import Product, PState, Transition

Node = tuple[PState, int]  # a product state and how many observed events the path to it explains


def default_match(expected: Event, observed: Event) -> bool:
    """Same name, and every field both carry has the same value (the harness decides which fields it
    records; ids it cannot predict it should rename to the model's before validating)."""
    if expected.name != observed.name:
        return False
    data = expected.data
    return all(data[key] == value for key, value in observed.data.items() if key in data)


class ValidationCut(RuntimeError):
    """The search met its bound of configurations before it could decide: no verdict either way."""


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
    open_end: bool = False,
) -> Validation:
    """Breadth-first over (product state, events explained): the first full explanation is a shortest
    one. With `require_quiescent` the explaining run must also end where the model can do nothing. With
    `open_end` the observation may stop inside a step that emits several events (a log cut off after
    some of them were written): its last events need only be a prefix of that step's.
    `match` defaults to the model's own `match_event`, if it has one, else `default_match`."""
    product = Product(model)
    match = match or product.model.match_event or default_match

    def expand(node: Node) -> list[tuple[Transition, Node | None]]:
        pstate, position = node
        edges = []
        for transition in product.successors(pstate):
            advanced = _advance(transition.events, observed, position, match, open_end)
            edges.append((transition, None if advanced is None else (transition.target, advanced)))
        return edges

    explainer = _Explainer(len(observed), require_quiescent)
    search = breadth_first(((init, 0) for init in product.init_states()), expand,
                           key=lambda node: (fingerprint(node[0]), node[1]), visitor=explainer,
                           max_states=max_configurations, paths=True)
    if search.cut is not None:
        raise ValidationCut(f"trace validation needed more than {max_configurations:,} configurations")
    if explainer.explained is not None:
        return Validation(True, search.path(explainer.explained), None, search.states)
    (pstate, position), best = explainer.best
    total = len(observed)
    path = search.path(best)
    expected = tuple(e for t in product.successors(pstate) for e in t.events[:1])
    if position >= total:
        divergence = Divergence(total - 1, observed[-1], path, expected) if total else None
    else:
        divergence = Divergence(position, observed[position], path, expected)
    return Validation(False, path, divergence, search.states)


class _Explainer(Visitor[Node, tuple[int, int], Transition]):
    """Stops at the first configuration that explains the whole observation; remembers the first one
    that explains the most of it, for the divergence."""

    def __init__(self, total: int, require_quiescent: bool) -> None:
        self.total = total
        self.require_quiescent = require_quiescent
        self.best: tuple[Node, tuple[int, int]] | None = None
        self.explained: tuple[int, int] | None = None

    def expanded(self, node: Node, key: tuple[int, int], depth: int, edges: Edges) -> Control | None:
        if self.best is None or node[1] > self.best[0][1]:
            self.best = (node, key)
        if node[1] == self.total and (not self.require_quiescent or not edges):
            self.explained = key
            return STOP
        return None


def steps_with_events(product: Product, state: PState, *, max_silent: int | None = None,
                      budget: int | None = None) -> list[Transition]:
    """The steps with events that can come next after `state`, looking through steps that emit none (at
    most `max_silent` in a row; no state is looked past once `budget` are known), breadth-first and each
    state once: what the model offered where an observation left it."""
    offered = _Offered()
    breadth_first([state], lambda pstate: [(t, None if t.events else t.target) for t in product.successors(pstate)],
                  key=fingerprint, visitor=offered, max_depth=None if max_silent is None else max_silent + 1,
                  budget=budget)
    return offered.steps


class _Offered(Visitor[PState, int, Transition]):
    """Collects, state by state, the steps with events: the search does not follow them."""

    def __init__(self) -> None:
        self.steps: list[Transition] = []

    def expanded(self, node: PState, key: int, depth: int, edges: Edges) -> None:
        self.steps.extend(transition for transition, target in edges if target is None)


def _advance(events: Sequence[Event], observed: Sequence[Event], position: int,
             match: Callable[[Event, Event], bool], open_end: bool = False) -> int | None:
    if position + len(events) > len(observed):
        if not open_end or position == len(observed):
            return None
        events = events[:len(observed) - position]
    for offset, event in enumerate(events):
        if not match(event, observed[position + offset]):
            return None
    return position + len(events)
