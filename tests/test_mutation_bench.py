"""The mutation benchmark's sample: fixed for a seed, one changed spot per mutant, and every mutant
judged equivalent names a spot that exists (a stale judgement would silently exclude nothing)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = importlib.util.spec_from_file_location("mutation_bench", ROOT / "benchmarks" / "mutation.py")
mutation = sys.modules["mutation_bench"] = importlib.util.module_from_spec(SPEC)  # dataclasses look it up
SPEC.loader.exec_module(mutation)


@pytest.mark.parametrize("model", list(mutation.TARGETS))
def test_the_sample_is_fixed_distinct_and_each_mutant_changes_its_file(model: str) -> None:
    chosen = mutation.sample(model, 40, 0)
    assert len({m.id for m in chosen}) == 40 and chosen == mutation.sample(model, 40, 0)
    assert {m.id for m in chosen} != {m.id for m in mutation.sample(model, 40, 1)}
    for mutant in chosen[:10]:
        original = ast.unparse(ast.parse((ROOT / mutant.path).read_text()))
        changed = mutation.mutated_source(mutant)
        assert changed != original and ast.parse(changed)


def test_every_judged_equivalent_names_a_sampled_mutant() -> None:
    sampled = {m.id for model in mutation.TARGETS for m in mutation.sample(model, 40, 0)}
    judged = mutation.load_equivalents()
    assert judged and set(judged) <= sampled
    assert all(reason.strip() for reason in judged.values())
