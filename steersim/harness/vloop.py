"""A virtual-time asyncio event loop whose interleaving is chosen by a pluggable scheduler.

Real asyncio code (a framework under test, its callers, its handlers) runs unchanged on `VirtualLoop`.
Two things that asyncio normally leaves to the machine are taken over:

- **Time.** `time()` returns a virtual clock that only moves when nothing is ready to run: it then jumps
  to the earliest timer. Sleeps, `wait_for` timeouts and periodic background loops cost no wall time,
  and an idle program reaches its next timer at once.
- **Order.** One ready callback runs per step, and when more than one is ready the scheduler picks
  which. Every pick among two or more is recorded, so a run is the list of its choices: replaying the
  list with `ReplayScheduler` reproduces the run, which is what makes a seed one reproducible
  interleaving and lets a harness shrink a failing run to a short list of choices.

Schedulers: `RandomScheduler` (uniform picks from a seeded numpy Generator), `PCTScheduler` (random
priorities per task with a few priority change points, after Burckhardt et al.'s PCT as used by P and
Coyote: it finds bugs of small depth with a probability that does not shrink with the run's length) and
`ReplayScheduler` (a given list of choices, then the first ready callback). `next_prefix` turns the
recorded choices of one run into the next run of a depth-first enumeration of all interleavings.

The loop knows nothing of the program it runs. It does no I/O polling: programs that wait on sockets or
threads do not belong here.
"""

from __future__ import annotations

import asyncio
import heapq
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from steersim.interrupts import interrupts_deferred

ASYNCIO_DIR = str(Path(asyncio.__file__).parent)


class LoopStalled(RuntimeError):
    """Nothing is ready and no timer is pending: the awaited result can never arrive (a deadlock)."""


class LoopLimit(RuntimeError):
    """The run went past its step or virtual-time bound."""


class Scheduler(Protocol):
    def choose(self, ready: Sequence[asyncio.Handle]) -> int:
        """Index of the ready callback to run next; called only when two or more are ready."""
        ...


class RandomScheduler:
    """Uniform choice from a numpy Generator seeded with `seed`."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def choose(self, ready: Sequence[asyncio.Handle]) -> int:
        return int(self.rng.integers(len(ready)))


class PCTScheduler:
    """Probabilistic concurrency testing: every task gets a random priority when first seen and the
    highest-priority ready callback runs; at `depth - 1` decision points drawn uniformly from the first
    `horizon` decisions, the task about to run drops below every other, which exposes any bug that
    needs at most `depth` ordering constraints with probability at least 1/(n * horizon^(depth-1))."""

    def __init__(self, seed: int, depth: int = 3, horizon: int = 200) -> None:
        self.rng = np.random.default_rng(seed)
        self.change_points = frozenset(int(k) for k in self.rng.integers(horizon, size=max(depth - 1, 0)))
        self.priority: dict[Any, float] = {}
        self.decision = 0
        self.lowered = 0

    def choose(self, ready: Sequence[asyncio.Handle]) -> int:
        keys = [owner(handle) for handle in ready]
        for key in keys:
            if key not in self.priority:
                self.priority[key] = float(self.rng.random())
        best = max(range(len(ready)), key=lambda i: self.priority[keys[i]])
        if self.decision in self.change_points:
            self.lowered += 1
            self.priority[keys[best]] = -float(self.lowered)
            best = max(range(len(ready)), key=lambda i: self.priority[keys[i]])
        self.decision += 1
        return best


class ReplayScheduler:
    """The recorded `choices`, one per decision; past their end, the first ready callback. A choice
    out of range (the program took another path) is clamped, so any list replays to some run."""

    def __init__(self, choices: Sequence[int]) -> None:
        self.choices = tuple(choices)
        self.decision = 0

    def choose(self, ready: Sequence[asyncio.Handle]) -> int:
        index = self.choices[self.decision] if self.decision < len(self.choices) else 0
        self.decision += 1
        return min(max(index, 0), len(ready) - 1)


def describe(handle: asyncio.Handle) -> str:
    """What a ready callback does, in the program's own terms: a task step names the coroutine it
    resumes and the innermost await it resumes from (function, file and line); another callback its
    qualified name. Schedules are explained with these, not with queue positions."""
    target = owner(handle)
    if not isinstance(target, asyncio.Task):
        return str(target)
    outer = target.get_coro()
    frames, awaited = [], outer
    while awaited is not None:  # down the chain of coroutines (and async generators) it awaits
        inner = getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
        if inner is None:
            break
        if not inner.f_code.co_filename.startswith(ASYNCIO_DIR):  # asyncio's own sleeps and waits say nothing
            frames.append(inner)
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)
    name = getattr(outer, "__qualname__", repr(outer))
    task_name = target.get_name()
    if not re.fullmatch(r"Task-\d+", task_name):  # a name the program gave its task
        name = f"{task_name}: {name}"
    if not frames:
        return name
    last = frames[-1]
    where = f"({last.f_code.co_filename.rsplit('/', 1)[-1]}:{last.f_lineno})"
    path = " > ".join(f.f_code.co_qualname for f in frames[1:][-2:])  # the two innermost awaits below the task's own
    return f"{name} at {path} {where}" if path else f"{name} {where}"


def owner(handle: asyncio.Handle) -> Any:
    """The logical thread a ready callback belongs to: its task for task steps and wake-ups, else the
    callback's qualified name. Keys are compared within one run only."""
    callback = getattr(handle, "_callback", None)
    target = getattr(callback, "__self__", None)
    if isinstance(target, asyncio.Task):
        return target
    return getattr(callback, "__qualname__", repr(callback))


