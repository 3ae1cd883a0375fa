"""`steersim conform langgraph` against the real langgraph-api server: runs without double texting are
clean, a scenario is one reproducible run, the fast plan finds each known root cause and nothing it
cannot explain, the standalone reproductions reproduce, and bad usage is one line with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("langgraph_api", reason="the langgraph extra is not installed")

from steersim.cli import main as cli
from steersim.errors import EXIT_USAGE, EXIT_VIOLATION
from steersim.models.langgraph.harness import conform
from steersim.models.langgraph.harness.causes import CAUSES, UNEXPLAINED
from steersim.models.langgraph.harness.runner import Session

SHOWN = {cause.name for cause in CAUSES if cause.conform}  # the causes a recording can show


def run_conform(tmp_path, *args):
    out = tmp_path / "findings.json"
    code = conform.main([*args, "--json", str(out), "--quiet"])
    return code, json.loads(out.read_text())


def test_runs_that_meet_no_run_in_flight_are_clean(tmp_path):
    code, doc = run_conform(tmp_path, "--scenario", "enqueue@0", "--scenario", "enqueue@0+join,enqueue@11+join",
                            "--scenario", "enqueue@0,reject@11", "--scenario", "enqueue@0,enqueue@4,cleanup")
    assert doc["scenarios"] == doc["clean"] == 4, doc["causes"]
    assert code == 0


def test_a_scenario_records_the_same_events_whatever_ran_before_it():
    """Virtual time, the harness's dispatcher and FIFO scheduling make a scenario one reproducible run."""
    named = [conform.parse_scenario(n) for n in ("enqueue@0+join,rollback@7+join,cleanup", "enqueue@0,interrupt@0")]
    first, second = [], []
    Session().run(named, lambda rec: first.append([(o.event.name, o.event.data) for o in rec.observations]))
    Session().run(named[::-1], lambda rec: second.append([(o.event.name, o.event.data) for o in rec.observations]))
    assert first == second[::-1] and all(first)


def test_the_fast_plan_finds_each_root_cause_and_nothing_unexplained(tmp_path):
    code, doc = run_conform(tmp_path, "--plan", "fast", "--report", str(tmp_path / "report"))
    assert code == EXIT_VIOLATION
    found = {c["cause"]: c for c in doc["causes"]}
    assert set(found) == SHOWN, sorted(found)
    assert UNEXPLAINED not in found
    assert "one-active-turn" in found["next-run-starts-before-cancelled-task-stops"]["properties"]
    assert "rollback-leaves-no-trace" in found["rollback-orphans-checkpoints"]["properties"]
    assert "thread-busy-while-in-flight" in found["cancel-of-pending-run-idles-thread"]["properties"]
    assert "thread-agrees-with-last-run" in found["cancelled-run-writes-thread-last"]["properties"]
    report = tmp_path / "report"
    assert (report / "summary.md").is_file()
    for cause in (c for c in CAUSES if c.conform):
        assert (report / "repro" / cause.script).is_file()
        trace = report / f"{cause.name}.trace.jsonl"  # the model's path to where the server left it
        assert cli(["replay", str(trace)]) == 0
    assert cli(["diagram", str(trace), "-o", str(tmp_path / "runs.svg")]) == 0
    assert "<svg" in (tmp_path / "runs.svg").read_text()[:500]


def test_each_reproduction_reproduces_against_the_real_server(tmp_path):
    """Each script runs on its own, with the real server's own queue and wall-clock time, and exits 1."""
    for cause in CAUSES:
        done = subprocess.run([sys.executable, str(cause.repro)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 1, f"{cause.script}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        assert "reproduced:" in done.stdout


def test_a_scenario_that_is_not_one_is_refused_in_one_line(capsys):
    assert cli(["conform", "langgraph", "--scenario", "enqueue@soon"]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "STRATEGY@EVENTS" in err[0]


@pytest.mark.slow
def test_the_full_plan_finds_only_known_root_causes(tmp_path):
    code, doc = run_conform(tmp_path, "--plan", "full")
    assert code == EXIT_VIOLATION
    assert doc["status"] == "complete" and doc["scenarios"] > 800
    found = {c["cause"] for c in doc["causes"]}
    assert UNEXPLAINED not in found, [c for c in doc["causes"] if c["cause"] == UNEXPLAINED]
    assert found == SHOWN


def test_a_plan_prints_progress_lines_on_stderr_unless_quiet(tmp_path, capsys, monkeypatch):
    """The plan's size is known once the solo run has placed the others: the first line says it."""
    monkeypatch.setattr(conform, "after_solo", lambda plan, length: [])  # the solo run alone: quick
    assert conform.main(["--plan", "full", "--json", str(tmp_path / "a.json")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith("progress: ") for line in err)
    assert "scenarios 1 of 1" in err[0]  # the solo run is judged before the plan is placed
    assert conform.main(["--plan", "full", "--quiet", "--json", str(tmp_path / "b.json")]) == 0
    assert capsys.readouterr().err == ""


def test_progress_counts_the_scenarios_judged_against_the_plan():
    import io

    from steersim.models.langgraph.harness.progress import Progress

    stream = io.StringIO()
    progress = Progress(stream, interval=0.0)
    plan = conform.scenarios("fast", [12], progress)
    first = next(plan)
    assert first == conform.sc.solo(join=True) and progress.total is None
    rest = list(plan)
    assert progress.total == 1 + len(rest) == 1 + len(conform.after_solo("fast", 12))
    progress.judged(causes=2)
    lines = stream.getvalue().splitlines()
    assert lines[-1].endswith(f"scenarios 1 of {progress.total}  root causes 2")


def test_a_cancelled_run_whose_clean_up_outlasts_its_successor_writes_the_thread_last():
    """With the clean-up the plans always used, the cancelled run stops first and the thread agrees with
    its last run; with one that outlasts the next run, the cancelled run's end overwrites the thread."""
    from steersim.models.langgraph.harness.causes import attribute
    from steersim.models.langgraph.harness.judge import judge

    named = [conform.parse_scenario(n) for n in ("enqueue@0,interrupt@7,cleanup", "enqueue@0,interrupt@7,cleanup=4")]
    assert [s.name for s in named] == ["enqueue@0,interrupt@7,cleanup", "enqueue@0,interrupt@7,cleanup=4"]
    causes, threads = [], []
    Session().run(named, lambda rec: (causes.append(set(attribute(rec, judge(rec)))),
                                      threads.append([e.data for e in rec.events if e.name == "thread"][-1])))
    assert "cancelled-run-writes-thread-last" not in causes[0] and threads[0]["status"] == "idle"
    assert "cancelled-run-writes-thread-last" in causes[1]
    assert threads[1] == {"status": "interrupted", "values": ("r1", "r1.1")}


@pytest.mark.parametrize("bad", ["cleanup=0", "cleanup=-1", "cleanup=soon", "cleanup=1000"])
def test_a_clean_up_duration_that_is_not_one_is_refused_in_one_line(bad, capsys):
    assert cli(["conform", "langgraph", "--scenario", f"enqueue@0,interrupt@7,{bad}"]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cleanup[=SECONDS]" in err[0]
