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
    """A turn that a steer cut short, which shows as a synthetic result among its calls, ends `steered`.
    (The converse is not judged here: a turn that skips calls without giving them results is the
    `no-skip-result` bug, which `paired-tool-results` names.) State: whether the current turn has a
    synthetic result."""

    name: ClassVar[str] = "status-tells-steered"
    doc: ClassVar[str] = "a turn in which some call got a synthetic (skip) result ends 'steered'"
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
        return state
