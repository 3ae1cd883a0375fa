"""Finding a model's canonical traces by search rather than by hand.

A spec describes its canonical scenarios as sequences of native events ("create, created, steer,
accepted, incomplete, created"). Writing those traces by hand would let them drift from the model;
instead the shortest run whose native event names contain the sequence as a subsequence is searched for,
breadth-first over (product state, how much of the sequence is matched so far). Names are fnmatch
patterns, so `response.steer.*` matches any steering event.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from steersim.checking.search import STOP, Control, Visitor, breadth_first
from steersim.core.fingerprint import fingerprint
from steersim.core.model import Model
from steersim.core.paths import Path
from steersim.core.product import Product, PState, Transition

SEARCH_LIMIT = 300_000  # (state, progress) pairs visited at most
Node = tuple[PState, int, int]  # a product state, how much of the pattern is matched, the initial state's index


def advance(matched: int, pattern: Sequence[str], transition: Transition) -> int:
    """How much of `pattern` is matched after `transition`'s events, given `matched` before them. Greedy
    matching is exact for subsequences: taking the earliest occurrence never loses a later match."""
    for event in transition.events:
        if matched < len(pattern) and fnmatchcase(event.name, pattern[matched]):
            matched += 1
    return matched


def shortest_run_with(model: Model, pattern: Sequence[str], limit: int = SEARCH_LIMIT) -> Path | None:
    """The shortest run whose native event names contain `pattern` as a subsequence, ending at the
    step that completes it; None if there is none within `limit` search nodes."""
    product = Product(model)

    def expand(node: Node) -> list[tuple[Transition, Node]]:
        state, matched, init_index = node
        return [(t, (t.target, advance(matched, pattern, t), init_index)) for t in product.successors(state)]

    goal = _Completed(len(pattern))
    search = breadth_first(((state, 0, index) for index, state in enumerate(product.init_states())), expand,
                           key=lambda node: (fingerprint(node[0]), node[1]), visitor=goal, budget=limit, paths=True)
    if goal.found is None:
        return None
    key, init_index = goal.found
    steps = search.path(key)
    init = product.init_states()[init_index]
    return Path(init, steps, init_index, None, None, (init, *(step.target for step in steps)))


class _Completed(Visitor[Node, tuple[int, int], Transition]):
    """Stops at the first node reached by a step that completes the pattern."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.found: tuple[tuple[int, int], int] | None = None  # its key and initial state's index

    def discovered(self, node: Node, key: tuple[int, int], depth: int) -> Control | None:
        if depth == 0 or node[1] < self.length:
            return None
        self.found = (key, node[2])
        return STOP
