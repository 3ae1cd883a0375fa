"""The server-sent events of the fake Responses backend, built with the openai-ws model's vocabulary.

Codex reads the Responses API over HTTP with server-sent events; the events are the same objects the
WebSocket carries (`steersim.models.openai_ws.wire`), so the builders here only add what a Codex turn needs beyond
them: a text delta and an `exec_command` function call. Every event parses strictly into its class of the
official `openai` SDK (a test walks every event a plan can produce).
"""

from __future__ import annotations

import json
from typing import Any

from steersim.models.openai_ws.wire import CREATED_AT, MODEL_NAME, item_event, response_event

TOOL_NAME = "exec_command"  # Codex's built-in shell tool


def response_id(index: int) -> str:
    """`index` counts model requests from 1, as the model's ids do (`a<k>`, `c<k>`)."""
    return f"resp_{index:04d}"


def message_id(index: int) -> str:
    return f"msg_{index:04d}"


def call_id(index: int) -> str:
    return f"call_{index:04d}"


def response_object(index: int, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    """The `response` of a lifecycle event; a completed one carries the usage Codex reads."""
    obj: dict[str, Any] = {"id": response_id(index), "object": "response", "created_at": CREATED_AT + index,
                           "status": status, "model": MODEL_NAME, "output": output, "parallel_tool_calls": False,
                           "tool_choice": "auto", "tools": []}
    if status == "completed":
        obj["usage"] = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                        "output_tokens": 5,
                        "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    return obj


def message_item(index: int, text: str, done: bool) -> dict[str, Any]:
    return {"id": message_id(index), "type": "message", "role": "assistant",
            "status": "completed" if done else "in_progress",
            "content": [{"type": "output_text", "text": text, "annotations": []}] if done else []}


def call_item(index: int, command: str) -> dict[str, Any]:
    return {"id": f"fc_{index:04d}", "type": "function_call", "call_id": call_id(index), "name": TOOL_NAME,
            "arguments": json.dumps({"cmd": command}), "status": "completed"}


class ResponseStream:
    """The events of one response, numbered in order: its start, its text or tool call, its end."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.seq = 0

    def _next(self) -> int:
        self.seq += 1
        return self.seq - 1

    def created(self) -> list[dict[str, Any]]:
        return [response_event("created", self._next(), response_object(self.index, "in_progress", []), None)]

    def text_start(self) -> list[dict[str, Any]]:
        return [item_event("added", self._next(), 0, message_item(self.index, "", False), None)]

    def text_delta(self, delta: str) -> list[dict[str, Any]]:
        return [{"type": "response.output_text.delta", "sequence_number": self._next(), "output_index": 0,
                 "content_index": 0, "item_id": message_id(self.index), "delta": delta, "logprobs": []}]

    def text_done(self, text: str) -> list[dict[str, Any]]:
        return [item_event("done", self._next(), 0, message_item(self.index, text, True), None)]

    def tool_call(self, command: str) -> list[dict[str, Any]]:
        item = call_item(self.index, command)
        return [item_event("added", self._next(), 0, {**item, "arguments": "", "status": "in_progress"}, None),
                item_event("done", self._next(), 0, item, None)]

    def completed(self, output: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [response_event("completed", self._next(), response_object(self.index, "completed", output), None)]


def sse(event: dict[str, Any]) -> bytes:
    """One server-sent event: its `type` as the event name, the object as data."""
    return f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n".encode()
