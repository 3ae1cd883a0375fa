"""Timing profiles: how long each kind of action takes to fire once enabled.

A profile maps action kinds (exact names or fnmatch patterns such as `tool.*`) to delay distributions,
with a `default` entry for every other kind. Profiles are plain mappings, so they live in TOML files,
in a model's `default_timing()` and in a trace header alike:

    [default]
    dist = "exponential"
    mean = 0.2

    ["tool.finish"]
    dist = "lognormal"
    median = 1.5
    sigma = 1.0

Each kind draws from its own numpy stream, derived from the run's seed and a stable hash of the kind's
name with `SeedSequence`, so adding an action kind to a model does not perturb the delays of the others.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from hashlib import blake2b
from pathlib import Path
from typing import Any

import numpy as np

from sim.errors import UsageError

# distribution name -> the parameters it takes
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "immediate": (),
    "constant": ("value",),
    "uniform": ("low", "high"),
    "exponential": ("mean",),
    "lognormal": ("median", "sigma"),
}
FIRST_BLOCK, MAX_BLOCK = 32, 1024  # delays drawn per numpy call: blocks double, so short runs draw little


@dataclass(frozen=True)
class Delay:
    dist: str
    params: tuple[float, ...]

    @classmethod
    def from_mapping(cls, where: str, spec: Any) -> Delay:
        if not isinstance(spec, Mapping) or "dist" not in spec:
            raise UsageError(f"timing entry {where!r} needs a table with dist = one of {', '.join(DISTRIBUTIONS)}")
        dist = spec["dist"]
        if dist not in DISTRIBUTIONS:
            raise UsageError(f"timing entry {where!r}: unknown dist {dist!r}; use one of {', '.join(DISTRIBUTIONS)}")
        names = DISTRIBUTIONS[dist]
        extra = sorted(set(spec) - {"dist", *names})
        missing = [n for n in names if n not in spec]
        if missing or extra:
            raise UsageError(f"timing entry {where!r}: dist {dist!r} takes exactly {', '.join(names) or 'nothing'}"
                             + (f"; missing {', '.join(missing)}" if missing else "")
                             + (f"; unexpected {', '.join(extra)}" if extra else ""))
        values = []
        for n in names:
            v = spec[n]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise UsageError(f"timing entry {where!r}: {n} must be a finite number >= 0, not {v!r}")
            values.append(float(v))
        if dist == "uniform" and values[0] > values[1]:
            raise UsageError(f"timing entry {where!r}: uniform needs low <= high")
        if dist in ("exponential", "lognormal") and values[0] <= 0:
            raise UsageError(f"timing entry {where!r}: {names[0]} must be > 0")
        return cls(dist, tuple(values))

    def to_mapping(self) -> dict[str, Any]:
        return {"dist": self.dist, **dict(zip(DISTRIBUTIONS[self.dist], self.params, strict=True))}

    def draw(self, rng: np.random.Generator, size: int) -> list[float]:
        """`size` delays. Scaled standard draws: the same numbers as numpy's parametrised samplers,
        without their per-call argument checking, which dominates for small blocks."""
        p = self.params
        if self.dist == "immediate":
            return [0.0] * size
        if self.dist == "constant":
            return [p[0]] * size
        if self.dist == "uniform":
            return (p[0] + (p[1] - p[0]) * rng.random(size)).tolist()
        if self.dist == "exponential":
            return (p[0] * rng.standard_exponential(size)).tolist()
        return (p[0] * np.exp(p[1] * rng.standard_normal(size))).tolist()


@dataclass(frozen=True)
class TimingProfile:
    """Kinds and patterns in their given order, then the default."""

    entries: tuple[tuple[str, Delay], ...]
    default: Delay

    @classmethod
    def from_mapping(cls, spec: Mapping[str, Any]) -> TimingProfile:
        if not isinstance(spec, Mapping):
            raise UsageError("a timing profile is a table of action kinds, each with dist = ...")
        entries = tuple((k, Delay.from_mapping(k, v)) for k, v in spec.items() if k != "default")
        default = Delay.from_mapping("default", spec.get("default", {"dist": "exponential", "mean": 1.0}))
        return cls(entries, default)

    @classmethod
    def from_file(cls, path: str | Path) -> TimingProfile:
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except FileNotFoundError:
            raise UsageError(f"timing file {str(path)!r} does not exist") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as bad:
            raise UsageError(f"timing file {str(path)!r} is not valid TOML: {bad}") from None
        return cls.from_mapping(data)

    def to_mapping(self) -> dict[str, Any]:
        return {"default": self.default.to_mapping(), **{k: d.to_mapping() for k, d in self.entries}}

    def delay_for(self, kind: str) -> Delay:
        for pattern, delay in self.entries:
            if pattern == kind or fnmatchcase(kind, pattern):
                return delay
        return self.default


def kind_key(kind: str) -> int:
    """A stable 32-bit key for a kind's name (never Python's salted hash)."""
    return int.from_bytes(blake2b(kind.encode(), digest_size=4).digest(), "little")


class Clocks:
    """Per-kind delay streams for one run. `delay(kind)` is the next firing delay for that kind."""

    def __init__(self, profile: TimingProfile, seed: int, kinds: dict[str, tuple[Delay, int]] | None = None) -> None:
        """`kinds` memoises each kind's delay and stream key; pass one dict to the Clocks of every run
        that shares `profile`, so the lookup is done once per sweep."""
        self.profile = profile
        self.seed = seed
        self.buffers: dict[str, list[float]] = {}  # per kind, the delays drawn and not yet used, last first
        self._streams: dict[str, list[Any]] = {}
        self._kinds = {} if kinds is None else kinds

    def delay(self, kind: str) -> float:
        buffer = self.buffers.get(kind)
        if not buffer:
            stream = self._streams.get(kind)
            if stream is None:
                resolved = self._kinds.get(kind)
                if resolved is None:
                    resolved = self._kinds[kind] = (self.profile.delay_for(kind), kind_key(kind))
                delay, key = resolved
                if delay.dist in ("immediate", "constant"):
                    value = delay.params[0] if delay.params else 0.0
                    self.buffers[kind] = _Constant(value)
                    return value
                seq = np.random.SeedSequence(self.seed, spawn_key=(key,))
                stream = self._streams[kind] = [np.random.Generator(np.random.PCG64(seq)), delay, FIRST_BLOCK]
            buffer = stream[1].draw(stream[0], stream[2])
            stream[2] = min(stream[2] * 2, MAX_BLOCK)
            buffer.reverse()
            self.buffers[kind] = buffer
        return buffer.pop()


class _Constant(list):
    """A buffer that never runs out: constant delays need no stream."""

    def __init__(self, value: float) -> None:
        super().__init__((value,))
        self.value = value

    def pop(self, index: int = -1) -> float:  # type: ignore[override]
        return self.value
