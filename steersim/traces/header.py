"""The model a trace's header names, built as the header says, or one line naming the header field that
cannot be honoured.

A trace is drawn and replayed against the model it names: which event carried which fact, the state
panel and the re-timing of an untimed trace all come from it. A header naming a model that is not
installed, a parameter the model lacks or a bug variant it does not have would otherwise be drawn
without its model, as if nothing were wrong, so commands that read a trace from the user ask here.
"""

from __future__ import annotations

from typing import Any

from steersim.core.registry import get_model_spec
from steersim.errors import UsageError


def header_model(trace: Any, source: str) -> Any:
    """The model of `trace` (read from the file `source`) at its header's parameters and bug variant."""
    where = f"trace {source!r} line 1 field"
    try:
        spec = get_model_spec(trace.model)
    except UsageError as bad:
        raise UsageError(f"{where} model: {bad}; run steersim where that model is installed, or set the "
                         "header's model to one of `steersim models` or path/to/file.py:SPEC") from None
    if trace.bug is not None and trace.bug not in spec.bugs:
        known = ", ".join(spec.bugs) or "none"
        raise UsageError(f"{where} bug: model {spec.name!r} has no bug variant {trace.bug!r} (its variants: "
                         f"{known}); was the trace written by another version of the model?")
    try:
        return spec.build(trace.params, trace.bug)
    except UsageError as bad:
        raise UsageError(f"{where} params: {bad}; was the trace written by another version of the model?") from None
