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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A slow exhaustive run takes as long as its state space does: the per-test `timeout` of
    pyproject.toml, which turns a hang of the default suite into a failure, does not apply to it."""
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.timeout(0))
