"""LangGraph's own promises about double texting, beside the core invariants (one active run per
thread, inputs neither lost nor duplicated, ordered history), and the guards that show the races are
reached. Built from the resolved configuration: the parameters and the bug variant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from steersim.core.model import Action, Always, Event, Eventually, Property, Sometimes
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
    RUNNING,
    STOPPED,
    SUCCESS,
    THREAD_ERROR,
    Checkpoint,
    ThreadState,
    interrupted_thread_status,
    item,
    run_name,
)

STORED_NOT = (NONE, REJECTING, REJECTED)  # a run in none of these was stored by its creation
STORED = (PENDING, RUNNING, SUCCESS, ERROR, INTERRUPTED)  # a run record the API returns

S = ThreadState


def quiet(s: S) -> bool:
    """Nothing in flight: no record pending or running, no task alive."""
    return not any(st in s.status for st in IN_FLIGHT) and not any(t in s.task for t in ALIVE)


def run_index(e: Event) -> int:
    """The index of the run an event names (`r{k+1}`)."""
    return int(e.data["run"][1:]) - 1


def head_values(s: S) -> tuple[str, ...]:
    return s.checkpoints[-1].values if s.checkpoints else ()


def settled(s: S) -> bool:
    """Every creation answered, every cancellation carried out, nothing in flight, every task stopped and
    every stream ended."""
    return (True not in s.to_signal and True not in s.to_delete and True not in s.joined and quiet(s)
            and all(r or st == NONE for r, st in zip(s.responded, s.status, strict=True)))


Shown = list[tuple[str, dict[str, Any]]]


def _kept(s: S, j: int) -> bool:
    """What the harness reads when a task ends: the run still has a stored checkpoint beyond its input one."""
    return any(c.owner == j and c.name != f"{run_name(j)}.0" for c in s.checkpoints)


def shown(s: S, a: Action, t: S) -> Shown:
    """The events a step shows (name, data), read off the thread's records before and after it the way the
    recorder reads the real server's (`harness/recorder.py`, `Changes.diff`): new checkpoints, a run's
    checkpoints all gone, new runs, changed run statuses, deleted runs, a changed thread, stream clients
    that came or left; and what the harness sees happen: a creation's answer (409 for a refused run, else
    200) and a task's end (whether the run keeps a checkpoint beyond its input one)."""
    out: Shown = []
    if s.checkpoints is not t.checkpoints and s.checkpoints != t.checkpoints:
        before = {c.name for c in s.checkpoints}
        for c in t.checkpoints:
            if c.name not in before:
                n = int(c.name.rsplit(".", 1)[1])
                out.append(("checkpoint", {"run": run_name(c.owner), "name": c.name, "values": c.values,
                                           "parent": c.parent, "adds": c.values[-1] if n and c.values else ""}))
        owners = {c.owner for c in t.checkpoints}
        out.extend(("checkpoints.deleted", {"run": run_name(j)})
                   for j in sorted({c.owner for c in s.checkpoints} - owners))
    for j in range(len(s.status)):
        was, now = s.status[j], t.status[j]
        if was == now and s.responded[j] == t.responded[j] and s.task[j] == t.task[j] and s.joined[j] == t.joined[j]:
            continue
        name = run_name(j)
        if was != now and now in STORED and was not in STORED:
            out.append(("run.created", {"run": name, "strategy": a.args[1] if a.kind == "client.create" else None}))
        elif was != now and was in STORED and now not in STORED:
            out.append(("run.deleted", {"run": name, "started": t.task[j] != NO_TASK, "settled": was == INTERRUPTED}))
        if now in STORED and now != (was if was in STORED else PENDING):
            out.append(("run.status", {"run": name, "status": now, "started": t.task[j] != NO_TASK}))
        if t.responded[j] and not s.responded[j]:
            out.append(("run.rejected", {"run": name, "code": 409}) if now == REJECTED
                       else ("run.response", {"run": name, "code": 200}))
        if t.task[j] == STOPPED != s.task[j]:
            out.append(("task.ended", {"run": name, "kept": _kept(t, j)}))
        if t.joined[j] != s.joined[j]:
            out.append(("stream.joined" if t.joined[j] else "stream.left", {"run": name}))
    if t.thread_status != s.thread_status or t.thread_values != s.thread_values:
        out.append(("thread", {"status": t.thread_status, "values": t.thread_values}))
    return out


