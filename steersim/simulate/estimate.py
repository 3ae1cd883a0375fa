"""Statistical estimates from seed sweeps: how likely, how late, and with how much confidence.

`estimate` runs seeds `first_seed, first_seed + 1, ...` through a sweep executor (`steersim.simulate.executors`: in
this process, on worker processes or on Dask, the same verdicts each way) and folds each run into a
query's answer (`steersim.simulate.queries`): a proportion with its interval, or a measure's mean, quantiles and
histogram. With a fixed number of runs that is one batch. With a precision it runs batches of
`FIRST_BATCH` runs, then as many again as it has run (so the total doubles), until the interval is that
narrow or the run budget is spent. `decide` holds a probability bound with Wald's SPRT, fed the runs in
seed order, so the run it decides at does not depend on the batches. Seeds are a plain range, so the
same seeds at every point of a grid give common random numbers: each run's delays are drawn per action
kind from its seed (`steersim.simulate.timing`), and a difference between two points is not a difference of luck.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from steersim.simulate.intervals import (
    MeanSummary,
    ProportionInterval,
    Sprt,
    level_text,
    proportion_interval,
    summarise,
)
from steersim.simulate.queries import Event, Measure, Query
from steersim.simulate.sweep import RunVerdict

FIRST_BATCH = 1_000  # runs before the first look at the interval (or the SPRT)
Executor = Callable[[Sequence[int]], list[RunVerdict]]


@dataclass(frozen=True)
class Plan:
    """How many runs: `runs` exactly, or (with `precision`, the interval's width high - low) as many as
    it takes, at most `max_runs`. The seeds start at `first_seed`."""

    runs: int = 10_000
    precision: float | None = None
    max_runs: int = 1_000_000
    first_seed: int = 0
    confidence: float = 0.95
    method: str = "exact"


@dataclass
class Tally:
    """What the runs so far say about a query: for an event, how many runs showed it; for a measure,
    every sample and the starts that found no end."""

    query: Query
    runs: int = 0
    hits: int = 0
    samples: list[float] = field(default_factory=list)
    unmatched: int = 0

    def add(self, verdicts: Sequence[RunVerdict]) -> None:
        self.runs += len(verdicts)
        query = self.query
        if isinstance(query, Measure):
            for verdict in verdicts:
                values, unmatched = query.samples(verdict)
                self.samples.extend(values)
                self.unmatched += unmatched
        elif isinstance(query, Event):
            self.hits += sum(1 for verdict in verdicts if query.occurs(verdict))


@dataclass(frozen=True)
class Estimate:
    """A query's answer from `runs` runs of seeds `first_seed..first_seed + runs - 1`. `complete` is
    False when a precision was asked for and the run budget ended first."""

    query: Query
    runs: int
    first_seed: int
    confidence: float
    method: str
    interval: ProportionInterval | None = None
    summary: MeanSummary | None = None
    unmatched: int = 0
    complete: bool = True

    @property
    def estimate(self) -> float | None:
        if self.interval is not None:
            return self.interval.estimate
        return None if self.summary is None else self.summary.mean

    @property
    def low(self) -> float | None:
        return self.interval.low if self.interval else (self.summary.low if self.summary else None)

    @property
    def high(self) -> float | None:
        return self.interval.high if self.interval else (self.summary.high if self.summary else None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query.text, "estimate": self.estimate, "low": self.low, "high": self.high,
            "runs": self.runs, "seeds": [self.first_seed, self.first_seed + self.runs - 1],
            "method": self.method if self.interval else "t", "confidence": self.confidence,
            "complete": self.complete,
        }
        if self.interval is not None:
            out |= {"successes": self.interval.successes, "bound": self.interval.bound}
        if isinstance(self.query, Measure):
            out |= {"unit": self.query.unit, "unmatched": self.unmatched}
            out |= self.summary.to_json() if self.summary else {"samples": 0}
        return out

    def lines(self) -> list[str]:
        """The answer as text: one line, and for a measure its quantiles and histogram."""
        name = self.query.text
        if self.interval is not None:
            return [f"P({name}) {self.interval.describe()}"]
        if self.summary is None:
            return [f"{name}: no samples in {self.runs:,} runs"]
        s, unit = self.summary, self.query.unit
        level = level_text(self.confidence)
        out = [f"{name}: mean {s.mean:.4g} {unit}, {level} interval [{s.low:.4g}, {s.high:.4g}] "
               f"({s.count:,} samples from {self.runs:,} runs, t)"]
        out.append("  " + "  ".join(f"p{100 * q:g} {v:.4g} [{_bound(lo)}, {_bound(hi)}]"
                                    for (q, v), (lo, hi) in zip(s.quantiles, s.quantile_intervals, strict=True)))
        if self.unmatched:
            out.append(f"  {self.unmatched:,} started without an end in their run (left out of the samples)")
        edges, counts = s.histogram
        widest = max(counts)
        for i, count in enumerate(counts):
            bar = "#" * round(40 * count / widest) if widest else ""
            out.append(f"  [{edges[i]:>9.4g}, {edges[i + 1]:>9.4g}) {count:>8,} {bar}")
        return out


def _bound(value: float | None) -> str:
    return "?" if value is None else f"{value:.4g}"


def _answer(tally: Tally, plan: Plan, complete: bool = True) -> Estimate:
    interval = summary = None
    if isinstance(tally.query, Event):
        interval = proportion_interval(tally.hits, tally.runs, plan.confidence, plan.method)
    else:
        summary = summarise(tally.samples, plan.confidence)
    return Estimate(tally.query, tally.runs, plan.first_seed, plan.confidence, plan.method, interval, summary,
                    tally.unmatched, complete)


def _batches(executor: Executor, first_seed: int, sizes: Iterator[int]) -> Iterator[list[RunVerdict]]:
    """The verdicts of consecutive seed ranges of the given sizes, each in seed order."""
    start = first_seed
    for size in sizes:
        verdicts = executor(range(start, start + size))
        verdicts.sort(key=lambda v: v.seed)
        start += size
        yield verdicts


def _doubling(budget: int) -> Iterator[int]:
    """FIRST_BATCH runs, then as many as run so far, until `budget` runs."""
    done = 0
    while done < budget:
        size = min(max(FIRST_BATCH, done), budget - done)
        done += size
        yield size


def estimate(executor: Executor, query: Query, plan: Plan) -> Estimate:
    """The query's answer after `plan.runs` runs, or after as many as it takes to reach `plan.precision`."""
    tally = Tally(query)
    if plan.precision is None:
        for verdicts in _batches(executor, plan.first_seed, iter([plan.runs])):
            tally.add(verdicts)
        return _answer(tally, plan)
    for verdicts in _batches(executor, plan.first_seed, _doubling(plan.max_runs)):
        tally.add(verdicts)
        answer = _answer(tally, plan)
        if answer.low is not None and answer.high is not None and answer.high - answer.low <= plan.precision:
            return answer
    return _answer(tally, plan, complete=False)


@dataclass(frozen=True)
class Decision:
    """What the SPRT decided: `holds` True or False, or None when the run budget ended first; the
    runs it took, the final log-likelihood ratio, and the estimate from those same runs."""

    sprt: Sprt
    holds: bool | None
    runs: int
    llr: float
    estimate: Estimate

    @property
    def verdict(self) -> str:
        return {True: "holds", False: "fails", None: "undecided"}[self.holds]

    def to_json(self) -> dict[str, Any]:
        return {**self.estimate.to_json(),
                "assertion": {**self.sprt.to_json(), "decision": self.verdict, "llr": self.llr,
                              "thresholds": list(self.sprt.thresholds)}}

    def line(self) -> str:
        sprt = self.sprt
        claim = f"P({self.estimate.query.text}) {sprt.op} {sprt.bound:g}"
        region = f"indifference ({sprt.p_low:.4g}, {sprt.p_high:.4g}), alpha {sprt.alpha:g}, beta {sprt.beta:g}"
        if self.holds is None:
            return f"undecided: {claim} after {self.runs:,} runs, the run budget ({region})"
        return f"{self.verdict}: {claim}, decided by the SPRT after {self.runs:,} runs ({region})"


def decide(executor: Executor, query: Event, sprt: Sprt, plan: Plan) -> Decision:
    """Wald's SPRT of the bound over runs in seed order, stopping at the first run where it decides, or at
    `plan.max_runs`. The estimate beside it counts exactly the runs the test read."""
    tally = Tally(query)
    llr = 0.0
    for verdicts in _batches(executor, plan.first_seed, _doubling(plan.max_runs)):
        llr, taken, high = sprt.advance(llr, [query.occurs(v) for v in verdicts])
        if taken is not None:
            tally.add(verdicts[:taken])
            return Decision(sprt, sprt.holds(bool(high)), tally.runs, llr, _answer(tally, plan))
        tally.add(verdicts)
    return Decision(sprt, None, tally.runs, llr, _answer(tally, plan, complete=False))
