"""Ctrl-C as a terminal sends it (SIGINT to the command's whole process group), whatever runs the work:
the command writes its partial report with status interrupted and the counts reached, exits 130 with
one line on stderr (progress lines aside), and leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from steersim.errors import EXIT_INTERRUPTED

ROOT = Path(__file__).resolve().parent.parent
BIG_TEACHING = ["teaching", "-p", "K=12", "-p", "N=12", "-p", "Q=7", "-p", "P=12"]  # minutes to check
ONE_LINE = ["steersim: interrupted (Ctrl-C)"]
PATIENCE = 60.0  # seconds a command may take to start, or to stop after Ctrl-C, on a busy machine


def group_members(group: int) -> list[str]:
    """The live processes (zombies are dead) of a process group, by a scan of /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, _, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == group and state != "Z":
            found.append(f"{entry} {command}")
    return found


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, "the command never got going"
        time.sleep(0.05)


def outliving(command: subprocess.Popen) -> list[str]:
    """The processes of the command's group still alive once it is done (killed, after a grace period
    for exiting ones); the command itself is killed if it has not ended."""
    if command.poll() is None:
        os.killpg(command.pid, signal.SIGKILL)
        command.wait()
    deadline = time.monotonic() + PATIENCE / 4
    while (left := group_members(command.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if left:
        os.killpg(command.pid, signal.SIGKILL)
    return left


def running(pid: int) -> bool:
    """The process runs steersim's work: it has loaded numpy, which `steersim.cli` imports only inside a
    command (and a worker only with its first task)."""
    try:
        return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def interrupt(args: list[str], ready: str = "progress", settle: float = 0.0) -> tuple[int, list[str], str]:
    """Run `steersim ARGS` in its own process group, wait until it is `ready` ("progress": its first
    progress line, which comes when work is done; "workers": it runs, and so does a worker process;
    "started": it runs), let it work `settle` seconds more, press Ctrl-C, and return its exit code, its
    stderr lines other than progress lines, and its stdout. Asserts that no process of the group
    outlives it (any that does is killed, so that a failing test leaves nothing behind either)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile("w+") as stdout:
        # The command gets Ctrl-C as a terminal gives it, even when the suite itself runs with SIGINT ignored
        # (a background job of a non-interactive shell ignores it, and exec keeps an ignored signal ignored):
        # a handled signal is reset to its default at exec, and the child is in a session of its own.
        ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        if ignored:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            command = subprocess.Popen([sys.executable, "-m", "steersim.cli", *args], stdout=stdout,
                                       stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT, start_new_session=True)
        finally:
            if ignored:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        err: list[str] = []
        progressed = threading.Event()

        def read_stderr() -> None:
            for line in command.stderr:
                err.append(line.rstrip("\n"))
                if line.startswith("progress:"):
                    progressed.set()

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        try:
            if ready == "progress":
                wait_until(lambda: progressed.is_set() or command.poll() is not None)
            wait_until(lambda: running(command.pid) or command.poll() is not None)
            if ready == "workers":
                wait_until(lambda: any(running(int(member.split()[0])) for member in group_members(command.pid)
                                       if int(member.split()[0]) != command.pid))
            time.sleep(settle)
            if command.poll() is None:
                os.killpg(command.pid, signal.SIGINT)
            command.wait(timeout=PATIENCE)
        finally:
            left = outliving(command)
        reader.join(PATIENCE)
        stdout.seek(0)
        out = stdout.read()
    assert left == [], f"processes outlived the command: {left}"
    lines = [line for line in err if not line.startswith("progress:")]
    return command.returncode, lines, out


@pytest.mark.parametrize("engine", [["--engine", "generic"], ["--engine", "vector"], ["--workers", "2"],
                                    ["--dask", "local"]], ids=["generic", "vector", "workers2", "dask"])
def test_check_writes_its_partial_reports(engine, tmp_path):
    report, junit = tmp_path / "check.json", tmp_path / "check.xml"
    code, err, out = interrupt(["check", *BIG_TEACHING, "--no-liveness", *engine, "--json", str(report),
                                "--junit", str(junit)])
    assert (code, err) == (EXIT_INTERRUPTED, ONE_LINE), (code, err)
    data = json.loads(report.read_text())
    assert data["status"] == "interrupted"
    assert 0 < data["states"] <= data["transitions"]
    # an invariant cannot hold before the search ends; a `sometimes` may already be reached
    assert {p["status"] for p in data["properties"] if p["kind"] == "always"} == {"unknown"}
    assert f"interrupted: {data['states']:,} distinct states, {data['transitions']:,} transitions" in out
    assert '<property name="status" value="interrupted" />' in junit.read_text()


@pytest.mark.parametrize("executor", [[], ["--workers", "2"], ["--dask", "local"]],
                         ids=["serial", "workers2", "dask"])
def test_simulate_keeps_the_runs_finished(executor, tmp_path):
    report = tmp_path / "sweep.json"
    seeds = 2_000_000
    code, err, out = interrupt(["simulate", "teaching", "--seeds", f"0..{seeds - 1}", *executor, "--json",
                                str(report), "--out", str(tmp_path / "traces")],
                               settle=0.5)
    assert (code, err) == (EXIT_INTERRUPTED, ONE_LINE), (code, err)
    data = json.loads(report.read_text())
    assert data["status"] == "interrupted"
    assert 0 < data["runs"] < seeds  # a progress line came: some runs were done
    assert [run["seed"] for run in data["runs_detail"]] == sorted({run["seed"] for run in data["runs_detail"]})
    assert len(data["runs_detail"]) == data["runs"]
    assert out.startswith(f"interrupted: {data['runs']} runs")


def test_ci_reports_the_cases_done_and_the_one_cut_short(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[[tool.steersim.check]]\nmodel = "teaching"\nexpect = "ok"\n\n'
                      '[[tool.steersim.check]]\nmodel = "teaching"\ngrid = { K = 12, N = 12, Q = 7, P = 12 }\n'
                      'expect = "ok"\n')
    report, junit = tmp_path / "ci.json", tmp_path / "ci.xml"
    code, err, _ = interrupt(["ci", "--config", str(config), "--json", str(report), "--junit", str(junit)],
                             ready="started", settle=3.0)
    assert (code, err) == (EXIT_INTERRUPTED, ONE_LINE), (code, err)
    data = json.loads(report.read_text())
    assert data["status"] == "interrupted"
    assert data["results"][-1]["got"] == "interrupted"
    assert data["passed"] == data["cases"] - 1 and data["failed"] == 0
    assert '<property name="status" value="interrupted" />' in junit.read_text()


def test_audit_stops_its_recording_child(tmp_path):
    code, err, _ = interrupt(["audit", "teaching", "--seeds", "0..2000000"], ready="workers", settle=0.5)
    assert (code, err) == (EXIT_INTERRUPTED, ONE_LINE), (code, err)


def test_conform_keeps_the_interleavings_run(tmp_path):
    report = tmp_path / "conform.json"
    code, err, out = interrupt(["conform", "foundry", "--runs", "1000000", "--quiet", "--json", str(report)],
                               ready="started", settle=3.0)
    assert (code, err) == (EXIT_INTERRUPTED, ONE_LINE), (code, err)
    data = json.loads(report.read_text())
    assert data["status"] == "interrupted"
    assert 0 <= data["runs"] < 1_000_000
    assert out.startswith(f"foundry conformance (interrupted): {data['runs']} interleavings")


def test_a_ctrl_c_during_deferred_cleanup_is_raised_after_it_completes(tmp_path):
    """Clean-up under `interrupts_deferred` runs whole: the SIGINT that arrives in it is raised after."""
    import os
    import shutil
    import signal

    from steersim.interrupts import interrupts_deferred

    folder = tmp_path / "tmp"
    (folder / "a" / "b").mkdir(parents=True)
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        shutil.rmtree(folder)
        removed = not folder.exists()
    assert removed
    with interrupts_deferred():  # nothing held: the block just runs
        pass


def _deaf_to_sigterm(seconds: float) -> int:
    """A task that makes its worker ignore SIGTERM, as a worker the pool never signals behaves."""
    import os
    import signal
    import time

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(seconds)
    return os.getpid()


def test_leaving_a_worker_pool_ends_a_worker_that_outlives_sigterm() -> None:
    import os
    import time

    from steersim.interrupts import worker_pool

    with worker_pool(1) as pool:
        pending = pool.apply_async(_deaf_to_sigterm, (600,))
        time.sleep(0.5)  # the worker has taken the task
        pid = next(iter(pool._pool)).pid
    assert not pending.ready()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    raise AssertionError(f"worker {pid} is still alive after the pool was left")


class RaisesSignalWhenFinalised:
    """An object whose finalizer is running when the signal `signum` arrives."""

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __del__(self) -> None:
        signal.raise_signal(self.signum)  # its handler runs at once, inside this finalizer


def test_a_ctrl_c_that_lands_in_a_finalizer_is_raised_after_it():
    """Python only prints, then drops, an exception raised in a `__del__` or a weakref callback; a Ctrl-C
    handled there would be lost and the command would run on (asyncio's task sets finalize all the time)."""
    from steersim.interrupts import swallowed_interrupts_redelivered

    reached = []
    with pytest.raises(KeyboardInterrupt), swallowed_interrupts_redelivered():
        RaisesSignalWhenFinalised(signal.SIGINT)  # finalized as the statement ends
        reached.append("after the finalizer")
        time.sleep(PATIENCE)  # a blocking wait, which the signal sent again ends at once
    assert reached == ["after the finalizer"]


def test_an_unraisable_error_other_than_an_interrupt_goes_on_to_the_previous_hook(monkeypatch):
    from steersim.interrupts import swallowed_interrupts_redelivered

    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: seen.append(unraisable.exc_type))

    class FailsWhenFinalised:
        def __del__(self) -> None:
            raise ValueError("in a finalizer")

    with swallowed_interrupts_redelivered():
        FailsWhenFinalised()
    assert seen == [ValueError]


def test_a_terminate_that_lands_in_a_worker_finalizer_still_ends_the_worker():
    """A pool worker (`init_worker`) whose finalizer gets the parent's SIGTERM exits, at once, with
    EXIT_INTERRUPTED (not by the SIGALRM that bounds its unwinding), and prints nothing."""
    script = ("import signal, sys, time\n"
              "from steersim.interrupts import init_worker\n"
              "from tests.test_interrupts import RaisesSignalWhenFinalised\n"
              "init_worker()\n"
              "RaisesSignalWhenFinalised(signal.SIGTERM)\n"
              "time.sleep(30)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=PATIENCE)
    assert (done.returncode, done.stderr) == (EXIT_INTERRUPTED, "")


def test_a_ctrl_c_quiets_the_teardown_logs_of_a_dask_worker_started_here() -> None:
    """A local cluster's worker gets the terminal's Ctrl-C too: it does not stop (closing the cluster
    does), but its heartbeat errors while the scheduler closes would print tracebacks, so it goes quiet."""
    import logging

    from steersim.interrupts import dask_setup

    loggers = [logging.getLogger(name) for name in ("distributed", "tornado.application")]
    levels = [logger.level for logger in loggers]
    previous = signal.getsignal(signal.SIGINT)
    try:
        dask_setup(None)
        signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # what the worker's Ctrl-C runs; no raise
        assert [logger.level for logger in loggers] == [logging.CRITICAL, logging.CRITICAL]
    finally:
        signal.signal(signal.SIGINT, previous)
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
