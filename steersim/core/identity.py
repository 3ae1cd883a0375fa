"""Values computed of objects that a check hands out again and again: a model that remembers its steps
hands out the same event objects on every step that meets one (openai-ws's remembered steps, foundry's
observer), so what is read from them (their facts, their payloads grouped by name, what a property
derives of them) is read once and kept with them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

LIMIT = 1 << 16  # objects kept; more, and the table starts again from none


class ByIdentity(Generic[K, V]):
    """`compute(obj)`, kept with `obj` itself and found by its id: an object keeps its id while it is
    held here, and a hit is the very object, so an equal but distinct object (or an unhashable one,
    such as an event with its dict payload) is computed anew. `compute` must depend on nothing but
    the object, which must not change."""

    def __init__(self, compute: Callable[[K], V]) -> None:
        self._compute = compute
        self._kept: dict[int, tuple[K, V]] = {}

    def __call__(self, obj: K) -> V:
        kept = self._kept.get(id(obj))
        if kept is not None and kept[0] is obj:
            return kept[1]
        if len(self._kept) >= LIMIT:
            self._kept.clear()
        value = self._compute(obj)
        self._kept[id(obj)] = (obj, value)
        return value
