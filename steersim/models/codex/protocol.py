"""The model's events: the Codex app-server protocol as the harness records it, with the real ids renamed.

One event per JSON-RPC request (with its reply's outcome), per notification the model speaks of, per
model request the fake backend received, per backend move the harness made, and one for the thread as
`thread/read` returns it at the end. The model emits exactly these, so a recording validates against it.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from steersim.core.model import Event

CLIENT, CODEX, BACKEND, TOOL = "client", "codex", "model", "tool"

USER_MESSAGE, AGENT_MESSAGE, COMMAND = "userMessage", "agentMessage", "commandExecution"
ITEM_TYPES = (USER_MESSAGE, AGENT_MESSAGE, COMMAND)

# how a turn/steer names its expected turn: the latest turn (active, or just ended), an earlier one, none
ACTIVE, STALE, BOGUS = "active", "stale", "bogus"
ACCEPTED = "accepted"
STARTED, STEERED = "started", "steered"  # what a turn/start did

# backend moves (what the fake Responses endpoint streams) and the tool's end
TEXT_DELTA, TEXT_DONE, TOOL_CALL, COMPLETED = "response.text_delta", "response.text_done", "response.tool_call", \
    "response.completed"
TOOL_FINISHED = "tool.finished"
REQUEST = "request"
THREAD_READ = "thread/read"


def event(source: str, target: str, name: str, **data: Any) -> Event:
    return Event(source, target, name, MappingProxyType(data))


def turn_start(message: str, outcome: str, turn: str) -> Event:
    return event(CLIENT, CODEX, "turn/start", message=message, outcome=outcome, turn=turn)


def turn_steer(message: str, expected: str, empty: bool, outcome: str, turn: str) -> Event:
    return event(CLIENT, CODEX, "turn/steer", message=message, expected=expected, empty=empty, outcome=outcome,
                 turn=turn)


def turn_interrupt(turn: str) -> Event:
    return event(CLIENT, CODEX, "turn/interrupt", turn=turn, outcome="ok")


def turn_started(turn: str) -> Event:
    return event(CODEX, CLIENT, "turn/started", turn=turn)


def turn_completed(turn: str, status: str, cut: tuple[str, ...]) -> Event:
    """`cut`: the steers this turn accepted that none of its model requests carried."""
    return event(CODEX, CLIENT, "turn/completed", turn=turn, status=status, cut=cut)


def item(phase: str, kind: str, ident: str, turn: str) -> Event:
    return event(CODEX, CLIENT, f"item/{phase}", type=kind, item=ident, turn=turn)


def request(index: int, turn: str, carries: tuple[str, ...], reached: tuple[str, ...]) -> Event:
    """Model request `index` of `turn`: every user message it carries, in order, and the steers of this
    turn it is the first to carry."""
    return event(CODEX, BACKEND, REQUEST, index=index, turn=turn, carries=carries, reached=reached)


def backend(name: str, index: int) -> Event:
    return event(BACKEND, CODEX, name, index=index)


def tool_finished(call: str) -> Event:
    return event(TOOL, CODEX, TOOL_FINISHED, call=call)


def thread_read(messages: tuple[str, ...]) -> Event:
    return event(CODEX, CLIENT, THREAD_READ, messages=messages)


def turn_id(number: int) -> str:
    return f"t{number}"


def prompt_id(number: int) -> str:
    return f"p{number}"


def steer_id(number: int) -> str:
    return f"s{number}"


def agent_message_id(request_index: int) -> str:
    return f"a{request_index}"


def call_id(request_index: int) -> str:
    return f"c{request_index}"
