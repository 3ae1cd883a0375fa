"""Seed sweeps: many simulated runs of one model, folded into one report.

Each seed gives a small `RunVerdict`; the report folds them in seed order, so it is the same whatever
ran the seeds (one process, several, or a cluster). Only the first violating seed is re-run with
recording on to write its trace: runs are deterministic, so re-running is cheaper than recording all.
Ctrl-C ends a sweep with the runs finished so far, as a report with status interrupted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steersim.core.facts import Fact
from steersim.core.model import Model
from steersim.core.product import Product
from steersim.errors import EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION
from steersim.interrupts import INTERRUPTED, collect
from steersim.simulate.simulator import STEP_LIMIT, TIME_LIMIT, VIOLATION, Simulator
from steersim.simulate.timing import TimingProfile
from steersim.traces.trace import make_trace, write_trace


@dataclass(frozen=True)
class RunVerdict:
    seed: int
    steps: int
    end: str
    time: float
    violations: tuple[tuple[str, str], ...]
    reached: tuple[str, ...]
    observed: tuple[tuple[float, Fact], ...] = ()  # the watched facts and their times (see Simulator.watch)

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "steps": self.steps, "end": self.end, "t": self.time,
                "violations": [{"property": p, "message": m} for p, m in self.violations]}


def verdicts_of(simulator: Simulator, seeds: Iterable[int]) -> Iterator[RunVerdict]:
    """Each seed's verdict as its run finishes."""
    for seed in seeds:
        run = simulator.run(seed)
        yield RunVerdict(seed, run.step_count, run.end, run.time,
                         tuple((v.property, v.message) for v in run.violations), tuple(sorted(run.reached)),
                         tuple(run.observed))


def run_seeds(simulator: Simulator, seeds: Iterable[int]) -> list[RunVerdict]:
    """The verdict of each seed's run, in the order of `seeds`, in this process (no trace is kept: use
    `simulate` for one run to draw or save)."""
    return list(verdicts_of(simulator, seeds))


@dataclass
class SweepReport:
    model: str
    params: dict[str, Any]
    bug: str | None
    timing: dict[str, Any]
    seeds: tuple[int, int]
    properties: list[tuple[str, str]]  # (name, kind)
    verdicts: list[RunVerdict]
    first_seed: int | None = None
    first_trace: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False  # Ctrl-C: `verdicts` are the runs finished before it

    @property
    def runs(self) -> int:
        return len(self.verdicts)

    @property
    def steps(self) -> int:
        return sum(v.steps for v in self.verdicts)

    @property
    def violating_runs(self) -> int:
        return sum(1 for v in self.verdicts if v.violations)

    @property
    def cut_runs(self) -> int:
        """Runs stopped by the step or the time bound before they ended of themselves: what they would
        have done next is unknown, so a sweep with any of them proves nothing beyond its violations."""
        return sum(1 for v in self.verdicts if v.end in (STEP_LIMIT, TIME_LIMIT))

    @property
    def stopped_runs(self) -> int:
        """Runs that stopped at their first violation: every other property went unjudged after it."""
        return sum(1 for v in self.verdicts if v.end == VIOLATION)

    def property_status(self) -> list[dict[str, Any]]:
        """Each property's verdict over the runs. A run ends at its first violation, so a property no run
        violated holds only if some run was judged to its end; when every run stopped early (at another
        property's violation or at a limit), it was never judged: unknown, not holds."""
        rows = []
        cut, stopped = self.cut_runs, self.stopped_runs
        early = " and ".join(part for part in (f"{stopped} runs stopped at a violation" if stopped else "",
                                               f"{cut} runs were cut by a limit" if cut else "") if part)
        whole = self.runs - cut - stopped
        for name, kind in self.properties:
            violated = [v.seed for v in self.verdicts if any(p == name for p, _ in v.violations)]
            reached = [v.seed for v in self.verdicts if name in v.reached]
            if kind == "sometimes" and not reached and early:
                rows.append({"name": name, "kind": kind, "status": "unknown", "runs": 0, "first_seed": None,
                             "note": f"not reached, but {early} before they ended"})
            elif kind == "always" and not violated and not whole:
                rows.append({"name": name, "kind": kind, "status": "unknown", "runs": 0, "first_seed": None,
                             "note": f"not judged: no run went to its end ({early})"})
            elif kind == "sometimes":
                status = "reached" if reached else "unreached"
                rows.append({"name": name, "kind": kind, "status": status, "runs": len(reached),
                             "first_seed": reached[0] if reached else None})
            elif kind == "eventually" and not violated:
                rows.append({"name": name, "kind": kind, "status": "unknown", "runs": 0, "first_seed": None,
                             "note": "a simulation cannot show a liveness property holds; use `steersim check`"})
            else:
                rows.append({"name": name, "kind": kind, "status": "violated" if violated else "holds",
                             "runs": len(violated), "first_seed": violated[0] if violated else None})
        return rows

    @property
    def status(self) -> str:
        if self.interrupted:
            return INTERRUPTED
        rows = self.property_status()
        if any(r["status"] in ("violated", "unreached") for r in rows):
            return "violation"
        return "incomplete" if self.cut_runs else "ok"

    @property
    def exit_code(self) -> int:
        return {INTERRUPTED: EXIT_INTERRUPTED, "violation": EXIT_VIOLATION, "incomplete": EXIT_INCOMPLETE}.get(
            self.status, EXIT_OK)

    def summary_line(self) -> str:
        cut = f", {self.cut_runs} runs cut by --max-steps or --max-time" if self.cut_runs else ""
        return (f"{self.status}: {self.runs} runs, {self.steps:,} steps, {self.violating_runs} violating runs{cut}, "
                f"{math.fsum(v.time for v in self.verdicts):,.1f} s of virtual time")

    def property_lines(self) -> list[str]:
        lines = []
        for row in self.property_status():
            where = f" (runs: {row['runs']}, first seed {row['first_seed']})" if row["first_seed"] is not None else ""
            lines.append(f"{row['status']:>10}  {row['kind']:<10} {row['name']}{where}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model, "params": self.params, "bug": self.bug, "timing": self.timing,
            "seeds": list(self.seeds), "status": self.status, "runs": self.runs, "steps": self.steps,
            "violations": self.violating_runs, "cut_runs": self.cut_runs,
            "seconds": round(math.fsum(v.time for v in self.verdicts), 6),  # rounded once, on any Python
            "properties": self.property_status(),
            "first_counterexample": None if self.first_seed is None else {"seed": self.first_seed,
                                                                          "trace": self.first_trace},
            **self.extra,
            "runs_detail": [v.to_json() for v in self.verdicts],
        }


