"""Explorer speed and memory: `steersim check teaching` against the plain-Python BFS and Spin.

All three search the same state graph (the teaching model and its Promela twin in ../shared/bench; the
test suite checks the counts agree). steersim runs twice: with the vector engine, which `check` takes for
the teaching model by default (its compiled kernel, `steersim/models/teaching/vector.py`), and with the generic
engine that every model has (at the first size only: it is some forty times slower). Every engine runs
in its own child process, one after the other, in this one run, so the ratios are measured side by side.
Spin needs Debian's `spin` and `gcc` (`apt-get install -y spin gcc`); without them its rows say so.

    python benchmarks/explorer_bench.py            # K=10 N=5 rows, and the K=14 N=6 reduction row
    python benchmarks/explorer_bench.py --full     # adds K=12 N=6 (about a million states)

Columns: distinct states, wall seconds of the search (Spin: pan's own search time, plus the whole
pipeline with `spin -a` and gcc in the reduction row), states per second, peak resident MB of the
child, and for steersim the checker's bytes per distinct state (peak RSS less the RSS before the search).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "bench"

STEERSIM = r"""
import json, resource, sys, time
from steersim.models.teaching import SPEC
from steersim import CheckOptions, check
K, N, Q, P, por = (int(a) for a in sys.argv[1:6])
engine = sys.argv[6]
model = SPEC.build({"K": K, "N": N, "Q": Q, "P": P})
with open("/proc/self/statm") as f:
    before = int(f.read().split()[1]) * 4096
t = time.perf_counter()
r = check(model, CheckOptions(liveness=False, por=bool(por), engine=engine))
secs = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"states": r.states, "secs": secs, "peak": peak, "before": before, "status": r.status}))
"""


def run_steersim(K: int, N: int, Q: int, P: int, por: bool, engine: str) -> dict:
    out = subprocess.run([sys.executable, "-c", STEERSIM, str(K), str(N), str(Q), str(P), str(int(por)), engine],
                         capture_output=True, text=True, check=True).stdout
    row = json.loads(out)
    row["mb"] = row["peak"] / 1e6
    row["bytes_per_state"] = (row["peak"] - row["before"]) / row["states"]
    return row


def run_bfs(kind: str, K: int, N: int, Q: int, P: int) -> dict:
    out = subprocess.run([sys.executable, str(BENCH / "bfs.py"), kind, str(K), str(N), str(Q), str(P)],
                         capture_output=True, text=True, check=True).stdout
    row = json.loads(out)
    return {"states": row["states"], "secs": row["secs"], "mb": row["maxrss_mb"]}


def run_spin(K: int, N: int, Q: int, P: int, mode: str) -> dict | None:
    """Generate, compile and run Spin's verifier; `secs` is pan's search time, `wall` the pipeline's."""
    if not (shutil.which("spin") and shutil.which("gcc")):
        return None
    flags = {"nored": ["-DSAFETY", "-DNOREDUCE"], "por": ["-DSAFETY"]}[mode]
    with tempfile.TemporaryDirectory() as work:
        start = time.perf_counter()
        pml = subprocess.run([sys.executable, str(BENCH / "gen_pml.py"), str(K), str(N), str(Q), str(P), "0", "chan"],
                             capture_output=True, text=True, check=True).stdout
        (Path(work) / "m.pml").write_text(pml)
        subprocess.run(["spin", "-a", "m.pml"], cwd=work, capture_output=True, check=True)
        subprocess.run(["gcc", "-O2", *flags, "-DXUSAFE", "-DMEMLIM=16000", "-o", "pan", "pan.c"], cwd=work,
                       capture_output=True, check=True)
        out = subprocess.run(["./pan", "-m1000000", "-w24"], cwd=work, capture_output=True, text=True).stdout
        wall = time.perf_counter() - start
    states = int(re.search(r"([\d.e+]+) states, stored", out).group(1).replace(".", "").split("e")[0]) \
        if "e+" not in re.search(r"([\d.e+]+) states, stored", out).group(1) else \
        int(float(re.search(r"([\d.e+]+) states, stored", out).group(1)))
    secs = float(re.search(r"elapsed time ([\d.e+-]+)", out).group(1))
    memory = float(re.search(r"([\d.]+)\s+total actual memory usage", out).group(1))
    return {"states": states, "secs": max(secs, 0.01), "mb": memory, "wall": wall}


