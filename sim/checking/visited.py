"""Compact stores for the explorer: a fingerprint -> index hash table, and a packed frontier.

`FingerprintTable` keeps 64-bit fingerprints and 32-bit discovery indices in two numpy arrays with open
addressing (linear probing, at most 70% full): 12 bytes a slot, so 17 to 34 bytes a state, where a
Python dict of ints takes over 100. `PackedStates` keeps a frontier state as marshal bytes (format 4,
which shares repeated strings) instead of as live objects: a breadth-first frontier can hold a large
share of the states, and as objects they take most of the checker's memory. (zlib would halve the
bytes again but costs more per state than the whole rest of its expansion.) A state that marshal cannot
encode is kept as it is.
"""

from __future__ import annotations

import marshal
import pickle
import zlib
from collections import deque
from dataclasses import is_dataclass
from typing import Any

import numpy as np

from sim.core.fingerprint import _fields_of

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
    """The explorer's queue of (index, packed state, depth), first in first out (breadth-first) or last
    in first out (depth-first), kept in sealed chunks: every `CHUNK` entries are zlib-compressed
    together, which shrinks similar states several times over at a few microseconds per state, where
    compressing each state alone would cost more than expanding it."""

    CHUNK = 2048

    def __init__(self, lifo: bool = False) -> None:
        self.lifo = lifo
        self.sealed: deque[tuple[int, bytes]] = deque()  # (entries, compressed chunk), oldest first
        self.reading: deque[tuple[int, Any, int]] = deque()  # breadth-first: the oldest chunk, unsealed
        self.open: deque[tuple[int, Any, int]] = deque()  # the newest entries
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def __bool__(self) -> bool:
        return self.count > 0

    def append(self, entry: tuple[int, Any, int]) -> None:
        self.open.append(entry)
        self.count += 1
        if len(self.open) >= self.CHUNK * (2 if self.lifo else 1):
            self._seal()

    def pop(self) -> tuple[int, Any, int]:
        self.count -= 1
        if self.lifo:
            if not self.open:
                self._unseal(self.sealed.pop())
            return self.open.pop()
        if not self.reading and self.sealed:
            self.reading.extend(self._entries(self.sealed.popleft()))
        return self.reading.popleft() if self.reading else self.open.popleft()

    def _seal(self) -> None:
        if self.lifo:
            # keep the newest half open, seal the older half: popping from the end stays cheap
            older = [self.open.popleft() for _ in range(self.CHUNK)]
        else:
            older = list(self.open)
            self.open.clear()
        self.sealed.append((len(older), zlib.compress(pickle.dumps(older, protocol=pickle.HIGHEST_PROTOCOL), 1)))

    def _unseal(self, chunk: tuple[int, bytes]) -> None:
        self.open.extend(self._entries(chunk))

    @staticmethod
    def _entries(chunk: tuple[int, bytes]) -> list[tuple[int, Any, int]]:
        return pickle.loads(zlib.decompress(chunk[1]))
