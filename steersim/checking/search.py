"""One bounded breadth-first search, with a visitor, for every walk over states that is not the explorer.

Exporting, drawing and counting the state graph, finding a canonical run, validating an observed run,
saying what the model offered where an observation left it, shrinking a run, finding the kinds swarm
testing may turn off and checking a local-action declaration all walk the same way: from some roots,
first in first out, each state once by a key, successors in the order `expand` gives them, so that
what they find never depends on set order. Here that walk is written once; a caller says only what it
does where (as with Stateright's checker visitor):

- `Visitor.discovered(node, key, depth)` for each state the first time it is reached, roots first;
- `Visitor.expanded(node, key, depth, edges)` when a state is taken from the queue, with all its edges;
- `Visitor.edge(source, edge, target, new)` for each edge followed, after its target's `discovered`.

Each may return `STOP` to end the search at once. `discovered` may return `PRUNE` (the state is kept
and counted but never expanded) and so may `expanded` (none of the state's edges is followed).
`expand(node)` returns `(edge, target)` pairs; a target of None is an edge `expanded` sees but the
search does not follow (a step that emits an event, one that breaks a property).

Bounds, all optional: `max_depth` (states that deep are kept but not expanded), `max_states` (a hard
bound: the first new state beyond it ends the search, which is then incomplete and names the edge that
reached it, `cut`) and `budget` (a soft one: no state is expanded once `budget` states are known, so
the last expansion may overshoot it). The explorer keeps its own loop, tuned for millions of states.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from steersim.core.fingerprint import fingerprint
from steersim.core.product import Product, PState, Transition

N = TypeVar("N")  # a node of the search: a product state, or a state with some progress of the caller's
E = TypeVar("E")  # an edge: usually a product Transition
K = TypeVar("K", bound=Hashable)  # what identifies a node: the state itself, its fingerprint, ...

Edges = Sequence[tuple[E, N | None]]


class Control(Enum):
    """What a visitor's method may answer; None (the default) means go on."""

    STOP = "stop"  # end the search now
    PRUNE = "prune"  # keep this state but do not expand it (`discovered`), or follow none of its edges (`expanded`)


STOP, PRUNE = Control.STOP, Control.PRUNE


class Visitor(Generic[N, K, E]):
    """Observes a search. Every method does nothing by default: a caller overrides those it needs."""

    def discovered(self, node: N, key: K, depth: int) -> Control | None:
        """`node` (identified by `key`) is reached for the first time, `depth` edges from a root."""
        return None

    def expanded(self, node: N, key: K, depth: int, edges: Edges) -> Control | None:
        """`node` is taken from the queue; `edges` is what `expand` gave for it, unfollowed ones included."""
        return None

    def edge(self, source: K, edge: E, target: K, new: bool) -> Control | None:
        """`edge` leads from `source` to `target`, which `new` says was discovered by this edge."""
        return None


@dataclass(frozen=True)
class Search(Generic[K, E]):
    """How a search ended: `states` discovered, `complete` if the queue ran empty (no bound, budget or
    STOP ended it first; states pruned or at `max_depth` do not count against it), `cut` the edge
    whose target would have been one state more than `max_states`."""

    states: int
    complete: bool
    cut: E | None
    parents: dict[K, tuple[K, E] | None] | None  # with `paths`: how each state was first reached

    def path(self, key: K) -> tuple[E, ...]:
        """The edges from a root to the state `key`, as it was first reached: a shortest path."""
        if self.parents is None:
            raise ValueError("the search kept no paths: call breadth_first with paths=True")
        steps = []
        link = self.parents[key]
        while link is not None:
            key, step = link
            steps.append(step)
            link = self.parents[key]
        return tuple(reversed(steps))


def breadth_first(
    roots: Iterable[N],
    expand: Callable[[N], Edges],
    *,
    key: Callable[[N], K] = lambda node: node,  # type: ignore[assignment,return-value]
    visitor: Visitor[N, K, E] | None = None,
    max_states: int | None = None,
    max_depth: int | None = None,
    budget: int | None = None,
    paths: bool = False,
) -> Search[K, E]:
    """Search breadth-first from `roots` (each counted once, never bounded); see the module's docstring.
    With `paths` the result can give the path to every state found (`Search.path`)."""
    watch = visitor if visitor is not None else Visitor()
    seen: dict[K, tuple[K, E] | None] = {}
    queue: deque[tuple[N, K, int]] = deque()

    def discover(node: N, node_key: K, depth: int, link: tuple[K, E] | None) -> Control | None:
        seen[node_key] = link if paths else None
        answer = watch.discovered(node, node_key, depth)
        if answer is not PRUNE and (max_depth is None or depth < max_depth):
            queue.append((node, node_key, depth))
        return answer

    def ended(complete: bool, cut: E | None = None) -> Search[K, E]:
        return Search(len(seen), complete, cut, seen if paths else None)

    for root in roots:
        root_key = key(root)
        if root_key not in seen and discover(root, root_key, 0, None) is STOP:
            return ended(False)
    while queue:
        if budget is not None and len(seen) >= budget:
            return ended(False)
        node, node_key, depth = queue.popleft()
        edges = expand(node)
        answer = watch.expanded(node, node_key, depth, edges)
        if answer is STOP:
            return ended(False)
        if answer is PRUNE:
            continue
        for edge, target in edges:
            if target is None:
                continue
            target_key = key(target)
            new = target_key not in seen
            if new:
                if max_states is not None and len(seen) >= max_states:
                    return ended(False, edge)
                if discover(target, target_key, depth + 1, (node_key, edge)) is STOP:
                    return ended(False)
            if watch.edge(node_key, edge, target_key, new) is STOP:
                return ended(False)
    return ended(True)


def transitions_of(product: Product) -> Callable[[PState], list[tuple[Transition, PState]]]:
    """`expand` for a search over product states: every transition, followed to its target."""
    return lambda state: [(transition, transition.target) for transition in product.successors(state)]


def search_product(product: Product, visitor: Visitor[PState, int, Transition], *, max_states: int | None = None,
                   budget: int | None = None) -> Search[int, Transition]:
    """Every transition of `product` from its initial states, each state once by its fingerprint (so that
    states count as the explorer counts them)."""
    return breadth_first(product.init_states(), transitions_of(product), key=fingerprint, visitor=visitor,
                         max_states=max_states, budget=budget)
