"""The explorer's frontier: the states found and not yet expanded, in search order.

The visited set itself is a dict in the explorer (each state its own key), so the frontier holds the
same state objects: nothing is copied or encoded on the way in, nothing decoded on the way out.
"""

from __future__ import annotations

from collections import deque
from typing import Any


class Frontier:
    """The explorer's queue of (index, product state, depth), first in first out (breadth-first) or
    last in first out (depth-first). The states it holds are those of the visited set, so it keeps
    them as they are: no copy, and nothing to decode when one is taken."""

    def __init__(self, lifo: bool = False) -> None:
        self.lifo = lifo
        self.entries: deque[tuple[int, Any, int]] = deque()
        self.append = self.entries.append
        self.pop = self.entries.pop if lifo else self.entries.popleft

    def __len__(self) -> int:
        return len(self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __getstate__(self) -> dict[str, Any]:
        return {"lifo": self.lifo, "entries": self.entries}

    def __setstate__(self, saved: dict[str, Any]) -> None:
        self.__init__(saved["lifo"])  # type: ignore[misc]
        self.entries.extend(saved["entries"])
