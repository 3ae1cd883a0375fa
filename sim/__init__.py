"""steersim's engine: the Model API, the fact monitors, the explorer and the simulator.

The engine knows nothing of any protocol; models live in the `models` package and register through
the `steersim.models` entry point group, or are named by reference (`path/to/file.py:SPEC`). A model
of one's own subclasses `ModelBase` and is described by a `ModelSpec` with `Param`s and `Bug`s.
Names are imported on first use, so that importing `sim` (which the pytest plugin does in every test
session) costs nothing until they are needed.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Action": "sim.model",
    "Always": "sim.model",
    "Event": "sim.model",
    "Eventually": "sim.model",
    "Model": "sim.model",
    "ModelBase": "sim.model",
    "ModelError": "sim.errors",
    "Property": "sim.model",
    "Sometimes": "sim.model",
    "Fact": "sim.facts",
    "CORE_PROPERTY_NAMES": "sim.monitors",
    "Product": "sim.product",
    "Bug": "sim.registry",
    "ModelSpec": "sim.registry",
    "Param": "sim.registry",
    "CheckOptions": "sim.explorer",
    "CheckResult": "sim.explorer",
    "check": "sim.engines",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'sim' has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
