"""Hypothesis strategies for property-based tests with steersim's models as the oracle.

A user who builds a real agent runtime wants to test it against many situations, not the three they
thought of. These strategies generate the two things a steering test varies:

- model parameters, from a `ModelSpec`'s documented `Param`s (ints within their range, one of the
  choices, booleans), so the same test runs the implementation and the model at the same configuration;
- scripted environments: who steers when, how long each tool call and each model call takes
  (`Environment`), and timing profiles for the simulator (`timing_profiles`).

A test then drives its implementation through the environment, records what it did as native events,
and asks the model whether that is a behaviour it allows (`steersim.harness.validate.validate`) and whether the
core invariants held. Hypothesis shrinks a failing environment to a small one by itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from steersim.core.registry import ModelSpec, Param

UNBOUNDED_SPAN = 8  # how far above its default an int parameter with no upper bound is drawn


def param_strategy(param: Param, low: int | None = None, high: int | None = None) -> st.SearchStrategy[Any]:
    """Values of one parameter: within `low..high` when given, else within the parameter's own range."""
    default = param.default
    if param.choices:
        return st.sampled_from(param.choices)
    if isinstance(default, bool):
        return st.booleans()
    if isinstance(default, int):
        lo = param.low if param.low is not None else 0
        hi = param.high if param.high is not None else default + UNBOUNDED_SPAN
        return st.integers(lo if low is None else max(lo, low), hi if high is None else min(hi, high))
    if isinstance(default, float):
        return st.floats(0.0, default * 4 if default > 0 else 1.0, allow_nan=False)
    return st.just(default)


def params(spec: ModelSpec, bounds: Mapping[str, tuple[int, int]] | None = None,
           **fixed: Any) -> st.SearchStrategy[dict[str, Any]]:
    """Parameter dicts for `spec`: each parameter from its documented range (narrowed by `bounds`,
    which keeps exhaustive checks small) unless `fixed` pins it. Every dict passes `spec.resolve`."""
    bounds = bounds or {}
    known = {p.name for p in spec.params}
    unknown = sorted((set(bounds) | set(fixed)) - known)
    if unknown:
        raise ValueError(f"model {spec.name!r} has no parameter {unknown[0]!r}; its parameters are: "
                         + ", ".join(sorted(known)))
    return st.fixed_dictionaries({
        p.name: st.just(fixed[p.name]) if p.name in fixed else param_strategy(p, *bounds.get(p.name, (None, None)))
        for p in spec.params
    })


@dataclass(frozen=True)
class Steer:
    """One steer of a scripted environment: `sender` sends it at virtual time `at`."""

    at: float
    sender: str = "user"


@dataclass(frozen=True)
class Environment:
    """A scripted environment: the steers in time order, how long each tool call runs (call j takes
    `tool_durations[j % len]`) and how long each model call takes (turn n takes
    `model_latencies[n % len]`). Every duration is positive, so events of one run never need a tie
    broken by anything but the script."""

    steers: tuple[Steer, ...]
    tool_durations: tuple[float, ...]
    model_latencies: tuple[float, ...]

    def tool_duration(self, call: int) -> float:
        return self.tool_durations[call % len(self.tool_durations)]

    def model_latency(self, turn: int) -> float:
        return self.model_latencies[turn % len(self.model_latencies)]


def durations(low: float = 0.01, high: float = 10.0) -> st.SearchStrategy[float]:
    """Positive durations, shrinking towards `low`."""
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


def steer_schedules(max_steers: int = 3, horizon: float = 20.0,
                    senders: Sequence[str] = ("user",)) -> st.SearchStrategy[tuple[Steer, ...]]:
    """Who steers when: up to `max_steers` steers at times in `[0, horizon]`, in time order."""
    one = st.builds(Steer, durations(0.0, horizon), st.sampled_from(tuple(senders)))
    return st.lists(one, max_size=max_steers).map(lambda steers: tuple(sorted(steers, key=lambda s: s.at)))


def environments(max_steers: int = 3, max_tools: int = 3, horizon: float = 20.0,
                 senders: Sequence[str] = ("user",)) -> st.SearchStrategy[Environment]:
    """Scripted environments: a steer schedule, tool durations and model-call latencies."""
    return st.builds(
        Environment,
        steer_schedules(max_steers, horizon, senders),
        st.lists(durations(), min_size=1, max_size=max(1, max_tools)).map(tuple),
        st.lists(durations(0.01, 5.0), min_size=1, max_size=3).map(tuple),
    )


def delays() -> st.SearchStrategy[dict[str, Any]]:
    """One delay distribution in the form timing profiles use (see `steersim.simulate.timing`)."""
    return st.one_of(
        st.builds(lambda v: {"dist": "constant", "value": v}, durations(0.0, 5.0)),
        st.builds(lambda lo, span: {"dist": "uniform", "low": lo, "high": lo + span},
                  durations(0.0, 2.0), durations(0.0, 5.0)),
        st.builds(lambda m: {"dist": "exponential", "mean": m}, durations(0.01, 5.0)),
        st.builds(lambda med, s: {"dist": "lognormal", "median": med, "sigma": s},
                  durations(0.01, 5.0), durations(0.01, 2.0)),
    )


def timing_profiles(kinds: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Timing profiles giving each of `kinds` (and the default) a generated delay distribution: a
    mapping `steersim.simulate.timing.TimingProfile.from_mapping` accepts, for sweeps over many timing regimes."""
    return st.fixed_dictionaries({"default": delays(), **{kind: delays() for kind in kinds}})
