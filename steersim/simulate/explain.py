"""What to say when no simulated run showed a violation: the explorer's answer beside the upper bound.

An estimate from zero observed violations is only a bound ("< 0.03% at 95%"). The explorer can say
more: either no interleaving violates the property at all (the probability is 0 under every timing), or
one does, and its counterexample, given times drawn from the timing profile (`steersim.simulate.retime`), shows how
the rare run goes. Only safety is judged, as in a simulation (liveness needs `steersim check`).
"""

from __future__ import annotations

from pathlib import Path

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.core.registry import get_model_spec
from steersim.simulate.retime import retime_path
from steersim.simulate.study import Setting
from steersim.simulate.timing import TimingProfile
from steersim.traces.trace import trace_from_path, write_trace

EXPLAIN_STATES = 1_000_000  # distinct states the explorer looks at, at most, for an explanation


def explain_no_violation(where: Setting, prop: str | None, out: Path, max_states: int = EXPLAIN_STATES) -> str:
    """One line: the explorer's verdict on `prop` (or on every safety property), and where the timed
    counterexample was written when there is one."""
    model = get_model_spec(where.model).build(where.params, where.bug)
    result = check(model, CheckOptions(max_states=max_states, liveness=False, keep_going=prop is not None))
    judged = [p for p in result.properties if p.kind == "always" and (prop is None or p.name == prop)]
    broken = next((p for p in judged if p.status == "violated" and p.counterexample is not None), None)
    if broken is not None:
        path = broken.counterexample
        profile = TimingProfile.from_mapping(where.timing)
        times = retime_path(model, path, profile, seed=0)
        trace = trace_from_path(where.model, where.params, where.bug, path, times, 0, profile.to_mapping())
        out.mkdir(parents=True, exist_ok=True)
        file = out / f"{model.name}{'-' + where.bug if where.bug else ''}-{broken.name}-explained.jsonl"
        write_trace(file, trace)
        return (f"explained: no run showed it, but the explorer finds {broken.name} violated in "
                f"{len(path.steps)} steps; trace with times drawn from the profile: {file}")
    if result.status == "incomplete":
        return (f"explained: the explorer found no violation in {result.states:,} states before its limit, "
                "so a rare one is not ruled out")
    what = f"property {prop}" if prop else "any safety property"
    return (f"explained: the explorer finds no interleaving that violates {what} ({result.states:,} states): "
            "the probability is 0 under every timing")
