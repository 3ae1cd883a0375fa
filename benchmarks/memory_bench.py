"""How closely `steersim check --max-memory` holds, per engine and phase: peak resident memory against the limit.

    python benchmarks/memory_bench.py                 # the default table
    python benchmarks/memory_bench.py --limit 250     # one limit for every row

Each row runs `steersim check` in a fresh process and samples the resident size of it and of every
process it started (its `--workers`), summed, every few milliseconds; the single-process rows also
report the kernel's own high-water mark (`ru_maxrss`, exact). A sampled peak can miss a spike shorter
than the sampling period, so it is a lower bound; the high-water mark is not.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (label, arguments): configurations large enough that the limit, not the search, ends them
ROWS = (
    ("generic, search", ["-p", "K=12", "-p", "N=7", "-p", "P=12", "--engine", "generic", "--no-liveness"]),
    ("generic, liveness phase", ["-p", "K=11", "-p", "N=6", "-p", "P=11", "--engine", "generic"]),
    ("vector, search", ["-p", "K=14", "-p", "N=7", "-p", "P=14", "--engine", "vector", "--no-liveness"]),
    ("vector, liveness phase", ["-p", "K=11", "-p", "N=6", "-p", "P=11", "--engine", "vector"]),
    ("--workers 2", ["-p", "K=12", "-p", "N=7", "-p", "P=12", "--workers", "2", "--no-liveness"]),
)
PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def _tree_rss(pid: int) -> int:
    return _rss(pid) + sum(_tree_rss(child) for child in _children(pid))


def measure(args: list[str], limit: float, period: float = 0.005) -> tuple[int, float, float, str]:
    """Exit code, peak sampled tree RSS (MB), the child's own high-water mark (MB) and its last line."""
    command = [sys.executable, "-m", "sim.cli", "check", "teaching", *args, "--quiet", "--max-memory", str(limit)]
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True)
        peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _tree_rss(proc.pid))
            time.sleep(period)
        out.seek(0)
        lines = out.read().strip().splitlines()
    return os.waitstatus_to_exitcode(status), peak / 1e6, usage.ru_maxrss * 1024 / 1e6, (lines or [""])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=250.0, help="--max-memory in MB (default 250)")
    options = parser.parse_args()
    os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parent.parent))
    print("| row | limit MB | exit | sampled peak MB (all processes) | high-water MB (largest process) | verdict |")
    print("|---|---|---|---|---|---|")
    for label, args in ROWS:
        code, peak, hwm, last = measure(args, options.limit)
        print(f"| {label} | {options.limit:g} | {code} | {peak:.0f} ({peak / options.limit - 1:+.0%}) | "
              f"{hwm:.0f} | {last.split(':')[0]} |")


if __name__ == "__main__":
    main()
