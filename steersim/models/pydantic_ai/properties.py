"""Pydantic AI's own promises about the pending-message queue, beside the core invariants (every
accepted message delivered exactly once, in order; every tool call paired with one result; no tool run
twice), and the guards that show the interesting interleavings are reached. Built from the resolved
configuration: the parameters and the bug variant."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from steersim.core.model import Action, Always, Event, Property, Sometimes
from steersim.models.pydantic_ai.spec import kinds_not_enabled
from steersim.models.pydantic_ai.state import (
    ASAP,
    AT_END,
    CANCELLED,
    DEQUEUED,
    DONE,
    IN_REQUEST,
    MODEL,
    REJECTED,
    STRANDED,
    TOOLS,
    WHEN_IDLE,
    AgentState,
    call_name,
    message_name,
    run_name,
    turn_name,
)

S = AgentState


def expected_drain(s: S, kind: str) -> tuple[int, ...]:
    """What the documented queue hands out at a step of `kind`: a request takes the `asap` messages, the
    end both priorities, `asap` first; each in queue order (a priority change keeps a message's place)."""
    asap = tuple(j for j in s.queue if s.priority[j] == ASAP)
    if kind == "agent.request":
        return asap
    return (*asap, *(j for j in s.queue if s.priority[j] == WHEN_IDLE))


def names_follow_requests(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
    """Each event names its run (the run a client starts is the next one, and its requests are numbered
    afresh) and the request it belongs to as the run's k-th (`r1.2`), and a call after its request
    (`r1.2.t1`): a request is the run's next one, a response and a stop name the request the model answers,
    the end-of-run redirect the request it turns the end into (the next one), a call the latest request's."""
    for e in events:
        d = e.data
        if "run" in d and d["run"] != run_name(t.run):
            return False
        if e.name == "run.started" and (t.run != s.run + 1 or t.requests != 0):
            return False
        if e.name == "request" and (t.requests != s.requests + 1 or d["turn"] != turn_name(s.run, t.requests)):
            return False
        if e.name == "response" and d["turn"] != turn_name(s.run, s.requests):
            return False
        if e.name == "redirect" and d["turn"] != turn_name(s.run, s.requests + 1):
            return False
        if e.name == "stopped" and d["turn"] != (turn_name(s.run, s.requests) if s.phase == MODEL else None):
            return False
        if e.name in ("tool.started", "tool.returned") and d["call"] != call_name(s.run, s.requests, a.args[0]):
            return False
    return True


def cancelled_queue_fits(carried: bool) -> Callable[..., bool]:
    """At a cancelled run's stop the messages it still queued are left on its `pending_messages`, failed
    (`stranded`), or, under cancelled_queue=carried, stay queued for the next run, which starts with them;
    a run that follows one that ended normally starts with an empty queue."""
    def fits(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        if a.kind == "agent.stop":
            stranded = next(e.data["stranded"] for e in events if e.name == "stopped")
            if carried:
                return stranded == () and t.queue == s.queue
            return (stranded == tuple(message_name(j) for j in s.queue) and not t.queue
                    and all(t.fate[j] == STRANDED for j in s.queue))
        if a.kind == "client.start_run":
            return t.queue == (s.queue if carried and s.phase == CANCELLED else ())
        return True
    return fits


def priority_change_fits(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
    """`set_enqueue_priority` gives a queued message the other priority and it "keeps its place among queued
    messages": the queue's order is unchanged, and the event shows the new priority."""
    if a.kind != "client.set_priority":
        return True
    j = a.args[0]
    shown = [e.data["priority"] for e in events if e.name == "priority"]
    return t.queue == s.queue and t.priority[j] != s.priority[j] and shown == [t.priority[j]]


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

    runs, rounds, calls = config["runs"], config["tool_rounds"], config["tool_calls"]
    off = kinds_not_enabled(config)
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
        Always("names-follow-requests", step=names_follow_requests, with_events=True,
               events=("request", "response", "redirect", "stopped", "tool.started", "tool.returned", "cancel",
                   "run.started", "run.ended"),
               doc="each event names its run, and its model request as the run's k-th (r1.2, numbered afresh in "
                   "each run), a call after its request (r1.2.t1); the end-of-run redirect names the request it "
                   "turns the end into"),
        Always("cancelled-queue-fits", step=cancelled_queue_fits(config["cancelled_queue"] == "carried"),
               with_events=True, kinds=("agent.stop", "client.start_run"),
               doc="the messages a cancelled run still queued are stranded on its pending_messages (failed) if "
                   "and only if cancelled_queue=stranded, else the next run starts with them; a run after a "
                   "normal end starts with an empty queue"),
        Always("priority-change-keeps-place", step=priority_change_fits, with_events=True,
               kinds=("client.set_priority",),
               doc="set_enqueue_priority gives a queued message the other priority and it keeps its place among "
                   "the queued messages"),
        Always("within-parameters", step=lambda s, a, t: a.kind not in off and t.run < runs
               and t.rounds <= rounds and len(t.calls) <= calls,
               doc="the client drives at most runs runs and uses only the operations the parameters allow (dequeue, "
                   "set_enqueue_priority, cancel), the model calls tools in at most tool_rounds responses a run, "
                   "tool_calls calls each: the check explores the environment its parameters name"),
        Sometimes("run-ends", state=lambda s: s.phase == DONE,
                  doc="some run ends normally, closing its queue"),
    ]
    if runs > 1 and calls and rounds:
        props.append(Sometimes("continuing-run-calls-tools", state=lambda s: s.run > 0 and s.phase == TOOLS,
                               doc="a run continuing the conversation calls tools too (each run has its own "
                                   "tool_rounds)"))
    if config["dequeue"]:
        props.append(Sometimes("message-dequeued", state=lambda s: DEQUEUED in s.fate,
                               doc="the client dequeues some queued message"))
    if config["reprioritise"]:
        props.append(Sometimes("priority-changed", state=lambda s: s.reprioritised,
                               doc="the client changes the priority of some queued message"))
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
