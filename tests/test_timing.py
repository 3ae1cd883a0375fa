"""Clocks: the fast derivation of each kind's stream gives exactly the numbers of the plain one,
`Generator(PCG64(SeedSequence(seed, spawn_key=(kind_key(kind),))))` drawn with the documented formulas,
each operation rounded correctly."""

from __future__ import annotations

import gc

import gmpy2
import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steersim.simulate.timing import (
    FIRST_BLOCK,
    Clocks,
    Delay,
    TimingProfile,
    _seed_pool,
    _stream_words,
    _StreamSeed,
    kind_key,
)

PROFILE = TimingProfile.from_mapping({
    "default": {"dist": "exponential", "mean": 0.2},
    "ln.*": {"dist": "lognormal", "median": 3.0, "sigma": 0.5},
    "ln.flat": {"dist": "lognormal", "median": 1.5, "sigma": 0.0},
    "un.*": {"dist": "uniform", "low": 0.25, "high": 4.0},
    "ex.slow": {"dist": "exponential", "mean": 1e6},
    "co.*": {"dist": "constant", "value": 2.5},
    "im.*": {"dist": "immediate"},
})
KINDS = ["user.steer", "tool.finish", "ln.x", "ln.flat", "un.y", "ex.slow", "co.z", "im.w"]
SEEDS = st.one_of(st.integers(0, 2**32 - 1), st.integers(0, 50), st.integers(2**32, 2**300))


def documented(delay: Delay, uniforms: list[float]) -> list[float]:
    """The documented formulas over a stream's uniforms, in gmpy2's binary64 context."""
    p = delay.params
    with gmpy2.context(gmpy2.ieee(64)):
        if delay.dist == "exponential":
            return [p[0] * -float(gmpy2.log(1 - gmpy2.mpfr(u))) for u in uniforms]
        if delay.dist == "lognormal":
            two_pi = 2 * gmpy2.const_pi()
            return [p[0] * float(gmpy2.exp(p[1] * (gmpy2.sqrt(-2 * gmpy2.log(1 - gmpy2.mpfr(u)))
                                                   * gmpy2.cos(two_pi * v))))
                    for u, v in zip(uniforms[0::2], uniforms[1::2], strict=True)]
    return [p[0] + (p[1] - p[0]) * u for u in uniforms]


def plain_stream(seed: int, kind: str, count: int) -> list[float]:
    """What the documented semantics give, built the plain (slow) way."""
    delay = PROFILE.delay_for(kind)
    p = delay.params
    if delay.dist in ("immediate", "constant"):
        return [p[0] if p else 0.0] * count
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(kind_key(kind),))))
    return documented(delay, rng.random(2 * count if delay.dist == "lognormal" else count).tolist())


@settings(max_examples=300, deadline=None)
@given(SEEDS, st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=12))
def test_stream_words_are_seed_sequence_state(seed: int, keys: list[int]) -> None:
    table = TimingProfile.from_mapping({}).kind_table
    table.keys = np.array(keys, np.uint32)
    pool, calls = _seed_pool(seed)
    words = _stream_words(pool, table.hashed_keys(calls))
    for key, row in zip(keys, words, strict=True):
        expected = np.random.SeedSequence(seed, spawn_key=(key,)).generate_state(4, np.uint64)
        assert row.tolist() == expected.tolist()
        assert np.random.PCG64(_StreamSeed((row,))).state == np.random.PCG64(
            np.random.SeedSequence(seed, spawn_key=(key,))).state


@settings(max_examples=150, deadline=None)
@given(SEEDS, st.lists(st.sampled_from([*KINDS, "new.kind", "ln.new", "co.new"]), max_size=400))
def test_clocks_draw_the_plain_streams_whatever_the_order(seed: int, order: list[str]) -> None:
    clocks = Clocks(PROFILE, seed)
    drawn: dict[str, list[float]] = {}
    for kind in order:
        drawn.setdefault(kind, []).append(clocks.delay(kind))
    for kind, values in drawn.items():
        assert values == plain_stream(seed, kind, len(values)), kind


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 - 1, 2**64 + 3, 2**130])
def test_the_hot_path_and_delay_agree_across_blocks(seed: int) -> None:
    """`clocks[kind]()` with `refill` on IndexError, as the simulator calls it, past several blocks."""
    clocks = Clocks(PROFILE, seed)
    count = FIRST_BLOCK * 7 + 5
    for kind in KINDS:
        values = []
        for _ in range(count):
            try:
                values.append(clocks[kind]())
            except IndexError:
                values.append(clocks.refill(kind))
        assert values == plain_stream(seed, kind, count), kind


@pytest.mark.parametrize("delay", [
    Delay("exponential", (0.2,)), Delay("exponential", (1e-300,)), Delay("exponential", (3e300,)),
    Delay("lognormal", (3.0, 0.5)), Delay("lognormal", (1.0, 0.0)), Delay("lognormal", (1e-5, 30.0)),
    Delay("uniform", (0.0, 0.0)), Delay("uniform", (0.5, 7.25)),
])
def test_draw_and_reader_give_the_documented_formula(delay: Delay) -> None:
    for seed in range(20):
        fast, plain = (np.random.Generator(np.random.PCG64(seed)) for _ in range(2))
        block = delay.draw(fast, 500)
        block.reverse()
        read = delay.reader(block.pop)
        got = [read() for _ in range(500)]
        with pytest.raises(IndexError):
            read()
        assert got == documented(delay, plain.random(1000 if delay.dist == "lognormal" else 500).tolist())


def test_exponential_delays_are_correctly_rounded() -> None:
    """Against mpmath at 200 bits. glibc's log1p, one ulp off in about one of these cases in fifteen (and
    in which ones depends on the CPU), would fail here."""
    rng = np.random.Generator(np.random.PCG64(3))
    uniforms = rng.random(20_000).tolist()
    block = Delay("exponential", (1.0,)).draw(np.random.Generator(np.random.PCG64(3)), 20_000)
    block.reverse()
    read = Delay("exponential", (1.0,)).reader(block.pop)
    with mpmath.workprec(200):
        assert [read() for _ in uniforms] == [float(-mpmath.log1p(-mpmath.mpf(u))) for u in uniforms]


def test_a_stream_seed_only_seeds_pcg64() -> None:
    seed = _StreamSeed((np.zeros(4, np.uint64),))
    with pytest.raises(ValueError):
        seed.generate_state(8, np.uint32)


def test_clocks_are_freed_without_the_garbage_collector() -> None:
    """A reference cycle would leave every run's clocks, with their generators, to the collector."""
    profile = TimingProfile.from_mapping(PROFILE.to_mapping())  # marks this test's clocks
    gc.disable()
    try:
        clocks = Clocks(profile, 7)
        for kind in KINDS:
            clocks.delay(kind)
        del clocks
        assert not any(isinstance(o, Clocks) and o.profile is profile for o in gc.get_objects())
    finally:
        gc.enable()
