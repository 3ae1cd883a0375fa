"""Which engine runs a check: the generic explorer, the vector engine or the partitioned search.

The choice lives here, above every engine, because the vector and partitioned engines are built on the
explorer (both extend `Explorer`): the explorer cannot pick its own subclass without the modules
importing each other. Every caller (the command line, `steersim.check`, ci) comes through `check`, and an
option an engine cannot honour is refused here, in one line, rather than ignored.
"""

from __future__ import annotations

from steersim.checking.explorer import CheckOptions, CheckResult, Explorer, explained
from steersim.checking.vector import VectorExplorer, vector_unsupported
from steersim.core.model import Model
from steersim.errors import UsageError

ENGINES = ("auto", "generic", "vector")


def check(model: Model, options: CheckOptions | None = None, *, workers: int = 1,
          dask: str | None = None) -> CheckResult:
    """Explore `model` exhaustively (within the options' limits) and judge every property. Every engine
    gives the same report but for seconds: the vector engine is the fast one for models that ship a
    vector kernel; with `workers` > 1, or `dask` (a scheduler's address, or "local"), the search is
    partitioned among that many processes or that cluster's workers
    (`steersim.checking.parallel`). A Dask check builds the model on the workers from `options.identity`."""
    options = options or CheckOptions()
    refused = refusal(options, workers, dask)
    if refused is not None:
        raise UsageError(refused)
    if workers > 1 or dask is not None:
        from steersim.checking.parallel import PartitionedExplorer

        return explained(model, PartitionedExplorer(model, options, workers, dask).run_interruptible())
    if options.engine != "generic":
        reason = vector_unsupported(model, options)
        if reason is None:
            return explained(model, VectorExplorer(model, options).run_interruptible())
        if options.engine == "vector":
            raise UsageError(f"engine vector cannot run this check: {reason}")
    return explained(model, Explorer(model, options).run_interruptible())


# What the partitioned search cannot honour, as the command line spells it, and why.
PARTITIONED_REFUSALS = (
    ("--strategy dfs", lambda o: o.strategy != "bfs", "it searches breadth-first, a level at a time"),
    ("--por", lambda o: o.por, "which state an ample set may skip depends on the order states are visited"),
    ("--checkpoint", lambda o: o.checkpoint is not None, "a checkpoint is written and resumed by one process"),
    ("--engine vector", lambda o: o.engine == "vector", "its workers step the model with the generic engine"),
)


def refusal(options: CheckOptions, workers: int = 1, dask: str | None = None) -> str | None:
    """The one line refusing what these options ask of the engine they select (None: nothing is
    refused). The command line asks before it builds the model, so that nothing has started."""
    if options.engine not in ENGINES:
        return f"unknown engine {options.engine!r}; use one of {', '.join(ENGINES)}"
    if workers < 1:
        return f"--workers takes a whole number >= 1, not {workers}"
    if workers == 1 and dask is None:
        return None
    chosen = f"--dask {dask}" if dask is not None else f"--workers {workers}"
    for name, asked, why in PARTITIONED_REFUSALS:
        if asked(options):
            return (f"{name} cannot be used with {chosen}: a parallel check cannot honour it ({why}); "
                    "drop one of the two")
    return None
