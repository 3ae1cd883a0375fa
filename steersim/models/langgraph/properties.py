"""LangGraph's own promises about double texting, beside the core invariants (one active run per
thread, inputs neither lost nor duplicated, ordered history), and the guards that show the races are
reached. Built from the resolved configuration: the parameters and the bug variant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from steersim.core.model import Action, Always, Event, Property, Sometimes
from steersim.models.langgraph.state import (
    ALIVE,
    BUSY,
    BY_CLIENT,
    DELETED,
    ERROR,
    FINISHED,
    IDLE,
    IN_FLIGHT,
    INTERRUPTED,
    NO_TASK,
    NONE,
    PENDING,
    REJECTED,
    REJECTING,
    STOPPED,
    THREAD_ERROR,
    ThreadState,
    interrupted_thread_status,
    item,
)

STORED_NOT = (NONE, REJECTING, REJECTED)  # a run in none of these was stored by its creation

S = ThreadState


def quiet(s: S) -> bool:
    """Nothing in flight: no record pending or running, no task alive."""
    return not any(st in IN_FLIGHT for st in s.status) and not any(t in ALIVE for t in s.task)


def run_index(e: Event) -> int:
    """The index of the run an event names (`r{k+1}`)."""
    return int(e.data["run"][1:]) - 1


def head_values(s: S) -> tuple[str, ...]:
    return s.checkpoints[-1].values if s.checkpoints else ()


def properties(config: Mapping[str, Any]) -> Sequence[Property]:
    last_checkpoint = config["nodes"] + 1
    reading = config["interrupted_thread_status"]

    def expected_status(s: S) -> str:
        j = s.last
        if j < 0 or s.cancel[j] == "rollback":
            return IDLE
        if s.cancel[j] == "interrupt" or s.status[j] == INTERRUPTED:
            return interrupted_thread_status(s, j, last_checkpoint, reading)
        return THREAD_ERROR if s.status[j] == ERROR else IDLE

    def agrees(s: S) -> bool:
        return not quiet(s) or (s.thread_status == expected_status(s) and s.thread_values == head_values(s))

    def busy(s: S) -> bool:
        return not any(st in IN_FLIGHT for st in s.status) or s.thread_status == BUSY

    def no_trace(s: S) -> bool:
        names = {c.name for c in s.checkpoints}
        if any(c.parent is not None and c.parent not in names for c in s.checkpoints):
            return False
        head = head_values(s)
        for j, action in enumerate(s.cancel):
            if action != "rollback" or s.task[j] not in (NO_TASK, STOPPED) or s.to_delete[j]:
                continue
            if s.status[j] != DELETED or any(c.owner == j for c in s.checkpoints) or item(j, 1) in head:
                return False
        return True

    def reject(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        for e in events:  # the answer: 409 for a refused creation, 200 only for a run it stored
            if (e.name == "run.rejected" and e.data["code"] != 409) or (
                    e.name == "run.response" and t.status[run_index(e)] in STORED_NOT):
                return False
        if a.kind != "client.create" or a.args[1] != "reject":
            return True
        in_flight = any(st in IN_FLIGHT for st in s.status)
        return (t.status[a.args[0]] == REJECTING) == in_flight

    def says_started(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        """A run's status change says whether its task started: a run ends in success or error only
        once it started, and a run interrupted while pending never did."""
        for e in events:
            if e.name == "run.status" and e.data["started"] != (t.task[run_index(e)] != NO_TASK):
                return False
        return True

    def stream_ends(s: S, a: Action, t: S) -> bool:
        if a.kind != "stream.leave":
            return True
        j = a.args[0]
        return s.joined[j] and (s.status[j] not in IN_FLIGHT or bool(s.cancel[j]) or s.task[j] in (FINISHED, STOPPED))

    props: list[Property] = [
        Always("thread-agrees-with-last-run", state=agrees,
               doc="with nothing in flight, the thread's status is what the last run to finish leaves and its "
                   "values are its latest checkpoint's"),
        Always("thread-busy-while-in-flight", state=busy, doc="the thread is busy while a run is pending or running"),
        Always("rollback-leaves-no-trace", state=no_trace,
               doc="once a rolled-back run's task has stopped, its record and checkpoints are gone, its input is "
                   "not in the thread's values, and no checkpoint's parent is missing"),
        Always("reject-409-iff-in-flight", step=reject, with_events=True,
               doc="a reject creation answers 409 exactly when a run is pending or running on the thread, and a "
                   "creation is answered 200 only when its run is stored"),
        Always("run-status-says-started", step=says_started, with_events=True, events=("run.status",),
               doc="a run's status change says whether its task started: success and error only after it "
                   "started, interrupted while pending never"),
        Always("stream-ends-when-run-over", step=stream_ends, kinds=("stream.leave",),
               doc="a stream client's stream ends only once its run is over: its final status written, its "
                   "cancellation requested, or its task done"),
    ]
    if config["cancels"] > 0:
        props.append(Sometimes("interrupted-run-leaves-thread", state=lambda s: quiet(s) and s.last >= 0
                               and s.canceller[s.last] == BY_CLIENT and s.written[s.last] > 1,
                               doc="a run the client interrupted after its input was written is the last to "
                                   "finish, so the thread shows its status"))
    if config["runs"] < 2:
        return props
    strategy = config["strategy"]
    props.append(Sometimes("created-while-running", state=lambda s: s.created > 1 and s.status[s.created - 1] in (
        PENDING, REJECTING) and any(t in ALIVE for t in s.task[:s.created - 1]),
                  doc="a run is created while another run's task runs"))
    if strategy in ("any", "rollback"):
        props.append(Sometimes("running-run-rolled-back", state=lambda s: any(
            c == "rollback" and s.task[j] != NO_TASK for j, c in enumerate(s.cancel)),
                  doc="a run whose task has started is rolled back"))
    if config["stream_clients"] and strategy != "reject" and strategy != "enqueue":
        props.append(Sometimes("watched-run-cancelled", state=lambda s: any(
            s.joined[j] and c and s.task[j] != NO_TASK for j, c in enumerate(s.cancel)),
                  doc="a run a stream client watches is cancelled while it runs (the stream decides how rollback "
                      "deletes it)"))
    if strategy in ("any", "interrupt"):
        props.append(Sometimes("interrupted-run-keeps-progress", state=lambda s: any(
            c == "interrupt" and s.task[j] == STOPPED and s.written[j] > 1 for j, c in enumerate(s.cancel)),
                  doc="an interrupted run stops with its input and progress kept"))
    return props
