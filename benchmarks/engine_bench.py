"""The generic engine's speed and memory for every built-in model, against a baseline commit, in one run.

For each model at two sizes it runs `steersim check` in child processes, one after the other, so that
the ratios are measured side by side on the same machine: the generic engine of this checkout, the
generic engine of the baseline commit (checked out into a temporary `git worktree`, its CLI run with
PYTHONPATH pointed at it, the worktree removed afterwards), the vector engine where the model has one,
`--workers 2`, and for the teaching model the plain-Python BFS and Spin of ../shared/bench (the helpers
of `explorer_bench.py`; Spin rows say so when spin or gcc is missing). One more row, `model code alone`,
times only the model's own code (its actions, steps, facts and properties, called as the search calls
them) over every state the search visits: the CPU time of a search whose engine cost nothing. Its
ratio to the baseline is the most any engine can reach with the model's code as it is; its ratio to
the generic engine says how much the engine's own work adds.

    python benchmarks/engine_bench.py                # two sizes per model, baseline 10bf69d
    python benchmarks/engine_bench.py --quick        # one tiny size per model: a smoke test, not a measure
    python benchmarks/engine_bench.py --baseline REV
    python benchmarks/engine_bench.py --models foundry openclaw   # only these models' rows
    python benchmarks/engine_bench.py --repeat 5     # five rounds: each ratio's median and spread

Columns: distinct states, search seconds (wall, as the report gives them), states per second of wall
time, states per CPU second of the child (the machine is shared, so CPU time is the steadier measure of
one process; `--workers 2` is judged by its wall time), the child's peak resident bytes per distinct
state above its size before the check, and `same`: `yes` where the JSON report is byte-identical to the
baseline's but for `seconds`; `kept` where every entry of the baseline's report is, byte for byte, in
ours, which adds entries of its own (a model that gained properties since the baseline: its states,
transitions, depth and every verdict and counterexample the baseline reports are unchanged); `no`
otherwise; `n/a` where there is nothing to compare. The ratios below the table divide CPU rates (wall
rates for `--workers 2`).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import explorer_bench  # a sibling script, not a package
from explorer_bench import run_bfs, run_spin

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "10bf69d"
MODEL_ALONE = "model code alone"

# `main` of the CLI in this process, with the resident size before it and the CPU time of the searches
# (each explorer's `run`, wherever the checkout keeps it: steersim.checking.* now, sim.* at older commits)
CHILD = r"""
import importlib, json, os, resource, sys, time
# the checkout's own CLI: before the import name steersim it was sim's
main = importlib.import_module("steersim.cli" if os.path.exists("steersim/cli.py") else "sim.cli").main
spent = [0.0]
def timed(run):
    def wrapped(self, *args, **kwargs):
        start = time.process_time()
        try:
            return run(self, *args, **kwargs)
        finally:
            spent[0] += time.process_time() - start
    return wrapped
for module, names in (("explorer", ("Explorer",)), ("vector", ("VectorExplorer",))):
    for package in ("steersim.checking.", "sim.checking.", "sim."):
        try:
            found = importlib.import_module(package + module)
        except ImportError:
            continue
        for name in names:
            cls = getattr(found, name)
            if "run" in vars(cls):
                cls.run = timed(cls.run)
        break
with open("/proc/self/statm") as f:
    before = int(f.read().split()[1]) * resource.getpagesize()