def continues(before: Sequence[Checkpoint], c: Checkpoint) -> bool:
    """Whether checkpoint `c`, written after `before`, continues the thread's history: a run's input
    checkpoint (`.0`) starts from the thread's latest checkpoint, with its values; each later one has
    the run's previous checkpoint as its parent and its values plus the one item it adds (the run's
    input, then one per node)."""
    n = int(c.name.rsplit(".", 1)[1])
    if n == 0:
        head = before[-1] if before else None
        return (c.parent, c.values) == ((head.name, head.values) if head else (None, ()))
    parent = next((p for p in before if p.name == c.parent), None)
    return (c.parent == f"{run_name(c.owner)}.{n - 1}" and parent is not None
            and c.values == (*parent.values, item(c.owner, n)))


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

    def events_tell(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        expected = shown(s, a, t)
        if len(expected) != len(events):
            return False
        for e in events:  # the same events in any order: the recorder orders them itself
            if (e.name, e.data) not in expected:
                return False
            expected.remove((e.name, e.data))
        return True

    def history(s: S, a: Action, t: S) -> bool:
        if s.checkpoints is t.checkpoints:
            return True
        if a.kind == "worker.checkpoint" and t.checkpoints[:len(s.checkpoints)] != s.checkpoints:
            return False  # a write keeps every stored checkpoint and appends its own
        before = {c.name for c in s.checkpoints}
        return all(continues(s.checkpoints, c) for c in t.checkpoints if c.name not in before)

    def answers_after_cancelling(s: S, a: Action, t: S) -> bool:
        k = a.args[0] if a.kind == "client.respond" else None
        return k is None or not any(c == k and (s.to_signal[v] or s.to_delete[v]) for v, c in enumerate(s.canceller))

    def fails_in_a_node(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        return all(1 <= t.written[run_index(e)] <= last_checkpoint for e in events
                   if e.name == "run.status" and e.data["status"] == ERROR)

    def joins_stored(s: S, a: Action, t: S) -> bool:
        return a.kind != "stream.join" or s.status[a.args[0]] not in STORED_NOT

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
        Always("events-tell-record-changes", step=events_tell, with_events=True,
               doc="a step shows exactly what changed in the thread's records (checkpoints, runs, the thread, "
                   "stream clients), each once, with the records' new contents, and the answers and task ends "
                   "that happened: a record the API would return unchanged is not announced"),
        Always("checkpoints-continue-history", step=history, kinds=("worker.checkpoint",),
               doc="a run's checkpoints extend the thread's history: its input checkpoint starts from the "
                   "thread's latest checkpoint, and each later one from the run's previous checkpoint, with "
                   "its values and the one item the step adds"),
        Always("creation-answers-after-cancelling", step=answers_after_cancelling, kinds=("client.respond",),
               doc="an interrupt or rollback creation answers only once the cancellations it asked for are "
                   "carried out: control messages sent, rolled-back runs deleted"),
        Always("run-fails-in-a-node", step=fails_in_a_node, with_events=True, events=("run.status",),
               doc="a run ends in error only from a node that raised: once its input checkpoint is written and "
                   "before its last node's checkpoint (a run whose nodes all completed succeeds)"),
        Always("stream-joins-a-stored-run", step=joins_stored, kinds=("stream.join",),
               doc="a stream client joins only a run its creation stored (it has the run's id from the 200 "
                   "answer or the run list), not one never created or refused with 409"),
        Eventually("thread-settles", trigger=lambda s: not settled(s), goal=settled,
                   doc="whatever the client does, every creation is answered, every cancellation carried out, "
                       "every run ends, its task stops and every stream ends"),
    ]
    if config["node_errors"]:
        props.append(Sometimes("node-error-ends-run", state=lambda s: ERROR in s.status,
                               doc="a node raises and its run ends in error"))
    if config["cancels"] > 0:
        props.append(Sometimes("interrupted-run-leaves-thread", state=lambda s: quiet(s) and s.last >= 0
                               and s.canceller[s.last] == BY_CLIENT and s.written[s.last] > 1,
                               doc="a run the client interrupted after its input was written is the last to "
                                   "finish, so the thread shows its status"))
    if config["runs"] < 2:
        return props
    strategy = config["strategy"]
    if strategy in ("any", "reject"):
        props.append(Sometimes("creation-refused", state=lambda s: REJECTED in s.status,
                               doc="a reject creation meets a run in flight and is refused with 409"))
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
