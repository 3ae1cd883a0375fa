"""`steersim.core.identity.ByIdentity`: a value read of an object once, kept with that very object."""

from __future__ import annotations

import pytest

from steersim.core import identity
from steersim.core.identity import ByIdentity


def test_a_value_is_computed_once_per_object_and_anew_for_an_equal_one() -> None:
    calls = []
    read = ByIdentity(lambda events: calls.append(events) or len(events))
    first, equal = [1, 2], [1, 2]  # unhashable, as an event with its dict payload is
    assert read(first) == read(first) == 2
    assert read(equal) == 2
    assert [c is first for c in calls] == [True, False]


def test_a_computation_that_raises_is_not_kept() -> None:
    tries = []

    def broken(obj: object) -> int:
        tries.append(obj)
        raise ValueError("unreadable")

    read = ByIdentity(broken)
    for _ in range(2):
        with pytest.raises(ValueError):
            read(())
    assert len(tries) == 2


def test_past_its_limit_the_table_starts_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identity, "LIMIT", 2)
    calls = []
    read = ByIdentity(lambda obj: calls.append(obj) or 0)
    kept = [[n] for n in range(3)]
    for obj in kept:
        read(obj)
    read(kept[0])  # dropped when the third object came
    read(kept[2])  # kept since
    assert len(calls) == 4
