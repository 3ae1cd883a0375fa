"""Shared helpers for the test suite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture
def bench_bfs():
    """The plain-Python BFS of the teaching model's Promela twin, from ../shared/bench."""
    path = SHARED / "bench"
    if not (path / "bfs.py").exists():
        pytest.skip(f"reference BFS not found at {path} (the shared/ folder sits beside the clone)")
    sys.path.insert(0, str(path))
    try:
        import bfs
    finally:
        sys.path.remove(str(path))
    return bfs
