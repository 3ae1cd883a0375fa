"""The LangGraph model's own fact monitor: a promise of the runs API that the core invariants do not make,
judged over the facts the run shows rather than over the model's state, so that a creation that shows
nothing is seen even when the records it leaves are right."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from steersim.core.facts import Fact
from steersim.core.monitors import Monitor


@dataclass(frozen=True)
class CreationsAnswered(Monitor):
    """Every run the client creates shows as a submitted steer of the thread, which the core `no-lost-steers`
    then follows to its answer (stored, or refused with 409): by the time the system can do nothing more, all
    `runs` creations showed. A creation that shows nothing (its answer never comes, or is not read as one) is
    a request the client waits on for ever, which no other fact monitor sees. State: how many showed."""

    name: ClassVar[str] = "creations-answered"
    doc: ClassVar[str] = ("every run the client creates shows as submitted (then stored or refused): all `runs` of "
                          "them by the time the system can do nothing more")
    watches: ClassVar[frozenset[str]] = frozenset(("steer.submitted",))
    unmet: ClassVar[str] = "the client's remaining creations showing"

    runs: int

    def initial(self) -> int:
        return 0

    def step(self, state: int, fact: Fact) -> int:
        return state + 1

    def at_end(self, state: int) -> str | None:
        if state < self.runs:
            return f"the system can do nothing more, but only {state} of the client's {self.runs} creations showed"
        return None
