"""`steersim validate --report DIR`: a verdict line per log in summary.md, findings.json, and the log's lines
around each finding's record; a folder that would write over a log is refused before any log is judged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.errors import EXIT_USAGE, EXIT_VIOLATION

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "validate"
CLEAN, LOST = FIXTURES / "teaching-clean.jsonl", FIXTURES / "teaching-lost-steer.jsonl"


def report(folder: Path) -> int:
    return main(["validate", "teaching", str(CLEAN), str(LOST), "--report", str(folder)])


def test_the_report_has_a_verdict_line_per_log_and_the_excerpt_of_each_finding(tmp_path: Path) -> None:
    assert report(tmp_path / "r") == EXIT_VIOLATION
    summary = (tmp_path / "r" / "summary.md").read_text()
    assert f"- {CLEAN}: explained (" in summary
    assert f"- {LOST}: finding at {LOST}:10 ([excerpt](excerpts/002-teaching-lost-steer.jsonl.txt))" in summary
    found = json.loads((tmp_path / "r" / "findings.json").read_text())
    assert [log["verdict"] for log in found["logs"]] == ["explained", "finding"]
    assert found["logs"][1]["excerpt"] == "excerpts/002-teaching-lost-steer.jsonl.txt"
    excerpt = (tmp_path / "r" / found["logs"][1]["excerpt"]).read_text().splitlines()
    lines = LOST.read_text().splitlines()
    assert excerpt[0] == f"   7 | {lines[6]}" and excerpt[3] == f"> 10 | {lines[9]}" and len(excerpt) == 7
    assert excerpt[3] in summary


def test_the_report_is_the_same_bytes_every_time(tmp_path: Path) -> None:
    report(tmp_path / "a")
    report(tmp_path / "b")
    for name in ("summary.md", "findings.json", "excerpts/002-teaching-lost-steer.jsonl.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_report_folder_that_would_write_over_a_log_is_refused(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "summary.md"
    shutil.copyfile(LOST, log)
    assert main(["validate", "teaching", str(log), "--report", str(tmp_path)]) == EXIT_USAGE
    assert f"--report {log}: that is the file read as LOG" in capsys.readouterr().err
    assert log.read_bytes() == LOST.read_bytes()
    assert main(["validate", "teaching", str(LOST), "--report", str(LOST)]) == EXIT_USAGE
    assert "is a file, not a folder" in capsys.readouterr().err
