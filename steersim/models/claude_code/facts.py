"""Claude Code's events as facts of the common vocabulary: the harness maps recorded runs with this too.

A user message is a steer submitted to the queue of its effective priority (so the core `ordered-history`
judges first-in first-out order within each priority, not across them: a `now` message is meant to pass a
`later` one), accepted when Claude Code reports it `queued`. It enters the conversation's history when it
is `started` (a turn took it in) and is applied by the first model request that carries it; one whose turn
is stopped before any request carried it is `cancelled` unsent, and failed (the text stays in the
conversation, but no later request counts as delivering it: the client was told it was cancelled). A `started`
that begins a turn starts it; `result` ends it; a Bash `tool_use` the CLI runs is a call requested and
started, and its `tool_result` line is the call's result.
"""

from __future__ import annotations

from collections.abc import Sequence

from steersim.core import facts as F
from steersim.core.facts import Fact
from steersim.core.model import Event
from steersim.models.claude_code import protocol as P
from steersim.models.claude_code.state import SESSION


def effective(priority: str, default_priority: str) -> str:
    return default_priority if priority == "default" else priority


def facts(event: Event, default_priority: str = "next") -> Sequence[Fact]:
    d = event.data
    name = event.name
    if name == P.USER:
        return (F.steer_submitted(d["message"], f"queue/{effective(d['priority'], default_priority)}"),)
    if name == P.LIFECYCLE:
        if d["state"] == P.QUEUED:
            return (F.steer_accepted(d["message"]),)
        if d["state"] == P.STARTED:
            started = (F.turn_started(d["turn"], SESSION),) if d["turn"] else ()
            return (*started, F.history_appended(SESSION, d["message"]))
        if d["state"] == P.CANCELLED and d["unsent"]:
            return (F.steer_failed(d["message"], P.CANCELLED),)
        return ()
    if name == P.REQUEST:
        return tuple(F.steer_applied(ident, d["turn"]) for ident in d["reached"])
    if name == P.TOOL_START:
        return (F.tool_requested(d["call"], d["turn"]), F.tool_started(d["call"]))
    if name == P.TOOL_RESULT:
        return (F.tool_result(d["call"], d["synthetic"]),)
    if name == P.RESULT:
        return (F.turn_ended(d["turn"], d["how"]),)
    return ()
