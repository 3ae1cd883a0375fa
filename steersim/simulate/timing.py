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

A delay has the same bits on every machine. The streams give uniform doubles (PCG64's words, a shift and
a power of two: exact), and a delay is made of them with IEEE-754 basic operations (correctly rounded
everywhere, numpy's SIMD kernels included) and with logarithms, square roots, cosines and exponentials
that MPFR rounds correctly. Not with libm's or numpy's `exp` and `log`, nor numpy's normal and
exponential samplers (which call libm in their tails): those are only within an ulp or so, and the
ulp they miss by depends on the CPU (numpy's AVX-512 kernels, glibc's FMA code paths).
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from hashlib import blake2b
from itertools import repeat
from pathlib import Path
from typing import Any

import gmpy2
import numpy as np
from numpy.random.bit_generator import ISeedSequence

from steersim.errors import UsageError, read_toml

# distribution name -> the parameters it takes
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "immediate": (),
    "constant": ("value",),
    "uniform": ("low", "high"),
    "exponential": ("mean",),
    "lognormal": ("median", "sigma"),
}
FIRST_BLOCK, MAX_BLOCK = 32, 1024  # delays drawn per numpy call: blocks double, so short runs draw little
# binary64 (precision, exponent range and subnormals) with every result correctly rounded; its own
# methods, not operators, as those follow a context that any caller may change
_BINARY64 = gmpy2.ieee(64)
_TWO_PI = _BINARY64.mul(2, gmpy2.const_pi(53))
# Bounds that keep virtual time finite. A delay parameter is at most MAX_DELAY virtual seconds (about 31
# years), and a lognormal's sigma at most MAX_SIGMA. the standard draws are bounded (an exponential draw
# -log(1 - u) is at most -log(2**-53) < 37, a Box-Muller normal one at most sqrt(2 * 37) < 9), so one delay stays below
# 1e9 * e**400 < 1e183 and no run of any realistic length can add up to infinity. Larger values are
# refused rather than let a clock overflow to infinity and pass for a quiescent run.
MAX_DELAY, MAX_SIGMA = 1e9, 10.0


@dataclass(frozen=True)
class Delay:
    """One distribution of a timing profile: `dist` (a key of `DISTRIBUTIONS`) and its parameters in that
    key's order. Made from a TOML table by `from_mapping`, which refuses a bad table in one line."""

    dist: str
    params: tuple[float, ...]

    @classmethod
    def from_mapping(cls, where: str, spec: Any) -> Delay:
        if not isinstance(spec, Mapping) or "dist" not in spec:
            raise UsageError(f"timing entry {where!r} needs a table with dist = one of {', '.join(DISTRIBUTIONS)}")
        dist = spec["dist"]
        if not isinstance(dist, str) or dist not in DISTRIBUTIONS:
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
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v) or v < 0:
                raise UsageError(f"timing entry {where!r}: {n} must be a finite number >= 0, not {v!r}")
            bound = MAX_SIGMA if n == "sigma" else MAX_DELAY
            if v > bound:
                raise UsageError(f"timing entry {where!r}: {n} = {v!r} is above the bound {bound:g} that keeps "
                                 "virtual time finite; use a smaller value")
            values.append(float(v))
        if dist == "uniform" and values[0] > values[1]:
            raise UsageError(f"timing entry {where!r}: uniform needs low <= high")
        if dist in ("exponential", "lognormal") and values[0] <= 0:
            raise UsageError(f"timing entry {where!r}: {names[0]} must be > 0")
        return cls(dist, tuple(values))

    def to_mapping(self) -> dict[str, Any]:
        return {"dist": self.dist, **dict(zip(DISTRIBUTIONS[self.dist], self.params, strict=True))}

    def draw(self, rng: np.random.Generator, size: int) -> list[Any]:
        """What `size` delays are made of, from the kind's stream of uniform doubles u, v, ... in [0, 1):
        a uniform's delays themselves, `low + (high - low) * u` (exact in numpy); an exponential's u; a
        lognormal's pairs (u, v). `reader` makes the delays: lazily, one when it is asked for, because
        a correctly rounded logarithm costs a microsecond and a run uses few of the delays it draws."""
        p = self.params
        if self.dist == "uniform":
            return (p[0] + (p[1] - p[0]) * rng.random(size)).tolist()
        if self.dist == "exponential":
            return rng.random(size).tolist()
        if self.dist == "lognormal":
            values = rng.random(2 * size).tolist()
            return list(zip(values[0::2], values[1::2], strict=True))
        return [p[0] if p else 0.0] * size

    def reader(self, pop: Callable[[], Any]) -> Callable[[], float]:
        """The next delay, from what `pop` takes off a block of `draw` (an IndexError when the block is
        used up goes through): `mean * -log(1 - u)` for an exponential; `median * exp(sigma * z)` for a
        lognormal, with Box and Muller's standard normal `z = sqrt(-2 log(1 - u)) * cos(2 pi v)`. Each
        operation is binary64 and rounded correctly, so the delay has the same bits everywhere."""
        p = self.params
        if self.dist == "exponential":
            mean, log1p = p[0], _BINARY64.log1p
            return lambda: mean * -float(log1p(-pop()))
        if self.dist == "lognormal":
            median, sigma = p
            mul, sqrt, log1p, cos, exp = _BINARY64.mul, _BINARY64.sqrt, _BINARY64.log1p, _BINARY64.cos, _BINARY64.exp

            def lognormal() -> float:
                u, v = pop()
                return median * float(exp(mul(sigma, mul(sqrt(mul(-2, log1p(-u))), cos(mul(_TWO_PI, v))))))

            return lognormal
        return pop


