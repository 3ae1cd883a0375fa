"""The state of one conversation driven by Pydantic AI agent runs, and the runs' pending-message queue.

Runs are numbered from 0 (run k is named `r{k+1}`); each continues the conversation of the one before it
with that run's history (`message_history=`). Messages are numbered in the order the client enqueues them
(message k is named `m{k+1}`), whichever run they are enqueued into; model requests are numbered within
their run (`r1.2` is run r1's second request) and a request's tool calls are named after it (`r1.2.t1`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CHAIN = "c"  # the conversation every run continues
ASAP, WHEN_IDLE = "asap", "when_idle"
PRIORITIES = (ASAP, WHEN_IDLE)
ANY = "any"  # the `priority` parameter's value under which each enqueue picks one of the two

# run phase: ModelRequestNode (the request being prepared: `before_model_request` drains `asap`), the model
# answering, CallToolsNode running the response's tool calls, the response was final (End is next), the
# queue found empty at the end but not yet closed (a bug variant's split), the run ended, the run cancelled
REQUEST, MODEL, TOOLS, ENDING, CLOSING, DONE, CANCELLED = (
    "request", "model", "tools", "ending", "closing", "done", "cancelled")
LIVE = (REQUEST, MODEL, TOOLS, ENDING, CLOSING)
# a message's fate: not yet enqueued, queued, delivered into a model request being prepared, delivered by
# the end-of-run redirect, removed by `dequeue`, refused (the run had ended), left queued by a cancelled run
NONE, QUEUED, IN_REQUEST, AT_END, DEQUEUED, REJECTED, STRANDED = (
    "", "queued", "in-request", "at-end", "dequeued", "rejected", "stranded")
DELIVERED = (IN_REQUEST, AT_END)
# a tool call: requested by the response, running, returned
REQUESTED, RUNNING, RETURNED = "requested", "running", "returned"


def run_name(k: int) -> str:
    return f"r{k + 1}"


def message_name(k: int) -> str:
    return f"m{k + 1}"


def turn_name(run: int, request: int) -> str:
    """The name of run `run`'s `request`-th model request (from 1)."""
    return f"{run_name(run)}.{request}"


def call_name(run: int, request: int, i: int) -> str:
    return f"{turn_name(run, request)}.t{i + 1}"


@dataclass(frozen=True, slots=True)
class AgentState:
    """`run` is the current run and `phase` where it is; `requests` the model requests it has made and
    `rounds` how many of their responses called tools; `calls` the state of each call of the latest response
    (empty once their results went into a request); `open_calls` the calls a cancelled run left without a
    result, which the next run closes out with synthesized `interrupted` returns. `priority[k]` and
    `fate[k]` are message k's priority (now) and fate; `queue` the queued messages in queue order (the
    current run's `pending_messages`); `closed` whether the current run's queue refuses enqueues;
    `history` the delivered messages in the order they entered the conversation's history; `cancelling` whether
    `cancel()` has been called and the run has not stopped yet; `reprioritised` whether some queued message's
    priority was changed."""

    run: int
    phase: str
    requests: int
    rounds: int
    calls: tuple[str, ...]
    open_calls: tuple[str, ...]
    priority: tuple[str, ...]
    fate: tuple[str, ...]
    queue: tuple[int, ...]
    closed: bool
    history: tuple[int, ...]
    cancelling: bool
    reprioritised: bool  # some queued message's priority was changed (vacuity)

    @property
    def sent(self) -> int:
        return sum(1 for f in self.fate if f != NONE)


FIELDS = AgentState.__slots__


def with_(s: AgentState, **changes: Any) -> AgentState:
    values = {name: getattr(s, name) for name in FIELDS}
    values.update(changes)
    return AgentState(**values)


def set_at(values: tuple, index: int, value: Any) -> tuple:
    return (*values[:index], value, *values[index + 1:])


def initial_state(messages: int) -> AgentState:
    return AgentState(run=0, phase=REQUEST, requests=0, rounds=0, calls=(), open_calls=(),
                      priority=("",) * messages, fate=(NONE,) * messages, queue=(), closed=False, history=(),
                      cancelling=False, reprioritised=False)


def priorities(choice: str) -> tuple[str, ...]:
    """The priorities an enqueue may use under the `priority` parameter."""
    return PRIORITIES if choice == ANY else (choice,)
