"""Confidence intervals and Wald's sequential probability ratio test, for estimates from simulated runs.

Runs of one seed range are independent Bernoulli trials of a query (a violation, a fact), so a rate
is a binomial proportion: its interval is Clopper and Pearson's exact one or Wilson's score interval,
both from scipy. When no run (or every run) shows the event, the honest answer is a one-sided bound
("< x at 95%"), never "0%": `ProportionInterval.bound` says which side is open. A measure (a latency,
a count) gets Student's t interval of its mean, numpy's quantiles with scipy's distribution-free
intervals (from order statistics), and numpy's histogram.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import binomtest, quantile_test, ttest_1samp

from steersim.errors import UsageError

METHODS = ("exact", "wilson")  # scipy's names: Clopper-Pearson, and Wilson's score interval
QUANTILES = (0.5, 0.9, 0.99)
HISTOGRAM_BINS = 10


def check_confidence(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise UsageError(f"--confidence takes a number strictly between 0 and 1, not {confidence} (e.g. 0.95)")
    return confidence


@dataclass(frozen=True)
class ProportionInterval:
    """`successes` of `runs` and the interval of the proportion at `confidence`. `bound` is "upper"
    when no run succeeded (the interval is the one-sided [0, high]), "lower" when every run did, and
    None for the two-sided interval."""

    successes: int
    runs: int
    low: float
    high: float
    method: str
    confidence: float
    bound: str | None

    @property
    def estimate(self) -> float:
        return self.successes / self.runs

    @property
    def width(self) -> float:
        return self.high - self.low

    def describe(self) -> str:
        """One line: the estimate and its interval, or the one-sided bound when there is no estimate to
        speak of."""
        level = level_text(self.confidence)
        counted = f"{self.successes:,} of {self.runs:,} runs"
        if self.bound == "upper":
            return f"< {_percent(self.high)} at {level} ({counted}; one-sided {self.method} bound)"
        if self.bound == "lower":
            return f"> {_percent(self.low)} at {level} ({counted}; one-sided {self.method} bound)"
        return (f"{_percent(self.estimate)}, {level} interval [{_percent(self.low)}, {_percent(self.high)}] "
                f"({counted}, {self.method})")


def level_text(confidence: float) -> str:
    """A confidence level as people write it: 95%, 99.9%."""
    return f"{100 * confidence:g}%"


def _percent(p: float) -> str:
    """A proportion as a percentage with three significant digits (2.00%, 0.0300%), so that small rates
    stay readable and every bound shows the same precision."""
    return f"{100 * p:#.3g}".rstrip(".") + "%"


def proportion_interval(successes: int, runs: int, confidence: float = 0.95,
                        method: str = "exact") -> ProportionInterval:
    """The interval of `successes / runs` at `confidence`: two-sided, or one-sided when the count is 0
    or `runs` (then the side that is open is the only one there is to bound)."""
    if method not in METHODS:
        raise UsageError(f"--method takes {' or '.join(METHODS)}, not {method!r}")
    check_confidence(confidence)
    bound, alternative = None, "two-sided"
    if successes == 0:
        bound, alternative = "upper", "less"
    elif successes == runs:
        bound, alternative = "lower", "greater"
    ci = binomtest(successes, runs, alternative=alternative).proportion_ci(confidence_level=confidence,
                                                                           method=method)
    return ProportionInterval(successes, runs, float(ci.low), float(ci.high), method, confidence, bound)


@dataclass(frozen=True)
class MeanSummary:
    """A measure's samples summed up: the mean and its t interval, quantiles and a histogram."""

    count: int
    mean: float
    low: float
    high: float
    confidence: float
    quantiles: tuple[tuple[float, float], ...]
    quantile_intervals: tuple[tuple[float | None, float | None], ...]  # per quantile; None: too few samples
    histogram: tuple[tuple[float, ...], tuple[int, ...]]  # bin edges, counts

    @property
    def width(self) -> float:
        return self.high - self.low

    def to_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "samples": self.count,
                "quantiles": {f"p{100 * q:g}": v for q, v in self.quantiles},
                "quantile_intervals": {f"p{100 * q:g}": list(ci)
                                       for (q, _), ci in zip(self.quantiles, self.quantile_intervals, strict=True)},
                "histogram": {"edges": list(self.histogram[0]), "counts": list(self.histogram[1])}}