@dataclass(frozen=True)
class TimingProfile:
    """Kinds and patterns in their given order, then the default."""

    entries: tuple[tuple[str, Delay], ...]
    default: Delay
    # what the runs under this profile learn about its kinds, shared by all their `Clocks` (a lambda, as
    # the class is defined below)
    kind_table: _KindTable = field(default_factory=lambda: _KindTable(), init=False, repr=False, compare=False)

    @classmethod
    def from_mapping(cls, spec: Mapping[str, Any]) -> TimingProfile:
        """The profile of a table of entries (kind or pattern -> `{"dist": ..., params}`), with `default`
        exponential of mean 1 when absent; a bad entry is a UsageError in one line that names it."""
        if not isinstance(spec, Mapping):
            raise UsageError("a timing profile is a table of action kinds, each with dist = ...")
        entries = tuple((k, Delay.from_mapping(k, v)) for k, v in spec.items() if k != "default")
        default = Delay.from_mapping("default", spec.get("default", {"dist": "exponential", "mean": 1.0}))
        return cls(entries, default)

    @classmethod
    def for_model(cls, model: Any, chosen: TimingProfile | str | Path | None = None) -> TimingProfile:
        """The profile a run of `model` goes by: the one chosen (a profile, or the TOML file `--timing`
        names), else the model's own (`default_timing()`)."""
        if isinstance(chosen, TimingProfile):
            return chosen
        return cls.from_file(chosen) if chosen else cls.from_mapping(model.default_timing())

    @classmethod
    def from_file(cls, path: str | Path) -> TimingProfile:
        """The profile of a TOML file (the format of `from_mapping`); the error names the file."""
        data = read_toml(path, "timing file", "a timing profile")
        try:
            return cls.from_mapping(data)
        except UsageError as bad:
            raise UsageError(f"timing file {str(path)!r}: {bad}") from None

    def to_mapping(self) -> dict[str, Any]:
        """The table `from_mapping` reads back, `default` first: what a trace header records."""
        return {"default": self.default.to_mapping(), **{k: d.to_mapping() for k, d in self.entries}}

    def delay_for(self, kind: str) -> Delay:
        """The first entry, in the order given, that is `kind` or an fnmatch pattern matching it, else the
        default."""
        for pattern, delay in self.entries:
            if pattern == kind or fnmatchcase(kind, pattern):
                return delay
        return self.default


