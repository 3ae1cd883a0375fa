"""Clicking through a model's state space: the data behind `steersim explore`.

A position is a path from an initial state, written as the positions of the actions taken among those
enabled at each step (`3.0.1`), so that a URL holds it whole and the same path always gives the same
view. A view holds the current state (rendered, `steersim.core.stateview`, and as its change from the state
before), the actions enabled in it, the steps so far with what each changed, every property's status
on this path, and the counterexamples and witnesses the checker found, as paths to jump to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions, CheckResult
from steersim.core.model import Model, as_model_base
from steersim.core.paths import Path, action_index
from steersim.core.product import Product, PState, Transition
from steersim.core.stateview import state_view, view_changes
from steersim.errors import UsageError
from steersim.traces.trace import Trace

JUMP_STATUSES = {"violated": "counterexample", "reached": "witness"}


def parse_path(text: str) -> list[int]:
    """`3.0.1` as [3, 0, 1]; the empty text is the initial state."""
    if not text:
        return []
    try:
        indices = [int(part) for part in text.split(".")]
    except ValueError:
        raise UsageError(f"path {text[:40]!r}: expected action positions separated by dots, e.g. 0.2.1") from None
    if any(k < 0 for k in indices):
        raise UsageError(f"path {text[:40]!r}: action positions are whole numbers >= 0")
    return indices


def path_text(indices: Sequence[int]) -> str:
    return ".".join(str(k) for k in indices)


@dataclass
class Walk:
    """A path re-executed: the transitions taken and the states passed through."""

    states: list[PState]
    steps: list[Transition]


class Browser:
    """One model to click through. `check` runs once, at the start, for the jumps."""

    def __init__(self, model: Model, params: dict[str, Any] | None = None, bug: str | None = None,
                 result: CheckResult | None = None) -> None:
        self.model, self.params, self.bug = model, dict(params or {}), bug
        self.product = Product(model)
        self.base = as_model_base(model)
        self.result = result if result is not None else check(model, CheckOptions(keep_going=True))
        self.jumps = [{"property": p.name, "kind": JUMP_STATUSES[p.status],
                       "path": path_text(self.indices(p.counterexample))}
                      for p in self.result.properties
                      if p.status in JUMP_STATUSES and p.counterexample is not None
                      and p.counterexample.init_index == 0]

    def enabled(self, state: PState) -> list[Transition]:
        """The transitions from `state`, in the model's order of actions (no-ops left out)."""
        return self.product.successors(state)

    def walk(self, indices: Sequence[int]) -> Walk:
        state = self.product.init_states()[0]
        states, steps = [state], []
        for number, k in enumerate(indices):
            offered = self.enabled(state)
            if k >= len(offered):
                raise UsageError(f"path step {number}: action {k} is not enabled (the state offers {len(offered)})")
            steps.append(offered[k])
            state = offered[k].target
            states.append(state)
        return Walk(states, steps)

    def indices(self, path: Path) -> list[int]:
        """The action positions of an explorer path."""
        out = []
        for state, step in zip(path.states, path.steps, strict=False):
            labels = [t.action for t in self.enabled(state)]
            out.append(labels.index(step.action))
        return out

    def trace_indices(self, trace: Trace) -> list[int]:
        """The action positions of a recorded trace of this model (from its first initial state)."""
        state = self.product.init_states()[0]
        out = []
        for step in trace.steps:
            offered = self.enabled(state)
            found = action_index(step.action, [t.action for t in offered])
            if found is None:
                raise UsageError(f"trace step {step.i}: action {step.action.get('kind')!r} is not enabled here; "
                                 "`steersim replay` names what differs")
            out.append(found)
            state = offered[found].target
        return out

    def view(self, indices: Sequence[int]) -> dict[str, Any]:
        """Everything the page shows at the end of path `indices`."""
        walk = self.walk(indices)
        views = [state_view(self.base, s[0]) for s in walk.states]
        state = walk.states[-1]
        steps = [{"i": i, "label": t.action.label(), "changes": view_changes(views[i], views[i + 1]),
                  "facts": [str(f) for f in t.facts],
                  "violations": [{"property": v.property, "message": v.message} for v in t.violations]}
                 for i, t in enumerate(walk.steps)]
        actions = [{"index": k, "label": t.action.label(),
                    "changes": view_changes(views[-1], state_view(self.base, t.target[0])),
                    "breaks": [v.property for v in t.violations]}
                   for k, t in enumerate(self.enabled(state))]
        return {"model": self.model.name, "params": self.params, "bug": self.bug, "path": path_text(indices),
                "state": views[-1], "changes": view_changes(views[-2], views[-1]) if len(views) > 1 else {},
                "steps": steps, "actions": actions, "properties": self.statuses(walk), "jumps": self.jumps}

    def statuses(self, walk: Walk) -> list[dict[str, str]]:
        """Each property on this path: broken at a step, holding so far, reached, or (liveness) its goal
        met or open in the current state."""
        broken: dict[str, int] = {}
        for i, step in enumerate(walk.steps):
            for v in step.violations:
                broken.setdefault(v.property, i)
        state = walk.states[-1]
        end = {v.property for v in self.product.end_violations(state)} if not self.enabled(state) else set()
        reached = {p.name for p in self.product.sometimes if any(p.state(s[0]) for s in walk.states)}
        goals = {p.name: p.goal(state) for p in self.product.liveness}
        out = []
        for info in self.product.property_infos():
            if info.name in broken:
                status = f"violated at step {broken[info.name]}"
            elif info.name in end:
                status = "violated: nothing more can happen"
            elif info.kind == "sometimes":
                status = "reached on this path" if info.name in reached else "not reached yet"
            elif info.kind == "eventually":
                status = "goal holds here" if goals.get(info.name) else "goal open here"
            else:
                status = "holds so far"
            out.append({"name": info.name, "kind": info.kind, "status": status})
        return out
