"""A verdict says only what was shown: no false violation from an overflowing clock or a damaged
checkpoint, no `ok` from runs cut short or liveness left unchecked, limits that hold, and a replay that
checks how the recorded run ended."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import steersim.checking.checkpoint as checkpoint_format
from steersim import CheckOptions, check
from steersim.checking.memory import rss_mb
from steersim.cli import main
from steersim.core.model import Action, Eventually, ModelBase
from steersim.errors import EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, UsageError
from steersim.models.teaching import SPEC as TEACHING
from steersim.simulate.simulator import Simulator
from steersim.simulate.timing import Delay, TimingProfile
from steersim.traces.trace import read_trace, replay, write_trace

ROOT = Path(__file__).resolve().parent.parent


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# ---------------------------------------------------------------- virtual time stays finite
@pytest.mark.parametrize("profile", ['dist = "constant"\nvalue = 1e308',
                                     'dist = "lognormal"\nmedian = 1.0\nsigma = 1000',
                                     'dist = "exponential"\nmean = 1e300', 'dist = "uniform"\nlow = 0\nhigh = 1e308'])
def test_a_profile_that_overflows_virtual_time_is_refused(tmp_path, capsys, profile):
    timing = tmp_path / "t.toml"
    timing.write_text(f"[default]\n{profile}\n")
    assert main(["simulate", "teaching", "--seeds", "0..3", "--timing", str(timing), "--out", str(tmp_path)]) == 2
    assert "keeps virtual time finite" in one_line(capsys)


def test_a_clock_at_infinity_is_refused_not_judged():
    """A profile built around the file bounds still never yields a verdict on an overflowed clock: the
    correct model would otherwise look quiescent with its steers open, a false violation."""
    profile = TimingProfile((), Delay("constant", (1e308,)))
    with pytest.raises(UsageError, match="overflowed to infinity"):
        Simulator(TEACHING.build({}), profile).run(0)


# ---------------------------------------------------------------- cut runs make a sweep incomplete
def test_runs_cut_by_a_limit_make_the_sweep_incomplete(tmp_path, capsys):
    report = tmp_path / "r.json"
    code = main(["simulate", "teaching", "--seeds", "0..3", "--max-steps", "12", "--json", str(report),
                 "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == EXIT_INCOMPLETE
    assert out.startswith("incomplete: 4 runs") and "4 runs cut by --max-steps or --max-time" in out
    data = json.loads(report.read_text())
    assert data["status"] == "incomplete" and data["cut_runs"] == 4
    assert main(["simulate", "teaching", "--seeds", "0..3", "--max-time", "1", "--json", str(report),
                 "--out", str(tmp_path)]) == EXIT_INCOMPLETE
    assert json.loads(report.read_text())["cut_runs"] > 0
    # uncut, the sweep passes once its runs reach every guard (a full queue first rejects a steer at seed 6)
    assert main(["simulate", "teaching", "--seeds", "0..9", "--json", str(report), "--out", str(tmp_path)]) == 0
    assert json.loads(report.read_text())["cut_runs"] == 0


def test_a_violation_outranks_cut_runs(tmp_path, capsys):
    code = main(["simulate", "teaching", "--bug", "lost-at-boundary", "--seeds", "0..99", "--max-steps", "40",
                 "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == EXIT_VIOLATION and out.startswith("violation:") and "runs cut" in out


@pytest.mark.parametrize("bound", [["--max-steps", "0"], ["--max-steps", "-3"], ["--max-time", "0"],
                                   ["--max-time", "nan"], ["--max-time", "-1"]])
def test_bounds_under_which_no_run_can_step_are_refused(tmp_path, capsys, bound):
    assert main(["simulate", "teaching", "--seeds", "0..3", *bound, "--out", str(tmp_path)]) == EXIT_USAGE
    one_line(capsys)


# ---------------------------------------------------------------- skipped liveness makes a check incomplete
@pytest.mark.parametrize("flags", [["--liveness-limit", "100"], ["--liveness-limit", "100", "--workers", "2"],
                                   ["--liveness-limit", "100", "--engine", "generic"]])
def test_liveness_skipped_for_a_limit_makes_the_check_incomplete(tmp_path, capsys, flags):
    report = tmp_path / "r.json"
    assert main(["check", "teaching", "--quiet", *flags, "--json", str(report)]) == EXIT_INCOMPLETE
    data = json.loads(report.read_text())
    assert data["status"] == "incomplete"
    assert any(note.startswith("liveness not checked") for note in data["notes"])
    assert "note: liveness not checked" in capsys.readouterr().out


class ManyFairActors(ModelBase):
    """Seventy fair workers, each of which can tick the one counter: more fair classes than a liveness
    check tracks (64)."""

    fair_actors = ("w*",)

    def init_states(self):
        return [0]

    def actions(self, state):
        return [Action(f"w{i}", "tick", (i,)) for i in range(70)] if state < 3 else []

    def step(self, state, action):
        return state + 1, ()

    def properties(self):
        return [Eventually("counts-to-three", goal=lambda s: s >= 3)]


@pytest.mark.parametrize("workers", [1, 2])
def test_more_fair_actors_than_liveness_tracks_leave_it_unchecked_and_the_check_incomplete(workers):
    result = check(ManyFairActors(), CheckOptions(), workers=workers)
    assert result.status == "incomplete" and result.states == 4
    assert result.notes == ["liveness not checked: more than 64 fair actors"]
    assert {p.name: p.status for p in result.properties}["counts-to-three"] == "unknown"


@pytest.mark.parametrize("flags", [["--no-liveness"], ["--no-liveness", "--workers", "2"], ["--workers", "2"]])
def test_liveness_turned_off_by_the_caller_stays_ok(flags):
    assert main(["check", "teaching", "--quiet", *flags]) == EXIT_OK


# ---------------------------------------------------------------- checkpoints
CHECK = ["check", "teaching", "-p", "K=4", "--quiet", "--no-liveness"]


def saved_checkpoint(tmp_path) -> Path:
    checkpoint = tmp_path / "run.ckpt"
    assert main([*CHECK, "--checkpoint", str(checkpoint), "--checkpoint-every", "0"]) == 0
    assert checkpoint.exists()
    return checkpoint


def test_a_flipped_bit_anywhere_in_a_checkpoint_is_refused(tmp_path, capsys):
    checkpoint = saved_checkpoint(tmp_path)
    good = checkpoint.read_bytes()
    capsys.readouterr()
    for at in range(0, len(good), max(1, len(good) // 40)):
        damaged = bytearray(good)
        damaged[at] ^= 1 << (at % 8)
        checkpoint.write_bytes(bytes(damaged))
        assert main([*CHECK, "--resume", str(checkpoint)]) == EXIT_USAGE, f"bit flipped at byte {at} was resumed"
        one_line(capsys)
    checkpoint.write_bytes(good[: len(good) // 2])
    assert main([*CHECK, "--resume", str(checkpoint)]) == EXIT_USAGE
    assert "damaged" in one_line(capsys)
    checkpoint.write_bytes(good)
    assert main([*CHECK, "--resume", str(checkpoint)]) == EXIT_OK


def test_a_checkpoint_names_its_run(tmp_path):
    lines = saved_checkpoint(tmp_path).read_bytes().split(b"\n", 3)
    assert lines[0] == f"steersim-checkpoint {checkpoint_format.VERSION}".encode() and len(lines[1]) == 64
    identity = json.loads(lines[2])
    assert identity["model"] == "teaching" and identity["identity"]["params"]["K"] == 4
    assert identity["liveness"] is False and identity["strategy"] == "bfs"


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_checkpoint_never_replaces_a_device(tmp_path, capsys):
    device = tmp_path / "x"
    os.mknod(device, stat.S_IFCHR | 0o644, os.makedev(1, 7))
    assert main([*CHECK, "--checkpoint", str(device), "--checkpoint-every", "0"]) == EXIT_USAGE
    assert "not a regular file" in one_line(capsys)
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_a_checkpoint_never_replaces_a_link_or_a_folder(tmp_path, capsys):
    (tmp_path / "elsewhere").write_text("keep me")
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "folder").mkdir()
    for target in ("link", "folder", "missing/run.ckpt"):
        assert main([*CHECK, "--checkpoint", str(tmp_path / target), "--checkpoint-every", "0"]) == EXIT_USAGE
        one_line(capsys)
    assert (tmp_path / "link").is_symlink() and (tmp_path / "elsewhere").read_text() == "keep me"


def test_a_checkpoint_is_written_beside_its_target_and_renamed_into_place(tmp_path, monkeypatch):
    renames = []
    real_replace = os.replace

    def recording_replace(src, dst):
        renames.append((Path(src), Path(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", recording_replace)
    checkpoint = saved_checkpoint(tmp_path)
    assert renames and all(src.parent == checkpoint.parent and dst == checkpoint for src, dst in renames)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.ckpt"]  # no temporary file left behind


# ---------------------------------------------------------------- --max-memory
def test_max_memory_holds_under_workers(capsys):
    """The workers and the coordinator count together; before, a parallel check ignored the limit."""
    limit = rss_mb() * 0.9  # below what the coordinator and its workers hold together
    code = main(["check", "teaching", "-p", "K=6", "--quiet", "--no-liveness", "--workers", "2",
                 "--max-memory", f"{limit:.0f}"])
    assert code == EXIT_INCOMPLETE
    assert "memory limit" in capsys.readouterr().out


@pytest.mark.parametrize("engine", ["generic", "vector"])
def test_the_liveness_phase_is_skipped_when_it_would_pass_the_limit(monkeypatch, capsys, engine):
    """The search fits; the graph the liveness phase would build does not: liveness is not checked,
    and the check says incomplete with the reason."""
    monkeypatch.setattr("steersim.checking.explorer.liveness_mb", lambda states, edges: 1e9)
    code = main(["check", "teaching", "--quiet", "--engine", engine, "--max-memory", f"{rss_mb() + 4000:.0f}"])
    out = capsys.readouterr().out
    assert code == EXIT_INCOMPLETE
    assert "liveness not checked: it needs about" in out and "above --max-memory" in out


def test_the_vector_engine_stops_before_a_chunk_that_would_pass_the_limit(monkeypatch, capsys):
    monkeypatch.setattr("steersim.checking.vector.VectorExplorer._chunk_mb", lambda self, states: 1e9)
    code = main(["check", "teaching", "--quiet", "--engine", "vector", "--max-memory", f"{rss_mb() + 4000:.0f}"])
    assert code == EXIT_INCOMPLETE and "memory limit" in capsys.readouterr().out


# the command line, then the peak resident size of the child's own memory, which --max-memory bounds; the
# rusage of a child is no measure of it: Linux counts there the pages resident in the parent when it forked
# the child, and a test run's process can hold more than the limit itself
PEAK_AT_EXIT = """
import atexit, sys
from steersim.cli import main
def peak():
    with open("/proc/self/status") as status:
        sys.stderr.write(next(line for line in status if line.startswith("VmHWM:")))