def _finite(value: float) -> bool:
    """`math.isfinite`, also for an integer too large for a float (TOML integers have no bound here)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def kind_key(kind: str) -> int:
    """A stable 32-bit key for a kind's name (never Python's salted hash)."""
    return int.from_bytes(blake2b(kind.encode(), digest_size=4).digest(), "little")


# SeedSequence's hashing (numpy/random/bit_generator.pyx): its constants, and the order in which
# generate_state reads the pool for the eight 32-bit words of PCG64's 128-bit seed and increment.
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R, _MASK32 = np.uint32(0xCA01F9DD), np.uint32(0x4973F715), 0xFFFFFFFF
_XSHIFT = np.uint32(16)
_CYCLE = np.array([0, 1, 2, 3, 0, 1, 2, 3])


def _hash_constants(init: int, mult: int, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """What SeedSequence's hashmix XORs into, and multiplies by, the value of each of its calls number
    `first` to `first + count - 1`: its hash constant moves on at every call, whatever the data."""
    constant = init
    for _ in range(first):
        constant = constant * mult & _MASK32
    chain = [constant]
    for _ in range(count):
        chain.append(chain[-1] * mult & _MASK32)
    return np.array(chain[:-1], np.uint32), np.array(chain[1:], np.uint32)


_STATE_XOR, _STATE_MULT = _hash_constants(_INIT_B, _MULT_B, 0, len(_CYCLE))
_Generator, _PCG64 = np.random.Generator, np.random.PCG64  # looked up once: every run builds a few


class _KindTable:
    """What every run under one profile shares about its kinds: each kind's delay and stream key,
    resolved once, and the keys of the kinds that draw random delays as one array, so that a run
    seeds all their streams in a few numpy operations (`_stream_words`). A cache: a copy starts empty.
    Clocks in several threads may share it, so what changes it takes a lock."""

    def __init__(self) -> None:
        self.kinds: dict[str, tuple[Delay, int]] = {}  # kind -> its delay, and its row in `keys` (-1: constant)
        self.keys = np.empty(0, np.uint32)
        self._hashed: dict[int, np.ndarray] = {}  # by SeedSequence call number: the keys hashed there
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[_KindTable], tuple[()]]:
        return _KindTable, ()

    def resolve(self, kind: str, profile: TimingProfile) -> tuple[Delay, int]:
        """Look a kind up in the profile, the first time a run meets it."""
        with self._lock:
            resolved = self.kinds.get(kind)
            if resolved is None:
                delay = profile.delay_for(kind)
                row = -1
                if delay.dist not in ("immediate", "constant"):
                    row = len(self.keys)
                    self.keys = np.append(self.keys, np.uint32(kind_key(kind)))
                    self._hashed = {}
                resolved = self.kinds[kind] = (delay, row)
            return resolved

    def hashed_keys(self, calls: int) -> np.ndarray:
        """Each key (row) as SeedSequence mixes it into the pool words, in generate_state's order: hashed
        by hashmix calls number `calls` to `calls + 3` (those after the seed's own), times `_MIX_MULT_R`."""
        with self._lock:
            hashed = self._hashed.get(calls)
            if hashed is None:
                xor, mult = _hash_constants(_INIT_A, _MULT_A, calls, 4)
                hashed = (self.keys[:, None] ^ xor) * mult
                hashed ^= hashed >> _XSHIFT
                hashed = self._hashed[calls] = np.ascontiguousarray((_MIX_MULT_R * hashed)[:, _CYCLE])
            return hashed


def _seed_pool(seed: int) -> tuple[np.ndarray, int]:
    """The pool `SeedSequence(seed, spawn_key=(key,))` has mixed before it reaches the key, and how many
    hashmix calls that took: the seed's words, padded to the pool size, then any words beyond it. It is
    the pool of `SeedSequence(seed)`, whose words are the same up to that padding with zeros."""
    words = max(1, (operator.index(seed).bit_length() + 31) // 32)
    return np.random.SeedSequence(seed).pool, 4 + 12 + 4 * max(0, words - 4)


def _stream_words(pool: np.ndarray, hashed_keys: np.ndarray) -> np.ndarray:
    """Per key (row), the words `SeedSequence(seed, spawn_key=(key,)).generate_state(4, np.uint64)`
    returns, which PCG64 seeds itself with: SeedSequence's mixing of each key into the seed's pool
    and its generate_state, for all keys at once, on uint32 arrays (which wrap like its uint32_t)."""
    state = (pool * _MIX_MULT_L)[_CYCLE] - hashed_keys
    state ^= state >> _XSHIFT
    state ^= _STATE_XOR
    state *= _STATE_MULT
    state ^= state >> _XSHIFT
    return state.astype("<u4", copy=False).view("<u8").astype(np.uint64, copy=False)


class _StreamSeed(tuple, ISeedSequence):
    """A seed sequence that hands PCG64 the state words `_stream_words` computed for it: PCG64 asks its
    seed sequence for exactly `generate_state(4, np.uint64)`. A one-item tuple of the words, as a
    tuple is built in C (every random kind of every run builds one)."""

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        if n_words != 4 or dtype is not np.uint64:
            raise ValueError("a stream seed only seeds PCG64")
        return self[0]


class Clocks(dict[str, Callable[[], float]]):
    """Per-kind delay streams for one run. `delay(kind)` is the next firing delay for that kind.

    A kind's stream is `Generator(PCG64(SeedSequence(seed, spawn_key=(kind_key(kind),))))`, created
    when the kind first needs a random delay. Built that way it costs more than the few delays a short
    run takes from it, so the seeds of all the profile's random kinds are derived together from the
    seed's pool (the same words, see `_stream_words`), and the delays are drawn in blocks that double.

    For a hot loop, the clocks are also a mapping from each kind to a callable that returns its next
    delay, or raises IndexError when its block is used up (then `refill(kind)`): a bound `list.pop` for a
    uniform, `repeat.__next__` for a constant, so that such a delay costs one dict lookup and one C
    call, and `Delay.reader` over a bound `list.pop` for the others. A kind is
    set up when first looked up. (The mapping is the object itself, not an attribute that points back
    to it: such a cycle would leave every run's clocks to the garbage collector.)"""

    __slots__ = ("_streams", "_words", "profile", "seed")

    def __init__(self, profile: TimingProfile, seed: int) -> None:
        self.profile = profile
        self.seed = seed
        self._streams: dict[str, list[Any]] = {}  # per kind: its generator, delay and next block size
        self._words: list[np.ndarray] = []  # `_stream_words` for the profile's random kinds, one per row

    def delay(self, kind: str) -> float:
        try:
            return self[kind]()
        except IndexError:
            return self.refill(kind)

    def __missing__(self, kind: str) -> Callable[[], float]:
        """Set up `kind`'s draws on its first use in this run."""
        table = self.profile.kind_table
        delay, row = table.kinds.get(kind) or table.resolve(kind, self.profile)
        if row < 0:
            draw = self[kind] = repeat(delay.params[0] if delay.params else 0.0).__next__
            return draw
        words = self._words
        if row >= len(words):  # the run's first random kind, or one new to the profile
            pool, calls = _seed_pool(self.seed)
            words = self._words = list(_stream_words(pool, table.hashed_keys(calls)))
        stream = self._streams[kind] = [_Generator(_PCG64(_StreamSeed((words[row],)))), delay, FIRST_BLOCK]
        return self._next_block(kind, stream)

    def refill(self, kind: str) -> float:
        """The next delay of a kind whose block is used up."""
        return self._next_block(kind, self._streams[kind])()

    def _next_block(self, kind: str, stream: list[Any]) -> Callable[[], float]:
        generator, delay, size = stream
        block = delay.draw(generator, size)
        block.reverse()
        stream[2] = size * 2 if size < MAX_BLOCK else size
        draw = self[kind] = delay.reader(block.pop)
        return draw
