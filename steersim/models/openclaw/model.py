"""The OpenClaw model: gateway inbound policy, the Agent Core loop, and the Codex harness, composed.

One session: a first run with prompt `p0` starts at once; users send `messages` inbound messages at
any time (`m1`, `m2`, ...), each handled by the gateway in the configured queue mode; the scripted
model asks for `calls` tools on its first `tool_turns` responses and answers with text afterwards.
The runtime steps are deterministic (at most one enabled at a time); users, tools, timers and the
model's answer are the other participants whose order the explorer varies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from steersim.core.facts import Fact
from steersim.core.model import Action, Event, ModelBase, Property
from steersim.core.taken import StepsTaken
from steersim.models.openclaw import agent_core as core
from steersim.models.openclaw import codex, gateway
from steersim.models.openclaw import events as E
from steersim.models.openclaw.config import Config
from steersim.models.openclaw.enabled import kinds_not_enabled
from steersim.models.openclaw.facts import facts
from steersim.models.openclaw.memo import StepMemo
from steersim.models.openclaw.properties import properties, replay_checkpoints, replay_lifecycle, window_after
from steersim.models.openclaw.spec import DEFAULT_TIMING
from steersim.models.openclaw.state import ENDING, IDLE, START, OpenClawState, Step

RUNTIME_STEPS = {
    "seq-a": "tool.checkpoint_a",
    "seq-b": "tool.launch",
    "seq-c": "tool.checkpoint_c",
    "par-prep": "tool.start",
    "par-resolve": "tool.prepare",
    "par-cp": "tool.launch_batch",
    "par-launch": "tool.launch_call",
    "par-commit": "tool.commit",
    "turn-end": "turn.end",
    "compacting": "run.compact",
    "turn-poll": "turn.poll",
    "next": "turn.next",
    "fu-poll": "run.follow_up_poll",
    "final-poll": "run.final_poll",
    ENDING: "run.finish",
    "post-run": "session.post_run",
}
UNSHARED = frozenset(("run.start", "turn.next", "codex.turn_start"))
"""Kinds whose steps append to the transcript (`hist`), so that no two states' steps read the same values."""
CALL_STEPS = ("seq-a", "seq-b", "par-prep", "par-resolve", "par-launch")
NO_ACTIVE_RUN = (IDLE, ENDING, START, "post-run")
"""Phases with no Agent run to abort: before prompt() starts one, after agent_end, between runs."""


