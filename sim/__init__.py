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
    "Action": "sim.core.model",
    "Always": "sim.core.model",
    "Event": "sim.core.model",
    "Eventually": "sim.core.model",
    "Model": "sim.core.model",
    "ModelBase": "sim.core.model",
    "ModelError": "sim.errors",
    "Property": "sim.core.model",
    "Sometimes": "sim.core.model",
    "Fact": "sim.core.facts",
    "CORE_PROPERTY_NAMES": "sim.core.monitors",
    "Product": "sim.core.product",
    "Bug": "sim.core.registry",
    "ModelSpec": "sim.core.registry",
    "Param": "sim.core.registry",
    "CheckOptions": "sim.checking.explorer",
    "CheckResult": "sim.checking.explorer",
    "check": "sim.checking.engines",
}
# modules of the public vocabulary: `from sim import facts as F` gives the fact constructors a model emits
_MODULES = {"facts": "sim.core.facts"}

__all__ = sorted([*_EXPORTS, *_MODULES])


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value = import_module(_MODULES[name])
    elif name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'sim' has no attribute {name!r}")
    globals()[name] = value
    return value
