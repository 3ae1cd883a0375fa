"""Virtual times for untimed runs, so that a counterexample can be drawn on a time axis.

The explorer's counterexamples have no times: it enumerates interleavings, not durations. To draw one,
its actions are replayed through the simulator's clocks (`steersim.simulate.timing.Clocks`) with the simulator's
generalised semi-Markov rule: an action that becomes enabled gets a clock at its enablement time plus a
delay drawn for its kind, a still-enabled action keeps its clock, a disabled one loses it. The path, not
the clocks, decides which action fires; when the forced action is not the earliest, time simply moves
to the later of its clock and the current time. A path the simulator would itself have taken with the
same seed therefore gets exactly the simulator's times.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from steersim.core.model import Action, Model
from steersim.core.paths import Path, action_from_json
from steersim.core.product import Product
from steersim.core.registry import get_model_spec
from steersim.simulate.timing import Clocks, TimingProfile
from steersim.traces.trace import Trace


def retime_actions(model: Model, actions: Iterable[Action], init_index: int = 0,
                   timing: TimingProfile | None = None, seed: int = 0) -> list[float]:
    """The virtual time at which each of `actions`, taken in order from initial state `init_index`,
    fires under `timing` (default: the model's own profile) and `seed`."""
    product = Product(model)
    profile = TimingProfile.for_model(model, timing)
    clocks = Clocks(profile, seed)
    state = product.init_states()[init_index]
    pending: dict[Action, float] = {}
    now = 0.0
    times = []
    for number, action in enumerate(actions):
        enabled: dict[Action, float] = {}
        for offered in product.actions(state):
            known = pending.get(offered)
            enabled[offered] = now + clocks.delay(offered.kind) if known is None else known
        if action not in enabled:
            raise ValueError(f"step {number}: {action.label()} is not enabled, so the path cannot be timed")
        transition = product.step(state, action)
        if transition is None:
            raise ValueError(f"step {number}: {action.label()} is a no-op, so the path cannot be timed")
        now = max(now, enabled.pop(action))
        pending = enabled
        state = transition.target
        times.append(now)
    return times


def retime_path(model: Model, path: Path, timing: TimingProfile | None = None, seed: int = 0) -> list[float]:
    """Times for an explorer path (a counterexample or a witness)."""
    return retime_actions(model, path.actions, path.init_index, timing, seed)


def retime_trace(trace: Trace, timing: TimingProfile | None = None, seed: int = 0) -> Trace:
    """A copy of `trace` whose steps carry times. A trace that is already timed is returned as it is; an
    untimed one is re-executed against the model it names (a step the model no longer offers raises
    ValueError: run `steersim replay` to see where it differs)."""
    if trace.steps and all(step.t is not None for step in trace.steps):
        return trace
    model = get_model_spec(trace.model).build(trace.params, trace.bug)
    product = Product(model)
    inits = product.init_states()
    if not 0 <= trace.init < len(inits):
        raise ValueError(f"the trace starts in initial state {trace.init}, which model {trace.model!r} does not have")
    state = inits[trace.init]
    actions = []
    for step in trace.steps:
        action = action_from_json(step.action, product.actions(state))
        transition = None if action is None else product.step(state, action)
        if action is None or transition is None:
            raise ValueError(f"step {step.i} of the trace is not an action of model {trace.model!r} now; "
                             "run `steersim replay` on it to see where it differs")
        actions.append(action)
        state = transition.target
    if timing is None and trace.timing is not None:
        timing = TimingProfile.from_mapping(trace.timing)
    profile = TimingProfile.for_model(model, timing)
    times = retime_actions(model, actions, trace.init, profile, seed)
    steps = [dataclasses.replace(s, t=t) for s, t in zip(trace.steps, times, strict=True)]
    return dataclasses.replace(trace, seed=seed if trace.seed is None else trace.seed,
                               timing=profile.to_mapping(), steps=steps)
