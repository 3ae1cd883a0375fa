"""`steersim conform pydantic-ai` against the real pydantic-ai-slim: a scenario is one reproducible run,
runs driven with `run`, `iter` and `run_stream_events` are clean, the judge sees a message lost or a
result missing, the fast plan finds the known root cause and nothing it cannot explain, the standalone
reproduction reproduces, and bad usage is one line with exit 2."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai extra is not installed")

from steersim.cli import main as cli
from steersim.errors import EXIT_USAGE, EXIT_VIOLATION
from steersim.models.pydantic_ai.harness import conform
from steersim.models.pydantic_ai.harness.causes import CAUSES, UNEXPLAINED
from steersim.models.pydantic_ai.harness.judge import judge
from steersim.models.pydantic_ai.harness.runner import Observation, run_one
from steersim.models.pydantic_ai.harness.scenarios import parse

BOTH_WAYS = ("calls=2,when_idle@model,asap@tool+thread,asap@stream", "calls=2,asap@tools+tool,when_idle@final",
             "calls=2,when_idle@model,asap@returned,cancel@returned", "calls=2,when_idle@model,asap@tools,promote")


def run_conform(tmp_path, *args):
    out = tmp_path / "findings.json"
    code = conform.main([*args, "--json", str(out), "--quiet"])
    return code, json.loads(out.read_text())


@pytest.mark.parametrize("mode", ["run", "iter", "run_stream_events"])
def test_runs_that_drain_the_queue_are_clean(mode):
    for rest in BOTH_WAYS:
        name = f"{mode},{rest}"
        if mode != "run_stream_events":  # only a streamed run has a point between chunks of its final response
            name = name.replace(",asap@stream", ",asap@final")
        rec = run_one(parse(name))
        assert rec.end == "quiescent" and not judge(rec), (name, [f.summary for f in judge(rec)])


@pytest.mark.parametrize("seed", [None, 3])
def test_a_scenario_records_the_same_events_every_time(seed):
    name = "iter,calls=2,when_idle@model,asap@tool+thread,asap@final,cancel@returned"
    first, second = (run_one(parse(name), seed) for _ in range(2))
    assert [o.event for o in first.observations] == [o.event for o in second.observations]
    assert [o.t for o in first.observations] == [o.t for o in second.observations]


def test_seeded_orders_of_the_ready_callbacks_stay_clean_where_the_queue_is_drained():
    """A tool task may take the step it was ready for after `cancel()` (the model's `cancelling`): the
    seeded orders of the cancellation scenarios meet it, and the model allows it."""
    late_start = 0
    for mode in ("run", "iter"):
        for point in ("tool", "returned"):
            for seed in range(6):
                rec = run_one(parse(f"{mode},calls=2,when_idle@model,asap@{point},cancel@{point}"), seed)
                assert rec.end == "quiescent" and not judge(rec), (rec.name, [f.summary for f in judge(rec)])
                names = [e.name for e in rec.events]
                late_start += "tool.started" in names[names.index("cancel"):names.index("stopped")]
    assert late_start


def test_the_judge_sees_a_message_the_run_never_delivered():
    rec = run_one(parse("iter,calls=1,asap@tool"))
    assert [o.event.data["delivered"] for o in rec.observations if o.event.name == "request"] == [(), ("m1",)]
    blank = [Observation(o.event._replace(data={**o.event.data, "delivered": ()}), o.t)
             if o.event.name == "request" else o for o in rec.observations]
    found = {f.property for f in judge(dataclasses.replace(rec, observations=blank))}
    assert {"no-lost-steers", "trace-validation"} <= found


def test_the_judge_sees_a_when_idle_message_delivered_early_and_a_result_lost():
    rec = run_one(parse("run,calls=1,when_idle@tool"))
    early = []
    for o in rec.observations:
        if o.event.name == "redirect":
            continue
        if o.event.name == "request" and o.event.data["turn"] == "r1.2":
            o = Observation(o.event._replace(data={**o.event.data, "delivered": ("m1",)}), o.t)
        early.append(o)
    found = {f.property for f in judge(dataclasses.replace(rec, observations=early))}
    assert {"when-idle-waits-for-end", "trace-validation"} <= found
    lost = dataclasses.replace(run_one(parse("run,calls=2,when_idle@model,cancel@returned")), lost_results=["r1.1.t1"])
    assert "finished-results-kept" in {f.property for f in judge(lost)}


def test_the_fast_plan_finds_the_root_cause_and_nothing_unexplained(tmp_path):
    code, doc = run_conform(tmp_path, "--plan", "fast", "--report", str(tmp_path / "report"))
    assert code == EXIT_VIOLATION
    found = {c["cause"]: c for c in doc["causes"]}
    assert set(found) == {cause.name for cause in CAUSES}, sorted(found)
    assert UNEXPLAINED not in found
    assert "no-lost-steers" in found["run-stream-drops-queued-messages"]["properties"]
    assert all(s.startswith("run_stream,") for s in found["run-stream-drops-queued-messages"]["every_scenario"])
    results = {r["scenario"]: r["result"] for r in doc["results"]}
    assert len(results) == doc["scenarios"] and {"ok", "run-stream-drops-queued-messages"} == set(results.values())
    report = tmp_path / "report"
    assert "| scenario | result |" in (report / "summary.md").read_text()
    for cause in CAUSES:
        assert (report / "repro" / cause.script).is_file()
        assert cli(["replay", str(report / f"{cause.name}.trace.jsonl")]) == 0


def test_each_reproduction_reproduces(tmp_path):
    for cause in CAUSES:
        done = subprocess.run([sys.executable, str(cause.repro)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 1, f"{cause.script}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        assert "REPRODUCED:" in done.stdout


def test_a_scenario_that_is_not_one_is_refused_in_one_line(capsys):
    assert cli(["conform", "pydantic-ai", "--scenario", "iter,asap@soon"]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "PRIORITY@POINT" in err[0]
    assert cli(["conform", "pydantic-ai", "--scenario", "run,asap@stream"]) == EXIT_USAGE
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_full_plan_finds_only_the_known_root_cause(tmp_path):
    code, doc = run_conform(tmp_path, "--plan", "full")
    assert code == EXIT_VIOLATION and doc["status"] == "complete" and doc["scenarios"] > 500
    assert {c["cause"] for c in doc["causes"]} == {cause.name for cause in CAUSES}
