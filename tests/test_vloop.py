"""The virtual-time loop: time jumps to the next timer, one seed is one reproducible interleaving, a
recorded choice list replays the same run, and the depth-first enumeration visits every interleaving."""

from __future__ import annotations

import asyncio
import gc
import math
import signal
import sys
from asyncio import selector_events

import pytest

from steersim.harness.vloop import (
    LoopLimit,
    LoopStalled,
    PCTScheduler,
    RandomScheduler,
    ReplayScheduler,
    VirtualLoop,
    next_prefix,
)


def run(scheduler, main, **limits):
    loop = VirtualLoop(scheduler, **limits)
    try:
        return loop.run_until_complete(main()), loop
    finally:
        loop.close()


async def racers(log, n=3, steps=3):
    """n tasks that each log their name at `steps` switch points: the log is the interleaving."""
    async def worker(name):
        for _ in range(steps):
            log.append(name)
            await asyncio.sleep(0)

    await asyncio.gather(*(worker(f"w{k}") for k in range(n)))
    return tuple(log)


def test_time_jumps_to_the_next_timer_without_waiting():
    async def main():
        loop = asyncio.get_running_loop()
        await asyncio.sleep(3600)
        first = loop.time()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.Event().wait(), timeout=30)
        return first, loop.time()

    (first, second), _ = run(ReplayScheduler([]), main)
    assert first == 3600 and second == 3630


def test_one_seed_is_one_interleaving_and_seeds_differ():
    runs = {seed: run(RandomScheduler(seed), lambda: racers([]))[0] for seed in range(8)}
    assert all(run(RandomScheduler(seed), lambda: racers([]))[0] == log for seed, log in runs.items())
    assert len(set(runs.values())) > 1


def test_a_recorded_choice_list_replays_the_same_run():
    log, loop = run(PCTScheduler(11, depth=3, horizon=20), lambda: racers([]))
    replayed, again = run(ReplayScheduler(loop.choices), lambda: racers([]))
    assert replayed == log and again.choices == loop.choices


def test_the_enumeration_visits_every_interleaving_and_no_schedule_twice():
    logs, schedules, prefix = set(), [], []
    while prefix is not None:
        log, loop = run(ReplayScheduler(prefix), lambda: racers([], n=2, steps=2))
        logs.add(log)
        schedules.append(tuple(loop.choices))
        prefix = next_prefix(loop.choices, loop.widths)
    assert len(schedules) == len(set(schedules))
    assert len(logs) == math.comb(4, 2)  # every order of two workers' two steps each


def test_a_bounded_enumeration_branches_only_early():
    _, loop = run(ReplayScheduler([]), lambda: racers([], n=2, steps=2))
    assert next_prefix(loop.choices, loop.widths, bound=0) is None
    assert next_prefix(loop.choices, loop.widths, bound=1) == [1]


def test_a_deadlock_is_reported_not_hung():
    async def main():
        await asyncio.Event().wait()

    with pytest.raises(LoopStalled):
        run(ReplayScheduler([]), main)


def test_a_run_past_its_bound_stops():
    async def main():
        while True:
            await asyncio.sleep(1)

    with pytest.raises(LoopLimit):
        run(ReplayScheduler([]), main, max_time=100)


def test_decisions_name_the_awaits_they_order():
    async def fetch():
        await asyncio.sleep(0)

    async def reader():
        await fetch()

    async def main():
        await asyncio.gather(asyncio.create_task(reader(), name="reader one"), asyncio.create_task(reader()))

    loop = VirtualLoop(RandomScheduler(0), describe_decisions=True)
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    labels = {label for _, ready in loop.decisions for label in ready}
    assert any(label.startswith("reader one: ") for label in labels), labels
    assert any(".reader at " in label and ".fetch (test_vloop.py:" in label for label in labels), labels
    assert len(loop.decisions) == len(loop.choices)
    assert VirtualLoop(RandomScheduler(0)).decisions is None


def test_a_ctrl_c_while_the_loop_is_built_is_raised_once_it_is_whole(monkeypatch):
    """A SIGINT that lands inside asyncio's own set-up of the loop (here: as it makes its self-pipe) is
    raised after the loop is built, so the loop's finalizer closes it quietly instead of printing an
    AttributeError traceback under the command's one line."""
    make_self_pipe = selector_events.BaseSelectorEventLoop._make_self_pipe

    def interrupted_first(self):
        signal.raise_signal(signal.SIGINT)  # the handler runs at the next bytecode, inside asyncio's __init__
        make_self_pipe(self)

    unraisable = []
    monkeypatch.setattr(selector_events.BaseSelectorEventLoop, "_make_self_pipe", interrupted_first)
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            VirtualLoop(RandomScheduler(0))
        gc.collect()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert [str(u.exc_value) for u in unraisable] == []


def test_a_loop_a_ctrl_c_stopped_before_its_set_up_is_finalized_quietly(monkeypatch):
    """A SIGINT can land after the loop object exists and before its `__init__` defers interrupts (here:
    the object made and dropped without `__init__`): its finalizer has nothing to close and prints nothing."""
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    loop = VirtualLoop.__new__(VirtualLoop)
    del loop
    gc.collect()
    assert [str(u.exc_value) for u in unraisable] == []