code = main(sys.argv[1:])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"code": code, "before": before, "peak": peak, "cpu": spent[0]}))
"""

# the model's own code alone (its actions, steps and facts, its properties) over every state a generic
# search of this checkout visits, as the search calls it, with nothing of the engine's between the calls:
# the CPU seconds a search would take if everything the engine does itself cost nothing. The `sometimes`
# predicates, which a search stops asking once each holds, are left out, so this is at most what the
# model's code costs the search, and the speed it gives is one no engine can pass. The model timed is
# built afresh after the search that lists the states, so that what it remembers between steps (the
# built-in models remember steps, facts and events) it learns while timed, as a search's model does
MODEL_CHILD = r"""
import gc, json, sys, time
from steersim.checking.explorer import CheckOptions, Explorer
from steersim.core.model import AdaptedModel, Always, Eventually, as_model_base
from steersim.core.registry import get_model_spec
name, liveness, assignments = sys.argv[1], sys.argv[2] == "on", sys.argv[3:]
spec = get_model_spec(name)
params = spec.resolve(spec.parse_assignments(assignments), None)
explorer = Explorer(as_model_base(spec.build(params, None)), CheckOptions(engine="generic", liveness=liveness))
explorer.run()
states = [pstate[0] for pstate in explorer.visited]
model = as_model_base(spec.build(params, None))  # a model of its own: what it remembers, it learns here
props = list(model.properties())
steps = [p for p in props if isinstance(p, Always) and p.step is not None]
fast = None if any(p.with_events for p in steps) else model.step_facts  # as the product chooses
states_judges = [p.state for p in props if isinstance(p, Always) and p.state is not None]
goals = [judge for p in props if liveness and isinstance(p, Eventually) for judge in (p.goal, p.trigger) if judge]
actions = model.inner.actions if type(model) is AdaptedModel else model.actions  # as the product calls it
by_route = {}
gc.disable()  # as the search runs
start = time.process_time()
for s in states:
    for a in actions(s):
        taken = model.step(s, a) if fast is None else fast(s, a)
        if taken is None:
            continue
        t, out = taken
        if fast is None:
            out = tuple(out)
            for event in out:
                model.facts(event)
        names = tuple([event.name for event in out]) if fast is None else ()
        due = by_route.get((a.kind, names))
        if due is None:  # the properties the product judges such a step by (kinds=, events=)
            due = by_route[a.kind, names] = [(p.step, p.with_events) for p in steps if p.judges(a.kind, names)]
        for judge, with_events in due:
            judge(s, a, t, out) if with_events else judge(s, a, t)
    for judge in states_judges:
        judge(s)
    for judge in goals:
        judge(s)
print(json.dumps({"states": len(states), "cpu": time.process_time() - start}))
"""


@dataclass(frozen=True)
class Case:
    """One model at one size: its parameters (`-p`) and any other `check` options."""

    model: str
    params: tuple[str, ...]
    options: tuple[str, ...] = ()
    vector: bool = False
    teaching: dict[str, int] | None = None  # K N Q P for bfs.py and Spin
    in_baseline: bool = True  # False: the model is newer than the baseline commit

    @property
    def label(self) -> str:
        return " ".join(self.params) or "defaults"


TEACHING_BIG = {"K": 10, "N": 5, "Q": 2, "P": 10}
FULL = [
    Case("teaching", (), ("--no-liveness",), vector=True, teaching={"K": 3, "N": 3, "Q": 2, "P": 3}),
    Case("teaching", tuple(f"{k}={v}" for k, v in TEACHING_BIG.items()), ("--no-liveness",), vector=True,
         teaching=TEACHING_BIG),
    Case("openai-ws", ()),
    Case("openai-ws", ("steers=4",)),
    Case("foundry", ()),
    Case("foundry", ("callers=5",)),
    Case("openclaw", ()),
    Case("openclaw", ("messages=4", "tool_turns=3", "calls=4", "agent_follow_ups=2")),
    Case("codex", (), in_baseline=False),
    Case("codex", ("turns=3",), in_baseline=False),
    Case("langgraph", ("strategy=enqueue",), in_baseline=False),
    Case("langgraph", (), in_baseline=False),
]
QUICK = [
    Case("teaching", ("K=2", "N=1"), ("--no-liveness",), vector=True, teaching={"K": 2, "N": 1, "Q": 2, "P": 2}),
    Case("openai-ws", ("steers=1", "reconnects=0")),
    Case("foundry", ("callers=2", "crashes=0")),
    Case("openclaw", ("messages=1",)),
    Case("codex", ("steers=1",), in_baseline=False),
    Case("langgraph", ("strategy=enqueue",), in_baseline=False),
]


@dataclass
class Row:
    engine: str
    states: int | None = None
    secs: float | None = None
    cpu: float | None = None
    bytes_per_state: float | None = None
    same: str = "n/a"
    note: str = ""
    report: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def rate(self) -> float | None:
        return None if not self.states or not self.secs else self.states / self.secs

    @property
    def cpu_rate(self) -> float | None:
        return None if not self.states or not self.cpu else self.states / self.cpu


def run_child(root: Path, script: str, argv: list[str]) -> tuple[dict[str, Any] | None, str]:
    """`script` with `argv`, in a child process on the checkout at `root`: the JSON of its last line of
    output, or None and why it failed."""
    done = subprocess.run([sys.executable, "-c", script, *argv], cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return None, f"failed: {(done.stderr.strip().splitlines() or ['no output'])[-1][:60]}"
    return json.loads(lines[-1]), ""


def run_check(root: Path, case: Case, *extra: str) -> Row:
    """`steersim check` of `case` with the CLI of the checkout at `root`, in a child process."""
    with tempfile.TemporaryDirectory() as work:
        report_path = Path(work) / "report.json"
        argv = ["check", case.model, *(a for p in case.params for a in ("-p", p)), *case.options, *extra,
                "--quiet", "--json", str(report_path)]
        child, failure = run_child(root, CHILD, argv)
        if child is None or not report_path.exists():
            return Row(" ".join(extra) or "generic", note=failure or "failed: no report written")
        report = json.loads(report_path.read_text())
    seconds = report.pop("seconds")
    return Row(" ".join(extra), report["states"], max(seconds, 1e-6), child["cpu"],
               (child["peak"] - child["before"]) / max(report["states"], 1), report=report)


def run_model_alone(case: Case) -> Row:
    """The model's own code over the states of the search of `case` (`MODEL_CHILD`), in a child process."""
    liveness = "off" if "--no-liveness" in case.options else "on"
    found, failure = run_child(ROOT, MODEL_CHILD, [case.model, liveness, *case.params])
    if found is None:
        return Row(MODEL_ALONE, note=failure)
    cpu = max(found["cpu"], 1e-6)
    return Row(MODEL_ALONE, found["states"], cpu, cpu)


