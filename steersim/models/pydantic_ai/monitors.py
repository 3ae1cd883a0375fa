"""A fact monitor of Pydantic AI's tool calls, which the model opts into besides the core ones."""

from __future__ import annotations

from typing import ClassVar

from steersim.core.facts import Fact
from steersim.core.monitors import Monitor, MonitorViolation


class RealResultAfterStart(Monitor):
    """A tool call's own return comes only from a call that started: a call that never ran is closed out
    with a synthesized `interrupted` return when a continuing run sends the cancelled run's history. (The
    other half of the core `truthful-results` does not hold here: a call that started and was still running
    when its run was cancelled is closed out with a synthesized return too.) State: the started calls that
    have no result yet, in start order."""

    name: ClassVar[str] = "real-result-after-start"
    doc: ClassVar[str] = "a tool call's own return comes only from a call that started"
    watches: ClassVar[frozenset[str]] = frozenset(("tool.started", "tool.result"))

    def step(self, state: tuple, fact: Fact) -> tuple:
        call = fact.get("call")
        if fact.name == "tool.started":
            return state if call in state else (*state, call)
        if not fact.get("synthetic") and call not in state:
            raise MonitorViolation(f"call {call!r} returned on its own, but it never started", (call,))
        return tuple(c for c in state if c != call)
