"""The command line: exit codes, determinism of reports, and one-line errors for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.models.teaching import SPEC as TEACHING


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_reports_are_byte_identical_and_seed_sensitive(tmp_path, capsys):
    paths = []
    for name, seeds in (("a", "0..199"), ("b", "0..199"), ("c", "1..200")):
        out = tmp_path / name
        code, _, _ = run_cli(capsys, "simulate", "teaching", "--seeds", seeds, "--json", str(out) + ".json",
                             "--out", str(out))
        assert code == 0
        paths.append(out)
    a, b, c = (p.with_suffix(".json").read_bytes() for p in paths)
    assert a == b and a != c


@pytest.mark.parametrize("bug", sorted(TEACHING.bugs))
def test_simulate_catches_every_bug_and_writes_its_trace(tmp_path, capsys, bug):
    code, _, _ = run_cli(capsys, "simulate", "teaching", "--bug", bug, "--seeds", "0..999",
                           "--json", str(tmp_path / "r.json"), "--out", str(tmp_path / "traces"))
    assert code == 1
    report = json.loads((tmp_path / "r.json").read_text())
    catcher = TEACHING.bug_catchers[bug]
    row = next(p for p in report["properties"] if p["name"] == catcher)
    assert row["status"] == "violated"
    trace_path = report["first_counterexample"]["trace"]
    lines = [json.loads(line) for line in Path(trace_path).read_text().splitlines()]
    shown = [v["property"] for line in lines for v in line.get("violations", [])]
    assert shown, "the trace shows the violated invariant"
    code, out, _ = run_cli(capsys, "replay", trace_path)
    assert code == 1 and out.startswith("ok:") and "violated" in out


def test_check_exit_codes_and_reports(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "check", "teaching", "--quiet", "--json", str(tmp_path / "c.json"),
                           "--junit", str(tmp_path / "c.xml"))
    assert code == 0 and "ok:" in out
    report = json.loads((tmp_path / "c.json").read_text())
    assert report["status"] == "ok" and report["states"] == 405
    assert {p["name"] for p in report["properties"]} >= {"no-lost-steers", "one-active-turn", "ordered-history",
                                                          "paired-tool-results"}
    readings = report["readings"]
    assert [r["params"] for r in readings] == [{"P": 1}, {"Q": 1}] and {r["status"] for r in readings} == {"ok"}
    assert (tmp_path / "c.xml").read_text().count("<testcase") == \
        len(report["properties"]) + sum(len(r["properties"]) for r in readings)
    code, out, _ = run_cli(capsys, "check", "teaching", "--bug", "no-skip-result", "--quiet",
                           "--junit", str(tmp_path / "b.xml"))
    assert code == 1 and "counterexample for results-recorded" in out
    assert "<failure" in (tmp_path / "b.xml").read_text()
    code, _, _ = run_cli(capsys, "check", "teaching", "-p", "K=6", "-p", "N=4", "--max-states", "100", "--quiet")
    assert code == 3


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["check", "nosuch"], "unknown model 'nosuch'; known models:"),
        (["check", "teaching", "-p", "K=x"], "takes a whole number"),
        (["check", "teaching", "-p", "Z=1"], "has no parameter 'Z'"),
        (["check", "teaching", "-p", "K"], "should be KEY=VALUE"),
        (["check", "teaching", "-p", "K=99"], "out of range"),
        (["check", "teaching", "--bug", "nosuch"], "has no bug variant 'nosuch'"),
        (["simulate", "teaching", "--seeds", "9..1"], "need 0 <= A <= B"),
        (["simulate", "teaching", "--seeds", "a..b"], "--seeds takes A..B"),
        (["simulate", "teaching", "--timing", "/nonexistent.toml"], "does not exist"),
        (["replay", "/nonexistent.jsonl"], "does not exist"),
        (["check"], "the following arguments are required"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert words in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_timing_file_is_named(tmp_path, capsys):
    bad = tmp_path / "t.toml"
    for text, words in (("[x\n", "not valid TOML"), ('["tool.finish"]\ndist = "gauss"\n', "unknown dist"),
                        ('["tool.finish"]\ndist = "exponential"\n', "missing mean"),
                        ('["tool.finish"]\ndist = "exponential"\nmean = -1\n', "finite number >= 0")):
        bad.write_text(text)
        code, _, err = run_cli(capsys, "simulate", "teaching", "--timing", str(bad))
        assert code == 2 and words in err, (text, err)


def test_damaged_traces_are_refused_in_one_line(tmp_path, capsys):
    code, _, _ = run_cli(capsys, "simulate", "teaching", "--bug", "launch-after-steer", "--seeds", "0..20",
                         "--out", str(tmp_path))
    good = next(tmp_path.glob("*.jsonl"))
    text = good.read_text()
    cases = {
        "truncated": (text[: len(text) // 2], "truncated"),
        "notjson": (text.replace("}", "", 1), "is not JSON"),
        "foreign": ('{"hello": 1}\n', "not a steersim trace"),
        "empty": ("", "empty"),
        "version": (text.replace('"steersim": 1', '"steersim": 99', 1), "format version 99"),
        "badstep": (text.splitlines()[0] + '\n{"i": 0}\n', "line 2 field action: missing"),
    }
    for name, (body, words) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(body)
        code, _, err = run_cli(capsys, "replay", str(path))
        assert code == 2 and words in err, (name, err)
        assert len(err.strip().splitlines()) == 1


def test_replay_names_the_first_step_that_differs(tmp_path, capsys):
    run_cli(capsys, "simulate", "teaching", "--bug", "launch-after-steer", "--seeds", "0..20", "--out", str(tmp_path))
    good = next(tmp_path.glob("*.jsonl"))
    lines = good.read_text().splitlines()
    step = json.loads(lines[3])
    step["events"][0]["data"]["call"] = "call_99"
    lines[3] = json.dumps(step)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    code, out, _ = run_cli(capsys, "replay", str(edited))
    assert code == 1 and out.startswith("differs: step 2")


def test_models_json_lists_parameters_with_defaults():
    out = subprocess.run([sys.executable, "-m", "steersim.cli", "models", "--json"], capture_output=True, text=True,
                         check=True).stdout
    teaching = next(m for m in json.loads(out) if m["name"] == "teaching")
    assert {p["name"]: p["default"] for p in teaching["params"]} == {"K": 3, "N": 3, "Q": 2, "P": 3}
    assert all(p["doc"] for p in teaching["params"])
    assert {b["name"] for b in teaching["bugs"]} == set(TEACHING.bugs)


CHILD_THREADS = """
import os
from steersim.cli import main
code = main(["check", "teaching", "--json", os.devnull])
print(code, os.environ["OPENBLAS_NUM_THREADS"], len(os.listdir("/proc/self/task")))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts the process's threads in /proc")
@pytest.mark.parametrize(("given", "threads"), [(None, 1), ("2", None)])
def test_a_command_runs_on_one_thread_and_keeps_the_users_blas_setting(given, threads):
    """numpy and scipy load OpenBLAS, which starts a thread per core that spins on loading; the check has
    no use for them. Unless the user says otherwise, a command's process is the one thread it needs."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    out = subprocess.run([sys.executable, "-c", CHILD_THREADS], capture_output=True, text=True, check=True, env=env,
                         cwd=Path(__file__).resolve().parents[1]).stdout.split()[-3:]
    assert out[:2] == ["0", given or "1"]
    if threads is not None:
        assert int(out[2]) == threads
