"""How a real client's frame is matched to the model's: by structure, not by its free text.

Server and internal events must be identical; a client frame's prompts and steer input are the client's
own, but its targets, lanes, tool outputs and the validity of a steer's input must be ones the model can
produce. Used by the serving session, by trace validation and by `steersim replay` of served traces
(through the model's `match_event`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.core.model import Event


def steer_input_valid(value: Any) -> bool:
    """A16: a string, or a non-empty list of user messages with only type/role/content."""
    if isinstance(value, str):
        return bool(value)
    if not isinstance(value, list) or not value:
        return False
    allowed = {"type", "role", "content"}
    return all(isinstance(item, dict) and item.get("role") == "user" and item.get("type", "message") == "message"
               and set(item) <= allowed for item in value)


def steer_valid(frame: Mapping[str, Any]) -> bool:
    """A16: "The event accepts only `type`, `previous_response_id`, and `input`", and a valid input."""
    return set(frame) <= {"type", "previous_response_id", "input"} and steer_input_valid(frame.get("input"))


def _outputs(frame: Mapping[str, Any]) -> list[str]:
    items = frame.get("input")
    if not isinstance(items, list):
        return []
    return [item.get("call_id", "") for item in items if isinstance(item, dict)
            and item.get("type") == "function_call_output"]


def _without_input(data: Mapping[str, Any]) -> dict[str, Any]:
    """A steer failure, less the input it returns (the client's own text)."""
    return {**data, "steer": {k: v for k, v in data["steer"].items() if k != "input"}}


def frame_matches(expected: Event, observed: Event) -> bool:
    """Server and internal events must be identical; a client frame matches the model's by structure."""
    if expected.name != observed.name or expected.source != observed.source:
        return False
    if expected.name == "response.steer.failed":
        return _without_input(expected.data) == _without_input(observed.data)
    if expected.source != "client" or "type" not in expected.data:
        return expected.source == "client" or dict(expected.data) == dict(observed.data)
    e, o = expected.data, observed.data
    if e.get("previous_response_id") != o.get("previous_response_id"):
        return False
    if expected.name == "response.steer":
        return steer_valid(e) == steer_valid(o)
    root = e.get("previous_response_id") is None
    return (e.get("stream_id") == o.get("stream_id") and ("conversation" in e) == ("conversation" in o)
            and _outputs(e) == _outputs(o) and (not root or declares_function_tool(e) == declares_function_tool(o)))


def declares_function_tool(frame: Mapping[str, Any]) -> bool:
    """A root's create that declares a function tool lets the model call it (the server never calls a
    tool the client did not declare)."""
    tools = frame.get("tools")
    return isinstance(tools, list) and any(isinstance(t, dict) and t.get("type") == "function" for t in tools)
