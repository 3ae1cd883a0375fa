"""The model's events: Claude Code's stream-json protocol as the harness records it, with real ids renamed.

One event per line the harness writes (a user message, an interrupt control request with the uuids its
response lists as still queued), per `command_lifecycle` line, per model request the fake backend
received (every message it carries, and the ones it is the first to carry), per backend move the harness
made, per Bash call starting and ending, and per `result` line. The model emits exactly these, so a
recording validates against it.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from steersim.core.model import Event

CLIENT, CLI, BACKEND, TOOL = "client", "claude", "model", "tool"

USER, INTERRUPT, LIFECYCLE, REQUEST, TOOL_START, TOOL_RESULT, RESULT = (
    "user", "control_request/interrupt", "command_lifecycle", "request", "tool_use", "tool_result", "result")
QUEUED, STARTED, COMPLETED, CANCELLED = "queued", "started", "completed", "cancelled"
# backend moves (what the fake Messages API streams) and the Bash command's end
TEXT_DELTA, TOOL_USE_START, TOOL_USE_DONE, END_TURN = ("text_delta", "tool_use_start", "tool_use_done",
                                                      "end_turn")
TOOL_FINISHED = "tool.finished"


def event(source: str, target: str, name: str, **data: Any) -> Event:
    return Event(source, target, name, MappingProxyType(data))


def user(message: str, priority: str) -> Event:
    """`priority` is the field as sent: now, next, later, or default (no field)."""
    return event(CLIENT, CLI, USER, message=message, priority=priority)


def interrupt(still_queued: tuple[str, ...], cancelled: tuple[str, ...] = ()) -> Event:
    """The interrupt and what its response lists: the messages left queued, and those it cancelled (with
    `cancel_queued`)."""
    return event(CLIENT, CLI, INTERRUPT, still_queued=still_queued, cancelled=cancelled)


def lifecycle(message: str, state: str, turn: str = "", unsent: bool = False) -> Event:
    """`turn`: for `started`, the turn the message started (empty when it joined a running one); `unsent`:
    for `cancelled`, no model request carried the message before its turn was stopped."""
    return event(CLI, CLIENT, LIFECYCLE, message=message, state=state, turn=turn, unsent=unsent)


def request(index: int, turn: str, carries: tuple[str, ...], reached: tuple[str, ...]) -> Event:
    return event(CLI, BACKEND, REQUEST, index=index, turn=turn, carries=carries, reached=reached)


def backend(name: str, index: int) -> Event:
    return event(BACKEND, CLI, name, index=index)


def tool_start(call: str, turn: str) -> Event:
    return event(CLI, TOOL, TOOL_START, call=call, turn=turn)


def tool_finished(call: str) -> Event:
    return event(TOOL, CLI, TOOL_FINISHED, call=call)


def tool_result(call: str, synthetic: bool) -> Event:
    """The `user` line carrying the call's tool_result; `synthetic` when Claude Code wrote it for a
    command it ended (an interrupt), not the command's own output."""
    return event(CLI, CLIENT, TOOL_RESULT, call=call, synthetic=synthetic)


def result(turn: str, how: str) -> Event:
    return event(CLI, CLIENT, RESULT, turn=turn, how=how)


def message_id(number: int) -> str:
    return f"m{number}"


def turn_id(number: int) -> str:
    return f"t{number}"


def call_id(request_index: int) -> str:
    return f"c{request_index}"
