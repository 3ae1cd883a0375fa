"""Pydantic AI's pending-message queue: messages enqueued into agent runs while they work.

A client drives up to `runs` agent runs of one conversation (`agent.iter()`), each continuing the one
before it with its history, and enqueues up to `messages` messages (`AgentRun.enqueue`, from the loop or
another thread), each `asap` or `when_idle`; it may `dequeue` a queued message, change its priority
(`set_enqueue_priority`, keeping its place) and `cancel()` a run before the last at any await. The
cancellation takes effect when the run's task next runs: until then the run's tool tasks may each take the
step they were ready to take (a call starts, or returns) and the queue still accepts messages. A run is a
loop of nodes: a `ModelRequestNode` prepares the request (the pending-message capability's
`before_model_request` delivers every queued `asap` message into it, in queue order) and the model answers;
a response with tool calls goes to a `CallToolsNode`, whose calls run in parallel and whose results make
the next request; a final response leads to `End`, where the queue is drained at once (`drain_at_end`):
queued `asap` messages, then `when_idle` ones, each in queue order, redirect the run into one more
request, or, with nothing queued, the queue is closed in the same locked step, so a later `enqueue`
raises `UserError`. A cancelled run, once it stops, closes its queue; the calls it left without a result
are closed out with synthesized `interrupted` returns before the next run sends that history to the model.

Each step is one atomic step of the run between awaits of its task (the queue's operations hold its lock),
as the harness observes them on the virtual-time loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from steersim.core.facts import Fact
from steersim.core.model import Action, Event, ModelBase, Property
from steersim.core.monitors import Monitor
from steersim.models.pydantic_ai import facts as pa_facts
from steersim.models.pydantic_ai.monitors import RealResultAfterStart
from steersim.models.pydantic_ai.spec import DEFAULT_TIMING, kinds_not_enabled
from steersim.models.pydantic_ai.state import (
    ASAP,
    AT_END,
    CANCELLED,
    CHAIN,
    CLOSING,
    DEQUEUED,
    DONE,
    ENDING,
    IN_REQUEST,
    MODEL,
    NONE,
    QUEUED,
    REJECTED,
    REQUEST,
    REQUESTED,
    RETURNED,
    RUNNING,
    STRANDED,
    TOOLS,
    WHEN_IDLE,
    AgentState,
    call_name,
    initial_state,
    message_name,
    priorities,
    run_name,
    set_at,
    turn_name,
    with_,
)

S = AgentState
CANCELLABLE = (REQUEST, MODEL, TOOLS, ENDING)
# The run's own step that finishes it, by phase: the end (drain or close), and, in the variant that closes the
# queue a step after finding it empty (bug close-after-check), the close; neither while a cancel stops the run.
FINISHING = {ENDING: "agent.end", CLOSING: "agent.close"}


class PydanticAIModel(ModelBase):
    """One conversation of agent runs; parameters as in `steersim.models.pydantic_ai.SPEC`."""

    name = "pydantic-ai"
    fair_actors = ("agent", "model", "tool:*")
    action_kinds = ("client.enqueue", "client.dequeue", "client.set_priority", "client.cancel",
                    "client.start_run", "agent.request", "model.respond", "tool.start", "tool.return",
                    "agent.end", "agent.close", "agent.stop")

    def __init__(self, params: Mapping[str, Any] | None = None, bug: str | None = None) -> None:
        super().__init__(params, bug)
        p = self.params
        self.runs: int = p["runs"]
        self.n: int = p["messages"]
        self.priorities = priorities(p["priority"])
        self.tool_calls: int = p["tool_calls"]
        self.tool_rounds: int = p["tool_rounds"] if self.tool_calls else 0
        self.dequeue: bool = p["dequeue"]
        self.reprioritise: bool = p["reprioritise"]
        self.cancel: bool = p["cancel"]
        self.carried: bool = p["cancelled_queue"] == "carried" or bug == "cancel-carries-queue"

    def kinds_not_enabled(self) -> Mapping[str, str]:
        off = kinds_not_enabled(self.params)
        if self.bug != "close-after-check":
            off["agent.close"] = "the close-after-check bug variant (the queue closes in the end's own step)"
        return off

    # ------------------------------------------------------------------ actions
    def init_states(self) -> Sequence[S]:
        return [initial_state(self.n)]

    def actions(self, s: S) -> list[Action]:
        out: list[Action] = []
        k = s.sent
        if k < self.n:
            out.extend(Action("client", "client.enqueue", (k, p)) for p in self.priorities)
        if not s.closed:
            for j in s.queue:
                if self.dequeue:
                    out.append(Action("client", "client.dequeue", (j,)))
                if self.reprioritise:
                    out.append(Action("client", "client.set_priority", (j,)))
        if self.cancel and s.run < self.runs - 1 and s.phase in CANCELLABLE and not s.cancelling:
            out.append(Action("client", "client.cancel", (s.run,)))
        if s.cancelling:
            out.append(Action("agent", "agent.stop", (s.run,)))
        last = self.runs if self.bug == "one-run-too-many" else self.runs - 1
        if s.phase in (DONE, CANCELLED) and s.run < last:
            out.append(Action("client", "client.start_run", (s.run + 1,)))
        if s.cancelling:  # the run's own task does nothing more; its tool tasks may take one step each
            pass
        elif s.phase == REQUEST or (s.phase == TOOLS and all(c == RETURNED for c in s.calls)):
            out.append(Action("agent", "agent.request", (s.run,)))
        elif s.phase == MODEL:
            if s.rounds < self.tool_rounds:
                out.append(Action("model", "model.respond", (s.run, True)))
            out.append(Action("model", "model.respond", (s.run, False)))
        if s.phase == TOOLS:
            for i, c in enumerate(s.calls):
                actor = f"tool:{call_name(s.run, s.requests, i)}"
                if c == REQUESTED:
                    out.append(Action(actor, "tool.start", (i,)))
                elif c == RUNNING:
                    out.append(Action(actor, "tool.return", (i,)))
        finishing = FINISHING.get(s.phase)
        if finishing is not None and not s.cancelling:
            out.append(Action("agent", finishing, (s.run,)))
        return out

    # ------------------------------------------------------------------ transitions
    def step(self, s: S, a: Action) -> tuple[S, list[Event]] | None:
        kind = a.kind
        if kind == "client.enqueue":
            return self._enqueue(s, *a.args)
        if kind == "client.dequeue":
            j = a.args[0]
            t = with_(s, fate=set_at(s.fate, j, DEQUEUED), queue=tuple(q for q in s.queue if q != j))
            return t, [Event("client", "agent", "dequeue", {"msg": message_name(j), "removed": True})]
        if kind == "client.set_priority":
            j = a.args[0]
            other = WHEN_IDLE if s.priority[j] == ASAP else ASAP
            queue = (*(q for q in s.queue if q != j), j) if self.bug == "set-priority-moves-to-back" else s.queue
            return with_(s, priority=set_at(s.priority, j, other), queue=queue, reprioritised=True), [
                Event("client", "agent", "priority", {"msg": message_name(j), "priority": other})]
        if kind == "client.cancel":
            return with_(s, cancelling=True), [Event("client", "agent", "cancel", {"run": run_name(s.run)})]
        if kind == "agent.stop":
            return self._stop(s)
        if kind == "client.start_run":
            return self._start(s, a.args[0])
        if kind == "agent.request":
            return self._request(s)
        if kind == "model.respond":
            return self._respond(s, a.args[1])
        if kind == "tool.start":
            i = a.args[0]
            shown = [] if self.bug == "tool-start-unreported" else [
                Event("tool", "agent", "tool.started", {"call": call_name(s.run, s.requests, i)})]
            return with_(s, calls=set_at(s.calls, i, RUNNING)), shown
        if kind == "tool.return":
            i = a.args[0]
            return with_(s, calls=set_at(s.calls, i, RETURNED)), [
                Event("tool", "agent", "tool.returned", {"call": call_name(s.run, s.requests, i)})]
        if kind == "agent.end":
            return self._end(s)
        if kind == "agent.close":
            return self._close(s, True)
        raise ValueError(f"pydantic-ai model has no action kind {kind!r}")

    def target(self, priority: str, k: int) -> str:
        """The steer target a message is ordered on: its priority's queue, or, when priorities may change
        (a message keeps its place under its new priority), the message alone; then the documented order
        is judged by `delivery-follows-queue-order`."""
        return f"{CHAIN}.{message_name(k)}" if self.reprioritise else f"{CHAIN}.{priority}"

    def _enqueue(self, s: S, k: int, priority: str) -> tuple[S, list[Event]]:
        data = {"msg": message_name(k), "priority": priority, "target": self.target(priority, k)}
        s = with_(s, priority=set_at(s.priority, k, priority))
        if s.closed:
            return with_(s, fate=set_at(s.fate, k, REJECTED)), [
                Event("client", "agent", "enqueue", {**data, "accepted": False})]
        t = with_(s, fate=set_at(s.fate, k, QUEUED), queue=(*s.queue, k))
        return t, [Event("client", "agent", "enqueue", {**data, "accepted": True})]

    def _drain(self, s: S, priority: str | None) -> tuple[int, ...]:
        """The queued messages of `priority` (None: both, `asap` first) in the order the queue hands them out."""
        if priority is None:
            return (*self._drain(s, ASAP), *self._drain(s, WHEN_IDLE))
        picked = tuple(j for j in s.queue if s.priority[j] == priority)
        return picked[::-1] if self.bug == "newest-first" else picked

    def _deliver(self, s: S, drained: tuple[int, ...], fate: str) -> S:
        fates = s.fate
        for j in drained:
            fates = set_at(fates, j, fate)
        return with_(s, fate=fates, queue=tuple(q for q in s.queue if q not in drained), history=(*s.history, *drained))

    def _request(self, s: S) -> tuple[S, list[Event]]:
        """ModelRequestNode: the tool results (if any) and the queued `asap` messages go into the request,
        which is sent to the model; the first request of a run continuing a cancelled one closes out the
        calls that run left open."""
        drained = self._drain(s, None if self.bug == "when-idle-interrupts" else ASAP)
        turn = s.requests + 1
        closed_out = () if self.bug == "resume-skips-interrupted-returns" else s.open_calls
        t = with_(self._deliver(s, drained, IN_REQUEST), phase=MODEL, requests=turn, calls=(), open_calls=())
        return t, [Event("agent", "model", "request", {
            "run": run_name(s.run), "turn": turn_name(s.run, turn), "closed_out": closed_out,
            "delivered": tuple(message_name(j) for j in drained)})]

    def _respond(self, s: S, tools: bool) -> tuple[S, list[Event]]:
        calls = tuple(call_name(s.run, s.requests, i) for i in range(self.tool_calls)) if tools else ()
        t = with_(s, phase=TOOLS, rounds=s.rounds + 1, calls=(REQUESTED,) * self.tool_calls) if tools else \
            with_(s, phase=ENDING)
        return t, [Event("model", "agent", "response", {"turn": turn_name(s.run, s.requests), "calls": calls})]

    def _end(self, s: S) -> tuple[S, list[Event]]:
        """End: drain both priorities or close the queue, in one locked step (`drain_at_end`)."""
        drained = self._drain(s, None)
        if drained:
            t = with_(self._deliver(s, drained, AT_END), phase=REQUEST)
            return t, [Event("agent", "agent", "redirect", {
                "run": run_name(s.run),
                "turn": turn_name(s.run, s.requests if self.bug == "redirect-names-ended-request" else s.requests + 1),
                "delivered": tuple(message_name(j) for j in drained)})]
        closing = self.bug == "close-after-check"  # the close comes a step later (agent.close)
        return (with_(s, phase=CLOSING), []) if closing else self._close(s, self.bug != "ended-run-accepts-enqueue")

    def _close(self, s: S, closes: bool) -> tuple[S, list[Event]]:
        """The run ends: its queue closed (`closes`; a bug may leave it open) and `run.ended` shown."""
        return with_(s, phase=DONE, closed=closes), [Event("agent", "client", "run.ended", {"run": run_name(s.run)})]

    def _stop(self, s: S) -> tuple[S, list[Event]]:
        """The cancelled run stops and closes its queue; a request the model was answering ends cancelled;
        the calls without a result stay open for the next run."""
        open_calls = tuple(call_name(s.run, s.requests, i) for i, c in enumerate(s.calls) if c != RETURNED)
        stranded = () if self.carried else s.queue
        fates = s.fate
        for j in stranded:
            fates = set_at(fates, j, STRANDED)
        t = with_(s, phase=CANCELLED, calls=(), open_calls=open_calls, fate=fates,
                  queue=s.queue if self.carried else (), closed=True, cancelling=False)
        return t, [Event("agent", "client", "stopped", {
            "run": run_name(s.run), "turn": turn_name(s.run, s.requests) if s.phase == MODEL else None,
            "stranded": tuple(message_name(j) for j in stranded)})]

    def _start(self, s: S, run: int) -> tuple[S, list[Event]]:
        """Run `run` (the action names it; the client starts runs in order) with the history of the one before
        it; a cancelled run's queue, under `carried`."""
        queue = s.queue if s.phase == CANCELLED and self.carried else ()
        t = with_(s, run=run, phase=REQUEST, requests=0, rounds=0, calls=(), queue=queue, closed=False)
        return t, [Event("client", "agent", "run.started", {"run": run_name(run)})]

    # ------------------------------------------------------------------ delegations
    def facts(self, event: Event) -> Sequence[Fact]:
        return pa_facts.facts(event)

    def monitors(self) -> Sequence[Monitor]:
        return (RealResultAfterStart(),)

    def properties(self) -> Sequence[Property]:
        from steersim.models.pydantic_ai.properties import properties

        return properties({**self.params, "bug": self.bug})

    def default_timing(self) -> Mapping[str, Any]:
        return DEFAULT_TIMING

    def render_state(self, s: S) -> Mapping[str, Any]:
        return {
            "run": run_name(s.run),
            "phase": s.phase,
            "requests": s.requests,
            "calls": list(s.calls),
            "open_calls": list(s.open_calls),
            "messages": {message_name(j): f"{s.fate[j]} ({s.priority[j]})" for j in range(self.n)
                         if s.fate[j] != NONE},
            "pending_messages": [message_name(j) for j in s.queue],
            "closed": s.closed,
            "cancelling": s.cancelling,
        }


__all__ = ["CHAIN", "PydanticAIModel"]
