"""The import name of steersim before 0.2, kept for one release: `import sim` and `from sim.X import Y`
still work and warn, so that model files and CI jobs written against 0.1 load while they are moved to
`steersim` (the CHANGELOG lists what moved). Every `sim.X` module is the `steersim.X` module itself, not a
copy, so a class is the same class under both names."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

import steersim

# Old module paths whose module moved inside steersim, beyond the rename itself: 0.1's flat `sim/` was
# arranged in subpackages by role (core, checking, simulate, traces, harness, draw, report, integrations).
MOVED = {
    "sim.audit": "steersim.simulate.audit",
    "sim.canonical": "steersim.traces.canonical",
    "sim.checkpoint": "steersim.checking.checkpoint",
    "sim.ci": "steersim.integrations.ci",
    "sim.diagram": "steersim.draw.diagram",
    "sim.engines": "steersim.checking.engines",
    "sim.executors": "steersim.simulate.executors",
    "sim.explorer": "steersim.checking.explorer",
    "sim.facts": "steersim.core.facts",
    "sim.fingerprint": "steersim.core.fingerprint",
    "sim.graph": "steersim.checking.graph",
    "sim.graphview": "steersim.draw.graphview",
    "sim.htmlreport": "steersim.report.html",
    "sim.liveness": "steersim.checking.liveness",
    "sim.memory": "steersim.checking.memory",
    "sim.model": "steersim.core.model",
    "sim.monitors": "steersim.core.monitors",
    "sim.parallel": "steersim.checking.parallel",
    "sim.paths": "steersim.core.paths",
    "sim.product": "steersim.core.product",
    "sim.pytest_plugin": "steersim.integrations.pytest_plugin",
    "sim.reduction": "steersim.checking.reduction",
    "sim.registry": "steersim.core.registry",
    "sim.reports": "steersim.report.formats",
    "sim.retime": "steersim.simulate.retime",
    "sim.shrink": "steersim.simulate.shrink",
    "sim.simulator": "steersim.simulate.simulator",
    "sim.strategies": "steersim.integrations.strategies",
    "sim.sweep": "steersim.simulate.sweep",
    "sim.timing": "steersim.simulate.timing",
    "sim.trace": "steersim.traces.trace",
    "sim.validate": "steersim.harness.validate",
    "sim.vector": "steersim.checking.vector",
    "sim.visited": "steersim.checking.visited",
    "sim.vloop": "steersim.harness.vloop",
}


def _new_name(old: str) -> str:
    return MOVED.get(old, "steersim" + old[len("sim"):])


def _warn(old: str, stacklevel: int) -> None:
    warnings.warn(f"`{old}` is deprecated and goes in steersim 0.3: import `{_new_name(old)}` instead",
                  DeprecationWarning, stacklevel=stacklevel)


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `sim.X` as the already importable `steersim.X` (or its new home, MOVED)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("sim."):
            return None
        if importlib.util.find_spec(_new_name(fullname)) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(spec.name, stacklevel=8)
        return importlib.import_module(_new_name(spec.name))

    def exec_module(self, module: ModuleType) -> None:
        """The module is steersim's own, already executed."""


if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
    sys.meta_path.insert(0, _Alias())
_warn("sim", stacklevel=2)


def __getattr__(name: str) -> Any:
    return getattr(steersim, name)