class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop on a virtual clock that runs one ready callback per step, picked by `scheduler`.
    `choices` and `widths` record every decision (the index picked, how many were ready); with
    `describe_decisions`, `decisions` records each decision's virtual time and what every ready callback
    would do (`describe`); `after_step` callables run after each step, to observe the program between
    its atomic steps."""

    # a Ctrl-C can land after the object exists and before `__init__` defers it: asyncio's finalizer then
    # meets a loop with none of its set-up, and one that never got it counts as closed, with nothing to do
    _closed = True

    def __init__(self, scheduler: Scheduler, start_time: float = 0.0, max_steps: int | None = None,
                 max_time: float | None = None, describe_decisions: bool = False) -> None:
        # built whole: a Ctrl-C raised halfway through asyncio's own set-up would leave a loop without its
        # self-pipe, whose finalizer then fails and prints a traceback; held, it is raised once it is built
        with interrupts_deferred():
            super().__init__()
            self.scheduler = scheduler
            self.now = start_time
            self.max_steps = max_steps
            self.max_time = max_time
            self.steps = 0
            self.choices: list[int] = []
            self.widths: list[int] = []
            self.after_step: list[Callable[[], None]] = []
            self.decisions: list[tuple[float, tuple[str, ...]]] | None = [] if describe_decisions else None

    def time(self) -> float:
        return self.now

    def _run_once(self) -> None:
        ready, timers = self._ready, self._scheduled
        if not ready:
            while timers and timers[0]._cancelled:
                heapq.heappop(timers)._scheduled = False
            if not timers:
                raise LoopStalled(f"nothing can run at virtual time {self.now:g}: the program waits forever")
            self.now = max(self.now, timers[0]._when)
        while timers and timers[0]._when <= self.now:
            handle = heapq.heappop(timers)
            handle._scheduled = False
            if not handle._cancelled:
                ready.append(handle)
        if not ready:
            return
        if self.max_time is not None and self.now > self.max_time:
            raise LoopLimit(f"virtual time {self.now:g} is past the bound {self.max_time:g}")
        if self.max_steps is not None and self.steps >= self.max_steps:
            raise LoopLimit(f"{self.steps} steps is the bound")
        index = 0
        if len(ready) > 1:
            if self.decisions is not None:
                self.decisions.append((self.now, tuple(describe(h) for h in ready)))
            index = self.scheduler.choose(ready)
            self.choices.append(index)
            self.widths.append(len(ready))
        handle = ready[index]
        del ready[index]
        self.steps += 1
        if not handle._cancelled:
            handle._run()
        for observe in self.after_step:
            observe()


def next_prefix(choices: Sequence[int], widths: Sequence[int], bound: int | None = None) -> list[int] | None:
    """The next choice list of a depth-first enumeration of every interleaving, after a run that made
    `choices` among `widths` ready callbacks (a replay of the result takes the first callback beyond
    it). Only the first `bound` decisions branch, so the enumeration is complete up to that depth;
    None when every branch has been taken."""
    limit = len(choices) if bound is None else min(bound, len(choices))
    for position in range(limit - 1, -1, -1):
        if choices[position] + 1 < widths[position]:
            return [*choices[:position], choices[position] + 1]
    return None