class OpenClawModel(ModelBase):
    """Built from a `Config`; `bug` (inside it) selects a variant of BUGS."""

    name = "openclaw"
    fair_actors = ("runtime", "model", "tool:*", "gateway", "timer", "codex")
    action_kinds = ("user.message", "user.abort", "timer.debounce", "timer.codex_flush", "tool.finish", "run.start",
                    "codex.turn_start", "model.respond", "codex.boundary", *RUNTIME_STEPS.values(),
                    "gateway.replace", "gateway.drain")

    def __init__(self, cfg: Config) -> None:
        super().__init__(None, cfg.bug)
        self.cfg = cfg
        self._properties = properties(cfg, self.events_of)
        self._taken = StepsTaken()  # the events of the steps of the state stepped last, for `events_of`
        self._memo = StepMemo(self._apply, cfg)

    def kinds_not_enabled(self) -> Mapping[str, str]:
        return kinds_not_enabled(self.cfg)

    def init_states(self) -> Sequence[OpenClawState]:
        followups = tuple(f"f{n}" for n in range(1, self.cfg.agent_follow_ups + 1))
        return [OpenClawState(followups=followups)]

    def actions(self, s: OpenClawState) -> list[Action]:
        cfg = self.cfg
        out = []
        if s.sent < cfg.messages:
            out.append(Action("user", "user.message", (s.sent + 1,)))
        # Agent.abort reaches only a run that exists: not before prompt() starts it, not after agent_end.
        if cfg.abort and not cfg.codex and s.aborts == 0 and s.phase not in NO_ACTIVE_RUN:
            out.append(Action("user", "user.abort"))
        if (s.fq or s.dropped) and not s.quiet:
            out.append(Action("timer", "timer.debounce"))
        if s.phase == "codex-turn" and s.batch and cfg.codex_debounces:
            out.append(Action("timer", "timer.codex_flush"))
        # A parallel batch launches its calls back to back: none finishes before the last one launched.
        finishing = cfg.tool_execution == "sequential" or s.phase == "par-run"
        for index, status in enumerate(s.calls):
            if status == core.RUNNING and finishing:
                out.append(Action(f"tool:{E.call_id(index)}", "tool.finish", (index,)))
        system = self._system_action(s)
        if system is not None:
            out.append(system)
        return out

    def _system_action(self, s: OpenClawState) -> Action | None:
        """The one runtime, model, Codex or gateway step the session takes next, if any."""
        phase = s.phase
        if phase == START:
            return Action("codex", "codex.turn_start") if self.cfg.codex else Action("runtime", "run.start")
        if phase == "llm":
            return Action("model", "model.respond", (s.llm_calls,))
        if phase == "codex-turn":
            return Action("codex", "codex.boundary", (s.boundaries,))
        if phase in RUNTIME_STEPS:
            args = (s.call,) if phase in CALL_STEPS else ()
            return Action("runtime", RUNTIME_STEPS[phase], args)
        if phase == IDLE and s.replacement:
            return Action("gateway", "gateway.replace")
        if phase == IDLE and (s.fq or s.dropped) and gateway.drain_ready(self.cfg, s.quiet):
            return Action("gateway", "gateway.drain")
        return None

    def step(self, s: OpenClawState, a: Action) -> tuple[OpenClawState, list[Event]]:
        st = Step(s)
        self._apply(st, a)
        st.seen = replay_lifecycle(s.seen, st.events)
        return st.done()

    def _apply(self, st: Step, a: Action) -> None:
        cfg, kind = self.cfg, a.kind
        if kind == "user.message":
            gateway.inbound(cfg, st, a.args[0])
        elif kind == "user.abort":
            st.emit(E.gateway("abort", reason="stop"))
            st.aborted, st.aborts = True, st.aborts + 1
        elif kind == "timer.debounce":
            gateway.debounce_elapsed(st)
        elif kind == "timer.codex_flush":
            codex.flush(st)
        elif kind == "codex.turn_start":
            codex.start_turn(cfg, st)
        elif kind == "codex.boundary":
            gateway.requeue(cfg, st, codex.boundary(cfg, st))
        elif kind == "gateway.replace":
            gateway.run_replacement(st)
        elif kind == "gateway.drain":
            gateway.drain(cfg, st)
        elif kind == "tool.finish":
            finish = core.finish_sequential if cfg.tool_execution == "sequential" else core.finish_parallel
            finish(cfg, st, a.args[0])
        else:
            RUNTIME_HANDLERS[kind](cfg, st)
        opened = window_after(cfg, st.events)  # the quiet window as the step's events tell it
        if opened is not None:
            st.window = opened
        replay_checkpoints(st)

    def facts(self, event: Event) -> tuple[Fact, ...]:
        return facts(event)

    def successor_facts(self, s: OpenClawState) -> list[tuple[Action, OpenClawState, tuple[Fact, ...]]]:
        """Every step of `s` with its facts, each step's events kept for the properties (`events_of`)."""
        stepped = self._taken.of(s)
        return [(a, *self._stepped_facts(s, a, stepped)) for a in self.actions(s)]

    def step_facts(self, s: OpenClawState, a: Action) -> tuple[OpenClawState, tuple[Fact, ...]]:
        """One step with its facts, its events kept for the properties (`events_of`) beside those of the
        other steps of `s` taken so far."""
        return self._stepped_facts(s, a, self._taken.of(s))

    def _stepped_facts(self, s: OpenClawState, a: Action, stepped: dict[Action, Sequence[Event]]
                       ) -> tuple[OpenClawState, tuple[Fact, ...]]:
        """The step through the memo of steps per the fields they read (`memo.StepMemo`), except the
        kinds whose steps read the transcript, which differs from state to state (`UNSHARED`)."""
        if a.kind in UNSHARED:
            nxt, events = self.step(s, a)
            stepped[a] = events
            return nxt, tuple([fact for event in events for fact in facts(event)])
        if self._memo.cfg is not self.cfg:  # a model given another configuration steps by it afresh
            self._memo = StepMemo(self._apply, self.cfg)
        nxt, stepped[a], found = self._memo.step(s, a)
        return nxt, found

    def events_of(self, s: OpenClawState, a: Action) -> Sequence[Event]:
        """The events of the step (s, a): those the search just built, when it stepped `s` through
        `successor_facts` or `step_facts` (the engine judges a state's steps right after taking them),
        else `step`'s own, kept for the next property that asks (`steersim.core.taken`)."""
        return self._taken.events_of(s, a, self._step_events)

    def _step_events(self, s: OpenClawState, a: Action) -> Sequence[Event]:
        return self.step(s, a)[1]

    def properties(self) -> list[Property]:
        return self._properties

    def default_timing(self) -> Mapping[str, Any]:
        timing = dict(DEFAULT_TIMING)
        timing["timer.debounce"] = {"dist": "constant", "value": self.cfg.debounce_ms / 1000}
        timing["timer.codex_flush"] = {"dist": "constant", "value": self.cfg.codex_debounce_ms / 1000}
        return timing


RUNTIME_HANDLERS = {
    "run.start": core.start_run,
    "model.respond": core.respond,
    "tool.checkpoint_a": core.checkpoint_a,
    "tool.launch": core.launch_sequential,
    "tool.checkpoint_c": core.checkpoint_c,
    "tool.start": core.start_parallel,
    "tool.prepare": core.prepare_parallel,
    "tool.launch_batch": core.launch_parallel,
    "tool.launch_call": core.launch_ready_call,
    "tool.commit": core.commit_parallel,
    "turn.end": core.end_turn,
    "run.compact": lambda cfg, st: core.compact(st),
    "turn.poll": core.after_turn,
    "turn.next": core.next_turn,
    "run.follow_up_poll": core.follow_up_poll,
    "run.final_poll": core.final_poll,
    "run.finish": core.finish_run,
    "session.post_run": core.after_run,
}
