"""The determinism audit: do the same seeds give the same runs in two fresh processes?

Every result steersim reports rests on one promise: same model, parameters, profile and seed give a
byte-identical trace. A model that iterates over a set of strings, reads the wall clock or keeps state
between runs breaks it, and the break shows only across processes (Python salts string hashes per
process). So the audit records every seed's trace twice, in two child processes with different
PYTHONHASHSEED values, and compares them line by line; the first difference is named by seed, step and
field.

`python -m steersim.simulate.audit record ...` is the child's entry point. MODEL is a model reference (a registered
name, `path/to/file.py:SPEC` or `package.module:SPEC`, see `steersim.core.registry`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steersim.core.registry import ModelSpec, get_model_spec
from steersim.errors import EXIT_USAGE, UsageError
from steersim.simulate.simulator import Simulator, check_run_bounds
from steersim.simulate.timing import TimingProfile
from steersim.traces.trace import make_trace, write_trace

HASH_SEEDS = ("1", "2")
STEP_FIELDS = ("t", "action", "events", "facts", "state", "violations")


@dataclass(frozen=True)
class AuditResult:
    identical: bool
    runs: int
    message: str


def record(spec: ModelSpec, params: Mapping[str, Any], bug: str | None, seeds: Sequence[int], out: Path,
           timing_file: str | None = None, max_steps: int = 10_000) -> None:
    """Write the trace of every seed, at resolved `params`, into `out` as seed<N>.jsonl."""
    model = spec.build_resolved(params, bug)
    timing = TimingProfile.for_model(model, timing_file)
    simulator = Simulator(model, timing, max_steps)
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        run = simulator.run(seed, record=True)
        trace = make_trace(spec.name, params, bug, run.init_index, [s.transition for s in run.steps],
                           [s.t for s in run.steps], seed, timing.to_mapping(), run.end, run.violations)
        write_trace(out / f"seed{seed}.jsonl", trace)


def audit(model: str, params: Mapping[str, Any], bug: str | None, seeds: Sequence[int],
          timing_file: str | None = None, max_steps: int = 10_000,
          hash_seeds: Sequence[str] = HASH_SEEDS) -> AuditResult:
    """Record `seeds` in one child process per hash seed and compare the traces."""
    check_run_bounds(max_steps, None)  # before any child starts
    with tempfile.TemporaryDirectory(prefix="steersim-audit-") as tmp:
        folders = []
        for hash_seed in hash_seeds:
            folder = Path(tmp) / f"hash{hash_seed}"
            _record_in_child(model, params, bug, seeds, folder, timing_file, max_steps, hash_seed)
            folders.append(folder)
        first, *others = folders
        for other in others:
            difference = compare(first, other, seeds)
            if difference is not None:
                return AuditResult(False, len(seeds), f"{difference} (PYTHONHASHSEED={hash_seeds[0]} "
                                   f"vs {other.name.removeprefix('hash')})")
    return AuditResult(True, len(seeds), f"{len(seeds)} runs identical under PYTHONHASHSEED "
                       + " and ".join(hash_seeds))


def _record_in_child(model: str, params: Mapping[str, Any], bug: str | None, seeds: Sequence[int], out: Path,
                     timing_file: str | None, max_steps: int, hash_seed: str) -> None:
    command = [sys.executable, "-m", "steersim.simulate.audit", "record", model, "--params", json.dumps(dict(params)),
               "--first", str(seeds[0]), "--last", str(seeds[-1]), "--out", str(out), "--max-steps", str(max_steps)]
    if bug:
        command += ["--bug", bug]
    if timing_file:
        command += ["--timing", timing_file]
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        try:
            _, stderr = child.communicate()
        except BaseException:  # Ctrl-C: the child must not outlive the audit (`steersim.interrupts`)
            child.kill()
            child.wait()
            raise
    if child.returncode == EXIT_USAGE:  # the child's one message (a model error spans several lines)
        raise UsageError(f"recording under PYTHONHASHSEED={hash_seed} failed: {stderr.strip()}")
    if child.returncode != 0:
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"recording under PYTHONHASHSEED={hash_seed} failed: {last}")


def compare(left: Path, right: Path, seeds: Sequence[int]) -> str | None:
    """The first difference between two folders of traces, in seed order and then step order."""
    for seed in seeds:
        a = (left / f"seed{seed}.jsonl").read_text().splitlines()
        b = (right / f"seed{seed}.jsonl").read_text().splitlines()
        for number, (line_a, line_b) in enumerate(zip(a, b, strict=False)):
            if line_a != line_b:
                return f"seed {seed}: " + _describe(number, json.loads(line_a), json.loads(line_b))
        if len(a) != len(b):
            return f"seed {seed}: one run has {len(a) - 1} lines of steps and end, the other {len(b) - 1}"
    return None


def _describe(number: int, a: dict[str, Any], b: dict[str, Any]) -> str:
    if number == 0:
        return "the headers differ"
    if "i" not in a or "i" not in b:
        return f"the runs end differently: {json.dumps(a)} vs {json.dumps(b)}"
    field = next((f for f in STEP_FIELDS if a.get(f) != b.get(f)), "step")
    action = a["action"]
    return (f"step {a['i']} ({action['actor']}: {action['kind']}) differs first in {field}: "
            f"{json.dumps(a.get(field))[:200]} vs {json.dumps(b.get(field))[:200]}")


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m steersim.simulate.audit")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("record", help="write every seed's trace (the audit's child process)")
    p.add_argument("model")
    p.add_argument("--params", default="{}", help="resolved parameters as JSON")
    p.add_argument("--bug")
    p.add_argument("--first", type=int, required=True, help="the first seed")
    p.add_argument("--last", type=int, required=True, help="the last seed (inclusive)")
    p.add_argument("--out", required=True)
    p.add_argument("--timing")
    p.add_argument("--max-steps", type=int, default=10_000)
    args = parser.parse_args(argv)
    try:
        spec = get_model_spec(args.model)
        record(spec, spec.resolve(json.loads(args.params)), args.bug, range(args.first, args.last + 1), Path(args.out),
               args.timing, args.max_steps)
    except UsageError as bad:
        print(bad, file=sys.stderr)
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    sys.exit(_main())