def line(name: str, row: dict | None) -> str:
    if row is None:
        return f"{name:<32} {'(spin or gcc not installed)':>40}"
    rate = row["states"] / row["secs"]
    extra = f"{row['bytes_per_state']:>8.0f}" if "bytes_per_state" in row else f"{'':>8}"
    wall = f"{row['wall']:>8.2f}" if "wall" in row else f"{'':>8}"
    return f"{name:<32} {row['states']:>10,} {row['secs']:>8.2f} {rate:>10,.0f} {row['mb']:>8.0f} {extra} {wall}"


def main() -> None:
    parser = argparse.ArgumentParser(description="explorer speed and memory against bfs.py and Spin")
    parser.add_argument("--full", action="store_true", help="also run K=12 N=6 (about a million states)")
    args = parser.parse_args()
    sizes = [(10, 5, 2, 10)] + ([(12, 6, 2, 12)] if args.full else [])
    print("steersim runs `check` without liveness, with its vector engine (the default for the teaching model)\n"
          "and, at the first size, with the generic engine every model has.")
    print(f"{'engine':<32} {'states':>10} {'secs':>8} {'states/s':>10} {'peak MB':>8} {'B/state':>8} {'wall s':>8}")
    ratios = []
    for K, N, Q, P in sizes:
        print(f"-- K={K} N={N} Q={Q} P={P}, no reduction")
        ours = run_steersim(K, N, Q, P, False, "vector")
        generic = run_steersim(K, N, Q, P, False, "generic") if sizes[0] == (K, N, Q, P) else None
        packed = run_bfs("packed", K, N, Q, P)
        tup = run_bfs("tuple", K, N, Q, P)
        spin = run_spin(K, N, Q, P, "nored")
        rows = [("steersim check, vector engine", ours), ("steersim check, generic engine", generic),
                ("bfs.py packed", packed), ("bfs.py tuple", tup), ("spin nored (chan)", spin)]
        for name, row in rows:
            if row is not None or name.startswith("spin"):
                print(line(name, row))
        for name, row in (("vector", ours), ("generic", generic)):
            if row is None:
                continue
            rate = row["states"] / row["secs"]
            ratios.append(f"K={K} {name}: steersim/bfs.py packed {rate / (packed['states'] / packed['secs']):.2f}x, "
                          f"steersim/bfs.py tuple {rate / (tup['states'] / tup['secs']):.2f}x"
                          + (f", steersim/spin nored {rate / (spin['states'] / spin['secs']):.2f}x" if spin else ""))
    K, N, Q, P = 14, 6, 2, 14
    print(f"-- K={K} N={N} Q={Q} P={P}, partial-order reduction (wall s: whole run, Spin with spin -a and gcc)")
    start = time.perf_counter()
    ours = run_steersim(K, N, Q, P, True, "generic")
    ours["wall"] = time.perf_counter() - start
    spin = run_spin(K, N, Q, P, "por")
    print(line("steersim check --por", ours))
    print(line("spin POR (chan)", spin))
    if spin:
        ratios.append(f"K=14 POR wall time steersim/spin: {ours['wall'] / spin['wall']:.2f}x "
                      f"(states {ours['states']:,} vs {spin['states']:,})")
    print("ratios (speed: higher is better for steersim; wall time: lower is better):")
    for ratio in ratios:
        print("  " + ratio)


if __name__ == "__main__":
    main()
