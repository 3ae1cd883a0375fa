"""Scenarios: runs created on one thread, each placed at a point of the life of the runs before it.

A point is a number of recorded events: the second run's creation is sent once the first run's life
has shown that many (0: at once, with the first; the last point: after the first run has finished).
The first run's life, alone, has `solo_length` events, so placing the second run at every point from
0 to that length meets the first run in every state it passes through (pending, each checkpoint,
each node, its final status, its task's end). A third run is placed a few events after the second.
Each creation has a strategy, and its run may get a stream client that joins once the creation has
answered; a cancelled node may run a clean-up that awaits before it lets the cancellation through.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from steersim.models.langgraph.state import STRATEGIES

CLEANUP_S = 1.0  # a clean-up longer than the queue's idle poll (0.5 s)
OUTLASTING_CLEANUP_S = 4.0  # a clean-up that outlasts the next run (its nodes take graph.NODES seconds)
THIRD_OFFSETS = (0, 2, 5)


@dataclass(frozen=True)
class Arrival:
    """A creation with `strategy`, sent once `after` events have been recorded on the thread (and the
    creation before it has been stored or refused); `join`: a stream client then joins its run."""

    strategy: str
    after: int
    join: bool = False

    def label(self) -> str:
        return f"{self.strategy}@{self.after}{'+join' if self.join else ''}"


@dataclass(frozen=True)
class Scenario:
    arrivals: tuple[Arrival, ...]
    cleanup: float = 0.0
    fail: tuple[tuple[str, int], ...] = ()  # (run, node): that run's node raises

    @property
    def name(self) -> str:
        parts = [a.label() for a in self.arrivals]
        if self.cleanup:
            parts.append("cleanup" if self.cleanup == CLEANUP_S else f"cleanup={self.cleanup:g}")
        parts.extend(f"fail:{run}@{node}" for run, node in self.fail)
        return ",".join(parts)

    @property
    def joins(self) -> bool:
        return any(a.join for a in self.arrivals)


def solo(join: bool = False, fail: tuple[tuple[str, int], ...] = ()) -> Scenario:
    """The first run alone: its life gives the points the others are placed at."""
    return Scenario((Arrival("enqueue", 0, join),), fail=fail)


def placements(solo_length: int, strategies: tuple[str, ...] = STRATEGIES, joins: tuple[bool, ...] = (False, True),
               cleanups: tuple[float, ...] = (0.0, CLEANUP_S), points: tuple[int, ...] | None = None,
               ) -> Iterator[Scenario]:
    """Two runs: the second at every point (or the given ones) of the first's life, for each strategy,
    with and without a stream client on each run, with and without a clean-up that awaits."""
    for strategy in strategies:
        for join in joins:
            for cleanup in cleanups:
                for point in points if points is not None else range(solo_length + 1):
                    yield Scenario((Arrival("enqueue", 0, join), Arrival(strategy, point, join)), cleanup)


def third_runs(solo_length: int, strategies: tuple[str, ...] = STRATEGIES, joins: tuple[bool, ...] = (False, True),
               points: tuple[int, ...] | None = None, offsets: tuple[int, ...] = THIRD_OFFSETS,
               ) -> Iterator[Scenario]:
    """Three runs, with the clean-up that awaits: the third a few events after the second."""
    for second in strategies:
        for third in strategies:
            for join in joins:
                for point in points if points is not None else range(0, solo_length + 1, 2):
                    for offset in offsets:
                        yield Scenario((Arrival("enqueue", 0, join), Arrival(second, point, join),
                                        Arrival(third, point + offset, join)), CLEANUP_S)


def outlasting(solo_length: int, strategies: tuple[str, ...] = ("interrupt", "rollback"),
               joins: tuple[bool, ...] = (False, True), points: tuple[int, ...] | None = None) -> Iterator[Scenario]:
    """Two runs whose first, cancelled, runs a clean-up that outlasts the second: the cancelled run's
    task stops last, and what it writes then is what the thread shows."""
    yield from placements(solo_length, strategies, joins, (OUTLASTING_CLEANUP_S,), points)


def failing(solo_length: int, strategies: tuple[str, ...] = STRATEGIES) -> Iterator[Scenario]:
    """Two runs whose first fails at its second node, the second placed around the failure."""
    for strategy in strategies:
        for point in range(solo_length + 1):
            yield Scenario((Arrival("enqueue", 0), Arrival(strategy, point)), fail=(("r1", 2),))
