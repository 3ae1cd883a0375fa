"""Which driver runs a scenario: the package's task API (`runner.ScenarioRun`) or its Responses host
(`responses_host.ResponsesRun`, built on the former). The choice lives here, above both drivers, so that
neither imports the other back."""

from __future__ import annotations

from steersim.harness.vloop import Scheduler
from steersim.models.foundry.harness.responses_host import ResponsesRun
from steersim.models.foundry.harness.runner import ChainSystem, Recording, ScenarioRun
from steersim.models.foundry.harness.scenarios import Scenario
from steersim.simulate.timing import TimingProfile


def run_scenario(system: ChainSystem, scenario: Scenario, scheduler: Scheduler,
                 latency: TimingProfile | None = None, latency_seed: int = 0, describe: bool = False) -> Recording:
    """One run; a remote-store scenario's store calls take the virtual time `latency` draws (seeded by
    `latency_seed`), by default the realistic profile. A responses scenario drives the package's own
    Responses host, whatever `system` is."""
    if scenario.surface == "responses":
        return ResponsesRun(system, scenario, scheduler, latency, latency_seed, describe).run()
    return ScenarioRun(system, scenario, scheduler, latency, latency_seed, describe).run()
