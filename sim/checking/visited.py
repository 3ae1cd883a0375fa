"""Stores for a search: a fingerprint -> index hash table, and the explorer's frontier.

`FingerprintTable` keeps 64-bit fingerprints and 32-bit discovery indices in two numpy arrays with open
addressing (linear probing, at most 70% full): 12 bytes a slot, so 17 to 34 bytes a state, where a
Python dict of ints takes over 100: the store for an engine that knows states by fingerprint (across
processes). `Frontier` is the explorer's queue.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

EMPTY = np.uint64(0)


class FingerprintTable:
    """fingerprint -> index. Fingerprint 0 is stored as 1 (0 marks an empty slot): two states whose
    fingerprints are 0 and 1 would be taken for one, a chance of 2**-63 per pair, beside the 2**-64 of
    any fingerprint collision."""

    def __init__(self, capacity: int = 1 << 16) -> None:
        size = 1 << max(4, (capacity * 2 - 1).bit_length())
        self.keys = np.zeros(size, dtype=np.uint64)
        self.values = np.zeros(size, dtype=np.uint32)
        self.mask = size - 1
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def get(self, fp: int, default: int = -1) -> int:
        key = fp or 1
        keys = self.keys
        slot = key & self.mask
        while True:
            found = int(keys[slot])
            if found == key:
                return int(self.values[slot])
            if found == 0:
                return default
            slot = (slot + 1) & self.mask

    def __contains__(self, fp: int) -> bool:
        return self.get(fp) >= 0

    def add(self, fp: int, index: int) -> None:
        """Insert a fingerprint not yet present."""
        if (self.count + 1) * 10 > len(self.keys) * 7:
            self._grow()
        key = fp or 1
        keys = self.keys
        slot = key & self.mask
        while int(keys[slot]) != 0:
            slot = (slot + 1) & self.mask
        keys[slot] = key
        self.values[slot] = index
        self.count += 1

    def growth_mb(self, coming: int) -> float:
        """What doubling the table would allocate at once (the new arrays, the entries' copies and the
        rounds' temporaries, in MB) if `coming` more fingerprints make it double; 0 when they do not."""
        if (self.count + coming) * 10 <= len(self.keys) * 7:
            return 0.0
        return (12 * len(self.keys) + 24 * self.count) / 1e6

    def items(self) -> list[tuple[int, int]]:
        used = np.nonzero(self.keys)[0]
        return list(zip(self.keys[used].tolist(), self.values[used].tolist(), strict=True))

    def _grow(self) -> None:
        """Double the table and re-insert every entry with numpy: each round places, for every free
        slot wanted, the first key that wants it; the others move one slot on and try again."""
        used = np.nonzero(self.keys)[0]
        keys, values = self.keys[used], self.values[used]
        size = len(self.keys) * 2
        mask = np.uint64(size - 1)
        self.keys = np.zeros(size, dtype=np.uint64)
        self.values = np.zeros(size, dtype=np.uint32)
        self.mask = size - 1
        slots = keys & mask
        while len(keys):
            free = self.keys[slots] == EMPTY
            wanted, first = np.unique(np.where(free, slots, np.uint64(size)), return_index=True)
            first = first[wanted < size]
            self.keys[slots[first]] = keys[first]
            self.values[slots[first]] = values[first]
            keep = np.ones(len(keys), dtype=bool)
            keep[first] = False
            keys, values = keys[keep], values[keep]
            slots = (slots[keep] + np.uint64(1)) & mask


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
