"""Memory as `check --max-memory` measures it, and what the phases about to run will add to it.

A limit checked only between steps of work is overshot by whatever one step allocates, so the engines
ask before a step that allocates much at once: the explorer before its visited set doubles, the
vector engine before each chunk of a level, the liveness phase before it builds its graph. A parallel
check counts its worker processes with the coordinator: the coordinator's resident size and each
worker's private pages, as summed resident sizes would count the interpreter the workers share with
the coordinator once per process.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

PAGE = os.sysconf("SC_PAGE_SIZE")
MB = 1e6
# The liveness phase (`steersim.checking.liveness.find_lasso` with the arrays the explorer hands it) peaks at about 62
# bytes per edge of the graph and 40 per state (measured on the teaching model); these carry a margin.
LIVENESS_BYTES_PER_EDGE, LIVENESS_BYTES_PER_STATE = 72, 48


def rss_mb(pid: int | str = "self") -> float:
    """The resident size of a process (this one by default), in MB; 0 where /proc is not available."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE / MB
    except (OSError, IndexError, ValueError):
        return 0.0


def private_mb(pid: int | str = "self") -> float:
    """The pages a process holds that no other process shares (its unique set size), in MB; its resident
    size where the kernel does not say."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            kb = sum(int(line.split()[1]) for line in f if line.startswith(("Private_Clean:", "Private_Dirty:")))
        return kb * 1024 / MB
    except (OSError, IndexError, ValueError):
        return rss_mb(pid)


def group_mb(coordinator: int | str, workers: Iterable[int]) -> float:
    """What a coordinator and the workers it forked hold together: its resident size and each worker's
    private pages (a page the workers still share with it after the fork counts once, in its size)."""
    return rss_mb(coordinator) + sum(private_mb(pid) for pid in workers)


def liveness_mb(states: int, edges: int) -> float:
    """What the liveness phase will allocate over a graph of `states` and `edges`, in MB."""
    return (LIVENESS_BYTES_PER_EDGE * edges + LIVENESS_BYTES_PER_STATE * states) / MB
