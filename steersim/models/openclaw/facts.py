"""OpenClaw's events read as facts of the common vocabulary."""

from __future__ import annotations

from steersim.core import facts as F
from steersim.core.model import Event
from steersim.models.openclaw.events import CHAIN, TURN, is_message_id, items_of

READ_LIMIT = 4096  # events whose facts are remembered; past it the memo starts again
_read: dict[int, tuple[Event, tuple[F.Fact, ...]]] = {}


def facts(event: Event) -> tuple[F.Fact, ...]:
    """One native event in the common vocabulary (`read`), remembered per event object: the model emits
    most events as one shared object per distinct event (`events._shared`), so a check reads each of
    those once. The memo holds the event, so no other object can take its `id` while its entry lives."""
    hit = _read.get(id(event))
    if hit is not None and hit[0] is event:
        return hit[1]
    out = tuple(read(event))
    if len(_read) >= READ_LIMIT:
        _read.clear()
    _read[id(event)] = (event, out)
    return out


def read(event: Event) -> list[F.Fact]:
    """One native event in the common vocabulary. Only inbound messages (`m*`) are steers; prompts,
    agent follow-ups and tool results are history or tool facts."""
    name, data = event.name, event.data
    if name == "inbound":
        return [F.steer_submitted(data["id"], CHAIN)]
    if name in ("steer", "followup_enqueued", "run_now", "interrupt", "codex_queued"):
        return [F.steer_accepted(data["id"])]
    if name in ("followup_rejected", "interrupt_refused"):
        return [F.steer_rejected(data["id"], data["reason"])]
    if name == "followup_evicted":
        return [F.steer_failed(data["id"], data["reason"])]
    if name in ("turn_start", "turn/started"):
        return [F.turn_started(TURN, CHAIN)]
    if name == "turn_end":
        return [F.turn_ended(TURN, "ended")]
    if name == "turn/completed":
        return [F.turn_ended(TURN, data["status"])]
    if name == "tool_execute":
        return [F.tool_started(data["toolCallId"])]
    if name == "tool_execution_end":
        return [F.tool_result(data["toolCallId"], not data["executionStarted"])]
    if name == "message_end" and data["role"] == "assistant":
        return [F.tool_requested(call, TURN) for call in data["toolCalls"]]
    if (name == "message_end" and data["role"] == "user") or name in ("userMessage", "turn/start"):
        return applied(data["id"])
    return []


def applied(message: str) -> list[F.Fact]:
    """The message became visible to the model: every inbound item it carries is applied."""
    out = [F.steer_applied(item, TURN) for item in items_of(message) if is_message_id(item)]
    out.append(F.history_appended(CHAIN, message))
    return out
