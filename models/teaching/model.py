"""The teaching model: the smallest honest steering system.

An agent runs turns. A turn is one model call that asks for K tool calls, launched in order with at
most P in flight (P=1 sequential, P=K parallel). Before each launch the agent checks a steer queue of
capacity Q; a pending steer makes it skip every unlaunched call with a synthetic result. When every
call has its result, the agent delivers the queued steers to the history in order (read, then
remove), and makes another model call if it delivered any; otherwise it goes idle, and a steer that
arrives while it is idle starts a new run. A user sends up to N steers at any time; a steer that finds
the queue full is rejected loudly.

The state mirrors the Promela twin in `shared/bench/gen_pml.py` variable for variable, and each action
is one of its `d_step`s, so the two have the same reachable states. That is also why the turn and the
chain keep one fixed name: a turn counter would be a variable the twin does not have.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from models.teaching.facts import facts
from models.teaching.monitors import SteeredStatus
from models.teaching.spec import DEFAULT_TIMING
from models.teaching.state import CLEAR, IDLE, LAUNCH, MODEL, TURN, TeachingState, call_id, steer_id
from sim.core import facts as F
from sim.core.model import Action, Always, Event, Property, Sometimes
from sim.core.monitors import Monitor, TruthfulResults

SKIP_TEXT = "skipped: a steer is pending"


class TeachingModel:
    """Parameters K, N, Q, P; `bug` the name of one of `models.teaching.spec.BUGS` or None."""

    name = "teaching"
    fair_actors = ("agent", "tool:*")
    action_kinds = ("user.steer", "tool.finish", "agent.model_call", "agent.skip", "agent.launch", "agent.collect",
                    "agent.deliver", "agent.clear", "agent.wake")

    def __init__(self, K: int, N: int, Q: int, P: int, bug: str | None = None) -> None:
        self.K, self.N, self.Q, self.P, self.bug = K, N, Q, P, bug
        self._zeros = (0,) * K
        self._idle = (False,) * K
        self._tool_actions = tuple(Action(f"tool:{call_id(j)}", "tool.finish", (j,)) for j in range(K))

    def init_states(self) -> Sequence[TeachingState]:
        z, f = self._zeros, self._idle
        return [TeachingState(MODEL, 0, 0, 0, False, 0, 0, 0, (), (), z, f, f)]

    def actions(self, s: TeachingState) -> list[Action]:
        out = []
        if s.sent < self.N:
            out.append(Action("user", "user.steer", (s.sent + 1,)))
        for j, running in enumerate(s.calls):
            if running:
                out.append(self._tool_actions[j])
        agent = self._agent_action(s)
        if agent is not None:
            out.append(agent)
        return out

    def _agent_action(self, s: TeachingState) -> Action | None:
        """The agent is deterministic: at most one of its steps is enabled in any state."""
        if s.phase == MODEL:
            return Action("agent", "agent.model_call")
        if s.phase == LAUNCH:
            if s.i < self.K and s.nl - s.c < self.P:
                if s.q and self.bug != "launch-after-steer":
                    return Action("agent", "agent.skip", (s.nl,))
                return Action("agent", "agent.launch", (s.i,))
            if s.c < s.nl:
                return Action("agent", "agent.collect", (s.c,)) if s.ress[s.c] else None
            return Action("agent", "agent.deliver")
        if s.phase == CLEAR:
            return Action("agent", "agent.clear")
        if s.q:
            return Action("agent", "agent.wake")
        return None

    def next_state(self, s: TeachingState, a: Action) -> TeachingState:
        kind = a.kind
        if kind == "user.steer":
            if len(s.q) < self.Q:
                return _with(s, sent=s.sent + 1, q=(*s.q, s.sent + 1))
            return _with(s, sent=s.sent + 1, rej=s.rej + 1)
        if kind == "tool.finish":
            j = a.args[0]
            return _with(s, calls=_set(s.calls, j, False), ress=_set(s.ress, j, True))
        if kind == "agent.model_call":
            return _with(s, phase=LAUNCH, i=0, c=0, nl=0, intr=False)
        if kind == "agent.skip":
            nres = s.nres if self.bug == "no-skip-result" else s.nres[: s.nl] + tuple(x + 1 for x in s.nres[s.nl :])
            return _with(s, i=self.K, intr=True, nres=nres)
        if kind == "agent.launch":
            return _with(s, i=s.i + 1, nl=s.nl + 1, calls=_set(s.calls, s.i, True))
        if kind == "agent.collect":
            c = s.c
            return _with(s, c=c + 1, nres=_set(s.nres, c, s.nres[c] + 1), ress=_set(s.ress, c, False))
        if kind == "agent.deliver":
            return _with(s, phase=CLEAR, pend=len(s.q), hist=s.hist + s.q, nres=self._zeros)
        if kind == "agent.clear":
            q = () if self.bug == "lost-at-boundary" and not s.intr else s.q[s.pend :]
            return _with(s, phase=MODEL if s.pend else IDLE, pend=0, q=q)
        if kind == "agent.wake":
            return _with(s, phase=MODEL, q=(), hist=s.hist + s.q)
        raise ValueError(f"teaching model has no action kind {kind!r}")

    def observe(self, s: TeachingState, a: Action, t: TeachingState) -> list[Event]:
        kind = a.kind
        if kind == "user.steer":
            sid = steer_id(t.sent)
            out = [Event("user", "queue", "steer", {"id": sid, "text": f"steer {t.sent}"})]
            if t.rej > s.rej:
                out.append(Event("queue", "user", "steer.rejected", {"id": sid, "reason": "queue_full"}))
            else:
                out.append(Event("queue", "user", "steer.queued", {"id": sid, "depth": len(t.q)}))
            return out
        if kind == "tool.finish":
            call = call_id(a.args[0])
            return [Event(f"tool:{call}", "agent", "tool.done", {"call": call, "output": f"output of {call}"})]
        if kind == "agent.model_call":
            calls = [call_id(j) for j in range(self.K)]
            return [
                Event("agent", "model", "model.request", {"turn": TURN, "history": [steer_id(x) for x in s.hist]}),
                Event("model", "agent", "model.response", {"turn": TURN, "tool_calls": calls}),
            ]
        if kind == "agent.skip":
            if self.bug == "no-skip-result":
                return [Event("agent", "agent", "batch.skip", {"from": call_id(s.nl)})]
            return [
                Event("agent", f"tool:{call_id(j)}", "tool.skipped", {"call": call_id(j), "result": SKIP_TEXT})
                for j in range(s.nl, self.K)
            ]
        if kind == "agent.launch":
            call = call_id(a.args[0])
            return [Event("agent", f"tool:{call}", "tool.start", {"call": call})]
        if kind == "agent.collect":
            return [Event("agent", "agent", "tool.result", {"call": call_id(a.args[0]), "synthetic": False})]
        if kind in ("agent.deliver", "agent.wake"):
            return [
                Event("queue", "agent", "steer.delivered", {"id": steer_id(x), "index": len(s.hist) + k})
                for k, x in enumerate(s.q)
            ]
        if kind == "agent.clear":
            removed = len(s.q) - len(t.q)
            status = "steered" if s.intr else "completed"
            remove = Event("agent", "queue", "queue.remove", {"removed": removed})
            if self.bug == "turn-left-open" and s.pend:
                return [remove]
            return [remove, Event("agent", "agent", "turn.end", {"turn": TURN, "status": status})]
        return []

    def facts(self, e: Event) -> list[F.Fact]:
        return facts(e)

    def render_state(self, s: TeachingState) -> dict[str, Any]:
        """The state in the system's words: steers and calls by the ids the events use."""
        return {
            "phase": s.phase,
            "queue": [steer_id(x) for x in s.q],
            "history": [steer_id(x) for x in s.hist],
            "read_not_removed": s.pend,
            "sent": s.sent,
            "rejected": s.rej,
            "next_launch": s.i,
            "next_collect": s.c,
            "launched": s.nl,
            "cut_short": s.intr,
            "running": [call_id(j) for j, running in enumerate(s.calls) if running],
            "finished": [call_id(j) for j, done in enumerate(s.ress) if done],
            "results": {call_id(j): n for j, n in enumerate(s.nres)},
        }

    def is_local(self, action: Action) -> bool:
        """A tool finishing touches only its own call's slots and emits no fact (the agent records the
        result when it collects it), so it commutes with every other actor's step: the explorer's
        partial-order reduction may explore one finishing order only."""
        return action.kind == "tool.finish"

    def vector_kernel(self) -> Any:
        """This model compiled for the vector engine (`models.teaching.vector`)."""
        from models.teaching.vector import TeachingKernel

        return TeachingKernel(self)

    def monitors(self) -> tuple[Monitor, ...]:
        """Judged over the emitted facts besides the core invariants (`models.teaching.monitors`)."""
        return (TruthfulResults(), SteeredStatus())

    def properties(self) -> list[Property]:
        return [
            Always(
                "steer-before-launch",
                step=lambda s, a, t: not (a.kind == "agent.launch" and s.q),
                doc="a steer pending at a launch checkpoint suppresses that launch",
            ),
            Always(
                "delivered-steers-called",
                step=lambda s, a, t: not (a.kind == "agent.clear" and s.pend and t.phase != MODEL),
                doc="a boundary that delivered steers makes another model call with them",
            ),
            Sometimes(
                "steer-skips-a-call",
                state=lambda s: s.intr,
                doc="some turn is cut short by a steer (a steer lands while calls are unlaunched)",
            ),
            Sometimes(
                "steer-delivered-mid-run",
                state=lambda s: s.phase == CLEAR and s.pend > 0,
                doc="some steer is delivered at a batch boundary of a running turn",
            ),
            *behaviour_guards(self),
            Always(
                "within-parameters",
                state=lambda s: s.sent <= self.N,
                doc="the user sends at most N steers: the check explores the environment its parameters name",
            ),
        ]

    def default_timing(self) -> Mapping[str, Any]:
        return DEFAULT_TIMING


