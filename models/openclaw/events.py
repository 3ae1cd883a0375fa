"""OpenClaw's native events, built in one place so the model and the conformance harness agree on
their shape, and the mapping of each native event to the common facts of `sim.core.facts`.

Agent-core events keep OpenClaw's own names (`tool_execution_start`, `message_end`, `turn_end`, ...)
with a projection of their payload that is deterministic (no timestamps, no generated ids). Four
observations are not agent events but what the harness sees at the seams OpenClaw's own tests use:
`steering_poll` (a drain of `Agent.steeringQueue`), `follow_up_poll` (a drain of the follow-up queue),
`tool_execute` (a tool implementation starting) and `run_settled` (what the steering and follow-up
queues hold once the Agent is idle again). Gateway and Codex events are named after the code
paths that produce them (`enqueueFollowupRun`, `turn/steer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.core.model import Event

CHAIN = "session"
TURN = "turn"
SKIP_TEXT = "Skipped due to queued user message."
SKIP_DETAILS = {"status": "skipped", "deniedReason": "steering"}
ABORT_TEXT = "Operation aborted"
BLOCK_TEXT = "blocked by policy"
ABORTED_TURN_ID = "turn-aborted"

RUNTIME, GATEWAY, CODEX = "runtime", "gateway", "codex"


def call_id(index: int) -> str:
    return f"c{index}"


def is_message_id(item: str) -> bool:
    """Inbound user messages are `m1`, `m2`, ...: the only items that are steers in the fact sense."""
    return item.startswith("m")


def agent(name: str, **data: Any) -> Event:
    return Event(RUNTIME, "listeners", name, data)


def user_message(item: str) -> list[Event]:
    """A user-role message appended to the transcript: a prompt, an injected steer or a follow-up. A
    coalesced prompt carries several items, `m1+m2`; an overflow summary names what it summarises,
    `overflow:m1`."""
    data = {"role": "user", "id": item}
    return [agent("message_start", **data), agent("message_end", **data)]


def assistant_message(llm_call: int, calls: Sequence[str], stop_reason: str) -> list[Event]:
    data = {"role": "assistant", "id": f"a{llm_call}", "toolCalls": list(calls), "stopReason": stop_reason}
    return [agent("message_start", **data), agent("message_end", **data)]


def aborted_ending(turn_open: bool) -> list[Event]:
    """`stopIfAborted`: the aborted assistant message, `turn_end`, the hidden turn-aborted guidance and
    `agent_end`; a closed turn is reopened first."""
    out = [] if turn_open else [agent("turn_start")]
    out += assistant_message(-1, (), "aborted")
    out.append(agent("turn_end", toolResults=[]))
    data = {"role": "custom", "id": ABORTED_TURN_ID}
    out += [agent("message_start", **data), agent("message_end", **data), agent("agent_end")]
    return out


def tool_start(call: str) -> Event:
    return agent("tool_execution_start", toolCallId=call)


def tool_end(call: str, text: str, *, started: bool, details: dict[str, Any] | None = None) -> Event:
    """The fake tools always succeed, so a result is an error exactly when the implementation never ran."""
    return agent("tool_execution_end", toolCallId=call, text=text, isError=not started,
                 executionStarted=started, details=dict(details or {}))


def real_text(call: str) -> str:
    return f"{call} result"


def tool_result_message(call: str, text: str, details: dict[str, Any] | None = None) -> list[Event]:
    data = {"role": "toolResult", "id": call, "text": text, "details": dict(details or {})}
    return [agent("message_start", **data), agent("message_end", **data)]


def steering_poll(checkpoint: str, drained: Sequence[str]) -> Event:
    return agent("steering_poll", checkpoint=checkpoint, drained=list(drained))


def follow_up_poll(drained: Sequence[str]) -> Event:
    return agent("follow_up_poll", drained=list(drained))


def tool_execute(call: str) -> Event:
    return Event(RUNTIME, f"tool:{call}", "tool_execute", {"toolCallId": call})


def model_request(llm_call: int, users: Sequence[str]) -> Event:
    return Event(RUNTIME, "model", "model_request", {"llmCall": llm_call, "users": list(users)})


def run_settled(steering: Sequence[str], follow_ups: Sequence[str]) -> Event:
    """The run is over and the Agent idle (`waitForIdle` resolved): what its queues still hold."""
    return agent("run_settled", steeringQueue=list(steering), followUpQueue=list(follow_ups))


def gateway(name: str, **data: Any) -> Event:
    return Event(GATEWAY, RUNTIME, name, data)


def codex(name: str, **data: Any) -> Event:
    return Event(CODEX, GATEWAY, name, data)


def items_of(message: str) -> list[str]:
    """The inbound items a user message carries (a coalesced prompt and an overflow summary carry several)."""
    return [token.removeprefix("overflow:") for token in message.split("+")]
