"""Finding a model's canonical traces by search rather than by hand.

A spec describes its canonical scenarios as sequences of native events ("create, created, steer,
accepted, incomplete, created"). Writing those traces by hand would let them drift from the model;
instead the shortest run whose native event names contain the sequence as a subsequence is searched for,
breadth-first over (product state, how much of the sequence is matched so far). Names are fnmatch
patterns, so `response.steer.*` matches any steering event.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from fnmatch import fnmatchcase

from sim.core.fingerprint import fingerprint
from sim.core.model import Model
from sim.core.paths import Path
from sim.core.product import Product, PState, Transition

SEARCH_LIMIT = 300_000  # (state, progress) pairs visited at most


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
    parents: dict[tuple[int, int], tuple[tuple[int, int], Transition] | None] = {}
    frontier: deque[tuple[PState, int, int, int]] = deque()
    for index, state in enumerate(product.init_states()):
        key = (fingerprint(state), 0)
        if key not in parents:
            parents[key] = None
            frontier.append((state, 0, key[0], index))
    while frontier and len(parents) < limit:
        state, matched, fp, init_index = frontier.popleft()
        for transition in product.successors(state):
            progress = advance(matched, pattern, transition)
            key = (fingerprint(transition.target), progress)
            if key in parents:
                continue
            parents[key] = ((fp, matched), transition)
            if progress == len(pattern):
                return _path(product, parents, key, init_index)
            frontier.append((transition.target, progress, key[0], init_index))
    return None


def _path(product: Product, parents: dict, key: tuple[int, int], init_index: int) -> Path:
    steps: list[Transition] = []
    while parents[key] is not None:
        key, transition = parents[key]
        steps.append(transition)
    steps.reverse()
    init = product.init_states()[init_index]
    states = (init, *(step.target for step in steps))
    return Path(init, tuple(steps), init_index, None, None, states)
