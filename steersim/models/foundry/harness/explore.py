"""Explore interleavings of scenarios, collect distinct findings, and shrink each one's schedule.

A run is a scenario plus a scheduler: random (a seed), PCT (a seed), or a replayed choice list (an
exhaustive depth-first enumeration produces these). Whatever the strategy, a run's recorded choices
reproduce it, so every finding carries its scenario and choice list; shrinking then looks for a shorter
list, with fewer non-default choices, that still shows the same finding (same signature).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from steersim.harness.finding import Finding
from steersim.harness.vloop import PCTScheduler, RandomScheduler, ReplayScheduler, Scheduler, next_prefix
from steersim.models.foundry.harness.judge import judge
from steersim.models.foundry.harness.latency import DEFAULT_PROFILE, latency_profile
from steersim.models.foundry.harness.runner import ChainSystem, Recording
from steersim.models.foundry.harness.scenarios import scenario_named
from steersim.models.foundry.harness.surfaces import run_scenario

EXHAUSTIVE_BOUND = 8  # decisions that branch in the bounded enumeration


@dataclass(frozen=True)
class RunSpec:
    scenario: str
    strategy: str  # random | pct | replay
    seed: int | None = None
    schedule: tuple[int, ...] = ()

    def scheduler(self) -> Scheduler:
        if self.strategy == "random":
            return RandomScheduler(self.seed or 0)
        if self.strategy == "pct":
            return PCTScheduler(self.seed or 0)
        return ReplayScheduler(self.schedule)


@dataclass
class Found:
    """A distinct finding: the first run that showed it, how often it was seen, its shrunk schedule."""

    finding: Finding
    spec: RunSpec
    recording: Recording
    run_index: int
    occurrences: int = 1
    schedule: tuple[int, ...] = ()
    shrunk: Recording | None = None
    shrunk_finding: Finding | None = None
    story: list[str] = field(default_factory=list)


@dataclass
class Exploration:
    runs: int = 0
    seconds: float = 0.0
    found: dict[str, Found] = field(default_factory=dict)
    ends: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False


class Explorer:
    """Runs specs against `system`, judging each run; `judge_run` is swappable for tests."""

    def __init__(self, system: ChainSystem, judge_run: Callable[[Recording], list[Finding]] = judge,
                 report: Callable[[Found], None] | None = None, latency: str = DEFAULT_PROFILE) -> None:
        self.system = system
        self.judge_run = judge_run
        self.report = report
        self.latency_name = latency
        self.latency = latency_profile(latency)
        self.cache: dict[tuple, list[Finding]] = {}

    def run(self, spec: RunSpec) -> tuple[Recording, list[Finding]]:
        """One run of `spec`; a remote store's latencies are drawn from the spec's seed (0 without one),
        so a replay with the same seed and schedule is the same run."""
        rec = run_scenario(self.system, scenario_named(spec.scenario), spec.scheduler(), self.latency,
                           spec.seed or 0)
        key = (spec.scenario, rec.end, tuple(rec.unresolved), tuple((e.name, repr(e.data)) for e in rec.events))
        if key not in self.cache:
            self.cache[key] = self.judge_run(rec)
        return rec, self.cache[key]

    def explore(self, specs: Iterator[RunSpec] | Callable[[Recording | None], RunSpec | None],
                max_runs: int, max_seconds: float | None = None) -> Exploration:
        """Run specs until `max_runs`, `max_seconds` or Ctrl-C. `specs` is an iterator, or a function of
        the previous run's recording (for enumerations that branch on what a run did)."""
        out = Exploration()
        started = time.monotonic()
        previous: Recording | None = None
        try:
            while out.runs < max_runs:
                if max_seconds is not None and time.monotonic() - started > max_seconds:
                    break
                spec = specs(previous) if callable(specs) else next(specs, None)
                if spec is None:
                    break
                rec, findings = self.run(spec)
                out.ends[rec.end] = out.ends.get(rec.end, 0) + 1
                for finding in findings:
                    known = out.found.get(finding.signature)
                    if known is not None:
                        known.occurrences += 1
                        continue
                    replay = RunSpec(spec.scenario, "replay", spec.seed, tuple(rec.choices))
                    found = Found(finding, spec, rec, out.runs, schedule=replay.schedule)
                    out.found[finding.signature] = found
                    if self.report is not None:
                        self.report(found)
                previous = rec
                out.runs += 1
        except KeyboardInterrupt:  # Ctrl-C: keep the runs finished so far (`steersim.interrupts`)
            out.interrupted = True
        out.seconds = time.monotonic() - started
        return out

    def story(self, found: Found) -> list[str]:
        """The shrunk schedule of `found` in the program's terms (`describe_schedule`)."""
        return self.describe_schedule(found.spec.scenario, found.spec.seed, found.schedule)

    def describe_schedule(self, scenario: str, seed: int | None, schedule: Sequence[int]) -> list[str]:
        """At each decision where `schedule` departs from the default (the first ready callback), which
        await went first and which it overtook, in the program's terms."""
        rec = run_scenario(self.system, scenario_named(scenario), ReplayScheduler(schedule), self.latency,
                           seed or 0, describe=True)
        out = []
        for (t, ready), choice in zip(rec.decisions, schedule, strict=False):
            if choice:
                ran = ready[min(choice, len(ready) - 1)]
                out.append(f"t={t:g}: {ran} ran before {ready[0]}")
        return out

    def reproduces(self, scenario: str, signature: str, schedule: Sequence[int],
                   seed: int | None = None) -> tuple[Recording, Finding] | None:
        rec, findings = self.run(RunSpec(scenario, "replay", seed, tuple(schedule)))
        for finding in findings:
            if finding.signature == signature:
                return rec, finding
        return None

    def shrink(self, found: Found, budget: int = 40) -> None:
        """Shorten `found.schedule` while the same finding reproduces: the shortest prefix, then as
        few non-default choices as possible (chunks of them reset to the default, halving)."""
        scenario, signature = found.spec.scenario, found.finding.signature
        attempts = 0

        def attempt(candidate: list[int]) -> tuple[Recording, Finding] | None:
            nonlocal attempts
            attempts += 1
            return self.reproduces(scenario, signature, candidate, found.spec.seed)

        best = list(found.schedule)
        result = attempt(best)
        if result is None:
            return  # not reproducible by replay: keep the original schedule, report as found
        found.shrunk, found.shrunk_finding = result
        low, high = 0, len(best)
        while low < high and attempts < budget:
            middle = (low + high) // 2
            got = attempt(best[:middle])
            if got is not None:
                high, (found.shrunk, found.shrunk_finding) = middle, got
            else:
                low = middle + 1
        best = best[:high]
        chunk = max(len(best) // 2, 1)
        while chunk >= 1 and attempts < budget:
            nonzero = [i for i, c in enumerate(best) if c]
            for start in range(0, len(nonzero), chunk):
                if attempts >= budget:
                    break
                candidate = list(best)
                for i in nonzero[start: start + chunk]:
                    candidate[i] = 0
                got = attempt(candidate)
                if got is not None:
                    best, (found.shrunk, found.shrunk_finding) = candidate, got
            chunk //= 2
        while best and best[-1] == 0:
            best.pop()
        found.schedule = tuple(best)


def exhaustive_plan(scenarios: Sequence[str], bound: int = EXHAUSTIVE_BOUND,
                    per_scenario: int | None = None) -> Callable[[Recording | None], RunSpec | None]:
    """Every interleaving of each scenario up to `bound` branching decisions (at most `per_scenario`
    runs each), scenario after scenario; None when all are done."""
    state: dict[str, Any] = {"scenario": 0, "prefix": [], "used": 0, "started": False}

    def plan(previous: Recording | None) -> RunSpec | None:
        if state["started"] and previous is not None:
            nxt = next_prefix(previous.choices, previous.widths, bound)
            state["used"] += 1
            if nxt is None or (per_scenario is not None and state["used"] >= per_scenario):
                state["scenario"] += 1
                state["used"] = 0
                nxt = []
            state["prefix"] = nxt
        state["started"] = True
        if state["scenario"] >= len(scenarios):
            return None
        return RunSpec(scenarios[state["scenario"]], "replay", None, tuple(state["prefix"]))

    return plan


def sampled_plan(scenarios: Sequence[str], seed: int, strategies: Sequence[str] = ("random", "pct"),
                 fresh: bool = True) -> Iterator[RunSpec]:
    """Seeds `seed`, `seed + 1`, ... alternating over `strategies`, cycling over the scenarios and,
    with `fresh`, a new random scenario at every turn of the cycle."""
    i = 0
    while True:
        names = [*scenarios, f"random-{seed + i}"] if fresh else list(scenarios)
        yield RunSpec(names[i % len(names)], strategies[i % len(strategies)], seed + i)
        i += 1


def mixed_plan(scenarios: Sequence[str], seed: int, per_scenario: int,
               fresh: bool = True) -> Callable[[Recording | None], RunSpec]:
    """The default plan: a bounded exhaustive enumeration of each scenario (at most `per_scenario`
    runs each), then random and PCT seeds over the scenarios and, with `fresh`, new random ones."""
    exhaustive = exhaustive_plan(scenarios, per_scenario=per_scenario) if per_scenario > 0 else None
    sampled = sampled_plan(scenarios, seed, fresh=fresh)

    def plan(previous: Recording | None) -> RunSpec:
        nonlocal exhaustive
        if exhaustive is not None:
            spec = exhaustive(previous)
            if spec is not None:
                return spec
            exhaustive = None
        return next(sampled)

    return plan
