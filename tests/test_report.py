"""The HTML report, the committed artefacts in reports/ and canonical-trace search."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.core.registry import get_model_spec
from steersim.report.html import REPORT_FILE, report_html
from steersim.traces.canonical import shortest_run_with

ROOT = Path(__file__).resolve().parents[1]
SPEC = get_model_spec("teaching")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def load_regenerate():
    """reports/regenerate.py is a script, not a package module: load it from its file."""
    if "regenerate" not in sys.modules:
        spec = importlib.util.spec_from_file_location("regenerate", ROOT / "reports" / "regenerate.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["regenerate"] = module  # its dataclasses look their module up while being defined
        spec.loader.exec_module(module)
    return sys.modules["regenerate"]


@pytest.fixture(scope="module")
def bug_page() -> str:
    return report_html(SPEC, SPEC.resolve({}), "lost-at-boundary")[0]


def test_report_shows_verdicts_parameters_counts_and_counterexamples(bug_page: str) -> None:
    for text in ("<h2>Properties</h2>", "<h2>Parameters</h2>", "distinct states", "no-lost-steers",
                 'id="cx-no-lost-steers"', "steer.queued", "steer.submitted(id=", "at the end: ✗ no-lost-steers"):
        assert text in bug_page
    assert bug_page.count('class="badge bad">violated') == 3
    assert bug_page.count("<svg") >= 2  # a timing diagram and the state space
    assert "The same run as the counterexample of" in bug_page  # one run drawn once, referred to after


def test_report_is_self_contained(bug_page: str) -> None:
    assert "<script" not in bug_page
    assert not re.search(r'(src|href)="(?!#)', bug_page), "only in-page links"
    assert not re.search(r"url\((?!#)|@import|<link", bug_page)


def test_report_is_byte_identical_on_regeneration(bug_page: str) -> None:
    committed = ROOT / "reports" / "teaching--lost-at-boundary" / REPORT_FILE
    assert committed.read_text(encoding="utf-8") == bug_page, "run `python reports/regenerate.py teaching`"
    assert " s<" not in bug_page and "seconds" not in bug_page  # no wall-clock time in the page


def test_cli_report_exit_codes(tmp_path: Path) -> None:
    assert main(["report", "teaching", "-p", "K=2", "-p", "N=1", "-o", str(tmp_path / "ok")]) == 0
    assert main(["report", "teaching", "-p", "K=1", "--bug", "no-skip-result", "-o", str(tmp_path / "bad")]) == 1
    assert "paired-tool-results" in (tmp_path / "bad" / REPORT_FILE).read_text()
    assert "-p K=2 -p N=1" in (tmp_path / "ok" / REPORT_FILE).read_text()
    assert main(["report", "teaching", "--bug", "nonsense", "-o", str(tmp_path / "x")]) == 2


def test_canonical_search_finds_the_shortest_run_with_the_events() -> None:
    pattern = ("steer.queued", "tool.skipped", "steer.delivered")
    path = shortest_run_with(SPEC.build(SPEC.resolve({})), pattern)
    assert path is not None
    names = [event.name for step in path.steps for event in step.events]
    positions = [names.index(name) for name in pattern]
    assert positions == sorted(positions) and names[-len(path.steps[-1].events):][-1] == "steer.delivered"
    shorter = shortest_run_with(SPEC.build(SPEC.resolve({})), pattern[:1])
    assert shorter is not None and len(shorter.steps) < len(path.steps)
    assert shortest_run_with(SPEC.build(SPEC.resolve({"N": 0})), ("steer",)) is None


def test_committed_teaching_artefacts_regenerate_byte_for_byte(tmp_path: Path) -> None:
    regenerate = load_regenerate()
    assert regenerate.regenerate(tmp_path, ["teaching"]) == 0
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert len(made) >= 4
    stale = [str(rel) for rel in made if (ROOT / "reports" / rel).read_bytes() != (tmp_path / rel).read_bytes()]
    assert not stale, f"reports/ is stale for {stale}: run `python reports/regenerate.py`"


def test_regeneration_skips_missing_models_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    regenerate = load_regenerate()
    assert regenerate.regenerate(tmp_path, ["no-such-model"]) == 1
    assert "no-such-model" in capsys.readouterr().err


def chromium_console(page: Path) -> tuple[str, list[str]]:
    """The DOM Chromium builds from `page` and the console messages it logged."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)")
def test_report_opens_in_headless_chromium_without_console_errors(tmp_path: Path, bug_page: str) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><p>x</p><script>throw new Error('boom')</script>")
    _, messages = chromium_console(broken)
    assert any("boom" in line for line in messages), "the console check must see a thrown error"
    page = tmp_path / REPORT_FILE
    page.write_text(bug_page, encoding="utf-8")
    dom, messages = chromium_console(page)
    assert messages == []
    assert dom.count("<svg") == bug_page.count("<svg") and "no-lost-steers" in dom
