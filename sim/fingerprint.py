"""Stable 64-bit fingerprints of states.

Python's `hash()` of a string is salted per process (PYTHONHASHSEED), so it must never reach output or
a visited set that is saved and resumed. A fingerprint is BLAKE2b over the state's `repr`, which is
canonical for the values states are made of: ints, strings, bools, None, floats, tuples, enums and
frozen dataclasses of those. (A frozenset's repr follows the salted hash order: states must use sorted
tuples instead, and `check_canonical` refuses them.)
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from enum import Enum
from hashlib import blake2b
from typing import Any


def fingerprint(value: Any) -> int:
    """A 64-bit fingerprint, identical across processes and PYTHONHASHSEED values."""
    return int.from_bytes(blake2b(repr(value).encode(), digest_size=8).digest(), "little")


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
