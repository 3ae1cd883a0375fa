"""Helpers the model test modules share: verdicts of an exhaustive check, by property name, and the
states a model reaches, for the tests that hold a fast path to the plain computation on each of them."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from steersim import CheckOptions, check

S = TypeVar("S", bound=Hashable)

PASSING = ("holds", "reached")


def verdicts(spec, params=None, bug=None):
    """The check result and its properties by name (every property judged: keep_going)."""
    result = check(spec.build(params or {}, bug), CheckOptions(keep_going=True))
    return result, {p.name: p for p in result.properties}


def assert_all_hold(spec, params):
    """Every property holds or is reached for `params`; returns the check result."""
    result, props = verdicts(spec, params)
    bad = {name: p.status for name, p in props.items() if p.status not in PASSING}
    assert not bad, f"{params}: {bad}"
    return result


def breadth_first(initial: Iterable[S], successors: Callable[[S], Iterable[S | None]], limit: int | None = None
                  ) -> list[S]:
    """The states reached from `initial` in breadth-first order (a None successor, a no-op, is passed
    over), the first `limit` of them when given."""
    seen = dict.fromkeys(initial)
    queue, order = deque(seen), []
    while queue and (limit is None or len(order) < limit):
        state = queue.popleft()
        order.append(state)
        for nxt in successors(state):
            if nxt is not None and nxt not in seen:
                seen[nxt] = None
                queue.append(nxt)
    return order