def behaviour_guards(m: TeachingModel) -> list[Property]:
    """One guard per behaviour the parameters enable, besides the steering guards above: a check whose
    parameters allow it but which never reaches it proved nothing about it (the vector kernel judges the
    same predicates)."""
    guards: list[Property] = [
        Sometimes("turn-completes", state=lambda s: s.phase == CLEAR and not s.intr,
                  doc="some turn runs every call and ends completed"),
    ]
    if m.N > 0:
        guards.append(Sometimes("steer-wakes-idle-agent", state=lambda s: s.phase == IDLE and bool(s.q),
                                doc="a steer arrives while the agent is idle and starts a new run"))
    if m.N > m.Q:
        guards.append(Sometimes("steer-rejected", state=lambda s: s.rej > 0,
                                doc="a steer finds the queue full and is rejected"))
    if m.P > 1 and m.K > 1:
        guards.append(Sometimes("calls-in-parallel", state=lambda s: s.nl - s.c > 1,
                                doc="two calls are in flight at once (launched, not yet collected: the agent's "
                                    "own view, which a tool finishing does not change, so the reduction keeps it)"))
    return guards


def _with(s: TeachingState, **changes: Any) -> TeachingState:
    """A copy of `s` with `changes`: direct construction, several times faster than
    `dataclasses.replace`, which matters on the explorer's hot path."""
    g = changes.get
    return TeachingState(
        g("phase", s.phase), g("i", s.i), g("c", s.c), g("nl", s.nl), g("intr", s.intr), g("pend", s.pend),
        g("sent", s.sent), g("rej", s.rej), g("q", s.q), g("hist", s.hist), g("nres", s.nres),
        g("calls", s.calls), g("ress", s.ress),
    )


def _set(values: tuple, index: int, value: Any) -> tuple:
    return values[:index] + (value,) + values[index + 1 :]
