"""Stable 64-bit fingerprints of states.

Python's `hash()` of a string is salted per process (PYTHONHASHSEED), so it must never reach output or
a visited set that is saved and resumed. A fingerprint is BLAKE2b over a canonical encoding of the
state: `marshal` format version 0 (no object references, no string interning, so equal values give
equal bytes) of the state with its dataclasses flattened to field tuples, or, for values marshal does
not take (nested dataclasses, enums), their `repr`. Both are canonical for the values states are made
of: ints, strings, bools, None, floats, tuples, enums and frozen dataclasses of those. (A frozenset
follows the salted hash order: states must use sorted tuples instead, and `check_canonical` refuses
them.)
"""

from __future__ import annotations

import marshal
from dataclasses import fields, is_dataclass
from enum import Enum
from hashlib import blake2b
from operator import attrgetter
from typing import Any

_getters: dict[type, Any] = {}


def _fields_of(cls: type) -> Any:
    """A C-level getter of a dataclass's fields as a tuple: its repr is canonical and several times
    cheaper than the dataclass's generated `__repr__`, which the explorer would pay on every state."""
    getter = _getters.get(cls)
    if getter is None:
        names = [f.name for f in fields(cls)]
        one = attrgetter(*names)
        getter = (lambda obj: (one(obj),)) if len(names) == 1 else one
        _getters[cls] = getter
    return getter


_TRIPLE = b"(\x03\x00\x00\x00"  # marshal format 0's head of a 3-tuple: its items' encodings follow as they are
_monitor_bytes: dict[Any, bytes] = {}  # monitor vector -> its encoding: few vectors, met by many states
_name_bytes: dict[type, bytes] = {}
MONITOR_BYTES_LIMIT = 1 << 16


def canonical_bytes(value: Any) -> bytes:
    """The bytes a fingerprint hashes. A product state `(model_state, monitor_states)` whose model
    state is a dataclass or a named tuple is flattened to `(class name, field values, monitor states)`,
    so a state keeps its fingerprint when its class changes from one to the other. Format 0 encodes a
    tuple as a head and its items' encodings one after another, so the encoding of a named-tuple state
    is put together from the remembered encodings of its class name and its monitor vector: the same
    bytes, without encoding the vector again for every state."""
    if type(value) is tuple and len(value) == 2:
        state, mstates = value
        if isinstance(state, tuple) and hasattr(type(state), "_fields") and isinstance(mstates, tuple):
            try:
                return b"m" + _TRIPLE + _name_of(type(state)) + marshal.dumps(tuple(state), 0) + _monitors_of(mstates)
            except ValueError:  # a field marshal does not take: the whole value goes through repr below
                pass
        if isinstance(mstates, tuple):
            mstates = tuple(mstates)  # the product's MonitorStates, as the plain tuple it equals
        if is_dataclass(state):
            value = (type(state).__name__, _fields_of(type(state))(state), mstates)
        elif isinstance(state, tuple) and hasattr(type(state), "_fields"):
            value = (type(state).__name__, tuple(state), mstates)
        else:
            value = (state, mstates)
    try:
        return b"m" + marshal.dumps(value, 0)
    except ValueError:
        return b"r" + repr(value).encode()


def _name_of(cls: type) -> bytes:
    encoded = _name_bytes.get(cls)
    if encoded is None:
        encoded = _name_bytes[cls] = marshal.dumps(cls.__name__, 0)
    return encoded


def _monitors_of(mstates: tuple) -> bytes:
    encoded = _monitor_bytes.get(mstates)
    if encoded is None:
        if len(_monitor_bytes) >= MONITOR_BYTES_LIMIT:
            _monitor_bytes.clear()
        encoded = _monitor_bytes[mstates] = marshal.dumps(tuple(mstates), 0)
    return encoded


def fingerprint(value: Any) -> int:
    """A 64-bit fingerprint, identical across processes and PYTHONHASHSEED values."""
    return int.from_bytes(blake2b(canonical_bytes(value), digest_size=8).digest(), "little")


def hex_fingerprint(value: Any) -> str:
    return f"{fingerprint(value):016x}"


def check_canonical(value: Any, path: str = "state") -> None:
    """Raise TypeError naming the first part of `value` whose repr is not canonical."""
    if value is None or isinstance(value, (bool, int, float, str, bytes, Enum)):
        return
    if isinstance(value, tuple):
        for index, item in enumerate(value):
            check_canonical(item, f"{path}[{index}]")
        return
    if is_dataclass(value) and not isinstance(value, type):
        if not value.__dataclass_params__.frozen:  # type: ignore[attr-defined]
            raise TypeError(f"{path} is a dataclass that is not frozen: {type(value).__name__}")
        for f in fields(value):
            check_canonical(getattr(value, f.name), f"{path}.{f.name}")
        return
    raise TypeError(
        f"{path} is a {type(value).__name__}; states may hold only ints, strings, bools, None, floats, "
        "enums, tuples and frozen dataclasses (use a sorted tuple instead of a set or dict)"
    )
