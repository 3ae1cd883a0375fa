"""`steersim.checking.transfer`: what a partitioned search sends between processes arrives equal, of the same
types, whatever shape the model built its states in, and a class that says how it pickles is pickled
its own way."""

from __future__ import annotations

import pickle
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

import pytest

from steersim.checking import transfer
from steersim.core.product import MonitorStates, Product
from steersim.core.registry import get_model_spec


@dataclass(frozen=True, slots=True)
class Leaf:
    name: str
    size: int = 0


@dataclass(frozen=True, slots=True)
class Tree:
    leaves: tuple[Leaf, ...]
    label: str = ""
    total: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", sum(leaf.size for leaf in self.leaves))


@dataclass(frozen=True, slots=True)
class Grown(Leaf):
    rings: int = 0


@dataclass(frozen=True, slots=True)
class Alone:
    value: int


@dataclass(frozen=True)
class Plain:  # no slots: its instances keep a __dict__
    value: int


class Point(NamedTuple):
    x: int
    y: int


class Tagged(Point):  # a named tuple's subclass without __slots__: its instances keep a __dict__
    pass


REDUCED = [0]  # how often Counted.__reduce__ ran


@dataclass(frozen=True, slots=True)
class Counted:
    """A slotted dataclass that says how it pickles."""

    value: int

    def __reduce__(self):
        REDUCED[0] += 1
        return (Counted, (self.value,))


def round_trip(value):
    return transfer.loads(transfer.dumps(value))


def same(a, b) -> bool:
    """Equal, and of the same type all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_slotted_dataclasses_and_named_tuples_arrive_equal_and_of_their_own_types() -> None:
    tree = Tree((Leaf("a", 2), Grown("b", 3, rings=7)), "t")
    sent = [tree, Point(1, 2), Alone(5), (tree, Point(3, 4)), MonitorStates([(), ("x",)])]
    arrived = round_trip(sent)
    assert arrived == sent and all(same(a, b) for a, b in zip(arrived, sent, strict=True))
    assert arrived[0].total == 5 and arrived[0].leaves[1].rings == 7  # fields set as left, not recomputed
    assert hash(arrived[4]) == hash(tuple(sent[4]))  # a monitor vector's own reduction: its hash made anew
    # they left as field values, not through pickle's own way (which the module exists to avoid)
    assert all(transfer._REDUCTIONS[cls] is not transfer._OWN_WAY for cls in (Point, Tree, Leaf, Grown, Alone))
    assert transfer._REDUCTIONS[MonitorStates] is transfer._OWN_WAY


def test_a_part_shared_by_several_states_is_written_once_and_arrives_shared() -> None:
    leaf = Leaf("shared", 1)
    states = [Tree((leaf,), str(n)) for n in range(50)]
    blob = transfer.dumps(states)
    arrived = transfer.loads(blob)
    assert arrived == states and all(state.leaves[0] is arrived[0].leaves[0] for state in arrived)
    assert len(blob) < len(transfer.dumps([Tree((Leaf("shared", 1),), str(n)) for n in range(50)])) * 1.01


def test_what_keeps_a_dict_or_says_how_it_pickles_is_pickled_its_own_way() -> None:
    tagged = Tagged(1, 2)
    tagged.note = "kept"
    plain = Plain(3)
    REDUCED[0] = 0
    arrived = round_trip([tagged, plain, Counted(4)])
    assert arrived[0].note == "kept" and same(arrived[0], tagged)
    assert same(arrived[1], plain)
    assert arrived[2] == Counted(4) and REDUCED[0] == 1


def test_what_arrives_is_what_pickle_itself_would_give() -> None:
    sent = [Tree((Leaf("a", 2),), "t"), Point(1, 2), Plain(3), {"k": (Leaf("b"),)}, frozenset({Point(0, 0)})]
    assert round_trip(sent) == pickle.loads(pickle.dumps(sent)) == sent


@pytest.mark.parametrize("name", ["teaching", "openai-ws", "foundry", "openclaw", "codex", "langgraph",
                                  "pydantic-ai"])
def test_every_built_in_models_states_arrive_equal(name: str) -> None:
    spec = get_model_spec(name)
    product = Product(spec.build(spec.resolve({}, None), None))
    start = product.init_states()
    seen, queue = dict.fromkeys(start), deque(start)
    while queue and len(seen) < 500:
        for move in product.moves(queue.popleft()):
            if move.target not in seen:
                seen[move.target] = None
                queue.append(move.target)
    states = list(seen)
    arrived = transfer.loads(transfer.dumps(states))
    assert arrived == states and all(same(a, b) for a, b in zip(arrived, states, strict=True))
    assert [hash(a) for a in arrived] == [hash(b) for b in states]
