"""The openai-ws wire events read as facts of the common vocabulary (design section 3): a lane is a
chain, a response a turn; a steer is submitted and accepted by `response.steer.accepted`, applied when a
successor commits it; hosted tool calls start and finish inside the response, client-owned calls get
their result from the client's `function_call_output`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from steersim.core import facts as F
from steersim.core.model import Event
from steersim.models.openai_ws.state import DEFAULT_CHAIN


def _chain(data: Mapping[str, Any]) -> str:
    return data.get("stream_id") or DEFAULT_CHAIN


def facts(event: Event) -> list[F.Fact]:
    """The common facts of one native event (design section 3). The wire names no response on item
    events, so a tool call's `turn` is its lane: the monitor then pairs calls per chain, as it should.
    Looked up by the event's name (`READERS`): a check reads every event of every step."""
    reader = READERS.get(event.name)
    return [] if reader is None else reader(event.data)


def _steer_accepted(d: Mapping[str, Any]) -> list[F.Fact]:
    sid = d["steer"]["id"]
    return [F.steer_submitted(sid, _chain(d)), F.steer_accepted(sid)]


def _steer_failed(d: Mapping[str, Any]) -> list[F.Fact]:
    steer, code = d["steer"], d["error"]["code"]
    if "id" in steer:
        return [F.steer_failed(steer["id"], code)]
    key = f"refused@{steer['previous_response_id']}#{d['sequence_number']}"
    return [F.steer_submitted(key, _chain(d)), F.steer_rejected(key, code)]


def _steer_committed(d: Mapping[str, Any]) -> list[F.Fact]:
    sid = d["steer"]["id"]
    return [F.steer_applied(sid, d["response_id"]), F.history_appended(d["chain"], sid)]


def _item_added(d: Mapping[str, Any]) -> list[F.Fact]:
    if d["item"]["type"] != "web_search_call":
        return []
    call = d["item"]["id"]
    return [F.tool_requested(call, _chain(d)), F.tool_started(call)]


def _item_done(d: Mapping[str, Any]) -> list[F.Fact]:
    if d["item"]["type"] != "function_call":
        return []
    return [F.tool_requested(d["item"]["call_id"], _chain(d))]


def _create(d: Mapping[str, Any]) -> list[F.Fact]:
    if not isinstance(d.get("input"), list):
        return []
    return [F.tool_result(item["call_id"], False) for item in d["input"] if item.get("type") == "function_call_output"]


def _turn_ended(d: Mapping[str, Any]) -> list[F.Fact]:
    return [F.turn_ended(d["response"]["id"], d["response"]["status"])]


READERS: Mapping[str, Callable[[Mapping[str, Any]], list[F.Fact]]] = {
    "response.steer.accepted": _steer_accepted,
    "response.steer.failed": _steer_failed,
    "steer.committed": _steer_committed,
    "steer.lost": lambda d: [F.steer_unknown(d["steer"]["id"])],
    "response.created": lambda d: [F.turn_started(d["response"]["id"], _chain(d))],
    "response.completed": _turn_ended,
    "response.incomplete": _turn_ended,
    "response.failed": _turn_ended,
    "response.lost": lambda d: [F.turn_ended(d["response_id"], "lost")],
    "response.output_item.added": _item_added,
    "response.web_search_call.completed": lambda d: [F.tool_result(d["item_id"], False)],
    "response.output_item.done": _item_done,
    "response.create": _create,
    "tool.abandoned": lambda d: [F.tool_result(d["call_id"], True)],
}
