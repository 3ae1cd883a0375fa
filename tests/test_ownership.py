"""Owners of a partitioned search: drawn from the fields few steps change, the same in every process."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import NamedTuple

import pytest

from steersim import Action, ModelBase
from steersim.checking import ownership
from steersim.checking.ownership import WHOLE, Ownership, choose
from steersim.core.product import Product
from steersim.core.registry import get_model_spec


class Dial(NamedTuple):
    slow: int  # one action of eight turns it
    fast: int  # seven actions of eight turn it
    label: str = "dial"  # never changes


class Dials(ModelBase):
    """Eight actions a state: seven turn the fast dial, one the slow dial (up to `top`)."""

    def __init__(self, top: int = 40) -> None:
        super().__init__({}, None)
        self.top = top

    def init_states(self) -> list[Dial]:
        return [Dial(0, 0)]

    def actions(self, s: Dial) -> list[Action]:
        out = [Action("fast", "fast.turn", (k,)) for k in range(1, 8)]
        return out + [Action("slow", "slow.turn")] if s.slow < self.top else out

    def step(self, s: Dial, a: Action) -> tuple[Dial, list]:
        if a.kind == "slow.turn":
            return s._replace(slow=s.slow + 1), []
        return s._replace(fast=(s.fast + a.args[0]) % 8), []


def crossing(product: Product, chosen: Ownership, workers: int = 2) -> float:
    """The share of the steps of the whole state space whose target another worker owns than their source's."""
    seen, queue, steps, across = set(), list(product.init_states()), 0, 0
    while queue:
        state = queue.pop()
        if state in seen:
            continue
        seen.add(state)
        for move in product.moves(state):
            steps += 1
            across += int(chosen.owners([state], workers)[0] != chosen.owners([move.target], workers)[0])
            queue.append(move.target)
    return across / steps


def test_the_owner_leaves_out_the_fields_most_steps_change_and_keeps_most_steps_with_one_worker(monkeypatch):
    monkeypatch.setattr(ownership, "DISTINCT", 8)  # 16 of the sample's dial settings, for two workers
    product = Product(Dials())
    chosen = choose(product, 2, True)
    assert chosen.fields == ("slow", "label")
    assert crossing(product, chosen) < 0.1 < 0.3 < crossing(product, WHOLE)


def test_the_owner_keeps_a_changing_field_when_leaving_it_out_would_tell_too_few_states_apart(monkeypatch):
    monkeypatch.setattr(ownership, "DISTINCT", 8)
    assert choose(Product(Dials(top=10)), 2, True) == WHOLE  # 11 settings of the slow dial: too few for 16


class Opaque(Dials):
    """The same steps over states of no field shape: a frozenset."""

    def init_states(self) -> list:
        return [frozenset({("slow", 0), ("fast", 0)})]

    def step(self, s: frozenset, a: Action) -> tuple[frozenset, list]:
        nxt, _ = super().step(Dial(**dict(s)), a)
        return frozenset({("slow", nxt.slow), ("fast", nxt.fast)}), []

    def actions(self, s: frozenset) -> list[Action]:
        return super().actions(Dial(**dict(s)))


class Breaks(Dials):
    def step(self, s: Dial, a: Action) -> tuple[Dial, list]:
        if s.slow == 3:
            raise KeyError("dial")
        return super().step(s, a)


@pytest.mark.parametrize("model", [Opaque(), Breaks()], ids=["no fields", "breaks in the sample"])
def test_a_state_of_no_field_shape_or_a_model_that_breaks_in_the_sample_is_owned_by_its_whole_key(model, monkeypatch):
    monkeypatch.setattr(ownership, "DISTINCT", 8)
    assert choose(Product(model), 2, True) == WHOLE


def test_a_state_of_another_class_than_the_sampled_ones_is_owned_by_its_whole_key():
    chosen = Ownership(("slow",), Dial, lambda s: s.slow)
    other = (("not", "a", "dial"), ())
    assert chosen.owners([other], 7).tolist() == [hash(other) % 7]
    assert chosen.owners([(Dial(5, 1), ())], 7).tolist() == [hash(5) % 7]


def test_dask_owners_are_the_same_in_every_process_whatever_its_hash_seed():
    """Dask workers do not share the command's hash seed: their owners come from fingerprints."""
    probe = ("from steersim.checking.ownership import Ownership; from operator import itemgetter; "
             "from tests.test_ownership import Dial; "
             "print(Ownership(('slow',), Dial, itemgetter(0), forked=False)"
             ".owners([(Dial(k, 1), ()) for k in range(40)], 3).tolist())")
    answers = {subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}).stdout for seed in ("1", "2")}
    assert len(answers) == 1 and len(set(json.loads(answers.pop()))) == 3


@pytest.mark.parametrize(("model", "left_out"), [("openai-ws", "responses"), ("foundry", "callers"),
                                                 ("teaching", "calls")])
def test_the_built_in_models_parallel_checks_draw_owners_from_part_of_the_state(model, left_out):
    """So the tests that compare a parallel check's report with one process's cover owners drawn this way."""
    spec = get_model_spec(model)
    chosen = choose(Product(spec.build(spec.resolve({}, None), None)), 2, True)
    assert chosen.fields and left_out not in chosen.fields
