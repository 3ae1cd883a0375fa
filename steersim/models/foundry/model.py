"""Foundry hosted agents: callers steering one multi-turn chain (`@multi_turn_task`).

Callers issue `start(task_id, input, input_id, if_last_input_id)` on one chain. On a steerable chain a
start() that finds a turn in flight queues its input behind it (bounded by `queue_cap`), records the
live pending count and then sets the running handler's cooperative `ctx.cancel`; the handler chooses
when to return. When a turn ends, its handle is resolved first and then the queue head is promoted as
the next turn, pre-cancelled iff inputs remain behind it. A queued handle can be cancelled; a stale
`if_last_input_id` is refused before anything else; the process can crash (the record, its queue and
`last_input_id` survive; handles do not) and restart, re-entering the interrupted turn as `recovered`,
or shut down gracefully (`exit_for_recovery`, `TaskDeferred`).

By default callers call in index order (caller k sends the k-th input, `m{k}`): callers are alike but
for their ids, so naming inputs in call order loses no behaviour and keeps the state space small (a
harness names inputs the same way). A harness whose start() calls overlap, and so may take effect in
another order than they were issued, turns `callers_in_order` off. Framework steps are atomic actions
of the `framework` actor. A start() is one atomic step, as it is in-process with the local store (whose
calls never suspend). Handlers are nondeterministic: at each of at most `handler_steps` safe points
they read their context, and they may return or raise at any of them, so every handler style
(honouring or ignoring the signal, returning or raising) is a behaviour of the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

from steersim.core.facts import Fact
from steersim.core.model import Action, Event, ModelBase, Property
from steersim.core.taken import StepsTaken
from steersim.models.foundry import events as E
from steersim.models.foundry.facts import facts
from steersim.models.foundry.spec import DEFAULT_TIMING, kinds_not_enabled
from steersim.models.foundry.state import (
    ABSENT,
    BOOT,
    CANCELLED,
    CONFLICT,
    DEFERRED,
    DONE,
    DOWN,
    ENTERING,
    EXITED,
    FAILED,
    FIELD_INDEX,
    FRESH,
    FULL,
    IDLE,
    IN_PROGRESS,
    LOST,
    NOBODY,
    NONE,
    ORPHAN,
    PRECONDITION,
    QUEUED,
    REJECTIONS,
    RESUMED,
    RETURNED,
    RUNNING,
    STOPPING,
    SUSPENDED,
    UP,
    WAITING,
    FoundryState,
    initial_state,
    input_id,
    needs_recovery,
    set_at,
    start_key,
    with_,
)

# the fields of a state that the enabled actions depend on, besides the queue's length
enabling = itemgetter(*(FIELD_INDEX[name] for name in (
    "proc", "callers", "queued", "cancels", "turn", "checks", "resolved", "seen", "crashes", "shutdowns")))
# the context of no turn in flight
IDLE_TURN: Mapping[str, Any] = {"turn": NONE, "mode": "", "steered": False, "cancel": False, "requested": False,
                                "seen": 0, "checks": 0, "handle": NOBODY, "outcome": "", "resolved": True}


class FoundryModel(ModelBase):
    """One chain, `callers` callers, one process that may crash and restart. Parameters as in
    `steersim.models.foundry.SPEC`; `bug` the name of one of `steersim.models.foundry.spec.BUGS` or None."""

    name = "foundry"
    fair_actors = ("framework", "handler", "process")
    def __init__(self, params: Mapping[str, Any], bug: str | None = None) -> None:
        super().__init__(params, bug)
        # framework.count: only a bug variant lets the visible queue count lag behind the queue
        self.action_kinds = ("caller.start", "caller.cancel", "handler.check", "handler.return", "handler.raise",
                             "handler.exit_for_recovery", "framework.enter", "framework.resolve",
                             "framework.advance", *(("framework.count",) if bug else ()), "framework.recover",
                             "fault.crash", "process.restart", "process.shutdown", "process.stop")
        self.n = params["callers"]
        self.cap = params["queue_cap"]
        self.steerable = params["steerable"]
        self.steps = params["handler_steps"]
        self.precondition_choices = params["preconditions"]
        self.max_crashes = params["crashes"]
        self.max_shutdowns = params["shutdowns"]
        self.max_cancels = params["queued_cancels"]
        self.precancel = params["precancel_if_successors"]
        # the reading in which last_input_id advances on accept: the bug variant takes them the wrong way round
        accept = "execute" if bug == "last-input-id-on-execute" else "accept"
        self.advance_on_accept = params["last_input_id_advances_on"] == accept
        self.surface = params["surface"]
        self.in_order = params["callers_in_order"]
        self.deferred_outcome = params["deferred_outcome"]
        self.queued_at_shutdown = params["queued_handle_at_shutdown"]
        self.promote_during_shutdown = params["promote_during_shutdown"]
        self.always_cancelled = params["explicit_cancel_outcome"] == "always_cancelled"
        self.observer = E.Observer(self, facts)
        self.enabled: dict[tuple, tuple[Action, ...]] = {}
        self.made: dict[Action, Action] = {}
        self.outcomes: dict[tuple, str] = {}
        self.taken = StepsTaken()  # the events of the steps of the state stepped last, for `events_of`

    # ------------------------------------------------------------------ actions
    def kinds_not_enabled(self) -> Mapping[str, str]:
        return kinds_not_enabled(self.params)

    def init_states(self) -> Sequence[FoundryState]:
        return [initial_state(self.n)]

    def actions(self, s: FoundryState) -> Sequence[Action]:
        """The enabled actions, remembered per the fields of the state they depend on (a search meets the
        same few combinations of them in state after state), each action kept once however many
        combinations enable it."""
        key = (enabling(s), len(s.queue))
        enabled = self.enabled.get(key)
        if enabled is None:
            made = self.made
            enabled = self.enabled[key] = tuple([made.setdefault(action, action) for action in self._enabled(s)])
        return enabled

    def _enabled(self, s: FoundryState) -> list[Action]:
        out: list[Action] = []
        if s.proc in (UP, BOOT):
            issued = tuple(k for k in range(self.n) if s.callers[k] != IDLE)
            idle = [k for k in range(self.n) if s.callers[k] == IDLE]
            for c in idle[:1] if self.in_order else idle:
                choices = (NOBODY, *issued) if self.precondition_choices else (NOBODY,)
                out.extend(Action(f"caller:{c}", "caller.start", (c, p)) for p in choices)
        if s.proc == UP and s.cancels < self.max_cancels:
            out.extend(Action(f"caller:{c}", "caller.cancel", (c,))
                       for c in range(self.n) if s.callers[c] == WAITING and (s.queued[c] or self._running(s, c)))
        if s.turn == RUNNING:
            if s.checks < self.steps:
                out.append(Action("handler", "handler.check"))
            out.append(Action("handler", "handler.return"))
            out.append(Action("handler", "handler.raise"))
            if s.proc == STOPPING:
                out.append(Action("handler", "handler.exit_for_recovery"))
        out.extend(self._framework_actions(s))
        out.extend(self._process_actions(s))
        return out

    def _framework_actions(self, s: FoundryState) -> list[Action]:
        out = []
        if s.turn == ENTERING:
            out.append(Action("framework", "framework.enter"))
        elif s.turn == EXITED:
            if not s.resolved:
                out.append(Action("framework", "framework.resolve"))
            if s.resolved or self.bug == "resolve-after-promote":
                out.append(Action("framework", "framework.advance"))
        if s.turn == RUNNING and s.seen != len(s.queue):  # only bug variants let the visible count lag
            out.append(Action("framework", "framework.count"))
        if s.proc == BOOT:
            out.append(Action("framework", "framework.recover"))
        return out

    def _process_actions(self, s: FoundryState) -> list[Action]:
        out = []
        if s.proc == UP and s.turn == RUNNING and s.crashes < self.max_crashes:
            out.append(Action("fault", "fault.crash"))
        if s.proc == DOWN:
            out.append(Action("process", "process.restart"))
        if s.proc == UP and s.turn != NONE and s.shutdowns < self.max_shutdowns:
            out.append(Action("process", "process.shutdown"))
        if s.proc == STOPPING and s.turn in (NONE, RUNNING):
            out.append(Action("process", "process.stop"))
        return out

    # ------------------------------------------------------------------ transitions
    def next_state(self, s: FoundryState, a: Action) -> FoundryState | None:
        kind = a.kind
        if kind == "caller.start":
            return self._start(s, *a.args)
        if kind == "caller.cancel":
            return self._cancel(s, a.args[0])
        if kind == "handler.check":
            return with_(s, checks=s.checks + 1)
        if kind in ("handler.return", "handler.raise", "handler.exit_for_recovery"):
            outcome = {"handler.return": RETURNED, "handler.raise": FAILED}.get(kind, DEFERRED)
            return with_(s, turn=EXITED, outcome=outcome, resolved=s.handle == NOBODY)
        if kind == "framework.enter":
            entered = s.entered if s.active in s.entered else (*s.entered, s.active)
            last = s.last if self.advance_on_accept else s.active
            return with_(s, turn=RUNNING, entered=entered, last=last)
        if kind == "framework.resolve":
            return self._resolve(s)
        if kind == "framework.advance":
            return self._advance(s)
        if kind == "framework.count":
            return with_(s, seen=len(s.queue))
        if kind == "framework.recover":
            return self._recover(s)
        if kind == "fault.crash":
            return self._down(s, LOST, crashes=s.crashes + 1)
        if kind == "process.restart":
            return with_(s, proc=BOOT)
        if kind == "process.shutdown":
            return with_(s, proc=STOPPING, shutdowns=s.shutdowns + 1)
        if kind == "process.stop":
            return self._stop(s)
        raise ValueError(f"foundry model has no action kind {kind!r}")

    def start_outcome(self, s: FoundryState, c: int, if_last: int) -> str:
        """What start() does, remembered per the fields of the state it reads (`start_key`): a search asks
        for it twice a start() step (its state and its events), and meets few combinations of them."""
        key = start_key(s, if_last)
        outcome = self.outcomes.get(key)
        if outcome is None:
            outcome = self.outcomes[key] = self.decide_start(s, if_last)
        return outcome

    def decide_start(self, s: FoundryState, if_last: int) -> str:
        """What start() does, in the order the package promises: the precondition before any accept
        path, then the record's status decides (section 4.1 of the spec)."""
        if self.needs_recovery(s):
            s = self._recover(s)
        busy = s.status == IN_PROGRESS
        full = busy and len(s.queue) >= self.cap + (self.bug == "off-by-one-cap")  # the bug lets one more wait
        # bug capacity-before-precondition: a steerable chain's full queue is reported before a stale precondition
        precondition_first = not (self.bug == "capacity-before-precondition" and full and self.steerable)
        if precondition_first and if_last != NOBODY and s.last != NOBODY and s.last != if_last:
            return PRECONDITION
        if s.status == ABSENT:
            return FRESH
        if s.status == SUSPENDED:
            return RESUMED
        if self.steerable or self.bug == "nonsteerable-queues":
            return FULL if full else QUEUED
        return CONFLICT

    def _start(self, s: FoundryState, c: int, if_last: int) -> FoundryState:
        outcome = self.start_outcome(s, c, if_last)
        if self.needs_recovery(s):
            s = self._recover(s)
        if outcome in REJECTIONS:
            changes: dict[str, Any] = {}
            if self.bug == "full-advances-head" and outcome == FULL:
                changes["last"] = c
            if self.bug == "orphan-future-on-full" and outcome == FULL:
                changes["futures"] = (*s.futures, ORPHAN)
            return with_(s, callers=set_at(s.callers, c, DONE), rejection=outcome, **changes)
        callers = set_at(s.callers, c, WAITING)
        if outcome in (FRESH, RESUMED):
            return with_(s, callers=callers, status=IN_PROGRESS, last=c, active=c, turn=ENTERING, mode=outcome,
                         steered=False, cancel=False, requested=False, seen=len(s.queue), checks=0, handle=c,
                         outcome="", resolved=False)
        if self.bug == "interrupting-steer" and s.turn in (ENTERING, RUNNING):
            return with_(s, callers=callers, queued=set_at(s.queued, c, True), last=c, active=c, turn=ENTERING,
                         mode=RESUMED, steered=True, cancel=False, requested=False, checks=0, handle=c)
        queue = (*s.queue, c)
        in_flight = s.turn in (ENTERING, RUNNING)
        signal = in_flight and self.bug != "no-signal"
        seen = s.seen if self.bug == "cancel-before-count" and in_flight else len(queue)
        return with_(s, callers=callers, queued=set_at(s.queued, c, True), queue=queue, futures=(*s.futures, c),
                     last=c if self.advance_on_accept else s.last, cancel=s.cancel or signal, seen=seen)

    @staticmethod
    def _running(s: FoundryState, c: int) -> bool:
        """Caller c's input is the turn in flight: its handle's cancel() signals the handler."""
        return c == s.active and s.turn in (ENTERING, RUNNING)

    def _cancel(self, s: FoundryState, c: int) -> FoundryState:
        cancels = s.cancels + 1
        if c in s.queue:
            victim = c
            if self.bug == "cancel-removes-head":
                victim = s.queue[0]
            queue = tuple(x for x in s.queue if x != victim)
            seen = s.seen if self.bug == "stale-count-after-cancel" else len(queue)
            return with_(s, cancels=cancels, queue=queue, futures=tuple(x for x in s.futures if x != c), seen=seen,
                         callers=set_at(s.callers, c, DONE))
        if self._running(s, c):
            requested = s.requested if s.cancel and self.bug == "request-skipped-when-signalled" else True
            return with_(s, cancels=cancels, requested=requested, cancel=True)
        return with_(s, cancels=cancels)

    def _resolve(self, s: FoundryState) -> FoundryState:
        callers = s.callers
        if s.handle >= 0 and callers[s.handle] == WAITING:
            callers = set_at(callers, s.handle, DONE)
        return with_(s, callers=callers, resolved=True)

    def _advance(self, s: FoundryState) -> FoundryState:
        """End of turn after its handle is resolved: promote the queue head, or suspend the chain. A
        turn deferred by `exit_for_recovery` leaves the record in progress for the next lifetime, and
        during shutdown the queue stays persisted (promote_during_shutdown = False)."""
        idle = IDLE_TURN
        if s.outcome == DEFERRED and self.bug != "exit-for-recovery-releases-turn":
            return with_(s, **idle)
        if s.proc == STOPPING and s.queue and not self.promote_during_shutdown:
            return with_(s, active=s.queue[0], queue=s.queue[1:], **idle)
        if s.queue and not (self.bug == "raise-ends-chain" and s.outcome == FAILED):
            index = 0
            if self.bug == "lifo-promotion":
                index = len(s.queue) - 1
            head = s.queue[index]
            rest = s.queue[:index] + s.queue[index + 1 :]
            precancel = bool(rest) and self.precancel and self.bug != "no-precancel"
            handle, futures = self._bind(s.futures, head)
            requested = s.requested and self.bug == "promote-keeps-cancel-request"
            # a fresh budget of safe points (spec 4.3: "a fresh timeout budget")
            checks = s.checks if self.bug == "promotion-keeps-budget" else 0
            return with_(s, active=head, queue=rest, turn=ENTERING, mode=RESUMED, steered=True, cancel=precancel,
                         requested=requested, seen=len(rest), checks=checks, handle=handle, futures=futures,
                         outcome="", resolved=False)
        return with_(s, status=SUSPENDED, active=NOBODY, **idle)

    def _bind(self, futures: tuple[int, ...], head: int) -> tuple[int, tuple[int, ...]]:
        """The handle a promoted input resolves: its own caller's, if that caller's future was registered
        in this lifetime (a queued input that survived a crash has none). The orphan-future bug binds by
        position instead, as a plain FIFO of futures would."""
        if self.bug == "orphan-future-on-full":
            return (futures[0], futures[1:]) if futures else (NOBODY, futures)
        if head in futures:
            return head, tuple(f for f in futures if f != head)
        return NOBODY, futures

    needs_recovery = staticmethod(needs_recovery)  # a pure function of the state (`steersim.models.foundry.state`)

    def _recover(self, s: FoundryState) -> FoundryState:
        """The recovery scan (at startup, or inline in start()): re-enter the interrupted turn."""
        if not self.needs_recovery(s):
            return with_(s, proc=UP)
        active, queue = s.active, s.queue
        if self.bug == "recover-queue-head" and queue:
            active, queue = queue[0], queue[1:]
        return with_(s, proc=UP, active=active, queue=queue, turn=ENTERING, mode="recovered", steered=False,
                     cancel=bool(queue) and self.precancel, requested=False, seen=len(queue), checks=0,
                     handle=NOBODY, outcome="", resolved=True)

    def _down(self, s: FoundryState, waiting_become: str, **changes: Any) -> FoundryState:
        """The process is gone: in-memory handles and futures with it; the record stays (and `changes`)."""
        callers = tuple(waiting_become if p == WAITING else p for p in s.callers)
        return with_(s, proc=DOWN, callers=callers, futures=(), **IDLE_TURN, **changes)

    def _stop(self, s: FoundryState) -> FoundryState:
        """End of the grace period: a handler still running is cancelled (its lease force-expired, so
        the next lifetime reclaims the turn) and in-process waiters on queued inputs get TaskDeferred."""
        return self._down(s, DONE)

    # ------------------------------------------------------------------ observation
    def step(self, s: FoundryState, a: Action) -> tuple[FoundryState, Sequence[Event]] | None:
        t = self.next_state(s, a)
        return None if t is None else (t, self.observe(s, a, t))

    def observe(self, s: FoundryState, a: Action, t: FoundryState) -> Sequence[Event]:
        return self.observer.observe(s, a, t)

    def step_facts(self, s: FoundryState, a: Action) -> tuple[FoundryState, tuple[Fact, ...]]:
        """The step with the facts of its events, which `Observer` reads once per distinct tuple of events
        and a search asks for in place of the events; the events are kept for the properties
        (`events_of`)."""
        t = self.next_state(s, a)
        return t, self.observer.facts_of(self.events_of(s, a, t))

    def successor_facts(self, s: FoundryState) -> list[tuple[Action, FoundryState, tuple[Fact, ...]]]:
        """Every step of `s` with its facts, in the order of `actions(s)`, in one call: `step_facts` written
        out, each step's events kept for the properties (a call per step costs a search about 6% of its time)."""
        kept, step, observe, facts_of = self.taken.of(s), self.next_state, self.observe, self.observer.facts_of
        out = []
        for a in self.actions(s):
            t = step(s, a)
            events = kept[a] = tuple(observe(s, a, t))
            out.append((a, t, facts_of(events)))
        return out

    def events_of(self, s: FoundryState, a: Action, t: FoundryState) -> Sequence[Event]:
        """The events of the step (s, a) to t, as `observe` shows them: those `step_facts` kept when the
        search took the step (it judges a state's steps right after taking them), else observed now and
        kept for the next property that asks (`steersim.core.taken`)."""
        return self.taken.events_of(s, a, self._observed, t)

    def _observed(self, s: FoundryState, a: Action, t: FoundryState) -> tuple[Event, ...]:
        return tuple(self.observe(s, a, t))  # `observe` as a subclass may define it, which may give a list

    def facts(self, event: Event) -> Sequence[Fact]:
        return self.observer.facts(event)

    def properties(self) -> list[Property]:
        from steersim.models.foundry.properties import properties

        return properties(self.params, self.bug, self.events_of)

    def default_timing(self) -> Mapping[str, Any]:
        return DEFAULT_TIMING

    # ------------------------------------------------------------------ helpers shared with observe
    def handle_outcome(self, s: FoundryState) -> str:
        """What the finished turn's handle gets: the handler's outcome, with a deferral reported as
        `deferred_outcome` and an explicitly cancelled turn as TaskCancelled if so configured."""
        if s.outcome == DEFERRED:
            return self.deferred_outcome
        if s.requested and self.always_cancelled:
            return CANCELLED
        return s.outcome

    def ctx_input_id(self, s: FoundryState) -> str:
        """The `ctx.input_id` the running turn sees: its own input's id."""
        return input_id(s.last if self.bug == "input-id-is-chain-head" else s.active)


__all__ = ["FoundryModel", "FoundryState"]
