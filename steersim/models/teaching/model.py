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

from steersim.core import facts as F
from steersim.core.model import Action, Event, Property
from steersim.core.monitors import Monitor, TruthfulResults
from steersim.models.teaching.facts import facts
from steersim.models.teaching.monitors import SteeredStatus, SteersAsSent
from steersim.models.teaching.properties import properties
from steersim.models.teaching.spec import DEFAULT_TIMING
from steersim.models.teaching.state import CLEAR, IDLE, LAUNCH, MODEL, TURN, TeachingState, call_id, steer_id

SKIP_TEXT = "skipped: a steer is pending"


class TeachingModel:
    """Parameters K, N, Q, P; `bug` the name of one of `steersim.models.teaching.spec.BUGS` or None."""

    name = "teaching"
    fair_actors = ("agent", "tool:*")
    action_kinds = ("user.steer", "tool.finish", "agent.model_call", "agent.skip", "agent.launch", "agent.collect",
                    "agent.deliver", "agent.clear", "agent.wake")

    def __init__(self, K: int, N: int, Q: int, P: int, bug: str | None = None) -> None:
        self.K, self.N, self.Q, self.P, self.bug = K, N, Q, P, bug
        self._zeros = (0,) * K
        self._idle = (False,) * K
        self._tool_actions = tuple(Action(f"tool:{call_id(j)}", "tool.finish", (j,)) for j in range(K))
        # every action the model can take, built once: actions() runs for every state
        self._steer_actions = tuple(Action("user", "user.steer", (n,)) for n in range(N + 2))
        self._agent_actions = {kind: Action("agent", kind) for kind in ("agent.model_call", "agent.deliver",
                                                                        "agent.clear", "agent.wake")}
        self._indexed_actions = {kind: tuple(Action("agent", kind, (j,)) for j in range(K + 1))
                                 for kind in ("agent.skip", "agent.launch", "agent.collect")}
        self._facts_memo: dict[tuple[Action, Any], tuple[F.Fact, ...]] = {}
        # the facts of call j finishing, observed the first time it finishes (most steps are one)
        self._finish_facts: list[tuple[F.Fact, ...] | None] = [None] * K
        # the finishing actions enabled by each tuple of running calls met
        self._finishing: dict[tuple[bool, ...], tuple[Action, ...]] = {}
        # per tuple of running calls (finished results) met, the tuples a call finishing makes of it, one
        # per call: built once and shared by every state that holds them
        self._stopped: dict[tuple[bool, ...], tuple[tuple[bool, ...], ...]] = {}
        self._finished: dict[tuple[bool, ...], tuple[tuple[bool, ...], ...]] = {}
        # per (running calls, finished results) met, each call's finishing step as `successor_facts` needs it
        self._finish_steps: dict[tuple, tuple[tuple[Action, tuple, tuple[F.Fact, ...]], ...]] = {}

    def init_states(self) -> Sequence[TeachingState]:
        z, f = self._zeros, self._idle
        return [TeachingState(MODEL, 0, 0, 0, False, 0, 0, 0, (), (), z, f, f)]

    def actions(self, s: TeachingState) -> list[Action]:
        steer = self._steer_action(s)
        out = [] if steer is None else [steer]
        out += self._finishing_actions(s.calls)
        agent = self._agent_action(s)
        if agent is not None:
            out.append(agent)
        return out

    def _steer_action(self, s: TeachingState) -> Action | None:
        """The user's next steer while fewer than N were sent: one rule for `actions` and `successor_facts`,
        so that the check's engine (which steps by the latter) offers what simulate and replay offer. The
        action carries the steer's number, its place in the sending order, which the queue and the events
        take from it."""
        if s.sent >= self.N:
            return None
        reused = s.rej if self.bug == "steer-id-reused-after-rejection" else 0
        return self._steer_actions[s.sent + 1 - reused]

    def _finishing_actions(self, calls: tuple[bool, ...]) -> tuple[Action, ...]:
        """A finishing action per running call, remembered per tuple of running calls."""
        finishing = self._finishing.get(calls)
        if finishing is None:
            finishing = self._finishing[calls] = tuple(self._tool_actions[j] for j, on in enumerate(calls) if on)
        return finishing

    def _agent_action(self, s: TeachingState) -> Action | None:
        """The agent is deterministic: at most one of its steps is enabled in any state."""
        if s.phase == MODEL:
            return self._agent_actions["agent.model_call"]
        if s.phase == LAUNCH:
            if s.i < self.K and s.nl - s.c < self.P:
                if s.q and self.bug != "launch-after-steer":
                    return self._indexed_actions["agent.skip"][s.nl]
                return self._indexed_actions["agent.launch"][s.i]
            if s.c < s.nl:
                return self._indexed_actions["agent.collect"][s.c] if s.ress[s.c] else None
            return self._agent_actions["agent.deliver"]
        if s.phase == CLEAR:
            return self._agent_actions["agent.clear"]
        if s.q:
            return self._agent_actions["agent.wake"]
        return None

    def _finish(self, s: TeachingState, j: int) -> TeachingState:
        """Call j finishing, most steps: only the last two fields change, to tuples remembered per tuple
        they come from."""
        calls, ress = s.calls, s.ress
        stopped, finished = self._stopped.get(calls), self._finished.get(ress)
        if stopped is None:
            stopped = self._stopped[calls] = _each_set(calls, False)
        if finished is None:
            finished = self._finished[ress] = _each_set(ress, True)
        return _new(TeachingState, s[:11] + (stopped[j], finished[j]))

    def next_state(self, s: TeachingState, a: Action) -> TeachingState:
        kind = a.kind
        if kind == "tool.finish":
            return self._finish(s, a.args[0])
        phase, i, c, nl, intr, pend, sent, rej, q, hist, nres, calls, ress = s
        if kind == "user.steer":
            if len(q) < self.Q:
                return _new(TeachingState, (phase, i, c, nl, intr, pend, sent + 1, rej, (*q, a.args[0]), hist, nres,
                                            calls, ress))
            return _new(TeachingState, (phase, i, c, nl, intr, pend, sent + 1, rej + 1, q, hist, nres, calls, ress))
        if kind == "agent.model_call":
            return _new(TeachingState, (LAUNCH, 0, 0, 0, False, pend, sent, rej, q, hist, nres, calls, ress))
        if kind == "agent.skip":
            if self.bug != "no-skip-result":
                nres = nres[:nl] + tuple(x + 1 for x in nres[nl:])
            return _new(TeachingState, (phase, self.K, c, nl, True, pend, sent, rej, q, hist, nres, calls, ress))
        if kind == "agent.launch":
            return _new(TeachingState, (phase, i + 1, c, nl + 1, intr, pend, sent, rej, q, hist, nres,
                                        _set(calls, i, True), ress))
        if kind == "agent.collect":
            return _new(TeachingState, (phase, i, c + 1, nl, intr, pend, sent, rej, q, hist,
                                        _set(nres, c, nres[c] + 1), calls, _set(ress, c, False)))
        if kind == "agent.deliver":
            return _new(TeachingState, (CLEAR, i, c, nl, intr, len(q), sent, rej, q, hist + q, self._zeros, calls,
                                        ress))
        if kind == "agent.clear":
            left = () if self.bug == "lost-at-boundary" and not intr else q[pend:]
            return _new(TeachingState, (MODEL if pend else IDLE, i, c, nl, intr, 0, sent, rej, left, hist, nres,
                                        calls, ress))
        if kind == "agent.wake":
            return _new(TeachingState, (MODEL, i, c, nl, intr, pend, sent, rej, (), hist + q, nres, calls, ress))
        raise ValueError(f"teaching model has no action kind {kind!r}")

    def successor_facts(self, s: TeachingState) -> list[tuple[Action, TeachingState, tuple[F.Fact, ...]]]:
        """Every step of `s` with its facts, in the order of `actions(s)`, in one call: most steps are
        calls finishing, and those of one state differ from it only in the last two fields, the same for
        every state with the same running calls and finished results (`_finish_steps`)."""
        steer = self._steer_action(s)
        out = [] if steer is None else [(steer, *self.step_facts(s, steer))]
        finishes = self._finish_steps.get((s.calls, s.ress))
        if finishes is None:
            finishes = self._finish_steps_of(s)
        if finishes:
            head = s[:11]
            out += [(a, _new(TeachingState, head + tail), facts) for a, tail, facts in finishes]
        agent = self._agent_action(s)
        if agent is not None:
            out.append((agent, *self.step_facts(s, agent)))
        return out

    def _finish_steps_of(self, s: TeachingState) -> tuple[tuple[Action, tuple, tuple[F.Fact, ...]], ...]:
        """Per call running in `s`, its finishing action, the last two fields it leaves and its facts."""
        steps = []
        for a in self._finishing_actions(s.calls):
            t = self._finish(s, a.args[0])
            facts = self._finish_facts[a.args[0]]
            steps.append((a, t[11:], self._first_finish_facts(s, a, t) if facts is None else facts))
        finishes = self._finish_steps[s.calls, s.ress] = tuple(steps)
        return finishes

    def _first_finish_facts(self, s: TeachingState, a: Action, t: TeachingState) -> tuple[F.Fact, ...]:
        """The facts of call `a.args[0]` finishing, which depend on the call alone: observed once (none,
        as it happens: the agent records a result when it collects it)."""
        facts = self._finish_facts[a.args[0]] = self._observed_facts(s, a, t)
        return facts

    def step_facts(self, s: TeachingState, a: Action) -> tuple[TeachingState, tuple[F.Fact, ...]]:
        """The step with its facts, without building its events: the facts of a step depend on the
        action and on at most one bit of the states (`_facts_key`; none for a call finishing), so each such
        pair is observed once. The check's engine steps calls finishing by `successor_facts` instead, so
        simulate and replay share this path with every other step the check takes."""
        t = self.next_state(s, a)
        key = (a, _facts_key(s, a, t))
        facts = self._facts_memo.get(key)
        if facts is None:
            facts = self._facts_memo[key] = self._observed_facts(s, a, t)
        return t, facts

    def _observed_facts(self, s: TeachingState, a: Action, t: TeachingState) -> tuple[F.Fact, ...]:
        return tuple(f for e in self.observe(s, a, t) for f in self.facts(e))

    def observe(self, s: TeachingState, a: Action, t: TeachingState) -> list[Event]:
        kind = a.kind
        if kind == "user.steer":
            sid = steer_id(a.args[0])
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
            status = "steered" if s.intr or (self.bug == "completed-turn-reported-steered" and s.pend) else "completed"
            remove = Event("agent", "queue", "queue.remove", {"removed": removed})
            left_open = self.bug == "turn-left-open" and s.pend  # the turn is not ended
            ended = [] if left_open else [Event("agent", "agent", "turn.end", {"turn": TURN, "status": status})]
            return [remove, *ended]
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
        """This model compiled for the vector engine (`steersim.models.teaching.vector`)."""
        from steersim.models.teaching.vector import TeachingKernel

        return TeachingKernel(self)

    def monitors(self) -> tuple[Monitor, ...]:
        """Judged over the emitted facts besides the core invariants (`steersim.models.teaching.monitors`)."""
        return (TruthfulResults(), SteeredStatus(), SteersAsSent())

    def properties(self) -> list[Property]:
        return properties({"K": self.K, "N": self.N, "Q": self.Q, "P": self.P}, self.bug)

    def default_timing(self) -> Mapping[str, Any]:
        return DEFAULT_TIMING


_new = tuple.__new__  # builds a TeachingState from its fields in C, without the named tuple's own __new__


def _facts_key(s: TeachingState, a: Action, t: TeachingState) -> Any:
    """Besides the action, what the facts of step (s, a, t) depend on: whether a steer was rejected,
    the queue a delivery appends, how a boundary ends its turn."""
    kind = a.kind
    if kind == "user.steer":
        return t.rej > s.rej
    if kind in ("agent.deliver", "agent.wake"):
        return s.q
    if kind == "agent.clear":
        return s.intr, s.pend > 0
    return None


def _set(values: tuple, index: int, value: Any) -> tuple:
    return values[:index] + (value,) + values[index + 1 :]


def _each_set(values: tuple, value: Any) -> tuple[tuple, ...]:
    """`values` with each position in turn set to `value`."""
    return tuple(_set(values, index, value) for index in range(len(values)))
