"""steersim's engine: the Model API, the fact monitors, the explorer and the simulator.

The engine knows nothing of any protocol; models live in the `models` package and register through
the `steersim.models` entry point group.
"""

from sim.explorer import CheckOptions, CheckResult, check
from sim.facts import Fact
from sim.model import Action, Always, Event, Eventually, Model, Property, Sometimes
from sim.monitors import CORE_PROPERTY_NAMES
from sim.product import Product
from sim.registry import ModelSpec, Param

__all__ = [
    "CORE_PROPERTY_NAMES",
    "Action",
    "Always",
    "CheckOptions",
    "CheckResult",
    "Event",
    "Eventually",
    "Fact",
    "Model",
    "ModelSpec",
    "Param",
    "Product",
    "Property",
    "Sometimes",
    "check",
]