def summarise(samples: Sequence[float], confidence: float = 0.95) -> MeanSummary | None:
    """The summary of a measure's samples, or None when there are none. A single sample, or samples
    all alike, have a mean but no spread: the interval is that point."""
    check_confidence(confidence)
    values = np.asarray(samples, dtype=float)
    if values.size == 0:
        return None
    mean = float(values.mean())
    low = high = mean
    if values.size > 1 and float(values.min()) != float(values.max()):
        ci = ttest_1samp(values, 0.0).confidence_interval(confidence_level=confidence)
        low, high = float(ci.low), float(ci.high)
    quantiles = tuple((q, float(v)) for q, v in zip(QUANTILES, np.quantile(values, QUANTILES), strict=True))
    intervals = tuple(_quantile_interval(values, q, confidence) for q in QUANTILES)
    counts, edges = np.histogram(values, bins=_bins(values))
    return MeanSummary(int(values.size), mean, low, high, confidence, quantiles, intervals,
                       (tuple(float(e) for e in edges), tuple(int(c) for c in counts)))


def _quantile_interval(values: np.ndarray, q: float, confidence: float) -> tuple[float | None, float | None]:
    """The interval of quantile `q` from the order statistics (scipy's `quantile_test`): it assumes only
    that the samples are independent. A side the samples are too few to bound is None."""
    ci = quantile_test(values, q=float(np.quantile(values, q)), p=q).confidence_interval(confidence_level=confidence)
    return tuple(float(v) if math.isfinite(v) else None for v in (ci.low, ci.high))  # type: ignore[return-value]


def _bins(values: np.ndarray) -> Any:
    """One bin per value for a count of few values (steers per turn), else HISTOGRAM_BINS equal bins."""
    low, high = float(values.min()), float(values.max())
    if np.all(values == np.round(values)) and high - low < 2 * HISTOGRAM_BINS:
        return np.arange(low, high + 2) - 0.5
    return HISTOGRAM_BINS


@dataclass(frozen=True)
class Sprt:
    """Wald's sequential probability ratio test of "P op bound" for `op` in <, <=, >, >=.

    It tests p <= p_low against p >= p_high, the indifference region (p_low, p_high) being `bound`
    plus or minus `indifference` times the smaller of bound and 1 - bound (so both stay inside (0, 1)).
    `alpha` bounds the chance of deciding p >= p_high when in truth p <= p_low, `beta` the converse;
    inside the region either answer may come. A strict and a loose comparison decide alike: the test
    cannot tell p = bound from p near it, which is what the region says."""

    op: str
    bound: float
    indifference: float = 0.5
    alpha: float = 0.01
    beta: float = 0.01

    def __post_init__(self) -> None:
        if self.op not in ("<", "<=", ">", ">="):
            raise UsageError(f"an assertion compares with <, <=, > or >=, not {self.op!r}")
        if not 0 < self.bound < 1:
            raise UsageError(f"an assertion's bound is a probability strictly between 0 and 1, not {self.bound}")
        if not 0 < self.indifference < 1:
            raise UsageError(f"--indifference takes a number strictly between 0 and 1, not {self.indifference}")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < value < 0.5:
                raise UsageError(f"--error takes a number strictly between 0 and 0.5, not {value} ({name})")

    @property
    def delta(self) -> float:
        return self.indifference * min(self.bound, 1 - self.bound)

    @property
    def p_low(self) -> float:
        return self.bound - self.delta

    @property
    def p_high(self) -> float:
        return self.bound + self.delta

    @property
    def thresholds(self) -> tuple[float, float]:
        """The log-likelihood ratios at which the test decides p <= p_low, and p >= p_high."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def steps(self) -> tuple[float, float]:
        """What one run adds to the log-likelihood ratio of p_high against p_low: with the event, and
        without it."""
        return math.log(self.p_high / self.p_low), math.log((1 - self.p_high) / (1 - self.p_low))

    def advance(self, llr: float, outcomes: Sequence[bool]) -> tuple[float, int | None, bool | None]:
        """The ratio after `outcomes` (runs in seed order) from `llr`, and, at the first run where the
        test decides, how many of `outcomes` it took and whether p is high (>= p_high) there; then the
        ratio is the one at that run."""
        if not outcomes:
            return llr, None, None
        up, down = self.steps()
        path = llr + np.cumsum(np.where(np.asarray(outcomes, dtype=bool), up, down))
        low, high = self.thresholds
        crossed = np.flatnonzero((path <= low) | (path >= high))
        if crossed.size == 0:
            return float(path[-1]), None, None
        at = int(crossed[0])
        return float(path[at]), at + 1, bool(path[at] >= high)

    def holds(self, high: bool) -> bool:
        """Whether the assertion holds, when the test has decided that p is high (or low)."""
        return high == (self.op in (">", ">="))

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "bound": self.bound, "indifference": [self.p_low, self.p_high],
                "alpha": self.alpha, "beta": self.beta}
