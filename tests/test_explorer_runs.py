"""Parallel workers, checkpoints and graph export give the same answers as one plain run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import networkx as nx
import pytest

from steersim import CheckOptions, check
from steersim.checking.graph import state_graph
from steersim.cli import main
from steersim.models.teaching import SPEC as TEACHING


def summary(result):
    return (result.status, result.states, result.transitions,
            [(p.name, p.status, None if p.counterexample is None else len(p.counterexample.steps))
             for p in result.properties if p.kind != "eventually"])


@pytest.mark.parametrize("bug", [None, *sorted(TEACHING.bugs)])
def test_two_workers_give_the_same_verdicts_and_counts(bug):
    model = TEACHING.build({"K": 4, "N": 3, "P": 4}, bug)
    serial = check(model, CheckOptions(keep_going=True, liveness=False))
    parallel = check(model, CheckOptions(keep_going=True, liveness=False), workers=2)
    assert summary(serial) == summary(parallel)


def comparable(path):
    report = json.loads(path.read_text())
    report.pop("seconds")
    return report


def test_resume_after_a_kill_gives_the_same_report(tmp_path):
    args = ["check", "teaching", "-p", "K=8", "-p", "N=5", "-p", "P=8", "--quiet", "--no-liveness"]
    assert main([*args, "--json", str(tmp_path / "whole.json")]) == 0
    checkpoint = tmp_path / "run.ckpt"
    proc = subprocess.Popen([sys.executable, "-m", "steersim.cli", *args, "--checkpoint", str(checkpoint),
                             "--checkpoint-every", "0.05"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not checkpoint.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    if proc.poll() is not None:  # killed once its first checkpoint is written; the whole search takes 0.6 s
        pytest.fail("the run finished before it could be interrupted; make the configuration larger")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert main([*args, "--resume", str(checkpoint), "--json", str(tmp_path / "resumed.json")]) == 0
    assert comparable(tmp_path / "resumed.json") == comparable(tmp_path / "whole.json")


def test_resume_refuses_another_runs_checkpoint(tmp_path, capsys):
    checkpoint = tmp_path / "c.ckpt"
    main(["check", "teaching", "--quiet", "--checkpoint", str(checkpoint), "--checkpoint-every", "0"])
    assert checkpoint.exists()
    code = main(["check", "teaching", "-p", "K=2", "--quiet", "--resume", str(checkpoint)])
    assert code == 2 and "belongs to another run" in capsys.readouterr().err
    checkpoint.write_bytes(b"garbage")
    code = main(["check", "teaching", "--quiet", "--resume", str(checkpoint)])
    assert code == 2 and "not a steersim checkpoint" in capsys.readouterr().err


def test_graph_export(tmp_path, capsys):
    graph = state_graph(TEACHING.build({}))
    assert graph.number_of_nodes() == 405 and graph.number_of_edges() == 785
    assert main(["check", "teaching", "--quiet", "--graph", str(tmp_path / "g.graphml")]) == 0
    assert nx.read_graphml(tmp_path / "g.graphml").number_of_nodes() == 405
    assert main(["check", "teaching", "--quiet", "--graph", str(tmp_path / "g.dot")]) == 0
    assert (tmp_path / "g.dot").read_text().startswith("digraph steersim {")
    code = main(["check", "teaching", "-p", "K=10", "-p", "N=6", "-p", "P=10", "--quiet", "--graph",
                 str(tmp_path / "big.graphml")])
    assert code == 2 and "more than 20,000 states" in capsys.readouterr().err


def test_progress_lines_go_to_stderr(capsys):
    seen = []
    check(TEACHING.build({"K": 6, "N": 4, "P": 6}), CheckOptions(progress=seen.append, progress_interval=0.0))
    assert seen and {"states", "distinct", "queue", "depth", "rate"} <= set(seen[-1])
    assert seen[-1]["distinct"] == 5430
