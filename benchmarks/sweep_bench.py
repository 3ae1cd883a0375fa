"""Seed sweep throughput: seeds per second serial, on 2 local worker processes, and on a local Dask cluster.

Every executor runs the same sweep of the teaching model (default parameters, its default timing
profile) and must give the same report; the table says so in its last column. Startup (forking the pool,
starting the cluster's scheduler and two worker processes) is timed apart from the sweep itself, because
it is paid once per sweep and dominates short ones.

    python benchmarks/sweep_bench.py                    # 20,000 seeds
    python benchmarks/sweep_bench.py --seeds 100000 --bug lost-at-boundary

Columns: executor, seeds, startup seconds, sweep seconds, seeds per second of the sweep, and whether
the report equals the serial one.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from steersim.models.teaching import SPEC
from steersim.simulate.executors import DaskExecutor, ProcessExecutor, SeedExecutor, SweepRecipe
from steersim.simulate.sweep import run_sweep
from steersim.simulate.timing import TimingProfile


def measure(name: str, make: Callable[[], SeedExecutor], seeds: range, params: dict, bug: str | None,
            baseline: str | None) -> tuple[list[str], str]:
    started = time.perf_counter()
    executor = make()
    ready = time.perf_counter()
    try:
        report = run_sweep("teaching", params, bug, SPEC.build(params, bug), seeds, executor=executor)
    finally:
        executor.close()
    done = time.perf_counter()
    text = json.dumps(report.to_json())
    same = "yes" if baseline is None or text == baseline else "NO"
    seconds = done - ready
    return [name, f"{len(seeds):,}", f"{ready - started:.2f}", f"{seconds:.2f}", f"{len(seeds) / seconds:,.0f}",
            same], text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20_000)
    parser.add_argument("--bug", help="a teaching bug variant (default: the correct model)")
    args = parser.parse_args()
    params = SPEC.resolve({})
    timing = TimingProfile.from_mapping(SPEC.build(params).default_timing())
    recipe = SweepRecipe.create("teaching", params, args.bug, timing)
    seeds = range(args.seeds)
    rows = [["executor", "seeds", "startup s", "sweep s", "seeds/s", "same report"]]
    row, baseline = measure("serial", lambda: SeedExecutor(recipe), seeds, params, args.bug, None)
    rows.append(row)
    rows.append(measure("2 processes", lambda: ProcessExecutor(recipe, 2), seeds, params, args.bug, baseline)[0])
    rows.append(measure("dask local (2 workers)", lambda: DaskExecutor(recipe, "local"), seeds, params, args.bug,
                        baseline)[0])
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    for r in rows:
        cells = [cell.rjust(w) if c else cell.ljust(w) for c, (cell, w) in enumerate(zip(r, widths, strict=True))]
        print("  ".join(cells))


if __name__ == "__main__":
    main()
