"""The readings a default check explores after the defaults.

A model's defaults are one configuration, and one configuration runs only the code of its own reading:
a model of a system with four queue modes runs one of them. The spec's `readings` name the documented
alternatives, each a few parameters away from the defaults, so that `steersim check MODEL` judges the
rest of the model's code too. Each reading is checked alone, with the options of the default check,
as `steersim check MODEL -p ...` would check it; the reports stay apart, because a counterexample is a
path of one configuration's graph.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions, CheckResult
from steersim.core.model import Model
from steersim.core.registry import ModelSpec, Reading
from steersim.errors import EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION

# How bad an exit code is: a run's code is the worst of its configurations'.
_SEVERITY = (EXIT_OK, EXIT_INCOMPLETE, EXIT_VIOLATION, EXIT_INTERRUPTED)


@dataclass(frozen=True)
class ReadingCheck:
    """One reading's check: the reading, the parameters it resolved to, the model built from them (which
    a counterexample is replayed on) and the result."""

    reading: Reading
    params: dict[str, Any]
    model: Model
    result: CheckResult


def check_readings(spec: ModelSpec, reference: str, options: CheckOptions, *, workers: int = 1,
                   dask: str | None = None) -> Iterator[ReadingCheck]:
    """Check each of the spec's readings in turn, as the default check ran the defaults. A run stopped
    by Ctrl-C ends the sequence: the readings after it are not started."""
    for reading in spec.readings:
        checked = check_reading(spec, reference, reading, options, workers=workers, dask=dask)
        yield checked
        if checked.result.exit_code == EXIT_INTERRUPTED:
            return


def check_reading(spec: ModelSpec, reference: str, reading: Reading, options: CheckOptions, *, workers: int = 1,
                  dask: str | None = None) -> ReadingCheck:
    """Check one reading, as `steersim check MODEL -p ...` checks it: the parameters resolved over the
    defaults, and the model built from them (on a Dask cluster's workers too, from the identity)."""
    params = spec.resolve(reading.params)
    model = spec.build_resolved(params)
    identity = {"model": reference, "params": params, "bug": None}
    result = check(model, dataclasses.replace(options, identity=identity), workers=workers, dask=dask)
    return ReadingCheck(reading, params, model, result)


def worst_exit_code(codes: list[int]) -> int:
    """The exit code of a check of several configurations: the worst one's."""
    return max(codes, key=_SEVERITY.index)
