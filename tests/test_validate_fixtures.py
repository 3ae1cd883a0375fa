"""The committed logs of tests/fixtures/validate/: facts of one simulated run of the teaching model (seed 0),
whole, and edited by hand to hold one defect each; each edited log is flagged at the defect's line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.errors import EXIT_OK, EXIT_VIOLATION

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "validate"

DEFECTS = {  # file: the line the finding names
    "teaching-lost-steer.jsonl": 10,  # s1's steer.applied deleted: its history entry cannot come without it
    "teaching-two-active-turns.jsonl": 4,  # a second turn.started while the first runs
    "teaching-result-without-call.jsonl": 7,  # a tool.result for a call never requested
    "teaching-reordered-history.jsonl": 11,  # the first two history entries swapped
}


def test_the_clean_log_is_explained(tmp_path: Path) -> None:
    assert main(["validate", "teaching", str(FIXTURES / "teaching-clean.jsonl")]) == EXIT_OK


@pytest.mark.parametrize(("name", "line"), sorted(DEFECTS.items()))
def test_each_edited_log_is_flagged_at_its_defect(tmp_path: Path, name: str, line: int) -> None:
    path = FIXTURES / name
    out = tmp_path / "report.json"
    assert main(["validate", "teaching", str(path), "--json", str(out)]) == EXIT_VIOLATION
    finding = json.loads(out.read_text())["logs"][0]["finding"]
    assert (finding["file"], finding["line"]) == (str(path), line)
    assert finding["record"] == path.read_text().splitlines()[line - 1]
