"""The Pydantic AI model's events, and the harness's recorded ones, in the common vocabulary.

An enqueue is a steer of the conversation: accepted when it returns an `enqueue_id`, rejected when it
raises `UserError` (the run has ended). It is applied when it enters history: delivered into a model
request, which is a turn, or by the end-of-run redirect into the request that follows; it fails when
`dequeue` removes it, or when the run it waits in stops cancelled (left on `pending_messages`). A model
request is a turn of the conversation; a response's tool calls are requested by it, start and return;
calls a cancelled run left open get synthesized results when the next run's first request is sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from steersim.core import facts as F
from steersim.core.facts import Fact
from steersim.core.model import Event
from steersim.models.pydantic_ai.state import CHAIN


def facts(event: Event) -> Sequence[Fact]:
    d = event.data
    name = event.name
    if name == "enqueue":
        answer = F.steer_accepted(d["msg"]) if d["accepted"] else F.steer_rejected(d["msg"], "UserError")
        return (F.steer_submitted(d["msg"], d["target"]), answer)
    if name == "dequeue":
        return (F.steer_failed(d["msg"], "dequeued"),) if d["removed"] else ()
    if name == "request":
        out: list[Fact] = [F.tool_result(call, True) for call in d["closed_out"]]
        out.extend(_delivered(d["delivered"], d["turn"]))
        out.append(F.turn_started(d["turn"], CHAIN))
        return tuple(out)
    if name == "redirect":
        return tuple(_delivered(d["delivered"], d["turn"]))
    if name == "response":
        return (F.turn_ended(d["turn"], "completed"), *(F.tool_requested(call, d["turn"]) for call in d["calls"]))
    if name == "tool.started":
        return (F.tool_started(d["call"]),)
    if name == "tool.returned":
        return (F.tool_result(d["call"], False),)
    if name == "stopped":
        ended = (F.turn_ended(d["turn"], "cancelled"),) if d["turn"] else ()
        return (*ended, *(F.steer_failed(m, "run-cancelled") for m in d["stranded"]))
    return ()


def _delivered(messages: Sequence[str], turn: str) -> list[Fact]:
    out: list[Fact] = []
    for m in messages:
        out.extend((F.steer_applied(m, turn), F.history_appended(CHAIN, m)))
    return out
