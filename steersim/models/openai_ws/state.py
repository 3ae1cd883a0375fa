"""The state of the Responses WebSocket model: the server's responses and the steers the client sent.

Everything is a named tuple of ints, strings, bools and tuples, so that a state's `repr` (and with it
the explorer's fingerprint) is canonical, and building, hashing and comparing one runs in C: a check
does each for every step it takes. Responses and steers are never removed: their
index is their identity (`resp_0001`, `steer_…01`), and responses of a dropped connection stay, marked
`lost`, so that the client can still aim a stale steer at them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

# Response.status: the `status` of the Responses API, plus `lost` for a response whose connection dropped.
IN_PROGRESS, COMPLETED, INCOMPLETE, FAILED, LOST = "in_progress", "completed", "incomplete", "failed", "lost"
# Response.next: what follows a terminal response.
RUNNING, AUTO, WAITING, ENDED = "", "auto", "waiting", "ended"
# Steer.status: the per-steer lifecycle of spec section 4.3.
ACCEPTED, PENDING, COMMITTED, FAILED_WITH_ID, UNKNOWN, REJECTED = (
    "accepted", "pending", "committed", "failed", "unknown", "rejected")
UNRESOLVED = (ACCEPTED, PENDING)
DEFAULT_CHAIN = "default"  # the chain of a lane that sends no stream_id


class Response(NamedTuple):
    """One response. `kinds` is its plan of output items (`message`, `function_call`, `web_search_call`),
    `done` how many are finished and `open` whether the next one was added but not finished; `queue` the
    accepted, unresolved steers aimed at it in acceptance order; `next` what follows its terminal event
    (`auto`: an automatic successor is due, `waiting`: it waits for the client's required input);
    `successor` the response that continued it; `answered` the client returned its required input;
    `seq` its next sequence number (A10 scope `response`)."""

    lane: int
    conn: int
    parent: int
    origin: str  # root | auto | explicit | followup
    kinds: tuple[str, ...]
    steerable: bool
    status: str = IN_PROGRESS
    done: int = 0
    open: bool = False
    queue: tuple[int, ...] = ()
    next: str = RUNNING
    successor: int = -1
    answered: bool = False
    seq: int = 0

    @property
    def terminal(self) -> bool:
        return self.status != IN_PROGRESS

    @property
    def current_kind(self) -> str:
        return self.kinds[self.done]

    @property
    def client_call_done(self) -> bool:
        """Its output holds a finished client-owned call (the plan ends with it)."""
        return self.done > 0 and self.kinds[self.done - 1] == "function_call"


class Steer(NamedTuple):
    """One `response.steer` frame that reached the server: its target response, the connection it came
    on, which input text it carried (a resend repeats an earlier one), whether the input was valid, and
    its fate with the error code of a failure."""

    target: int
    conn: int
    text: int
    valid: bool
    status: str
    code: str = ""


class WsState(NamedTuple):
    """`conn` counts connections opened before the current one; `connected` whether it is open;
    `rooted` per lane whether the client created its first response on this connection; `carry` is
    empty unless a bug smuggles steers across a reconnect; `conn_seq` the connection-wide sequence
    counter (A10 scope `connection`, and the scope of failures that name no available response); `queued`
    the parents of new requests that arrived while their lane was busy, in arrival order: a lane runs
    its requests FIFO, so each starts once the lane is free."""

    conn: int
    connected: bool
    rooted: tuple[bool, ...]
    responses: tuple[Response, ...] = ()
    steers: tuple[Steer, ...] = ()
    carry: tuple[int, ...] = ()
    conn_seq: int = 0
    queued: tuple[int, ...] = ()


def lane_stream_id(stream_ids: str, lane: int) -> str | None:
    """The `stream_id` a lane sends (parameter `stream_ids`): none for lane 0 when it is the default lane."""
    if lane == 0 and stream_ids == "default":
        return None
    return f"lane-{chr(ord('a') + lane)}"


def later_on_lane(responses: Sequence[Response], index: int) -> tuple[int, ...]:
    """The responses created after `index` on its lane and connection: while there is none, it is its
    lane's newest."""
    r = responses[index]
    return tuple(i for i in range(index + 1, len(responses)) if responses[i].lane == r.lane
                 and responses[i].conn == r.conn)
