"""Names numbered in the order a search first meets them.

The level-at-a-time engines (vector, partitioned) carry a transition's action kind and actor as small
integers in numpy columns; the names come back from the list when the coverage and the fairness classes
are counted. Numbering by first meeting keeps the codes, like everything else, in search order.
"""

from __future__ import annotations


class Codes(list[str]):
    """The names met so far, each at its code."""

    def __init__(self) -> None:
        super().__init__()
        self._index: dict[str, int] = {}

    def code(self, name: str) -> int:
        found = self._index.get(name)
        if found is None:
            found = self._index[name] = len(self)
            self.append(name)
        return found
