"""Which engine runs a check: the generic explorer or the vector engine.

The choice lives here, above both engines, because the vector engine is built on the explorer
(`VectorExplorer` extends `Explorer`): the explorer cannot pick its own subclass without the two
modules importing each other.
"""

from __future__ import annotations

from sim.checking.explorer import CheckOptions, CheckResult, Explorer, explained
from sim.checking.vector import VectorExplorer, vector_unsupported
from sim.core.model import Model
from sim.errors import UsageError

ENGINES = ("auto", "generic", "vector")


def check(model: Model, options: CheckOptions | None = None) -> CheckResult:
    """Explore `model` exhaustively (within the options' limits) and judge every property. Both engines
    give the same report; the vector engine is the fast one, for models that ship a vector kernel."""
    options = options or CheckOptions()
    if options.engine not in ENGINES:
        raise UsageError(f"unknown engine {options.engine!r}; use one of {', '.join(ENGINES)}")
    if options.engine != "generic":
        reason = vector_unsupported(model, options)
        if reason is None:
            return explained(model, VectorExplorer(model, options).run_interruptible())
        if options.engine == "vector":
            raise UsageError(f"engine vector cannot run this check: {reason}")
    return explained(model, Explorer(model, options).run_interruptible())