def run_reference(kind: str, K: int, N: int, Q: int, P: int) -> Row:
    """bfs.py (its own timing of the search) or Spin's verifier (pan's search time)."""
    name = "bfs.py tuple" if kind == "bfs" else "spin nored"
    if not (explorer_bench.BENCH / "bfs.py").exists():
        return Row(name, note=f"not run: no {explorer_bench.BENCH} (give --bench)")
    found = run_bfs("tuple", K, N, Q, P) if kind == "bfs" else run_spin(K, N, Q, P, "nored")
    if found is None:
        return Row(name, note="spin or gcc not installed")
    cpu = bfs_cpu(K, N, Q, P) if kind == "bfs" else found["secs"]
    return Row(name, found["states"], found["secs"], cpu, found["mb"] * 1e6 / found["states"])


def bfs_cpu(K: int, N: int, Q: int, P: int) -> float:
    """The CPU seconds of bfs.py's search: its process at this size less its process at the smallest."""

    def process_cpu(*size: int) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run_bfs("tuple", *size)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    return max(process_cpu(K, N, Q, P) - process_cpu(1, 0, 1, 1), 1e-3)


class Baseline:
    """The baseline commit in a temporary worktree, removed on exit."""

    def __init__(self, rev: str) -> None:
        self.rev = rev
        self.path = Path(tempfile.mkdtemp(prefix="steersim-baseline-")) / "tree"

    def __enter__(self) -> Path:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(self.path), self.rev],
                       capture_output=True, text=True, check=True)
        if not (self.path / "steersim").exists():
            self._name_old_models()
        return self.path

    def _name_old_models(self) -> None:
        """A checkout from before the import name `steersim` keeps its models in a top-level `models`, but
        the installed entry points name `steersim.models.<system>`: without this package in the checkout
        they would load today's models into the baseline's engine."""
        package = self.path / "steersim" / "models"
        package.mkdir(parents=True)
        (package.parent / "__init__.py").write_text("")
        (package / "__init__.py").write_text(
            "from pathlib import Path\n\n__path__ = [str(Path(__file__).resolve().parents[2] / 'models')]\n")

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(self.path)],
                       capture_output=True, text=True)
        self.path.parent.rmdir()


def measure(case: Case, baseline: Path) -> list[Row]:
    rows = []
    ours = run_check(ROOT, case, "--engine", "generic")
    ours.engine = "generic"
    old = run_check(baseline, case, "--engine", "generic") if case.in_baseline else Row(
        "generic", note="not run: the model is newer than the baseline")
    old.engine = "generic @baseline"
    if old.report and ours.report:
        ours.same = sameness(ours.report, old.report)
    rows += [ours, old]
    if case.vector:
        vector = run_check(ROOT, case, "--engine", "vector")
        vector.engine = "vector"
        vector.same = "yes" if vector.report == ours.report else "no"  # against the generic engine
        rows.append(vector)
    rows.append(run_model_alone(case))
    workers = run_check(ROOT, case, "--workers", "2")
    workers.engine = "--workers 2"
    rows.append(workers)
    if case.teaching:
        t = case.teaching
        rows += [run_reference("bfs", t["K"], t["N"], t["Q"], t["P"]),
                 run_reference("spin", t["K"], t["N"], t["Q"], t["P"])]
    return rows


def sameness(ours: dict[str, Any], old: dict[str, Any]) -> str:
    """`yes`, `kept` or `no` of the `same` column: the baseline's report against ours, property by
    property (by name) and key by key, each entry compared as JSON text."""
    if json.dumps(ours) == json.dumps(old):
        return "yes"
    named = {prop["name"]: json.dumps(prop) for prop in ours.get("properties", [])}
    kept = all(json.dumps(ours.get(key)) == json.dumps(value) for key, value in old.items() if key != "properties")
    kept = kept and all(named.get(prop["name"]) == json.dumps(prop) for prop in old.get("properties", []))
    return "kept" if kept else "no"


