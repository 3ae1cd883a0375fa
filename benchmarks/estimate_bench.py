"""Estimate throughput: runs per second of `steersim estimate`, and the time to reach a precision.

Each row runs one estimate on the teaching model with `lost-at-boundary` (about 1.8% of runs violate)
through the sweep executors: a fixed number of runs for each query kind (the default violation query
reads the runs' verdicts only; a fact or a measure also keeps the facts it reads), then `--precision`,
serially and on 2 local worker processes, whose pool start is included (it is paid once per estimate).

    python benchmarks/estimate_bench.py                 # 20,000 runs per row, precision 0.004
    python benchmarks/estimate_bench.py --runs 100000 --precision 0.002

Columns: what ran, workers, runs, seconds, runs per second, and the answer.
"""

from __future__ import annotations

import argparse
import time

from steersim.simulate.estimate import Plan
from steersim.simulate.queries import parse_query
from steersim.simulate.study import estimate_setting, setting


def row(label: str, query: str, plan: Plan, workers: int) -> list[str]:
    base = setting("teaching", {}, "lost-at-boundary")
    started = time.perf_counter()
    answer = estimate_setting(base, parse_query(query), plan, workers=workers)
    seconds = time.perf_counter() - started
    shown = answer.lines()[0].split(": ", 1)[-1] if query.startswith("measure:") else answer.interval.describe()
    return [label, str(workers), f"{answer.runs:,}", f"{seconds:.2f}", f"{answer.runs / seconds:,.0f}", shown]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--precision", type=float, default=0.004, help="interval width to reach")
    args = parser.parse_args()
    fixed = Plan(runs=args.runs)
    precise = Plan(precision=args.precision)
    rows = [["estimate", "workers", "runs", "seconds", "runs/s", "answer"]]
    for query in ("violation", "fact:steer.applied within 5", "measure:steer-latency"):
        rows.append(row(query, query, fixed, 1))
    rows.append(row("violation", "violation", fixed, 2))
    for workers in (1, 2):
        rows.append(row(f"violation to width {args.precision:g}", "violation", precise, workers))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    for r in rows:
        pairs = enumerate(zip(r, widths, strict=True))
        cells = [cell.ljust(w) if c in (0, 5) else cell.rjust(w) for c, (cell, w) in pairs]
        print("  ".join(cells).rstrip())


if __name__ == "__main__":
    main()
