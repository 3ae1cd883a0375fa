"""The state of one LangGraph thread and the runs created on it, as the in-memory runtime keeps them.

Runs are numbered in creation order: run k is named `r{k}` (k from 1), and its input is that name, so
an index names the run, its input and its items. A run's record has a status; its worker task (the
graph executing) has a life of its own, because cancellation is requested at once (the record and a
control message) but takes effect only when the task stops. Checkpoints are named `r{k}.{n}` (the n-th
checkpoint run k wrote, from 0) and each knows its parent, so that a deleted parent shows as dangling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

THREAD = "t"
BY_CLIENT = -2  # the canceller of a run the client cancelled itself (runs.cancel), not a creation
STRATEGIES = ("reject", "enqueue", "interrupt", "rollback")
ANY = "any"  # the `strategy` parameter's value under which each creation picks one of the four

# record status ("" before the run is created); DELETED: the record is gone; REJECTED: 409, never stored
NONE, PENDING, RUNNING, SUCCESS, ERROR, INTERRUPTED = "", "pending", "running", "success", "error", "interrupted"
DELETED, REJECTING, REJECTED = "deleted", "rejecting", "rejected"
IN_FLIGHT = (PENDING, RUNNING)
# worker task: not started; executing nodes; its node cancelled (clean-up done, the status not yet
# written); the run's final status written; stopped
NO_TASK, ACTIVE, CANCELLED, FINISHED, STOPPED = "", "active", "cancelled", "finished", "stopped"
ALIVE = (ACTIVE, CANCELLED, FINISHED)
# thread status
IDLE, BUSY, THREAD_ERROR, THREAD_INTERRUPTED = "idle", "busy", "error", "interrupted"


def run_name(k: int) -> str:
    return f"r{k + 1}"


def item(k: int, step: int) -> str:
    """What checkpoint `step` of run k adds to the thread's items: its input at step 1 (the input
    checkpoint, step 0, holds the values it started from), then one item per node."""
    return run_name(k) if step == 1 else f"{run_name(k)}.{step - 1}"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One stored checkpoint: its name, the run that wrote it, its values and its parent's name."""

    name: str
    owner: int
    values: tuple[str, ...]
    parent: str | None


@dataclass(frozen=True, slots=True)
class ThreadState:
    """`status[k]` is run k's record status, `strategy[k]` the multitask strategy it was created with,
    `task[k]` its worker task, `written[k]` the checkpoints its task has written, `cancel[k]` the
    cancellation requested for it ("" none, else interrupt or rollback) and `canceller[k]` the run whose
    creation requested it (-1: none; BY_CLIENT: the client's runs.cancel), `to_signal[k]` and
    `to_delete[k]` the control message and the deletion that request still has to carry out,
    `delivered[k]` whether its task's listener has noticed the control message, `responded[k]` whether its
    creation has answered, `joined[k]` whether a stream client is subscribed to it, `was_joined[k]` whether one
    ever was, `memory[k]` the name and values of the last checkpoint its task wrote (its tracker's,
    kept whatever is deleted since). `checkpoints` are the stored checkpoints in write order (the last
    is the thread's head); `thread_status`, `thread_values` the thread record; `last` the run whose
    final status was written last (-1: none yet)."""

    status: tuple[str, ...]
    strategy: tuple[str, ...]
    task: tuple[str, ...]
    written: tuple[int, ...]
    cancel: tuple[str, ...]
    canceller: tuple[int, ...]
    to_signal: tuple[bool, ...]
    to_delete: tuple[bool, ...]
    delivered: tuple[bool, ...]
    responded: tuple[bool, ...]
    joined: tuple[bool, ...]
    was_joined: tuple[bool, ...]
    memory: tuple[tuple[str, tuple[str, ...]] | None, ...]
    checkpoints: tuple[Checkpoint, ...]
    thread_status: str
    thread_values: tuple[str, ...]
    last: int

    @property
    def created(self) -> int:
        return sum(1 for s in self.status if s != NONE)


FIELDS = ThreadState.__slots__


def with_(s: ThreadState, **changes: Any) -> ThreadState:
    values = {name: getattr(s, name) for name in FIELDS}
    values.update(changes)
    return ThreadState(**values)


def set_at(values: tuple, index: int, value: Any) -> tuple:
    return (*values[:index], value, *values[index + 1:])


def initial_state(runs: int) -> ThreadState:
    return ThreadState(status=(NONE,) * runs, strategy=("",) * runs, task=(NO_TASK,) * runs, written=(0,) * runs,
                       cancel=("",) * runs, canceller=(-1,) * runs, to_signal=(False,) * runs,
                       to_delete=(False,) * runs, delivered=(False,) * runs, responded=(False,) * runs,
                       joined=(False,) * runs, was_joined=(False,) * runs, memory=(None,) * runs, checkpoints=(),
                       thread_status=IDLE, thread_values=(), last=-1)


def interrupted_thread_status(s: ThreadState, j: int, last_checkpoint: int, reading: str) -> str:
    """The thread's status after run j was interrupted with nothing else in flight: `interrupted`
    while its last checkpoint has nodes left to run (the runtime's reading), or `idle`; a run
    interrupted before its first checkpoint leaves the thread idle."""
    has_next = 0 < s.written[j] <= last_checkpoint
    return THREAD_INTERRUPTED if has_next and reading == "interrupted" else IDLE


def strategies(choice: str) -> tuple[str, ...]:
    """The strategies a creation may use under the `strategy` parameter."""
    return STRATEGIES if choice == ANY else (choice,)
