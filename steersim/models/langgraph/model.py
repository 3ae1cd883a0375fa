"""LangGraph's double texting: runs created on one thread while another is in flight.

A client creates up to `runs` runs on one thread, each with a `multitask_strategy`. A creation that
finds a run pending or running on the thread is refused with 409 under `reject`; under the other
strategies it is stored as pending, and under `interrupt` and `rollback` the same step cancels the
runs in flight; the creation answers once the cancellations are carried out. Cancellation is
requested at once (an interrupted run's record says so; a rolled-back run is deleted, a running one
that a stream client watches only when its task stops) and reaches the run's task by a control
message, which the task's listener notices later; until then the task may still write checkpoints.
The task then stops at its next await, its clean-up may take more steps, and it writes the run's
final status into the run and thread records. A dispatcher picks the oldest pending run, one run at a
time per thread. A run's task writes the input checkpoint (the values it starts from), the
checkpoint that applies its input, and one checkpoint per node; a node may raise (the run ends in
error). A stream client may join any run it was given (a cancelled or deleted one too: its stream
ends at once) and leaves when its stream ends.

The model is the documented contract: one run at a time per thread, a cancelled run does no more
work once the cancellation has reached its task, and rollback leaves no trace. Each step is one
atomic step of the in-memory runtime, as the harness observes them between steps of the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from steersim.core.facts import Fact
from steersim.core.model import Action, Event, ModelBase, Property
from steersim.core.monitors import Monitor
from steersim.models.langgraph import facts as lg_facts
from steersim.models.langgraph.facts import canonical
from steersim.models.langgraph.monitors import CreationsAnswered
from steersim.models.langgraph.spec import DEFAULT_TIMING
from steersim.models.langgraph.state import (
    ACTIVE,
    ALIVE,
    BUSY,
    BY_CLIENT,
    CANCELLED,
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
    THREAD,
    THREAD_ERROR,
    Checkpoint,
    ThreadState,
    initial_state,
    interrupted_thread_status,
    item,
    run_name,
    set_at,
    strategies,
    with_,
)

S = ThreadState


class LangGraphModel(ModelBase):
    """One thread of the in-memory runtime; parameters as in `steersim.models.langgraph.SPEC`."""

    name = "langgraph"
    fair_actors = ("server", "dispatcher", "worker:*", "stream:*")
    action_kinds = ("client.create", "client.respond", "client.cancel", "server.signal", "server.delete",
                    "dispatcher.pick", "worker.notice", "worker.checkpoint", "worker.fail", "worker.finish",
                    "worker.cancelled", "worker.settle", "worker.stop", "stream.join", "stream.leave")

    def __init__(self, params: Mapping[str, Any] | None = None, bug: str | None = None) -> None:
        super().__init__(params, bug)
        p = self.params
        self.n: int = p["runs"]
        self.nodes: int = p["nodes"]
        self.last_checkpoint = self.nodes + 1  # input, input applied, one per node
        self.strategies = strategies(p["strategy"])
        self.joins: bool = p["stream_clients"]
        self.node_errors: bool = p["node_errors"]
        self.interrupted_status: str = p["interrupted_thread_status"]
        self.cancels: int = p["cancels"]
        # the records no answer is sent for, and no stream client joins (bugs refusal-left-unanswered, join-refused-run)
        self.unanswered = (REJECTING,) if self.bug == "refusal-left-unanswered" else ()
        self.unjoinable = (NONE, REJECTING) if self.bug == "join-refused-run" else (NONE, REJECTING, REJECTED)
        # the statuses of a run whose stream goes on (bug stream-ends-early: a pending run's only)
        self.streaming = (PENDING,) if self.bug == "stream-ends-early" else IN_FLIGHT

    # ------------------------------------------------------------------ actions
    def init_states(self) -> Sequence[S]:
        return [initial_state(self.n)]

    def actions(self, s: S) -> list[Action]:
        out: list[Action] = []
        k = s.created
        if k < self.n:
            out.extend(Action("client", "client.create", (k, strategy)) for strategy in self.strategies)
        if k == self.n and PENDING not in s.status and self._client_cancels(s) < self.cancels:
            out.extend(Action("client", "client.cancel", (j,)) for j in range(self.n)
                       if s.status[j] == RUNNING and not s.cancel[j])
        for j in range(self.n):
            out.extend(self._run_actions(s, j))
        if self._pick(s) is not None:
            out.append(Action("dispatcher", "dispatcher.pick"))
        return out

    def _run_actions(self, s: S, j: int) -> list[Action]:
        out: list[Action] = []
        if not s.responded[j] and s.status[j] != NONE and not self._cancelling(s, j) and (
                s.status[j] not in self.unanswered):
            out.append(Action("client", "client.respond", (j,)))
        if s.to_signal[j]:
            out.append(Action("server", "server.signal", (j,)))
        if s.to_delete[j] and not s.to_signal[j] and (s.task[j] != ACTIVE or s.delivered[j]):
            out.append(Action("server", "server.delete", (j,)))
        worker = f"worker:{run_name(j)}"
        if s.task[j] == ACTIVE and not s.delivered[j] and s.written[j] < self.last_checkpoint + 1:
            out.append(Action(worker, "worker.checkpoint", (j,)))
        if self.can_progress(s, j):
            if s.written[j] == self.last_checkpoint + 1:
                out.append(Action(worker, "worker.finish", (j,)))
            if self.node_errors and 1 <= s.written[j] <= self.last_checkpoint + (self.bug == "error-after-last-node"):
                out.append(Action(worker, "worker.fail", (j,)))
        if s.task[j] == ACTIVE and s.cancel[j] and not s.to_signal[j] and not s.delivered[j]:
            out.append(Action(worker, "worker.notice", (j,)))
        if s.task[j] == ACTIVE and s.delivered[j]:
            out.append(Action(worker, "worker.cancelled", (j,)))
        if s.task[j] == CANCELLED:
            out.append(Action(worker, "worker.settle", (j,)))
        if s.task[j] == FINISHED:
            out.append(Action(worker, "worker.stop", (j,)))
        stream = f"stream:{run_name(j)}"
        if self.joins and not s.was_joined[j] and s.status[j] not in self.unjoinable:
            out.append(Action(stream, "stream.join", (j,)))
        if s.joined[j] and self._stream_over(s, j):
            out.append(Action(stream, "stream.leave", (j,)))
        return out

    @staticmethod
    def _client_cancels(s: S) -> int:
        """The runs.cancel requests the client has sent: it sends them once its creations are done and no
        run waits, so that the run it interrupts may be the last to finish."""
        return sum(1 for c in s.canceller if c == BY_CLIENT)

    def can_progress(self, s: S, j: int) -> bool:
        """A task ends its run (success or error) only while nobody has asked it to stop; it writes
        checkpoints until the control message reaches it (`worker.checkpoint`)."""
        return s.task[j] == ACTIVE and s.status[j] == RUNNING and not s.cancel[j]

    def _cancelling(self, s: S, j: int) -> bool:
        """A creation answers after its own cancellations have been carried out (they are gathered)."""
        return self.bug != "answers-before-cancelling" and any(
            s.canceller[v] == j and (s.to_signal[v] or s.to_delete[v]) for v in range(j))

    def _stream_over(self, s: S, j: int) -> bool:
        """A stream ends when its run is no longer in flight, is cancelled, or its task has finished."""
        return s.status[j] not in self.streaming or bool(s.cancel[j]) or s.task[j] in (FINISHED, STOPPED)

    def _pick(self, s: S) -> int | None:
        """The oldest pending run not cancelled, when no run on the thread runs (a cancelled run runs
        until its task stops) and no cancelled run still waits to be deleted."""
        pending = [j for j in range(self.n) if s.status[j] == PENDING and not s.cancel[j]]
        if not pending or RUNNING in s.status or any(s.to_delete):
            return None
        if self.bug != "dispatch-by-status" and any(t in ALIVE for t in s.task):
            return None
        return max(pending) if self.bug == "newest-pending-first" else pending[0]

    # ------------------------------------------------------------------ transitions
    def step(self, s: S, a: Action) -> tuple[S, list[Event]] | None:
        kind = a.kind
        if kind == "client.create":
            return self._create(s, *a.args)
        if kind == "client.respond":
            return self._respond(s, a.args[0])
        if kind == "client.cancel":  # runs.cancel with its default action: the same code as a creation's
            return self._cancel(s, BY_CLIENT, a.args, "interrupt")
        if kind == "server.signal":
            j = a.args[0]
            return with_(s, to_signal=set_at(s.to_signal, j, False)), []
        if kind == "worker.notice":
            j = a.args[0]
            return with_(s, delivered=set_at(s.delivered, j, True)), []
        if kind == "server.delete":
            j = a.args[0]
            t, events = self.delete(with_(s, to_delete=set_at(s.to_delete, j, False)), j)
            return t, events
        if kind == "dispatcher.pick":
            j = self._pick(s)
            assert j is not None
            t = with_(s, status=set_at(s.status, j, RUNNING), task=set_at(s.task, j, ACTIVE))
            return t, [Event("dispatcher", "worker", "run.status", {"run": run_name(j), "status": RUNNING,
                                                                      "started": True})]
        if kind == "worker.checkpoint":
            return self._checkpoint(s, a.args[0])
        if kind == "worker.finish":
            return self._settle(s, a.args[0], SUCCESS)
        if kind == "worker.fail":
            return self._settle(s, a.args[0], ERROR)
        if kind == "worker.cancelled":
            j = a.args[0]
            return with_(s, task=set_at(s.task, j, CANCELLED)), []
        if kind == "worker.settle":
            j = a.args[0]
            return self._settle(s, j, s.cancel[j])
        if kind == "worker.stop":
            j = a.args[0]
            kept = any(c.owner == j and c.name != self.checkpoint_name(j, 0) for c in s.checkpoints)
            return with_(s, task=set_at(s.task, j, STOPPED)), [
                Event("worker", "client", "task.ended", {"run": run_name(j), "kept": kept})]
        if kind == "stream.join":
            j = a.args[0]
            return with_(s, joined=set_at(s.joined, j, True), was_joined=set_at(s.was_joined, j, True)), [
                Event("client", "server", "stream.joined", {"run": run_name(j)})]
        if kind == "stream.leave":
            j = a.args[0]
            return with_(s, joined=set_at(s.joined, j, False)), [
                Event("server", "client", "stream.left", {"run": run_name(j)})]
        raise ValueError(f"langgraph model has no action kind {kind!r}")

    @staticmethod
    def in_flight(s: S) -> bool:
        return any(st in IN_FLIGHT for st in s.status)

    def reject_finds_in_flight(self, s: S) -> bool:
        """What the reject strategy's check sees: a run pending or running on the thread."""
        watched = (RUNNING,) if self.bug == "reject-ignores-pending" else IN_FLIGHT
        return any(st in watched for st in s.status)

    def _create(self, s: S, k: int, strategy: str) -> tuple[S, list[Event]]:
        s = with_(s, strategy=set_at(s.strategy, k, strategy))
        if strategy == "reject" and self.reject_finds_in_flight(s):
            return with_(s, status=set_at(s.status, k, REJECTING)), []
        t = with_(s, status=set_at(s.status, k, PENDING))
        t, events = self._thread(t, BUSY, t.thread_values,
                                 [Event("client", "server", "run.created", {"run": run_name(k), "strategy": strategy})])
        if strategy in ("interrupt", "rollback"):
            victims = tuple(j for j in range(k) if s.status[j] in IN_FLIGHT)
            t, cancelled = self._cancel(t, k, victims, strategy)
            events = canonical([*events, *cancelled])
        return t, events

    def _respond(self, s: S, k: int) -> tuple[S, list[Event]]:
        t = with_(s, responded=set_at(s.responded, k, True))
        if s.status[k] == REJECTING and self.bug != "refusal-answers-200":
            t = with_(t, status=set_at(t.status, k, REJECTED))
            return t, [Event("server", "client", "run.rejected", {"run": run_name(k), "code": 409})]
        return t, [Event("server", "client", "run.response", {"run": run_name(k), "code": 200})]

    def _cancel(self, s: S, k: int, victims: tuple[int, ...], action: str) -> tuple[S, list[Event]]:
        """Runs.cancel, its part before the gathered coroutines (in the same step as the creation):
        each victim gets a control message to send; under interrupt, or when a stream client watches
        a running victim, it is marked interrupted at once; under rollback the others are deleted
        (after the message, in the gathered coroutines)."""
        t = s
        events: list[Event] = []
        for v in victims:
            pending = t.status[v] == PENDING
            t = with_(t, cancel=set_at(t.cancel, v, action), canceller=set_at(t.canceller, v, k),
                      to_signal=set_at(t.to_signal, v, not pending))
            if action == "interrupt" or (t.joined[v] and not pending):
                t, events = self._interrupt(t, v, pending, events)
            else:
                t = with_(t, to_delete=set_at(t.to_delete, v, True))
        return t, events

    def _interrupt(self, t: S, v: int, pending: bool, events: list[Event]) -> tuple[S, list[Event]]:
        """Victim `v` marked interrupted at once, and shown so (`started` unless it was pending). The bug
        variants change what a pending victim gets: removed without a status (drop-cancelled-pending), or the
        thread marked idle after it (cancel-pending-idles-thread)."""
        dropped = pending and self.bug == "drop-cancelled-pending"
        t = with_(t, status=set_at(t.status, v, DELETED if dropped else INTERRUPTED))
        started = not pending or self.bug == "pending-interrupt-reported-started"
        shown = [] if dropped else [Event("server", "client", "run.status",
                                          {"run": run_name(v), "status": INTERRUPTED, "started": started})]
        idles = pending and self.bug == "cancel-pending-idles-thread"
        return self._thread(t, IDLE, t.thread_values, [*events, *shown]) if idles else (t, [*events, *shown])

    def delete(self, s: S, j: int) -> tuple[S, list[Event]]:
        """Runs.delete: the run's checkpoints, then its record; a record already gone is a 404."""
        if s.status[j] == DELETED:
            return s, []
        events: list[Event] = []
        if self.bug != "rollback-keeps-checkpoints" and any(c.owner == j for c in s.checkpoints):
            s = with_(s, checkpoints=tuple(c for c in s.checkpoints if c.owner != j))
            events.append(Event("server", "store", "checkpoints.deleted", {"run": run_name(j)}))
        events.append(Event("server", "store", "run.deleted", {"run": run_name(j), "started": s.task[j] != NO_TASK,
                                                               "settled": s.status[j] == INTERRUPTED}))
        return with_(s, status=set_at(s.status, j, DELETED)), events

    def checkpoint_name(self, j: int, n: int) -> str:
        return f"{run_name(j)}.{n}"

    def head(self, s: S) -> Checkpoint | None:
        return s.checkpoints[-1] if s.checkpoints else None

    def _checkpoint(self, s: S, j: int) -> tuple[S, list[Event]]:
        n = s.written[j]
        if n == 0:
            head = self.head(s)
            values, parent = (head.values, head.name) if head and self.bug != "run-starts-from-empty-state" else (
                (), None)
            adds = ""
        else:
            previous = s.memory[j]
            values, parent = (*previous[1], item(j, n)), previous[0]
            adds = item(j, n)
        c = Checkpoint(self.checkpoint_name(j, n), j, values, parent)
        t = with_(s, written=set_at(s.written, j, n + 1), checkpoints=(*s.checkpoints, c),
                  memory=set_at(s.memory, j, (c.name, values)))
        return t, [Event("worker", "store", "checkpoint",
                         {"run": run_name(j), "name": c.name, "values": values, "parent": parent, "adds": adds})]

    def _settle(self, s: S, j: int, outcome: str) -> tuple[S, list[Event]]:
        """Threads.set_joint_status: the run's final status and the thread's, in one step. A run whose
        record a rollback has deleted writes nothing: set_joint_status looks the run up first and raises
        404 before it touches the thread (the worker ignores it under rollback; under interrupt, when a
        later interrupt's control message reached the task first, the task ends with it)."""
        t = with_(s, task=set_at(s.task, j, FINISHED), last=j)
        events: list[Event] = []
        if s.status[j] == DELETED:
            return t, events
        stale = outcome == ERROR and self.bug == "error-keeps-stale-values"
        values = s.memory[j][1] if s.written[j] and not stale else s.thread_values
        if outcome == "rollback":
            t, events = self.delete(t, j)
            return self._thread(t, BUSY if self.in_flight(t) else IDLE, t.thread_values, events)
        if outcome == INTERRUPTED or outcome == "interrupt":
            busy = self.in_flight(t) or self.bug == "interrupted-thread-stays-busy"
            status = BUSY if busy else self.interrupted_thread_status(s, j)
            return self._thread(t, status, values, events)
        t = with_(t, status=set_at(t.status, j, outcome))
        events.append(Event("worker", "store", "run.status", {"run": run_name(j), "status": outcome, "started": True}))
        idle = THREAD_ERROR if outcome == ERROR else IDLE
        return self._thread(t, BUSY if self.in_flight(t) else idle, values, events)

    def interrupted_thread_status(self, s: S, j: int) -> str:
        return interrupted_thread_status(s, j, self.last_checkpoint, self.interrupted_status)

    def _thread(self, s: S, status: str, values: tuple[str, ...], events: list[Event]) -> tuple[S, list[Event]]:
        if (status, values) == (s.thread_status, s.thread_values) and self.bug != "thread-announced-unchanged":
            return s, events
        t = with_(s, thread_status=status, thread_values=values)
        return t, [*events, Event("server", "client", "thread", {"status": status, "values": values})]

    # ------------------------------------------------------------------ delegations
    def facts(self, event: Event) -> Sequence[Fact]:
        return lg_facts.facts(event)

    def monitors(self) -> Sequence[Monitor]:
        """Judged over the facts besides the core invariants (`steersim.models.langgraph.monitors`)."""
        return (CreationsAnswered(self.n),)

    def properties(self) -> Sequence[Property]:
        from steersim.models.langgraph.properties import properties

        return properties({**self.params, "bug": self.bug})

    def default_timing(self) -> Mapping[str, Any]:
        return DEFAULT_TIMING

    def render_state(self, s: S) -> Mapping[str, Any]:
        return {
            "runs": {run_name(j): s.status[j] for j in range(self.n) if s.status[j] != NONE},
            "tasks": {run_name(j): s.task[j] for j in range(self.n) if s.task[j] != NO_TASK},
            "checkpoints": [c.name for c in s.checkpoints],
            "thread": {"status": s.thread_status, "values": list(s.thread_values)},
        }


__all__ = ["THREAD", "LangGraphModel"]