def run_sweep(name: str, params: Mapping[str, Any], bug: str | None, model: Model, seeds: Sequence[int],
              timing_file: str | None = None, max_steps: int = 10_000, max_time: float | None = None,
              out: Path | None = None, executor: Any = None) -> SweepReport:
    """Run `seeds`, fold the verdicts, and write the first counterexample's trace into `out`.
    `executor(seeds) -> verdicts` may run the seeds elsewhere (processes, a cluster); its `interrupted`
    says whether Ctrl-C cut them short. An interrupted sweep records no trace: the user asked to stop."""
    timing = TimingProfile.for_model(model, timing_file)
    simulator = Simulator(model, timing, max_steps, max_time)
    if executor is None:
        verdicts, interrupted = collect(verdicts_of(simulator, seeds))
    else:
        verdicts, interrupted = executor(seeds), executor.interrupted
    verdicts.sort(key=lambda v: v.seed)
    props = [(info.name, info.kind) for info in Product(model).property_infos()]
    report = SweepReport(name, dict(params), bug, timing.to_mapping(), (seeds[0], seeds[-1]), props, verdicts,
                         interrupted=interrupted)
    first = next((v for v in verdicts if v.violations), None)
    if first is not None:
        report.first_seed = first.seed
        if out is not None and not interrupted:
            report.first_trace = str(record_run(simulator, name, params, bug, first.seed, out))
    return report


def record_run(simulator: Simulator, name: str, params: Mapping[str, Any], bug: str | None, seed: int,
               out: Path, suffix: str = "") -> Path:
    """Re-run `seed` with recording on and write its trace into `out` (runs are deterministic, so this is
    the run the sweep saw). The header names the model by `name`, its reference; the file by the
    model's own name."""
    run = simulator.run(seed, record=True)
    trace = make_trace(name, params, bug, run.init_index, [s.transition for s in run.steps],
                       [s.t for s in run.steps], seed, simulator.timing.to_mapping(), run.end, run.violations,
                       simulator.product.model)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{simulator.product.model.name}{'-' + bug if bug else ''}-seed{seed}{suffix}.jsonl"
    write_trace(path, trace)
    return path
