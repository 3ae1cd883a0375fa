"""The explorer's frontier (the states found and not yet expanded, in search order) and the packing of
states that cross between processes.

The visited set itself is a dict in the explorer (each state its own key), so the frontier holds the
same state objects: nothing is copied or encoded on the way in, nothing decoded on the way out.
`PackedStates` is for the partitioned search, where a new state crosses to the worker that owns it: a
dataclass state goes as marshal bytes (format 4, which shares repeated strings), several times smaller
and faster than its pickle; any other state goes as it is.
"""

from __future__ import annotations

import marshal
from collections import deque
from dataclasses import is_dataclass
from typing import Any

from sim.core.fingerprint import _fields_of


class PackedStates:
    """Encode product states compactly and decode them back to equal values."""

    def __init__(self) -> None:
        self.classes: dict[str, type] = {}

    def pack(self, pstate: Any) -> Any:
        state = pstate[0]
        if not is_dataclass(state):
            return pstate
        cls = type(state)
        try:
            blob = marshal.dumps((cls.__name__, _fields_of(cls)(state), pstate[1]), 4)
        except ValueError:
            return pstate
        self.classes.setdefault(cls.__name__, cls)
        return blob

    def unpack(self, packed: Any) -> Any:
        if not isinstance(packed, bytes):
            return packed
        name, values, mstates = marshal.loads(packed)
        return (self.classes[name](*values), mstates)


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
