"""From the driver's JSON records to the model's native events.

The driver records projections of OpenClaw's agent events plus the points it observes at the seams
(model requests, tool implementation starts, queue drains, its own steer and abort calls). Here each
record becomes the `Event` the model would emit for it, with the model's ids: assistant messages are
named by the model request they answer, the turn-aborted guidance by its custom type.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from steersim.core.model import Event
from steersim.models.openclaw import events as E

TURN_ABORTED_PREFIX = "<turn_aborted>"


def item_of(text: str) -> str:
    """A user-role text as the model names it (the turn-aborted guidance reaches the model as user text)."""
    return E.ABORTED_TURN_ID if text.startswith(TURN_ABORTED_PREFIX) else text


def observed_events(records: Iterable[dict[str, Any]]) -> list[Event]:
    out: list[Event] = []
    request = 0
    for record in records:
        kind = record["ev"]
        if kind == "steer":
            out += [E.gateway("inbound", id=record["id"]), E.gateway("steer", id=record["id"])]
        elif kind == "steer_refused":
            out += [E.gateway("inbound", id=record["id"]),
                    E.gateway("steer_rejected", id=record["id"], reason=record["reason"])]
        elif kind == "session_continue":
            out.append(E.agent("session_continue"))
        elif kind == "abort":
            out.append(E.gateway("abort"))
        elif kind == "model_request":
            request = record["llmCall"]
            out.append(E.model_request(request, [item_of(u) for u in record["users"]]))
        elif kind == "tool_execute":
            out.append(E.tool_execute(record["toolCallId"]))
        elif kind == "steering_poll":
            out.append(E.agent("steering_poll", drained=record["drained"]))
        elif kind == "follow_up_poll":
            out.append(E.follow_up_poll(record["drained"]))
        elif kind == "settled":
            out.append(E.run_settled(record["queued"], record["followUps"]))
        elif kind == "agent":
            out.append(_agent_event(record, request))
    return out


def _agent_event(record: dict[str, Any], request: int) -> Event:
    name = record["type"]
    if name in ("message_start", "message_end"):
        return E.agent(name, **_message(record, request))
    if name == "tool_execution_start":
        return E.agent(name, toolCallId=record["toolCallId"])
    if name == "tool_execution_end":
        return E.agent(name, toolCallId=record["toolCallId"], text=record["text"], isError=record["isError"],
                       executionStarted=record["executionStarted"], details=record["details"])
    if name == "turn_end":
        return E.agent(name, toolResults=record["toolResults"])
    return E.agent(name)


def _message(record: dict[str, Any], request: int) -> dict[str, Any]:
    role = record["role"]
    if role == "user":
        return {"role": role, "id": item_of(record["text"])}
    if role == "assistant":
        aborted = record["stopReason"] == "aborted"
        return {"role": role, "id": "a-1" if aborted else f"a{request}", "toolCalls": record["toolCalls"],
                "stopReason": record["stopReason"]}
    if role == "toolResult":
        return {"role": role, "id": record["toolCallId"], "text": record["text"], "details": record["details"]}
    custom = record.get("customType", "")
    return {"role": role, "id": E.ABORTED_TURN_ID if custom == "openclaw:turn-aborted" else custom}
