"""How closely `steersim check --max-memory` holds, per engine and phase: peak memory against the limit.

    python benchmarks/memory_bench.py                 # the default table (limit 200 MB)
    python benchmarks/memory_bench.py --limit 250     # one limit for every row

Each row runs `steersim check` in a fresh process and samples, every few milliseconds, what it holds as
`--max-memory` counts it (`steersim.checking.memory.group_mb`): its resident size and the private pages of the
workers it started. It also reports the kernel's high-water mark of the check's own process
(`ru_maxrss`, without its workers; Linux counts there the pages this script held when it started the
check too, which are far fewer than any row's). A sampled peak can miss a spike shorter than the sampling
period, so it is a lower bound; the high-water mark is not.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from steersim.checking.memory import group_mb

# (label, arguments): configurations large enough that the limit, not the search, ends them
ROWS = (
    ("generic, search", ["-p", "K=12", "-p", "N=7", "-p", "P=12", "--engine", "generic", "--no-liveness"]),
    ("generic, liveness phase", ["-p", "K=10", "-p", "N=6", "-p", "P=10", "--engine", "generic"]),
    ("vector, search", ["-p", "K=14", "-p", "N=7", "-p", "P=14", "--engine", "vector", "--no-liveness"]),
    ("vector, liveness phase", ["-p", "K=10", "-p", "N=6", "-p", "P=10", "--engine", "vector"]),
    ("--workers 2", ["-p", "K=10", "-p", "N=6", "-p", "P=10", "--workers", "2", "--no-liveness"]),
)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def measure(args: list[str], limit: float, period: float = 0.005) -> tuple[int, float, float, str]:
    """Exit code, sampled peak (MB, as --max-memory counts), the check process's high-water mark (MB)
    and the check's last line."""
    command = [sys.executable, "-m", "steersim.cli", "check", "teaching", *args, "--quiet", "--max-memory", str(limit)]
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True)
        peak = 0.0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, group_mb(proc.pid, _children(proc.pid)))
            time.sleep(period)
        out.seek(0)
        lines = out.read().strip().splitlines()
    return os.waitstatus_to_exitcode(status), peak, usage.ru_maxrss * 1024 / 1e6, (lines or [""])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=200.0, help="--max-memory in MB (default 200)")
    options = parser.parse_args()
    print("| row | limit MB | exit | sampled peak MB | high-water MB (check process) | verdict |")
    print("|---|---|---|---|---|---|")
    for label, args in ROWS:
        code, peak, hwm, last = measure(args, options.limit)
        print(f"| {label} | {options.limit:g} | {code} | {peak:.0f} ({peak / options.limit - 1:+.0%}) | "
              f"{hwm:.0f} ({hwm / options.limit - 1:+.0%}) | {last.split(':')[0]} |", flush=True)


if __name__ == "__main__":
    main()
