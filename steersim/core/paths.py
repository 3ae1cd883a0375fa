"""Counterexamples as replayable action paths.

The explorer stores only fingerprints and parent pointers, so a path is rebuilt by re-executing the
recorded action indices from an initial state. The same re-execution turns a path into the steps of a
report or a trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from steersim.core.model import Action
from steersim.core.product import Product, PState, Transition, Violation
from steersim.errors import ModelError


@dataclass(frozen=True)
class Path:
    """A run of the product: the initial state, the transitions taken, and for a liveness lasso the
    index of the step where the loop begins (the last state repeats the state before that step)."""

    init: PState
    steps: tuple[Transition, ...]
    init_index: int = 0
    loop_start: int | None = None
    violation: Violation | None = None
    states: tuple[PState, ...] = field(default=(), repr=False)

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(step.action for step in self.steps)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"steps": [step_json(step) for step in self.steps]}
        if self.init_index:
            out["init"] = self.init_index
        if self.loop_start is not None:
            out["loop_start"] = self.loop_start
        if self.violation is not None:
            out["violation"] = {"property": self.violation.property, "message": self.violation.message}
        return out


def step_json(step: Transition) -> dict[str, Any]:
    return {
        "action": step.action.label(),
        **step.action.to_json(),
        "events": [e.to_json() for e in step.events],
        "facts": [f.to_json() for f in step.facts],
    }


def replay_indices(
    product: Product, init_index: int, indices: Sequence[int], loop_start: int | None = None,
    violation: Violation | None = None,
) -> Path:
    """Re-execute `indices` (positions in each state's `actions()` list) from initial state
    `init_index`."""
    state = product.init_states()[init_index]
    states = [state]
    steps = []
    for index in indices:
        action = product.actions(state)[index]
        transition = product.step(state, action)
        if transition is None:
            raise RuntimeError(f"model is not deterministic: {action.label()} became a no-op on replay")
        steps.append(transition)
        state = transition.target
        states.append(state)
    return Path(states[0], tuple(steps), init_index, loop_start, violation, tuple(states))


def action_index(body: Mapping[str, Any], offered: Sequence[Action]) -> int | None:
    """The position among `offered` of the action a recorded step names (`{"actor", "kind", "args"}`, as
    `Action.to_json` wrote it; JSON turns tuples into lists, so the forms are compared), None if none is."""
    wanted = {"actor": body.get("actor"), "kind": body.get("kind"), "args": list(body.get("args", []))}
    return next((k for k, action in enumerate(offered) if action.to_json() == wanted), None)


def action_from_json(body: Mapping[str, Any], offered: Sequence[Action]) -> Action | None:
    """The offered action a recorded step names, None if none is (`action_index`)."""
    index = action_index(body, offered)
    return None if index is None else offered[index]


def located(error: ModelError, path: Path) -> ModelError:
    """`error` with the actions of `path`, the path to the state it happened at, for its message."""
    return error.with_path(tuple(action.label() for action in path.actions), f"initial state {path.init_index}")
