"""The teaching model's own fact monitors: promises of its design that the core invariants do not make,
judged over the facts it emits rather than over its state, so that a step which emits the wrong thing
is seen even when the state it reaches is right."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from steersim.core.facts import Fact
from steersim.core.monitors import Monitor, MonitorViolation
from steersim.models.teaching.state import steer_id


@dataclass(frozen=True)
class SteeredStatus(Monitor):
    """A turn that a steer cut short, which shows as a synthetic result among its calls, ends `steered`,
    and a turn whose calls all ran and gave their own results ends `completed` (a steer delivered at its
    boundary does not make it steered). A turn with a call left without any result says nothing either
    way about how it was cut short: that is `paired-tool-results`' to judge. State: whether the current
    turn has a synthetic result, and how many of its calls have no result yet."""

    name: ClassVar[str] = "status-tells-steered"
    doc: ClassVar[str] = ("a turn ends 'steered' exactly when some call of it got a synthetic (skip) result, else "
                          "'completed'")
    watches: ClassVar[frozenset[str]] = frozenset(("turn.started", "tool.requested", "tool.result", "turn.ended"))

    def initial(self) -> tuple[bool, int]:
        return False, 0

    def step(self, state: tuple[bool, int], fact: Fact) -> tuple[bool, int]:
        synthetic, open_calls = state
        if fact.name == "turn.started":
            return False, 0
        if fact.name == "tool.requested":
            return synthetic, open_calls + 1
        if fact.name == "tool.result":
            return synthetic or bool(fact.get("synthetic")), max(0, open_calls - 1)
        status = fact.get("status")
        if synthetic and status != "steered":
            raise MonitorViolation(f"turn {fact.get('turn')!r} ended {status!r}, but a call of it was skipped")
        if not synthetic and not open_calls and status == "steered":
            raise MonitorViolation(f"turn {fact.get('turn')!r} ended 'steered', but every call of it ran and "
                                   "gave its own result")
        return state


@dataclass(frozen=True)
class SteersAsSent(Monitor):
    """The user's steers show as submitted under the id of their place in the sending order (the n-th
    steer sent is `s<n>`), so that the history's order reads as the order the user sent them in and a
    steer's rejection names that steer alone. How many the user sends is the scenario's choice (a swarm
    run may send none), so the monitor asks nothing of the end. State: how many steers were submitted."""

    name: ClassVar[str] = "steers-as-sent"
    doc: ClassVar[str] = "the n-th steer the user sends shows as submitted with id s<n>"
    watches: ClassVar[frozenset[str]] = frozenset(("steer.submitted",))

    def initial(self) -> int:
        return 0

    def step(self, state: int, fact: Fact) -> int:
        sid, expected = fact.get("id"), steer_id(state + 1)
        if sid != expected:
            raise MonitorViolation(f"steer number {state + 1} of the user shows as {sid!r}, not {expected!r}", (sid,))
        return state + 1
