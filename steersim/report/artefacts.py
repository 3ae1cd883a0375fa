"""Counterexamples and witnesses of a check as files: a trace and a diagram each, and back.

A verdict is read in a design review, not in Python: `check --traces DIR` writes every counterexample
and every `sometimes` witness as a trace (replayable, `steersim replay`) and an SVG, and `diagram`
draws a counterexample straight from a `check --json` report by re-executing its actions against the
model the report names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from steersim.checking.explorer import CheckResult
from steersim.core.model import Model
from steersim.core.paths import Path as ExplorerPath
from steersim.core.paths import action_from_json
from steersim.core.product import Product, Violation
from steersim.errors import UsageError
from steersim.simulate.retime import retime_path
from steersim.simulate.timing import TimingProfile
from steersim.traces.trace import Trace, trace_from_path, write_trace

DRAWN = {"violated": "counterexample", "reached": "witness"}


def timed_path_trace(model: Model, reference: str, params: Mapping[str, Any], bug: str | None,
                     path: ExplorerPath, seed: int = 0) -> Trace:
    """An explorer path as a trace timed from the model's own profile, its header naming the model by
    `reference` (what the command was given), so that `replay` and `diagram` rebuild it."""
    profile = TimingProfile.for_model(model)
    times = retime_path(model, path, profile, seed)
    return trace_from_path(reference, params, bug, path, times, seed, profile.to_mapping(), system=model)


def write_check_traces(result: CheckResult, model: Model, reference: str, params: Mapping[str, Any],
                       bug: str | None, folder: str | Path, seed: int = 0) -> list[Path]:
    """Write `<counterexample|witness>-<property>.jsonl` and `.svg` for every violated property with a
    counterexample and every reached `sometimes`; return the trace files in property order."""
    from steersim.draw.diagram import save_diagram

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for prop in result.properties:
        what = DRAWN.get(prop.status)
        if what is None or prop.counterexample is None:
            continue
        trace = timed_path_trace(model, reference, params, bug, prop.counterexample, seed)
        stem = f"{what}-{re.sub(r'[^A-Za-z0-9._-]', '_', prop.name)}"  # names may hold dots: append suffixes
        write_trace(out / f"{stem}.jsonl", trace)
        save_diagram(prop.counterexample, out / f"{stem}.svg", model=model, params=params, bug=bug, seed=seed)
        written.append(out / f"{stem}.jsonl")
    return written


def is_check_report(text: str | Any) -> bool:
    """Whether `text` (or the JSON it was parsed to) is a `check --json` report rather than a trace
    (whose first line is a header)."""
    try:
        data = json.loads(text) if isinstance(text, str) else text
    except (ValueError, RecursionError):  # not JSON, an integer of too many digits, nesting too deep
        return False
    return isinstance(data, dict) and "properties" in data and "model" in data and "steersim" not in data


def report_path(report: Mapping[str, Any], name: str | None, source: str) -> tuple[Model, ExplorerPath]:
    """The model a check report names, and the path of its counterexample for property `name` (by
    default the first violated property that has one), re-executed against that model."""
    from steersim.core.registry import get_model_spec

    candidates = [p for p in report.get("properties", []) if isinstance(p, dict) and p.get("counterexample")]
    if name is not None:
        chosen = next((p for p in candidates if p.get("name") == name), None)
        if chosen is None:
            have = ", ".join(str(p.get("name")) for p in candidates) or "none"
            raise UsageError(f"report {source!r} has no counterexample for {name!r}; it has: {have}")
    else:
        chosen = next((p for p in candidates if p.get("status") == "violated"), candidates[0] if candidates else None)
        if chosen is None:
            raise UsageError(f"report {source!r} has no counterexample to draw (every property held)")
    params, bug = report.get("params") or {}, report.get("bug")
    reference = report.get("reference")  # reports written before it was recorded have the model's name only
    try:
        model = get_model_spec(str(reference or report["model"])).build(params, bug)
    except UsageError as bad:
        older = "" if reference else (" (the report, of an earlier steersim, records the model's name, not how "
                                      "the check named it: run `steersim check --json` again to refresh it)")
        raise UsageError(f"report {source!r} names a model that cannot be built here: {bad}{older}") from None
    body = chosen["counterexample"]
    product = Product(model)
    init = body.get("init", 0)
    inits = product.init_states()
    if not isinstance(init, int) or not 0 <= init < len(inits):
        raise UsageError(f"report {source!r}: initial state {init!r} does not exist (the model has {len(inits)})")
    state = inits[init]
    states, steps = [state], []
    for number, step in enumerate(body.get("steps", [])):
        action = action_from_json(step, product.actions(state)) if isinstance(step, dict) else None
        transition = None if action is None else product.step(state, action)
        if transition is None:
            raise UsageError(f"report {source!r}: step {number} of {chosen['name']!r} ({step.get('action', step)!r}) "
                             "is not enabled in the current model; re-run `steersim check` to refresh the report")
        steps.append(transition)
        state = transition.target
        states.append(state)
    broken = body.get("violation")
    violation = Violation(broken["property"], broken["message"]) if isinstance(broken, dict) else None
    path = ExplorerPath(states[0], tuple(steps), init, body.get("loop_start"), violation, tuple(states))
    return model, path
