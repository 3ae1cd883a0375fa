"""The engine benchmark's quick mode: every engine once on a tiny size of every built-in model, with the
baseline commit in a temporary worktree. Nothing is timed; the table's shape and the identity column
are what is asserted."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = importlib.util.spec_from_file_location("engine_bench", ROOT / "benchmarks" / "engine_bench.py")
bench = sys.modules["engine_bench"] = importlib.util.module_from_spec(SPEC)  # dataclasses look it up
SPEC.loader.exec_module(bench)


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


@pytest.mark.skipif(_git("cat-file", "-e", f"{bench.BASELINE}^{{commit}}").returncode != 0,
                    reason=f"the baseline commit {bench.BASELINE} is not in this clone")
def test_quick_mode_runs_every_engine_of_every_model_and_compares_reports() -> None:
    worktrees = _git("worktree", "list").stdout
    results = bench.run(bench.QUICK, bench.BASELINE)
    assert _git("worktree", "list").stdout == worktrees  # the baseline's worktree is gone again
    assert [case.model for case, _ in results] == ["teaching", "openai-ws", "foundry", "openclaw", "codex",
                                                   "langgraph"]
    for case, rows in results:
        engines = [row.engine for row in rows]
        expected = ["generic", "generic @baseline", *(["vector"] if case.vector else []), bench.MODEL_ALONE,
                    "--workers 2",
                    *(["bfs.py tuple", "spin nored"] if case.teaching else [])]
        assert engines == expected
        skipped = ("bfs.py tuple", "spin nored", *([] if case.in_baseline else ["generic @baseline"]))
        ran = [row for row in rows if row.engine not in skipped]
        assert all(row.states and not row.note for row in ran), [row.note for row in ran]
        generic, old = rows[0], rows[1]
        assert old.same == "n/a"
        if case.in_baseline:
            assert generic.same == bench.sameness(generic.report, old.report)
        else:
            assert generic.same == "n/a" and old.note.startswith("not run") and old.states is None
        if case.vector:
            assert rows[2].states == generic.states
        alone = next(row for row in rows if row.engine == bench.MODEL_ALONE)
        assert alone.states == generic.states and alone.cpu > 0  # the model's code over the search's states
    teaching = results[0][1]
    assert teaching[0].same == "kept"  # the model gained properties since the baseline; nothing else changed
    assert teaching[2].same == "yes"  # the vector engine writes the generic engine's report
    lines = bench.table(results)
    assert len(lines) == 1 + sum(len(rows) for _, rows in results)
    assert all(line.split()[-1] in ("yes", "kept", "no", "n/a") for line in lines[1:] if "not run" not in line
               and "not installed" not in line)
    assert len(bench.ratios([results], bench.BASELINE)) == len(results)


def test_ratios_over_rounds_are_medians_with_their_spread() -> None:
    case = bench.Case("openclaw", ())

    def round_at(speed: float) -> list:
        rows = [bench.Row("generic", 100, 1.0, 1.0 / speed), bench.Row("generic @baseline", 100, 1.0, 1.0),
                bench.Row(bench.MODEL_ALONE, 100, 0.25, 0.25), bench.Row("--workers 2", 100, 0.5, 1.0)]
        return [(case, rows)]

    assert bench.ratios([round_at(3.0)], "B") == [
        "  openclaw defaults: generic/generic@B 3.00x, model code alone/generic 1.33x, "
        "model code alone/generic@B 4.00x, --workers 2/generic (wall) 2.00x"]
    assert bench.ratios([round_at(3.0), round_at(1.0), round_at(2.0)], "B") == [
        "  openclaw defaults: generic/generic@B median 2.00x (1.00x to 3.00x over 3), "
        "model code alone/generic median 2.00x (1.33x to 4.00x over 3), "
        "model code alone/generic@B median 4.00x (4.00x to 4.00x over 3), "
        "--workers 2/generic (wall) median 2.00x (2.00x to 2.00x over 3)"]


def test_the_same_column_tells_a_report_that_only_adds_from_one_that_changes() -> None:
    old = {"status": "ok", "states": 7, "properties": [{"name": "a", "status": "holds"}]}
    assert bench.sameness(dict(old), old) == "yes"
    grown = {**old, "coverage": {"x": 1}, "properties": [*old["properties"], {"name": "b", "status": "holds"}]}
    assert bench.sameness(grown, old) == "kept"
    assert bench.sameness({**grown, "states": 8}, old) == "no"
    assert bench.sameness({**grown, "properties": [{"name": "a", "status": "violated"}]}, old) == "no"
    assert bench.sameness({"status": "ok", "states": 7, "properties": []}, old) == "no"  # a verdict lost