def run(cases: list[Case], baseline: str) -> list[tuple[Case, list[Row]]]:
    """Every row of every case, the baseline checked out for the duration."""
    with Baseline(baseline) as tree:
        return [(case, measure(case, tree)) for case in cases]


def cell(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def table(results: list[tuple[Case, list[Row]]]) -> list[str]:
    out = [f"{'model':<10} {'size':<52} {'engine':<18} {'states':>9} {'secs':>7} {'states/s':>9} "
           f"{'st/cpu-s':>9} {'B/state':>8} {'same':>4}"]
    for case, rows in results:
        for row in rows:
            out.append(f"{case.model:<10} {case.label:<52} {row.engine:<18} {cell(row.states, ',d'):>9} "
                       f"{cell(row.secs, '.2f'):>7} {cell(row.rate, ',.0f'):>9} {cell(row.cpu_rate, ',.0f'):>9} "
                       f"{cell(row.bytes_per_state, ',.0f'):>8} {row.same:>4}" + (f"  {row.note}" if row.note else ""))
    return out


def case_ratios(rows: list[Row], baseline: str) -> dict[str, float]:
    """The ratios of one case's rows, measured side by side in one round, by what each divides."""
    by = {row.engine: row for row in rows}
    ours, old = by["generic"], by["generic @baseline"]
    found = {}
    if ours.cpu_rate and old.cpu_rate:
        found[f"generic/generic@{baseline}"] = ours.cpu_rate / old.cpu_rate
    alone = by[MODEL_ALONE]
    if alone.cpu_rate and ours.cpu_rate:
        found[f"{MODEL_ALONE}/generic"] = alone.cpu_rate / ours.cpu_rate
    if alone.cpu_rate and old.cpu_rate:  # the most an engine can reach over the baseline with this model code
        found[f"{MODEL_ALONE}/generic@{baseline}"] = alone.cpu_rate / old.cpu_rate
    bfs = by.get("bfs.py tuple")
    if bfs and ours.cpu_rate and bfs.cpu_rate:
        found["generic/bfs.py tuple"] = ours.cpu_rate / bfs.cpu_rate
    vector = by.get("vector")
    if vector and vector.cpu_rate and bfs and bfs.cpu_rate:
        found["vector/bfs.py tuple"] = vector.cpu_rate / bfs.cpu_rate
    workers = by["--workers 2"]
    if workers.rate and ours.rate:
        found["--workers 2/generic (wall)"] = workers.rate / ours.rate
    return found


def ratios(rounds: list[list[tuple[Case, list[Row]]]], baseline: str) -> list[str]:
    """Each case's ratios: of its one round, or, over several, the median and the spread (a shared
    machine's speed drifts between rounds, so one round near a goal says little)."""
    out = []
    for index, (case, _) in enumerate(rounds[0]):
        measured: dict[str, list[float]] = {}
        for results in rounds:
            for name, value in case_ratios(results[index][1], baseline).items():
                measured.setdefault(name, []).append(value)
        parts = []
        for name, values in measured.items():
            if len(values) == 1:
                parts.append(f"{name} {values[0]:.2f}x")
            else:
                parts.append(f"{name} median {statistics.median(values):.2f}x "
                             f"({min(values):.2f}x to {max(values):.2f}x over {len(values)})")
        out.append(f"  {case.model} {case.label}: " + ", ".join(parts))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="generic engine speed against a baseline commit, bfs.py and Spin")
    parser.add_argument("--quick", action="store_true", help="one tiny size per model (a smoke test)")
    parser.add_argument("--baseline", default=BASELINE, help=f"the commit to compare with (default {BASELINE})")
    parser.add_argument("--bench", type=Path, default=explorer_bench.BENCH,
                        help="the folder of bfs.py and the Promela generator (default: ../shared/bench)")
    parser.add_argument("--models", nargs="+", choices=sorted({case.model for case in FULL}),
                        help="only these models' rows (default: every model)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="measure every case in N rounds; the ratios are then medians, with their spread "
                             "(the table is the first round's)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat takes a positive number of rounds, not {args.repeat}")
    explorer_bench.BENCH = args.bench
    started = time.perf_counter()
    cases = [case for case in (QUICK if args.quick else FULL) if not args.models or case.model in args.models]
    rounds = [run(cases, args.baseline) for _ in range(args.repeat)]
    print("\n".join(table(rounds[0])))
    print(f"ratios (CPU states/s; higher is better for the first engine named), {time.perf_counter() - started:.0f} s:")
    print("\n".join(ratios(rounds, args.baseline)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
