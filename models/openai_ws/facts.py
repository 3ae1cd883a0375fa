"""The openai-ws wire events read as facts of the common vocabulary (design section 3): a lane is a
chain, a response a turn; a steer is submitted and accepted by `response.steer.accepted`, applied when a
successor commits it; hosted tool calls start and finish inside the response, client-owned calls get
their result from the client's `function_call_output`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from models.openai_ws.state import DEFAULT_CHAIN
from sim.core import facts as F
from sim.core.model import Event


def _chain(data: Mapping[str, Any]) -> str:
    return data.get("stream_id") or DEFAULT_CHAIN


def facts(event: Event) -> list[F.Fact]:
    """The common facts of one native event (design section 3). The wire names no response on item
    events, so a tool call's `turn` is its lane: the monitor then pairs calls per chain, as it should."""
    name, d = event.name, event.data
    if name == "response.steer.accepted":
        sid = d["steer"]["id"]
        return [F.steer_submitted(sid, _chain(d)), F.steer_accepted(sid)]
    if name == "response.steer.failed":
        steer, code = d["steer"], d["error"]["code"]
        if "id" in steer:
            return [F.steer_failed(steer["id"], code)]
        key = f"refused@{steer['previous_response_id']}#{d['sequence_number']}"
        return [F.steer_submitted(key, _chain(d)), F.steer_rejected(key, code)]
    if name == "steer.committed":
        sid = d["steer"]["id"]
        return [F.steer_applied(sid, d["response_id"]), F.history_appended(d["chain"], sid)]
    if name == "steer.lost":
        return [F.steer_unknown(d["steer"]["id"])]
    if name == "response.created":
        return [F.turn_started(d["response"]["id"], _chain(d))]
    if name in ("response.completed", "response.incomplete", "response.failed"):
        return [F.turn_ended(d["response"]["id"], d["response"]["status"])]
    if name == "response.lost":
        return [F.turn_ended(d["response_id"], "lost")]
    if name == "response.output_item.added" and d["item"]["type"] == "web_search_call":
        call = d["item"]["id"]
        return [F.tool_requested(call, _chain(d)), F.tool_started(call)]
    if name == "response.web_search_call.completed":
        return [F.tool_result(d["item_id"], False)]
    if name == "response.output_item.done" and d["item"]["type"] == "function_call":
        return [F.tool_requested(d["item"]["call_id"], _chain(d))]
    if name == "response.create" and isinstance(d.get("input"), list):
        return [F.tool_result(item["call_id"], False) for item in d["input"]
                if item.get("type") == "function_call_output"]
    if name == "tool.abandoned":
        return [F.tool_result(d["call_id"], True)]
    return []