atexit.register(peak)
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("args", "limit"), [
    (["-p", "K=14", "-p", "N=7", "-p", "P=14", "--engine", "vector", "--no-liveness"], 200),
    (["-p", "K=10", "-p", "N=6", "-p", "P=10", "--engine", "vector"], 200),
    (["-p", "K=12", "-p", "N=7", "-p", "P=12", "--engine", "generic", "--no-liveness"], 120),
])
def test_measured_peak_stays_within_ten_percent_of_the_limit(args, limit):
    command = [sys.executable, "-c", PEAK_AT_EXIT, "check", "teaching", *args, "--quiet", "--max-memory", str(limit)]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = done.stdout + done.stderr
    peak = int(re.search(r"^VmHWM:\s+(\d+) kB", done.stderr, re.MULTILINE).group(1)) * 1024 / 1e6
    assert done.returncode == EXIT_INCOMPLETE, out
    assert "memory limit" in out or "above --max-memory" in out
    assert peak <= limit * 1.1, f"peak {peak:.0f} MB above the limit {limit} MB"


# ---------------------------------------------------------------- replay checks the end
def recorded(tmp_path, max_steps: int, bug: str | None = None, seed: int = 0):
    from steersim.simulate.sweep import record_run

    params = TEACHING.resolve({}, bug)
    simulator = Simulator(TEACHING.build(params, bug), None, max_steps)
    return record_run(simulator, "teaching", params, bug, seed, tmp_path)


