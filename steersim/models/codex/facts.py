"""Codex's events as facts of the common vocabulary: the harness maps recorded runs with this function too.

A `turn/steer` (and a `turn/start` that adds input to the active turn) submits a steer to the thread and
is accepted or refused by its reply; a `userMessage` item completing appends the message to the thread's
history; a model request applies the steers of its turn that it is the first to carry; a turn completed
`interrupted` fails the steers it accepted and never sent; `commandExecution` items are the tool calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from steersim.core import facts as F
from steersim.core.facts import Fact
from steersim.core.model import Event
from steersim.models.codex import protocol as P
from steersim.models.codex.state import INTERRUPTED, THREAD


def facts(event: Event) -> Sequence[Fact]:
    d = event.data
    name = event.name
    if name == "turn/steer" or (name == "turn/start" and d["outcome"] != P.STARTED):
        outcome = F.steer_accepted(d["message"]) if d["outcome"] in (P.ACCEPTED, P.STEERED) \
            else F.steer_rejected(d["message"], d["outcome"])
        return (F.steer_submitted(d["message"], THREAD), outcome)
    if name == "turn/started":
        return (F.turn_started(d["turn"], THREAD),)
    if name == "turn/completed":
        return (*(F.steer_failed(ident, INTERRUPTED) for ident in d["cut"]), F.turn_ended(d["turn"], d["status"]))
    if name == P.REQUEST:
        return tuple(F.steer_applied(ident, d["turn"]) for ident in d["reached"])
    if name == "item/started" and d["type"] == P.COMMAND:
        return (F.tool_requested(d["item"], d["turn"]), F.tool_started(d["item"]))
    if name == "item/completed" and d["type"] == P.COMMAND:
        return (F.tool_result(d["item"], False),)
    if name == "item/completed" and d["type"] == P.USER_MESSAGE:
        return (F.history_appended(THREAD, d["item"]),)
    return ()
