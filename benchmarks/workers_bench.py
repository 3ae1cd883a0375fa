"""`check --workers 2` against one process, liveness included, on checks of more than 100k states.

Each run is a child process, one after the other, in this one run. Besides wall seconds it reports CPU
seconds: the coordinator's own and its workers' (the pool's processes, joined at the end of the run).
On a machine whose cores are shared with other work the wall ratio shows what the run got; the CPU
columns show what it needs: `bound` is the one-process CPU over (coordinator CPU + workers' CPU / 2),
the speed-up the run reaches when each of its processes has a core and the workers' shares are even.

    python benchmarks/workers_bench.py [--repeat N]   # with N > 1, each check's median ratio and its spread
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

# the cheapest step of the built-in models, where the workers' own bookkeeping weighs most; a model whose
# steps cost more, as most do; and the model whose states are largest (nested dataclasses: the most to
# pickle and hash when a state crosses) and whose steps cost most
CASES = (("teaching", ["K=10", "N=5", "Q=2", "P=10"]), ("foundry", ["callers=6"]),
         ("openai-ws", ["lanes=2", "steers=2"]))
CHILD = """
import json, resource, sys, time
from steersim import CheckOptions, check
from steersim.core.registry import get_model_spec
name, workers, assignments = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
spec = get_model_spec(name)
model = spec.build(spec.resolve(spec.parse_assignments(assignments), None), None)
started = time.monotonic()
result = check(model, CheckOptions(engine="generic"), workers=workers)
seconds = time.monotonic() - started
own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"states": result.states, "status": result.status, "seconds": seconds,
                  "own_cpu": own.ru_utime + own.ru_stime, "workers_cpu": children.ru_utime + children.ru_stime}))
"""


def run(name: str, assignments: list[str], workers: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, name, str(workers), *assignments], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"{'check':<34} {'states':>8} {'1 wall':>7} {'2 wall':>7} {'ratio':>6} {'1 cpu':>6} {'coord':>6} "
          f"{'workers':>7} {'bound':>6}")
    summary = []
    for name, assignments in CASES:
        label = name + " " + " ".join(assignments)
        ratios = []
        for _ in range(args.repeat):
            one, two = run(name, assignments, 1), run(name, assignments, 2)
            assert (one["states"], one["status"]) == (two["states"], two["status"])
            single = one["own_cpu"]
            bound = single / (two["own_cpu"] + two["workers_cpu"] / 2)
            ratios.append(one["seconds"] / two["seconds"])
            print(f"{label:<34} {one['states']:>8,} {one['seconds']:>7.2f} "
                  f"{two['seconds']:>7.2f} {ratios[-1]:>5.2f}x {single:>6.2f} "
                  f"{two['own_cpu']:>6.2f} {two['workers_cpu']:>7.2f} {bound:>5.2f}x", flush=True)
        summary.append((label, ratios))
    if args.repeat > 1:  # a shared machine's speed drifts between runs: the spread says how far to trust one
        print("wall ratio over the runs (each a one-process run, then a two-worker run):")
        for label, ratios in summary:
            print(f"  {label:<34} median {statistics.median(ratios):.2f}x, "
                  f"{min(ratios):.2f}x to {max(ratios):.2f}x over {len(ratios)}")


if __name__ == "__main__":
    main()
