"""The teaching model's own fact monitors: promises of its design that the core invariants do not make,
judged over the facts it emits rather than over its state, so that a step which emits the wrong thing
is seen even when the state it reaches is right."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from steersim.core.facts import Fact
from steersim.core.monitors import Monitor, MonitorViolation


@dataclass(frozen=True)
class SteeredStatus(Monitor):
    """A turn that a steer cut short, which shows as a synthetic result among its calls, ends `steered`,
    and a turn whose calls all ran and gave their own results ends `completed` (a steer delivered at its
    boundary does not make it steered). State: whether the current turn has a synthetic result."""

    name: ClassVar[str] = "status-tells-steered"
    doc: ClassVar[str] = ("a turn ends 'steered' exactly when some call of it got a synthetic (skip) result, else "
                          "'completed'")
    watches: ClassVar[frozenset[str]] = frozenset(("turn.started", "tool.result", "turn.ended"))

    def initial(self) -> bool:
        return False

    def step(self, state: bool, fact: Fact) -> bool:
        if fact.name == "turn.started":
            return False
        if fact.name == "tool.result":
            return state or bool(fact.get("synthetic"))
        status = fact.get("status")
        if state and status != "steered":
            raise MonitorViolation(f"turn {fact.get('turn')!r} ended {status!r}, but a call of it was skipped")
        if not state and status == "steered":
            raise MonitorViolation(f"turn {fact.get('turn')!r} ended 'steered', but every call of it ran and "
                                   "gave its own result")
        return state
