"""The JSON objects of the Responses WebSocket protocol, built exactly as they travel on the wire.

Every builder returns a plain dict in a fixed key order, so that a model's events (and the traces and
reports made from them) are byte-identical across runs. Field names and shapes follow the official
Python SDK `openai==3.51.0` (`openai.types.responses.responses_server_event`,
`response_steer_*_event`, `responses_client_event`); a test validates every server event the model can
emit against those types.

The ids, texts and output items depend on their arguments alone and every step of a check builds them
again, so they are built once per argument: an event's data is never changed once built
(`steersim.core.model.Event`), so events may share them.
"""

from __future__ import annotations

from functools import cache
from typing import Any

MODEL_NAME = "gpt-6-astra"
CREATED_AT = 1_767_225_600  # a fixed instant: models never read the wall clock
TOOL_NAME = "get_project_status"
ROOT_INPUT = "Draft a project plan for building a task-tracking app."
TOOL_OUTPUT = "Design is complete. Development has not started."
FOLLOWUP_INPUT = "Keep the scope small enough for one developer to finish in two weeks."
INVALID_REQUEST = "invalid_request_error"
STEER_PENDING_REASON = "waiting_for_required_input"

STEER_ERROR_MESSAGES = {
    "invalid_input": "The event or input failed validation.",
    "steering_not_supported": "The model or response execution mode does not support steering.",
    "response_not_found": "The target response is not available on this connection.",
    "too_many_pending_steers": "Too much steering input is pending for the response.",
    "response_already_completed": "The response completed and is no longer accepting steering input.",
    "response_not_active": "The response is no longer accepting steering input.",
    "successor_creation_failed": "The successor response could not be created.",
}
STEER_ERROR_CODES = tuple(STEER_ERROR_MESSAGES)


@cache
def response_id(index: int) -> str:
    return f"resp_{index + 1:04d}"


@cache
def steer_id(number: int) -> str:
    """`steer_` and 32 hex digits, the shape of the documented example."""
    return f"steer_{number + 1:032x}"


@cache
def call_id(response: int) -> str:
    return f"call_{response + 1:04d}"


@cache
def steer_text(text: int) -> str:
    return f"Steer {text + 1}: keep the scope small enough for one developer to finish in two weeks."


def invalid_steer_input(response: int) -> list[dict[str, Any]]:
    """A tool output inside a steer: the SDK's schema allows it, the prose and the server do not (A16)."""
    return [{"type": "function_call_output", "call_id": call_id(response), "output": TOOL_OUTPUT}]


def lane_field(stream_id: str | None) -> dict[str, str]:
    """`stream_id` is present only on named lanes; default-lane events omit it."""
    return {} if stream_id is None else {"stream_id": stream_id}


# ---------------------------------------------------------------------------------------------- items
ITEM_PREFIX = {"message": "msg", "function_call": "fc", "web_search_call": "ws"}


@cache
def item_id(kind: str, response: int) -> str:
    return f"{ITEM_PREFIX[kind]}_{response + 1:04d}"


@cache
def output_item(kind: str, response: int, done: bool) -> dict[str, Any]:
    """One output item of `response`, as added (`done` False) or finished."""
    ident = item_id(kind, response)
    if kind == "message":
        content = [{"type": "output_text", "text": final_text(response), "annotations": []}] if done else []
        return {"id": ident, "type": "message", "role": "assistant",
                "status": "completed" if done else "in_progress", "content": content}
    if kind == "function_call":
        return {"id": ident, "type": "function_call", "call_id": call_id(response), "name": TOOL_NAME,
                "arguments": '{"project":"task-tracker"}', "status": "completed" if done else "in_progress"}
    return {"id": ident, "type": "web_search_call", "status": "completed" if done else "in_progress",
            "action": {"type": "search", "query": "task-tracking app scope"}}


@cache
def final_text(response: int) -> str:
    return f"Two-week plan ({response_id(response)})."


