"""Timing of the conformance harness: store calls take virtual latency drawn from a profile (zero is
one setting), a run with its seed is reproducible, and callers wait for startup() as behind
AgentServerHost unless a scenario asks for early starts."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from steersim.errors import UsageError
from steersim.harness.vloop import RandomScheduler
from steersim.models.foundry.harness.explore import Explorer, RunSpec
from steersim.models.foundry.harness.latency import latency_profile
from steersim.models.foundry.harness.rootcause import _start_on_busy_chain
from steersim.models.foundry.harness.scenarios import NAMED
from steersim.models.foundry.harness.surfaces import run_scenario
from tests.test_foundry_conform import StandIn

STARTUP_S = 1.0


class SlowStartup(StandIn):
    """A chain whose startup() takes a virtual second, like a recovery scan over a remote store."""

    async def startup(self) -> None:
        await asyncio.sleep(STARTUP_S)


def first_start_time(scenario) -> float:
    rec = run_scenario(SlowStartup(), scenario, RandomScheduler(0))
    return next(o.t for o in rec.observations if o.event.name == "start")


def test_callers_wait_for_startup_as_behind_the_host():
    assert first_start_time(NAMED["steer-honoured"]) >= STARTUP_S


def test_an_early_start_scenario_calls_during_startup():
    early = dataclasses.replace(NAMED["steer-honoured"], early_start=True)
    assert first_start_time(early) < STARTUP_S
    assert NAMED["restart-race-early-start"].early_start and not NAMED["restart-race"].early_start


def test_bad_latency_names_the_choices():
    with pytest.raises(UsageError, match="zero, realistic"):
        latency_profile("fast")


real = pytest.importorskip("steersim.models.foundry.harness.real")


def times(latency: str, seed: int) -> list[float]:
    rec = run_scenario(real.FoundryPackage(), NAMED["remote-store"], RandomScheduler(3), latency_profile(latency), seed)
    return [o.t for o in rec.observations]


def on_grid(t: float) -> bool:
    return abs(t * 10 - round(t * 10)) < 1e-9


def test_store_calls_take_the_latency_the_run_draws():
    assert all(on_grid(t) for t in times("zero", 0)), "at zero latency every event is at a scripted time"
    realistic = times("realistic", 0)
    assert not all(on_grid(t) for t in realistic)
    assert realistic == times("realistic", 0), "a run with its seed is reproducible"
    assert realistic != times("realistic", 1)


@pytest.mark.slow
def test_the_remote_store_race_shows_in_at_least_5_percent_of_runs_at_realistic_latency():
    explorer = Explorer(real.FoundryPackage(), latency="realistic")
    runs = 100
    raced = sum(_start_on_busy_chain(explorer.run(RunSpec("remote-store", "random", seed))[0]) is not None
                for seed in range(runs))
    assert raced >= 0.05 * runs
