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
    """Judged at seed 0 or at a fresh seed: each id is still a mutant of some model's transition code."""
    sampled = {m.id for model in mutation.TARGETS for m, _ in mutation.enumerate_mutants(model)}
    judged = mutation.load_equivalents()
    assert judged and set(judged) <= sampled
    assert all(reason.strip() for reason in judged.values())


def test_a_seed_list_is_read_and_a_bad_one_is_a_usage_error(capsys) -> None:
    assert mutation._seeds("0,7") == [0, 7]
    with pytest.raises(SystemExit) as exit_:
        mutation.main(["--seeds", "0,x", "--models", "teaching"])
    assert exit_.value.code == 2


def test_the_default_check_passes_the_unmutated_model_and_kills_a_mutant_it_catches(tmp_path: Path) -> None:
    """The default check judges a mutant as `steersim check MODEL` would: the unmutated model passes at the
    defaults and its two readings, and deleting the return of the agent's steer step fails a property at
    the defaults."""
    assert mutation.check_default("teaching") == {"killed": False, "cases": 3}
    mutant = next(m for m in mutation.enumerate_mutants("teaching")
                  if m[0].id.endswith("TeachingModel._agent_action#delete12:del Return"))[0]
    outcome = mutation.run_mutant(mutant, "teaching", 120.0, tmp_path, "default")
    assert outcome["killed"] and outcome["by"] == "check" and outcome["case"] == "default"


def test_a_mutant_of_code_only_a_reading_runs_is_killed_by_that_reading(tmp_path: Path) -> None:
    """OpenClaw's defaults never run the Codex harness; its readings do, so the default check kills a
    mutant there (a model boundary consumes no steer batch) in the first reading on runtime=codex."""
    mutant = next(m for m, _ in mutation.enumerate_mutants("openclaw")
                  if m.id == "steersim/models/openclaw/codex.py:boundary#delete1:del For")
    reached = mutation.reached_code("openclaw", ROOT / "pyproject.toml")
    assert mutant.reached(reached)
    outcome = mutation.run_mutant(mutant, "openclaw", 120.0, tmp_path, "default")
    assert outcome["killed"] and outcome["by"] == "check" and outcome["case"] == "runtime=codex messages=1"


def test_a_survivor_on_a_line_only_a_bug_variant_runs_is_unreached_by_the_defaults() -> None:
    """The unmutated default check never runs the `no-skip-result` variant's return in the teaching model's
    `observe`, nor does any matrix case of the correct model, so deleting that return survives it
    unreached and bug-only, and so does deleting the `if` around it: the `if`'s test runs in every check,
    but its branch, which the deletion changes, only in the variant. Deleting the `if` in `next_state`
    whose branch the correct model runs (it counts a skipped call's results) is reached, and killed
    (`results-recorded`): the scores without the unreached and bug-only survivors are whole."""
    reached = mutation.reached_code("teaching", ROOT / "pyproject.toml")
    correct = mutation.correct_model_code("teaching", ROOT / "pyproject.toml")
    by_id = {f"{m.function}#{m.operator}{m.ordinal}": m for m, _ in mutation.enumerate_mutants("teaching")}
    variant_only, variant_if = by_id["TeachingModel.observe#delete22"], by_id["TeachingModel.observe#delete20"]
    counted = by_id["TeachingModel.next_state#delete16"]
    source = (ROOT / variant_only.path).read_text().splitlines()
    assert "batch.skip" in source[variant_only.line - 1] and "no-skip-result" in source[variant_if.line - 1]
    assert "no-skip-result" in source[counted.line - 1]
    for mutant in (variant_only, variant_if):
        assert not mutant.reached(reached) and not mutant.reached(correct)
    assert counted.reached(reached) and counted.reached(correct)
    row, survivors = mutation.score("teaching", [counted, variant_if, variant_only], ROOT / "pyproject.toml", 120.0,
                                    {}, False, "default", 0, reached, lambda: correct)
    assert row[6:] == ["2", "2", "2", "33%", "100%", "100%"]
    assert all(line.endswith("(unreached: only a seeded bug variant runs it)") for line in survivors)


def test_population_counts_every_mutant_and_its_unreached_and_bug_only_share() -> None:
    """`--population` counts the whole population, not a sample: the teaching model's row names as many
    mutants as enumeration yields, and its unreached count includes the `no-skip-result` return that only
    the variant runs, so it is never zero and never more than the population."""
    mutants = [m for m, _ in mutation.enumerate_mutants("teaching")]
    row = mutation.population("teaching", ROOT / "pyproject.toml")
    assert row[:2] == ["teaching", str(len(mutants))]
    unreached, bug_only = (int(cell.split()[0]) for cell in row[2:4])
    assert 2 <= bug_only <= unreached < len(mutants)
    assert row[4] == mutation._percent(len(mutants) - unreached, len(mutants))
