"""The state of one Foundry steerable chain, its callers and the process that hosts it.

The state mirrors what the package keeps: the persisted record (status, `last_input_id`, the FIFO of
queued inputs, the input of the turn in flight), the in-memory execution (the running handler's
context: `cancel`, `cancel_requested`, the visible `pending_input_count`), the in-memory list of
futures that bind queued inputs to their callers' handles, and each caller's handle. Callers and
inputs are numbered: caller `c` sends input `m{c}`, so an index names both.
"""

from __future__ import annotations

from typing import Any, NamedTuple

NOBODY = -1
ORPHAN = -2  # a registered future that belongs to no caller

# process phases
UP, BOOT, DOWN, STOPPING = "up", "boot", "down", "stopping"
# record status (absent: no record yet)
ABSENT, IN_PROGRESS, SUSPENDED = "absent", "in_progress", "suspended"
# the turn in flight: none; promoted or recovered but the handler not yet entered; the handler running;
# the handler returned or raised and the framework has not yet finished the turn
NONE, ENTERING, RUNNING, EXITED = "none", "entering", "running", "exited"
# caller phases
IDLE, WAITING, DONE, LOST = "idle", "waiting", "done", "lost"
# turn outcomes, in the package's words
RETURNED, FAILED, CANCELLED, DEFERRED = "returned", "TaskFailed", "TaskCancelled", "TaskDeferred"
# start() outcomes
FRESH, RESUMED, QUEUED = "fresh", "resumed", "queued"
PRECONDITION, FULL, CONFLICT = "LastInputIdPreconditionFailed", "SteeringQueueFull", "TaskConflictError"
REJECTIONS = (PRECONDITION, FULL, CONFLICT)


def input_id(c: int) -> str:
    return f"m{c}"


class FoundryState(NamedTuple):
    """A named tuple, so that the explorer hashes and compares states in C. `callers[c]` is caller c's phase;
    `queued[c]` says its handle came back with `is_queued=True`. `last` is the record's `last_input_id` (a
    caller index or NOBODY), `active` the input of the turn in flight, `queue` the persisted FIFO. `turn`,
    `mode`, `steered`, `cancel`, `requested`, `seen` and `checks` describe the running handler's context;
    `handle` is the caller whose handle the turn in flight resolves, `futures` the registered futures of queued
    inputs in promotion order; `outcome` and `resolved` the finished handler's outcome and whether its handle
    has it; `entered` the inputs that have been some turn's `ctx.input`; `rejection` the code of the latest
    refused start()."""

    proc: str
    crashes: int
    shutdowns: int
    cancels: int
    callers: tuple[str, ...]
    queued: tuple[bool, ...]
    status: str
    last: int
    active: int
    queue: tuple[int, ...]
    turn: str
    mode: str
    steered: bool
    cancel: bool
    requested: bool
    seen: int
    checks: int
    handle: int
    futures: tuple[int, ...]
    outcome: str
    resolved: bool
    entered: tuple[int, ...]
    rejection: str


FIELDS = FoundryState._fields
FIELD_INDEX = {name: k for k, name in enumerate(FIELDS)}
_new = tuple.__new__  # builds a FoundryState from its fields in C, without the named tuple's own __new__


def with_(s: FoundryState, **changes: Any) -> FoundryState:
    """A copy of `s` with `changes`: direct construction, much faster than `_replace` on the explorer's
    hot path."""
    values = list(s)
    for name, value in changes.items():
        values[FIELD_INDEX[name]] = value
    return _new(FoundryState, values)


def needs_recovery(s: FoundryState) -> bool:
    """A record in progress that no execution of this lifetime tracks was left by a crash."""
    return s.proc == BOOT and s.status == IN_PROGRESS and s.turn == NONE


def start_key(s: FoundryState, if_last: int) -> tuple:
    """All that what a start() naming `if_last` answers depends on: whether the record needs recovery
    and, after recovery (which may shorten the queue), its status, queue length and `last_input_id`."""
    return s.proc, s.status, s.turn, len(s.queue), s.last, if_last


def initial_state(callers: int) -> FoundryState:
    return FoundryState(
        proc=UP, crashes=0, shutdowns=0, cancels=0, callers=(IDLE,) * callers, queued=(False,) * callers,
        status=ABSENT, last=NOBODY, active=NOBODY, queue=(), turn=NONE, mode="", steered=False, cancel=False,
        requested=False, seen=0, checks=0, handle=NOBODY, futures=(), outcome="", resolved=True, entered=(),
        rejection="",
    )


def set_at(values: tuple, index: int, value: Any) -> tuple:
    return (*values[:index], value, *values[index + 1:])
