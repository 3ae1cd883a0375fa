"""The teaching model's events read as facts of the common vocabulary (`steersim.core.facts`): a steer is
submitted to the conversation when the user sends it, applied to the one turn when the agent delivers
it into the history; a model request starts the turn and its response requests every call."""

from __future__ import annotations

from steersim.core import facts as F
from steersim.core.model import Event
from steersim.models.teaching.state import CHAIN, TURN


def facts(e: Event) -> list[F.Fact]:
    name, d = e.name, e.data
    if name == "steer":
        return [F.steer_submitted(d["id"], CHAIN)]
    if name == "steer.queued":
        return [F.steer_accepted(d["id"])]
    if name == "steer.rejected":
        return [F.steer_rejected(d["id"], d["reason"])]
    if name == "model.request":
        return [F.turn_started(TURN, CHAIN)]
    if name == "model.response":
        return [F.tool_requested(call, TURN) for call in d["tool_calls"]]
    if name == "tool.start":
        return [F.tool_started(d["call"])]
    if name == "tool.result":
        return [F.tool_result(d["call"], False)]
    if name == "tool.skipped":
        return [F.tool_result(d["call"], True)]
    if name == "steer.delivered":
        return [F.steer_applied(d["id"], TURN), F.history_appended(CHAIN, d["id"])]
    if name == "turn.end":
        return [F.turn_ended(TURN, d["status"])]
    return []