def test_replay_refuses_an_end_edited_to_quiescent(tmp_path, capsys):
    path = recorded(tmp_path, max_steps=5)
    trace = read_trace(path)
    assert trace.end == "step-limit" and replay(trace).ok
    trace.end = "quiescent"
    write_trace(path, trace)
    assert main(["replay", str(path)]) == EXIT_VIOLATION
    assert "differs: the recorded end differs" in capsys.readouterr().out


def test_replay_refuses_a_trace_whose_violations_were_removed(tmp_path, capsys):
    from steersim.simulate.sweep import run_sweep

    report = run_sweep("teaching", TEACHING.resolve({}, "lost-at-boundary"), "lost-at-boundary",
                       TEACHING.build({}, "lost-at-boundary"), range(200), out=tmp_path)
    trace = read_trace(report.first_trace)
    assert replay(trace).ok and (trace.violations or any(s.violations for s in trace.steps))
    trace.violations = []
    for step in trace.steps:
        step.violations = []
    write_trace(report.first_trace, trace)
    assert main(["replay", report.first_trace]) == EXIT_VIOLATION
    assert capsys.readouterr().out.startswith("differs:")


def test_replay_refuses_a_violation_claimed_on_a_correct_run(tmp_path, capsys):
    path = recorded(tmp_path, max_steps=10_000)
    trace = read_trace(path)
    assert trace.end == "quiescent"
    trace.end = "violation"
    trace.violations = [{"property": "no-lost-steers", "message": "a steer was lost"}]
    write_trace(path, trace)
    assert main(["replay", str(path)]) == EXIT_VIOLATION
    assert "does not show" in capsys.readouterr().out
