"""Virtual latency of the package's I/O: how long each call to the task store takes.

The package awaits its task store on every step of a turn (read the record, write the turn end, drain
the queue, append a steer). In-process the local file store answers without suspending, so only a
store that is made to wait shows the interleavings a hosted deployment sees, where each call is an
HTTP round trip. A latency profile is a timing profile (`steersim.simulate.timing`) over the store's call kinds
(`store.get`, `store.update`, `store.create`, `store.delete`, `store.list`); each run draws its delays
from streams seeded by the run's seed and the process lifetime, so a run with its seed and schedule is
reproducible. `zero` keeps every call a bare suspension, taking no virtual time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from steersim.errors import UsageError
from steersim.simulate.timing import Clocks, TimingProfile

STORE_CALLS = ("create", "get", "update", "delete", "list")
PROFILES: Mapping[str, Mapping[str, Any]] = {
    "zero": {"default": {"dist": "immediate"}},
    # an in-region HTTP round trip to the hosted task store: 0.2-3 ms per call
    "realistic": {"default": {"dist": "uniform", "low": 0.0002, "high": 0.003}},
}
DEFAULT_PROFILE = "realistic"
LIFETIMES = 1000  # distinct lifetimes of one run that get their own delay streams

StoreDelay = Callable[[str], float]


def latency_profile(name: str) -> TimingProfile:
    """A named profile (`zero`, `realistic`) or a TOML timing file over the store's call kinds."""
    if name in PROFILES:
        return TimingProfile.from_mapping(PROFILES[name])
    if Path(name).suffix == ".toml":
        return TimingProfile.from_file(name)
    raise UsageError(f"--latency takes {', '.join(PROFILES)} or a .toml timing file, not {name!r}")


def store_delay(profile: TimingProfile, seed: int, lifetime: int) -> StoreDelay:
    """The delay of each store call of one lifetime of one run: `delay("get")` and so on."""
    clocks = Clocks(profile, seed * LIFETIMES + lifetime)
    return lambda call: clocks.delay(f"store.{call}")
