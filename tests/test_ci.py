"""`steersim ci`: the check matrix of [tool.steersim], its verdict lines, JSON and JUnit."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.integrations.ci import load_matrix, run_matrix

ROOT = Path(__file__).resolve().parent.parent

GOOD = """
[[tool.steersim.check]]
model = "teaching"
grid = { K = [1, 2], P = 1 }
expect = "ok"
bugs = ["launch-after-steer"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "steersim.toml"
    path.write_text(text)
    return path


def test_the_projects_own_matrix_loads_and_its_quick_cases_pass(capsys: pytest.CaptureFixture) -> None:
    """Every entry of the project's matrix resolves; the teaching model's cases and the first correct
    case of every other model run here (`steersim ci` runs the whole matrix after the suite, and the
    slow test below runs all of it too)."""
    cases = load_matrix(ROOT / "pyproject.toml")
    assert {c.model for c in cases} >= {"teaching"}
    firsts = {c.model: c for c in reversed(cases) if c.bug is None and c.model != "teaching"}
    quick = [c for c in cases if c.model == "teaching"] + [firsts[m] for m in sorted(firsts)]
    assert set(firsts) >= {"openai-ws", "foundry", "openclaw", "codex", "langgraph"}
    outcomes = run_matrix(quick)
    assert all(o.passed for o in outcomes), capsys.readouterr().out


@pytest.mark.slow
def test_the_projects_own_matrix_passes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(["ci", "--config", str(ROOT / "pyproject.toml"), "--json", str(tmp_path / "ci.json"),
                 "--junit", str(tmp_path / "ci.xml")])
    out = capsys.readouterr().out
    assert code == 0, out
    report = json.loads((tmp_path / "ci.json").read_text())
    assert report["status"] == "pass" and report["failed"] == 0 and report["cases"] == len(report["results"])
    assert {r["bug"] for r in report["results"]} >= {None, "lost-at-boundary", "no-skip-result", "launch-after-steer"}
    assert out.count("PASS ") == report["cases"]
    suite = ET.parse(tmp_path / "ci.xml").getroot()
    assert suite.get("tests") == str(report["cases"]) and suite.get("failures") == "0"


def test_grid_and_bugs_expand_into_cases(tmp_path: Path) -> None:
    cases = load_matrix(write(tmp_path, GOOD))
    assert [(c.params["K"], c.params["P"], c.bug) for c in cases] == [
        (1, 1, None), (1, 1, "launch-after-steer"), (2, 1, None), (2, 1, "launch-after-steer")]
    assert cases[1].catcher == "steer-before-launch"


def test_a_changed_expectation_fails_with_a_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    config = write(tmp_path, GOOD.replace('expect = "ok"', 'expect = "violation"'))
    code = main(["ci", "--config", str(config), "--json", str(tmp_path / "ci.json"),
                 "--junit", str(tmp_path / "ci.xml")])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL  teaching[K=1 P=1]: expected violation, got ok" in out
    assert "fail: 2 of 4 checks as expected" in out
    report = json.loads((tmp_path / "ci.json").read_text())
    assert report["status"] == "fail" and report["failed"] == 2
    suite = ET.parse(tmp_path / "ci.xml").getroot()
    assert suite.get("failures") == "2"
    assert "expected violation, got ok" in suite.find("testcase/failure").get("message")


def test_a_bug_caught_by_the_wrong_property_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    config = write(tmp_path, GOOD.replace('bugs = ["launch-after-steer"]',
                                          'bugs = { launch-after-steer = "one-active-turn" }'))
    assert main(["ci", "--config", str(config)]) == 1
    assert "bug=launch-after-steer: expected one-active-turn violated, got one-active-turn holds" in \
        capsys.readouterr().out


EXPECTED_VIOLATION = """
[[tool.steersim.check]]
model = "openclaw"
grid = { stop_after_turn = true }
expect = "violation"
violated = [VIOLATED]
reason = "the parallel executor polls steering only at its launch checkpoint"
"""


def test_an_expected_violation_passes_only_with_exactly_the_properties_it_names(tmp_path: Path) -> None:
    named = load_matrix(write(tmp_path, EXPECTED_VIOLATION.replace("VIOLATED", '"steer-outranks-stop"')))
    assert named[0].expectation() == "violation (steer-outranks-stop)"
    assert [o.passed for o in run_matrix(named, echo=lambda _: None)] == [True]
    for wrong in ('"ordered-history"', '"steer-outranks-stop", "ordered-history"'):
        cases = load_matrix(write(tmp_path, EXPECTED_VIOLATION.replace("VIOLATED", wrong)))
        assert [o.passed for o in run_matrix(cases, echo=lambda _: None)] == [False], wrong


@pytest.mark.parametrize(("text", "key"), [
    ('[[tool.steersim.check]]\nmodel = "teaching"\nexpect = "ok"\nviolated = ["x"]\nreason = "r"\n',
     "tool.steersim.check[0]: violated and reason"),
    ('[[tool.steersim.check]]\nmodel = "teaching"\nexpect = "violation"\nviolated = []\nreason = "r"\n',
     "tool.steersim.check[0].violated"),
    ('[[tool.steersim.check]]\nmodel = "teaching"\nexpect = "violation"\nviolated = ["x"]\n',
     "tool.steersim.check[0].reason"),

    ('[tool.steersim]\nchecks = []\n', "tool.steersim.checks"),
    ('[[tool.steersim.check]]\nmodle = "teaching"\n', "tool.steersim.check[0].modle"),
    ('[[tool.steersim.check]]\nmodel = "nope"\nexpect = "ok"\n', "tool.steersim.check[0].model"),
    ('[[tool.steersim.check]]\nmodel = "teaching"\nexpect = "fine"\n', "tool.steersim.check[0].expect"),
    ('[[tool.steersim.check]]\nmodel = "teaching"\nexpect = "ok"\ngrid = { K = [1, 99] }\n',
     "tool.steersim.check[0].grid.K"),
    ('[[tool.steersim.check]]\nmodel = "teaching"\nexpect = "ok"\ngrid = { X = 1 }\n', "tool.steersim.check[0].grid.X"),
    ('[[tool.steersim.check]]\nmodel = "teaching"\nbugs = ["nope"]\n', "tool.steersim.check[0].bugs.nope"),
    ('[[tool.steersim.check]]\nmodel = "teaching"\nexpect = "ok"\nmax_states = -1\n',
     "tool.steersim.check[0].max_states"),
    ('[[tool.steersim.check]]\nmodel = "teaching"\n', "tool.steersim.check[0]"),
    ('[project]\nname = "x"\n', "[tool.steersim]"),
    ('[tool.steersim\n', "not valid TOML"),
])
def test_a_malformed_table_is_exit_2_naming_the_key(text: str, key: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    assert main(["ci", "--config", str(write(tmp_path, text))]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert key in err


def test_a_missing_config_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["ci", "--config", str(tmp_path / "absent.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_junit_cases_are_unique_timed_and_failures_say_how_to_reproduce(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    """The correct model expected to be violated fails with nothing to show; a bug variant expected
    ok fails with its counterexample; an entry repeated gets a case name of its own."""
    config = write(tmp_path, """
[[tool.steersim.check]]
model = "teaching"
grid = { K = 1, P = 1 }
expect = "violation"

[[tool.steersim.check]]
model = "teaching"
grid = { K = 1, P = 1 }
expect = "ok"
""")
    assert main(["ci", "--config", str(config), "--junit", str(tmp_path / "ci.xml")]) == 1
    capsys.readouterr()
    suite = ET.parse(tmp_path / "ci.xml").getroot()
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["teaching[K=1 P=1]", "teaching[K=1 P=1] #2"]
    assert all(float(c.get("time")) >= 0 for c in cases)
    failure = cases[0].find("failure").text
    assert "reproduce: steersim check teaching -p K=1 -p P=1 --keep-going" in failure
    assert cases[1].find("failure") is None


def test_a_failing_bug_case_carries_its_step_table_and_an_unreached_sometimes_reads_never_reached(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    config = write(tmp_path, """
[[tool.steersim.check]]
model = "teaching"
grid = { K = 2, N = 0 }
expect = "ok"

[[tool.steersim.check]]
model = "teaching"
bugs = { lost-at-boundary = "one-active-turn" }
""")
    assert main(["ci", "--config", str(config), "--junit", str(tmp_path / "ci.xml")]) == 1
    out = capsys.readouterr().out
    assert "steer-skips-a-call never reached" in out and "got violation (" in out
    cases = ET.parse(tmp_path / "ci.xml").getroot().findall("testcase")
    text = cases[0].find("failure").text
    assert "never reached: sometimes steer-skips-a-call" in text
    assert "reproduce: steersim check teaching -p K=2 -p N=0 --keep-going" in text
    text = cases[1].find("failure").text
    assert "reproduce: steersim check teaching --bug lost-at-boundary --keep-going" in text
    assert "shortest counterexample, 15 steps:" in text and "state changes" in text
    assert "cause: s1 was accepted at step 11 and was removed from queue at step 12" in text
