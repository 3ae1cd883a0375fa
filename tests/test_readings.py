"""The readings of a model: `steersim check MODEL` explores them after the defaults, reports each apart
(its line, its failing properties, their counterexamples, the command that checks it alone), and exits
with the worst code; `-p`, `--bug` and `--defaults-only` check one configuration. A reading is checked
where the spec declares it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from test_authoring import readme_model, variant

from steersim.cli import main
from steersim.core.registry import ModelSpec, Param, Reading
from steersim.errors import EXIT_OK, EXIT_VIOLATION

# The how-to's model, broken only where its queue holds one steer: the defaults (a queue of two) still
# report every dropped steer, the reading `Q=1` does not.
BROKEN_AT_ONE = ('if self.bug != "silent-drop":', 'if self.bug != "silent-drop" and self.params["Q"] > 1:')


@pytest.fixture
def broken_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "drop_oldest.py").write_text(variant(readme_model(), *BROKEN_AT_ONE))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_default_check_finds_a_defect_only_a_reading_runs(broken_dir: Path, capsys: pytest.CaptureFixture) -> None:
    report, junit = broken_dir / "check.json", broken_dir / "check.xml"
    code = main(["check", "drop_oldest.py:SPEC", "--quiet", "--json", str(report), "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == EXIT_VIOLATION
    head, _, readings = out.partition("readings (1;")
    assert "violated" not in head and "\nok: " in head  # the defaults pass, as before
    data = json.loads(report.read_text())
    assert data["status"] == "ok" and data["params"] == {"N": 3, "Q": 2}
    [reading] = data["readings"]
    assert reading["params"] == {"Q": 1} and reading["status"] == "violation"
    [violated] = [p["name"] for p in reading["properties"] if p["status"] == "violated"]
    assert "violation  Q=1: " in readings and f"violated  always     {violated}\n" in readings
    assert f"counterexample for {violated}:" in readings
    assert "check it alone: steersim check drop_oldest.py:SPEC -p Q=1" in readings
    failed = [case.get("name") for case in ET.parse(junit).getroot() if case.find("failure") is not None]
    assert failed == [f"{violated}[Q=1]"]


@pytest.mark.parametrize("args", [["--defaults-only"], ["-p", "Q=2"], ["--bug", "newest-first"]])
def test_one_configuration_is_checked_when_the_command_names_it(broken_dir: Path, capsys: pytest.CaptureFixture,
                                                              args: list[str]) -> None:
    code = main(["check", "drop_oldest.py:SPEC", "--quiet", *args])
    out = capsys.readouterr().out
    assert "readings" not in out
    assert code == (EXIT_VIOLATION if "--bug" in args else EXIT_OK)


def test_the_reading_alone_shows_what_the_default_check_said(broken_dir: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["check", "drop_oldest.py:SPEC", "--quiet"]) == EXIT_VIOLATION
    readings = capsys.readouterr().out.partition("readings (1;")[2]
    assert main(["check", "drop_oldest.py:SPEC", "--quiet", "-p", "Q=1"]) == EXIT_VIOLATION
    alone = capsys.readouterr().out
    said = [line.strip() for line in readings.splitlines() if line.strip().startswith(("violated", "counter"))]
    assert said and all(line in alone for line in said)


def test_the_models_command_lists_the_readings(capsys: pytest.CaptureFixture) -> None:
    assert main(["models", "openclaw"]) == EXIT_OK
    assert "  reading -p mode=interrupt: a new message aborts the active run" in capsys.readouterr().out
    assert main(["models", "openclaw", "--json"]) == EXIT_OK
    [spec] = json.loads(capsys.readouterr().out)
    assert {"params": {"mode": "interrupt"}, "doc": "a new message aborts the active run and starts its own"} \
        in spec["readings"]


def spec_with(*readings: Reading) -> ModelSpec:
    return ModelSpec("m", "a model", (Param("Q", 2, "capacity", low=1, high=4), Param("mode", "a", "mode",
                                                                                     choices=("a", "b"))),
                     (), lambda params, bug: None, readings=readings)  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize(("reading", "message"), [
    (Reading({"R": 1}, "x"), "model 'm': reading 'R=1': model 'm' has no parameter 'R'; its parameters are: Q, mode"),
    (Reading({"Q": 9}, "x"), "model 'm': reading 'Q=9': parameter Q=9 is out of range; use 1..4"),
    (Reading({"mode": "c"}, "x"), "model 'm': reading 'mode=c': parameter mode='c' is not one of: a, b"),
    (Reading({"Q": 2}, "x"), "model 'm': reading 'Q=2' sets only defaults; the default check runs them already"),
    (Reading({}, "x"), "model 'm': readings is a sequence of Reading(params, doc), each setting at least one "
                       "parameter, not Reading(params={}, doc='x')"),
])
def test_a_reading_the_parameters_refuse_is_refused_where_it_is_declared(reading: Reading, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        spec_with(reading)
    assert str(refused.value) == message