@cache
def tools_field(kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    if "web_search_call" in kinds:
        tools.append({"type": "web_search"})
    if "function_call" in kinds:
        tools.append({"type": "function", "name": TOOL_NAME,
                      "parameters": {"type": "object", "properties": {"project": {"type": "string"}}},
                      "strict": True})
    return tools


# ------------------------------------------------------------------------------------------ responses
def response_object(index: int, status: str, output: list[dict[str, Any]], previous: int | None,
                    kinds: tuple[str, ...], reason: str | None = None) -> dict[str, Any]:
    """The `response` of a lifecycle event. `incomplete_details` is non-null iff the status is
    incomplete; `error` iff it failed; `completed_at` only when completed."""
    obj: dict[str, Any] = {
        "id": response_id(index),
        "object": "response",
        "created_at": CREATED_AT + index,
        "status": status,
        "model": MODEL_NAME,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": tools_field(kinds),
        "previous_response_id": None if previous is None else response_id(previous),
        "incomplete_details": {"reason": reason} if status == "incomplete" else None,
        "error": {"code": "server_error", "message": "The model failed to finish the response."}
        if status == "failed" else None,
    }
    if status == "completed":
        obj["completed_at"] = CREATED_AT + index + 1
    return obj


def response_event(kind: str, seq: int, response: dict[str, Any], stream_id: str | None) -> dict[str, Any]:
    """`response.created|in_progress|completed|incomplete|failed`."""
    return {"type": f"response.{kind}", "sequence_number": seq, "response": response, **lane_field(stream_id)}


def item_event(kind: str, seq: int, output_index: int, item: dict[str, Any],
               stream_id: str | None) -> dict[str, Any]:
    """`response.output_item.added|done`."""
    return {"type": f"response.output_item.{kind}", "sequence_number": seq, "output_index": output_index,
            "item": item, **lane_field(stream_id)}


def web_search_event(phase: str, seq: int, output_index: int, ident: str, stream_id: str | None) -> dict[str, Any]:
    """`response.web_search_call.in_progress|completed`: progress of hosted tool work."""
    return {"type": f"response.web_search_call.{phase}", "sequence_number": seq, "output_index": output_index,
            "item_id": ident, **lane_field(stream_id)}


# ------------------------------------------------------------------------------------------- steering
def steer_accepted(seq: int, number: int, target: int, stream_id: str | None) -> dict[str, Any]:
    return {"type": "response.steer.accepted", "sequence_number": seq,
            "steer": {"id": steer_id(number), "previous_response_id": response_id(target)},
            **lane_field(stream_id)}


def steer_pending(seq: int, number: int, target: int, stream_id: str | None) -> dict[str, Any]:
    return {"type": "response.steer.pending", "sequence_number": seq,
            "steer": {"id": steer_id(number), "previous_response_id": response_id(target)},
            "reason": STEER_PENDING_REASON,
            "required_input": [{"type": "function_call_output", "call_id": call_id(target), "name": TOOL_NAME}],
            **lane_field(stream_id)}


def steer_failed(seq: int, code: str, number: int | None, target: int, steer_input: Any,
                 stream_id: str | None) -> dict[str, Any]:
    """`steer.id` is present only for failures after acceptance (`number` given)."""
    steer: dict[str, Any] = {} if number is None else {"id": steer_id(number)}
    steer.update({"previous_response_id": response_id(target), "input": steer_input})
    return {"type": "response.steer.failed", "sequence_number": seq,
            "error": {"code": code, "message": STEER_ERROR_MESSAGES[code], "type": INVALID_REQUEST},
            "steer": steer, **lane_field(stream_id)}


# --------------------------------------------------------------------------------------- client side
def client_create(stream_id: str | None, steerable: bool, tools: bool) -> dict[str, Any]:
    """The first `response.create` of a lane, declaring the client's function tool when `tools`. A
    conversation-bound response cannot be steered (R15)."""
    event: dict[str, Any] = {"type": "response.create", "model": MODEL_NAME, "input": ROOT_INPUT}
    if tools:
        event["tools"] = tools_field(("function_call",))
    if not steerable:
        event["conversation"] = "conv_0001"
    event.update(lane_field(stream_id))
    return event


def client_followup(parent: int, stream_id: str | None) -> dict[str, Any]:
    """A new request continuing a finished chain (for instance with a failed steer's returned input)."""
    return {"type": "response.create", "model": MODEL_NAME, "previous_response_id": response_id(parent),
            "input": [{"type": "message", "role": "user", "content": FOLLOWUP_INPUT}], **lane_field(stream_id)}


def client_tool_output(parent: int, stream_id: str | None) -> dict[str, Any]:
    """The explicit continuation: the saved tool result, on the parent's lane (R8)."""
    return {"type": "response.create", "model": MODEL_NAME, "previous_response_id": response_id(parent),
            "input": [{"type": "function_call_output", "call_id": call_id(parent), "output": TOOL_OUTPUT}],
            **lane_field(stream_id)}


def client_steer(target: int, steer_input: Any) -> dict[str, Any]:
    return {"type": "response.steer", "previous_response_id": response_id(target), "input": steer_input}


def error_event(message: str) -> dict[str, Any]:
    """`error`: the answer to a client event the server cannot read (SDK `ResponseWsError`)."""
    return {"type": "error", "error": {"type": INVALID_REQUEST, "message": message}, "status": 400}


def close_frame(code: int, reason: str) -> dict[str, Any]:
    """Not JSON on the wire: the WebSocket close frame, shown with its code and reason."""
    return {"code": code, "reason": reason}
