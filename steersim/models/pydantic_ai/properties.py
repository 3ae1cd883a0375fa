"""Pydantic AI's own promises about the pending-message queue, beside the core invariants (every
accepted message delivered exactly once, in order; every tool call paired with one result; no tool run
twice), and the guards that show the interesting interleavings are reached. Built from the resolved
configuration: the parameters and the bug variant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from steersim.core.model import Action, Always, Property, Sometimes
from steersim.models.pydantic_ai.state import (
    ASAP,
    AT_END,
    CANCELLED,
    DONE,
    IN_REQUEST,
    REJECTED,
    WHEN_IDLE,
    AgentState,
)

S = AgentState


def expected_drain(s: S, kind: str) -> tuple[int, ...]:
    """What the documented queue hands out at a step of `kind`: a request takes the `asap` messages, the
    end both priorities, `asap` first; each in queue order (a priority change keeps a message's place)."""
    asap = tuple(j for j in s.queue if s.priority[j] == ASAP)
    if kind == "agent.request":
        return asap
    return (*asap, *(j for j in s.queue if s.priority[j] == WHEN_IDLE))


def properties(config: Mapping[str, Any]) -> Sequence[Property]:
    def when_idle_waits(s: S) -> bool:
        return not any(p == WHEN_IDLE and f == IN_REQUEST for p, f in zip(s.priority, s.fate, strict=True))

    def asap_joins(s: S, a: Action, t: S) -> bool:
        return a.kind != "agent.request" or not any(t.priority[j] == ASAP for j in t.queue)

    def in_order(s: S, a: Action, t: S) -> bool:
        if a.kind not in ("agent.request", "agent.end"):
            return True
        return t.history[len(s.history):] == expected_drain(s, a.kind)

    def raises_after_end(s: S, a: Action, t: S) -> bool:
        return a.kind != "client.enqueue" or s.phase not in (DONE, CANCELLED) or t.fate[a.args[0]] == REJECTED

    props: list[Property] = [
        Always("when-idle-waits-for-end", state=when_idle_waits,
               doc="a `when_idle` message is delivered only when the run would otherwise end, never into a "
                   "request the run makes on its own"),
        Always("asap-joins-next-request", step=asap_joins,
               doc="every `asap` message queued when a model request is prepared goes into that request"),
        Always("delivery-follows-queue-order", step=in_order,
               doc="a request takes the queued `asap` messages, the end of a run `asap` then `when_idle`, each "
                   "in queue order, where a priority change keeps a message's place"),
        Always("enqueue-raises-after-end", step=raises_after_end,
               doc="`enqueue` on a run that has ended (or was cancelled) raises `UserError`"),
    ]
    chosen = config["priority"]
    if chosen in ("any", ASAP):
        props.append(Sometimes("asap-redirects-end", state=lambda s: any(
            p == ASAP and f == AT_END for p, f in zip(s.priority, s.fate, strict=True)),
            doc="an `asap` message arriving during the final step turns the run's end into one more request"))
    if chosen in ("any", WHEN_IDLE):
        props.append(Sometimes("when-idle-continues-run", state=lambda s: any(
            p == WHEN_IDLE and f == AT_END for p, f in zip(s.priority, s.fate, strict=True)),
            doc="a `when_idle` message turns a run that would end into one more request"))
    if config["cancel"] and config["runs"] > 1 and config["tool_calls"] and config["tool_rounds"]:
        props.append(Sometimes("cancelled-with-calls-open", state=lambda s: bool(s.open_calls),
                               doc="a run is cancelled while its tool calls have no result"))
    return props
