"""State-space reductions: partial-order reduction over local actions, and symmetry.

**Local actions** (`model.is_local(action)`): an action a model declares to commute with every action of
every other actor, to be neither enabled nor disabled by them, and to emit no fact (so no monitor sees
it). The explorer then expands a state through one such action alone (a singleton ample set) when the
step is also invisible there: it breaks no property and changes no state predicate a property reads.
The cycle proviso is the strong one: the ample successor must be a state not seen before, otherwise the
state is expanded fully. This preserves every safety verdict and every dead end (Peled's C0-C3), not
shortest counterexamples, and not liveness under fairness, so the explorer turns the reduction off when
it checks liveness. `local_action_problems` checks a model's declaration on its reachable states.

**Symmetry** (`model.symmetry(state)`): a canonical representative of the state's symmetry class and the
renaming of ids that produced it; the explorer fingerprints the representative, with the same renaming
applied to the monitor states, so interchangeable ids are explored once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.checking.search import STOP, Control, Edges, Visitor, search_product
from steersim.core.fingerprint import fingerprint
from steersim.core.model import Model, as_model_base
from steersim.core.product import Product, PState, Transition


def has_local_actions(model: Model) -> bool:
    return as_model_base(model).is_local is not None


def has_symmetry(model: Model) -> bool:
    return as_model_base(model).symmetry is not None


def rename(value: Any, mapping: Mapping[str, str]) -> Any:
    """`value` with every string that `mapping` names replaced, through nested tuples."""
    if isinstance(value, str):
        return mapping.get(value, value)
    if type(value) is tuple:
        return tuple(rename(v, mapping) for v in value)
    return value


def canonical(model: Model, pstate: PState) -> PState:
    state, renaming = model.symmetry(pstate[0])  # type: ignore[attr-defined]
    return (state, rename(pstate[1], renaming)) if renaming else (state, pstate[1])


def local_action_problems(model: Model, max_states: int = 20_000) -> list[str]:
    """Check a model's local-action declaration on its reachable states (breadth-first, bounded): each
    local action emits no fact and commutes with every co-enabled action of another actor, neither
    enabling nor disabling it. Returns one line per problem found (none: the declaration holds there)."""
    product = Product(model)
    checker = _LocalActionChecker(model, product)
    search_product(product, checker, budget=max_states + 1)
    return checker.problems


class _LocalActionChecker(Visitor[PState, int, Transition]):
    """Checks the local actions among each state's transitions; stops after 20 problems."""

    def __init__(self, model: Model, product: Product) -> None:
        self.model = model
        self.product = product
        self.problems: list[str] = []

    def expanded(self, node: PState, key: int, depth: int, edges: Edges) -> Control | None:
        transitions = [t for t, _ in edges]
        for a in transitions:
            if not self.model.is_local(a.action):  # type: ignore[attr-defined]
                continue
            if a.facts:
                self.problems.append(f"local action {a.action.label()} emits facts {[str(f) for f in a.facts]}")
            for b in transitions:
                if b.action.actor == a.action.actor:
                    continue
                ab = self.product.step(a.target, b.action)
                ba = self.product.step(b.target, a.action)
                if ab is None or ba is None:
                    self.problems.append(f"{a.action.label()} and {b.action.label()} disable each other")
                elif fingerprint(ab.target) != fingerprint(ba.target):
                    self.problems.append(f"{a.action.label()} and {b.action.label()} do not commute")
        return STOP if len(self.problems) >= 20 else None
