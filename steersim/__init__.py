"""steersim's engine: the Model API, the fact monitors, the explorer and the simulator.

The engine knows nothing of any protocol; models live in `steersim.models` and register through
the `steersim.models` entry point group, or are named by reference (`path/to/file.py:SPEC`). A model
of one's own subclasses `ModelBase` and is described by a `ModelSpec` with `Param`s and `Bug`s.
Names are imported on first use, so that importing `steersim` (which the pytest plugin does in every test
session) costs nothing until they are needed.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Action": "steersim.core.model",
    "Always": "steersim.core.model",
    "Event": "steersim.core.model",
    "Eventually": "steersim.core.model",
    "Model": "steersim.core.model",
    "ModelBase": "steersim.core.model",
    "ModelError": "steersim.errors",
    "Property": "steersim.core.model",
    "Sometimes": "steersim.core.model",
    "Fact": "steersim.core.facts",
    "CORE_PROPERTY_NAMES": "steersim.core.monitors",
    "Product": "steersim.core.product",
    "Bug": "steersim.core.registry",
    "ModelSpec": "steersim.core.registry",
    "Param": "steersim.core.registry",
    "Reading": "steersim.core.registry",
    "CheckOptions": "steersim.checking.explorer",
    "CheckResult": "steersim.checking.explorer",
    "check": "steersim.checking.engines",
    # finding a model by reference, simulating it, estimating probabilities, drawing and reading traces:
    # what a notebook or a user's script needs beside the checker, so that none imports an internal module
    "get_model_spec": "steersim.core.registry",
    "Simulator": "steersim.simulate.simulator",
    # `simulate` is also the name of the subpackage steersim.simulate, which would shadow it once imported
    "simulate_seed": "steersim.simulate.simulator:simulate",
    "run_seeds": "steersim.simulate.sweep",
    "sweep": "steersim.simulate.executors",
    "TimingProfile": "steersim.simulate.timing",
    "Delay": "steersim.simulate.timing",
    "Plan": "steersim.simulate.estimate",
    "parse_query": "steersim.simulate.queries",
    "setting": "steersim.simulate.study",
    "parse_axis": "steersim.simulate.study",
    "estimate_grid": "steersim.simulate.study",
    "GridResult": "steersim.simulate.study",
    "diagram_svg": "steersim.draw.diagram",
    "read_trace": "steersim.traces.trace",
    "shortest_run_with": "steersim.traces.canonical",
    "validate_log": "steersim.harness.logcheck",
    "LogVerdict": "steersim.harness.logcheck",
    "Browser": "steersim.integrations.browse_page",
    "serve_in_background": "steersim.integrations.browse_page",
}
# modules of the public vocabulary: `from steersim import facts as F` gives the fact constructors a model emits
_MODULES = {"facts": "steersim.core.facts"}

__all__ = sorted([*_EXPORTS, *_MODULES])


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value = import_module(_MODULES[name])
    elif name in _EXPORTS:
        module, _, attribute = _EXPORTS[name].partition(":")
        value = getattr(import_module(module), attribute or name)
    else:
        raise AttributeError(f"module 'steersim' has no attribute {name!r}")
    globals()[name] = value
    return value
