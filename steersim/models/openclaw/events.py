"""OpenClaw's native events, built in one place so the model and the conformance harness agree on
their shape, and the mapping of each native event to the common facts of `steersim.core.facts`.

Agent-core events keep OpenClaw's own names (`tool_execution_start`, `message_end`, `turn_end`, ...)
with a projection of their payload that is deterministic (no timestamps, no generated ids). Four
observations are not agent events but what the harness sees at the seams OpenClaw's own tests use:
`steering_poll` (a drain of `Agent.steeringQueue`), `follow_up_poll` (a drain of the follow-up queue),
`tool_execute` (a tool implementation starting) and `run_settled` (what the steering and follow-up
queues hold once the Agent is idle again). Gateway and Codex events are named after the code
paths that produce them (`enqueueFollowupRun`, `turn/steer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache, wraps
from typing import Any, TypeVar

from steersim.core.model import Event

CHAIN = "session"
TURN = "turn"
SKIP_TEXT = "Skipped due to queued user message."
SKIP_DETAILS = {"status": "skipped", "deniedReason": "steering"}
ABORT_TEXT = "Operation aborted"
BLOCK_TEXT = "blocked by policy"
ABORTED_TURN_ID = "turn-aborted"

RUNTIME, GATEWAY, CODEX = "runtime", "gateway", "codex"
SHARED_LIMIT = 8192  # distinct events each builder remembers; a check meets a few hundred

Built = TypeVar("Built")


def _shared(build: Callable[..., Built]) -> Callable[..., Built]:
    """`build` remembered per arguments (their types too, so `1` and `True` stay apart). The model emits
    the same few events on transition after transition, and an event's data is never mutated once built
    (`steersim.core.model.Event`), so one object serves them all and `facts.facts` reads it once. Arguments
    that are not hashable (the lists of a recorded trace, say) build afresh."""
    remembered = lru_cache(maxsize=SHARED_LIMIT, typed=True)(build)

    @wraps(build)
    def shared(*args: Any, **data: Any) -> Built:
        try:
            return remembered(*args, **data)
        except TypeError:  # an unhashable argument
            return build(*args, **data)

    return shared


def call_id(index: int) -> str:
    return f"c{index}"


def is_message_id(item: str) -> bool:
    """Inbound user messages are `m1`, `m2`, ...: the only items that are steers in the fact sense."""
    return item.startswith("m")


def agent(name: str, **data: Any) -> Event:
    return _bare_agent(name) if not data else Event(RUNTIME, "listeners", name, data)


@_shared
def _bare_agent(name: str) -> Event:
    return Event(RUNTIME, "listeners", name, {})


def _message(role: str, id: str, **data: Any) -> tuple[Event, Event]:
    """message_start and message_end of one message, each with its own copy of the data."""
    data = {"role": role, "id": id, **data}
    return Event(RUNTIME, "listeners", "message_start", data), Event(RUNTIME, "listeners", "message_end", dict(data))


@_shared
def user_message(item: str) -> tuple[Event, Event]:
    """A user-role message appended to the transcript: a prompt, an injected steer or a follow-up. A
    coalesced prompt carries several items, `m1+m2`; an overflow summary names what it summarises,
    `overflow:m1`."""
    return _message("user", item)


@_shared
def assistant_message(llm_call: int, calls: Sequence[str], stop_reason: str) -> tuple[Event, Event]:
    return _message("assistant", f"a{llm_call}", toolCalls=list(calls), stopReason=stop_reason)


def aborted_ending(turn_open: bool) -> list[Event]:
    """`stopIfAborted`: the aborted assistant message, `turn_end`, the hidden turn-aborted guidance and
    `agent_end`; a closed turn is reopened first."""
    out = [] if turn_open else [agent("turn_start")]
    out += assistant_message(-1, (), "aborted")
    out.append(agent("turn_end", toolResults=[]))
    out += [*_message("custom", ABORTED_TURN_ID), agent("agent_end")]
    return out


@_shared
def tool_start(call: str) -> Event:
    return Event(RUNTIME, "listeners", "tool_execution_start", {"toolCallId": call})


def tool_end(call: str, text: str, *, started: bool, details: dict[str, Any] | None = None) -> Event:
    """The fake tools always succeed, so a result is an error exactly when the implementation never ran."""
    return _tool_end(call, text, started, tuple((details or {}).items()))


@_shared
def _tool_end(call: str, text: str, started: bool, details: tuple[tuple[str, Any], ...]) -> Event:
    return Event(RUNTIME, "listeners", "tool_execution_end", {
        "toolCallId": call, "text": text, "isError": not started, "executionStarted": started,
        "details": dict(details)})


def real_text(call: str) -> str:
    return f"{call} result"


def tool_result_message(call: str, text: str, details: dict[str, Any] | None = None) -> tuple[Event, Event]:
    return _tool_result_message(call, text, tuple((details or {}).items()))


@_shared
def _tool_result_message(call: str, text: str, details: tuple[tuple[str, Any], ...]) -> tuple[Event, Event]:
    return _message("toolResult", call, text=text, details=dict(details))


@_shared
def steering_poll(checkpoint: str, drained: Sequence[str]) -> Event:
    return Event(RUNTIME, "listeners", "steering_poll", {"checkpoint": checkpoint, "drained": list(drained)})


@_shared
def follow_up_poll(drained: Sequence[str]) -> Event:
    return Event(RUNTIME, "listeners", "follow_up_poll", {"drained": list(drained)})


@_shared
def tool_execute(call: str) -> Event:
    return Event(RUNTIME, f"tool:{call}", "tool_execute", {"toolCallId": call})


@_shared
def model_request(llm_call: int, users: Sequence[str]) -> Event:
    return Event(RUNTIME, "model", "model_request", {"llmCall": llm_call, "users": list(users)})


def run_settled(steering: Sequence[str], follow_ups: Sequence[str]) -> Event:
    """The run is over and the Agent idle (`waitForIdle` resolved): what its queues still hold."""
    return agent("run_settled", steeringQueue=list(steering), followUpQueue=list(follow_ups))


@_shared
def gateway(name: str, **data: Any) -> Event:
    return Event(GATEWAY, RUNTIME, name, data)


@_shared
def codex(name: str, **data: Any) -> Event:
    return Event(CODEX, GATEWAY, name, data)


def items_of(message: str) -> list[str]:
    """The inbound items a user message carries (a coalesced prompt and an overflow summary carry several)."""
    return [token.removeprefix("overflow:") for token in message.split("+")]
