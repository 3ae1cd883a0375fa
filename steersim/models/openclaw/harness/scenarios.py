"""Conformance scenarios, generated from the model.

A scenario fixes the knobs the real Agent Core exposes and a plan: where each steer (and at most one
abort) is injected, named by the observable point it follows ("right after the 2nd `turn_end`",
"while `c0` runs"). The plans are not written by hand: for each knob setting the model is explored
and every distinct placement of the user's actions relative to the runtime's steps is collected.
Because a plan names only points that end a model step, each placement is one the model gives a
meaning to, and the real run can realise it exactly (the driver injects right after that point).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from steersim.core.model import Action, Event
from steersim.models.openclaw import SPEC
from steersim.models.openclaw.agent_core import RUNNING
from steersim.models.openclaw.state import IDLE, OpenClawState
from steersim.models.openclaw.versions import REFERENCE_VERSION

Point = tuple[str, int]
START_POINT: Point = ("start", 1)


@dataclass(frozen=True)
class Knobs:
    """What the real runtime lets a caller choose, in the model's parameter names, and in which order
    the scripted tools of a parallel batch finish (`launch` order, or `reverse`: the last launched
    first), which the model leaves open and the driver fixes."""

    tool_execution: str = "parallel"
    steering_mode: str = "one-at-a-time"
    follow_up_mode: str = "one-at-a-time"
    calls: int = 2
    tool_turns: int = 1
    blocked_call: int = -1
    agent_follow_ups: int = 0
    stop_after_turn: bool = False
    finish_order: str = "launch"

    def label(self) -> str:
        parts = [self.tool_execution[:3], "all" if self.steering_mode == "all" else "one",
                 f"k{self.calls}"]
        if self.tool_turns != 1:
            parts.append(f"turns{self.tool_turns}")
        if self.finish_order == "reverse":
            parts.append("rev")
        if self.follow_up_mode == "all":
            parts.append("fu-all")
        if self.blocked_call >= 0:
            parts.append(f"block{self.blocked_call}")
        if self.agent_follow_ups:
            parts.append(f"followups{self.agent_follow_ups}")
        if self.stop_after_turn:
            parts.append("stop")
        return "-".join(parts)


@dataclass(frozen=True)
class PlanStep:
    action: str  # "steer" or "abort"
    after: Point
    id: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "after": list(self.after)}
        if self.id:
            out["id"] = self.id
        return out

    def label(self) -> str:
        return f"{self.id or 'abort'}@{self.after[0]}#{self.after[1]}"


@dataclass(frozen=True)
class Scenario:
    """A knob setting and a plan, run at a layer (`session` or the bare `agent`) of the build whose
    model preset is `version`. The name leaves the layer and build out: the command line names them."""

    knobs: Knobs
    plan: tuple[PlanStep, ...]
    layer: str = "session"
    version: str = REFERENCE_VERSION

    @property
    def name(self) -> str:
        return f"{self.knobs.label()}/{','.join(step.label() for step in self.plan) or 'no-steer'}"

    @property
    def steers(self) -> int:
        return sum(step.action == "steer" for step in self.plan)

    @property
    def aborts(self) -> bool:
        return any(step.action == "abort" for step in self.plan)

    def model_params(self, steers: int | None = None, abort: bool | None = None) -> dict[str, Any]:
        """The model configuration that describes this scenario's run. agent_end listeners are awaited
        while the Agent still counts as streaming, so the end-of-run listener window is always open."""
        knobs = {name: value for name, value in asdict(self.knobs).items() if name != "finish_order"}
        return {**knobs, "mode": "steer", "runtime": "agent-core", "layer": self.layer,
                "version": self.version, "messages": self.steers if steers is None else steers,
                "abort": self.aborts if abort is None else abort, "end_listener_window": True}

    def to_json(self) -> dict[str, Any]:
        knobs = self.knobs
        return {
            "name": self.name, "layer": self.layer, "toolExecution": knobs.tool_execution,
            "steeringMode": knobs.steering_mode,
            "followUpMode": knobs.follow_up_mode, "calls": knobs.calls, "toolTurns": knobs.tool_turns,
            "blockedCall": knobs.blocked_call, "followUps": knobs.agent_follow_ups,
            "stopAfterTurn": knobs.stop_after_turn, "finishOrder": knobs.finish_order,
            "plan": [step.to_json() for step in self.plan],
        }


def point_key(event: Event) -> str | None:
    """The driver's name for the observable point an event marks (None: not a point the driver sees)."""
    name, data = event.name, event.data
    if name in ("model_request", "steering_poll", "follow_up_poll", "session_continue"):
        return name
    if name == "tool_execute":
        return f"tool_execute:{data['toolCallId']}"
    if event.source != "runtime" or name == "run_settled":
        return None
    if name.startswith("message_"):
        detail = data["id"] if data["role"] == "toolResult" else data["role"]
    else:
        detail = data.get("toolCallId", "")
    return f"{name}:{detail}"


def knob_grid() -> list[Knobs]:
    """Every combination of the runtime's knobs, on a two-call batch; three larger shapes for each tool
    execution, a three-call batch, two tool turns in a row, and two turns of three calls; parallel
    batches whose tools finish in reverse launch order."""
    grid = itertools.product(("parallel", "sequential"), ("one-at-a-time", "all"), (-1, 1), (0, 1), (False, True))
    knobs = [Knobs(tool_execution=te, steering_mode=sm, blocked_call=bc, agent_follow_ups=fu, stop_after_turn=stop)
             for te, sm, bc, fu, stop in grid]
    return knobs + [Knobs(tool_execution=te, **shape) for te in ("parallel", "sequential")
                    for shape in ({"calls": 3}, {"tool_turns": 2}, {"calls": 3, "tool_turns": 2})] + [
        Knobs(finish_order="reverse"), Knobs(calls=3, finish_order="reverse")]


def plans(knobs: Knobs, steers: int, abort: bool, layer: str = "session",
          version: str = REFERENCE_VERSION) -> list[tuple[PlanStep, ...]]:
    """Every distinct placement of `steers` steers (and an abort) along the model's runs for `knobs`.
    Tools finish in the knobs' finish order, as the driver's tools do. The driver acts right after a point, so a user
    action is placed only where the step before it showed one: after a silent step the last point
    would name an earlier position than the model's."""
    model = SPEC.build(Scenario(knobs, (), layer, version).model_params(steers, abort))
    found: set[tuple[PlanStep, ...]] = set()
    seen: set[tuple] = set()
    stack: list[tuple[OpenClawState, tuple[PlanStep, ...], Point, tuple[tuple[str, int], ...], bool]] = [
        (model.init_states()[0], (), START_POINT, (), True)]
    while stack:
        state, plan, last, counts, fresh = stack.pop()
        key = (state, plan, last, counts, fresh)
        if key in seen:
            continue
        seen.add(key)
        moved = False
        for action in _driver_choices(model.actions(state), state, fresh, knobs.finish_order == "reverse"):
            nxt = model.next_state(state, action)
            if nxt is None:
                continue
            moved = True
            new_plan = plan
            if action.kind == "user.message":
                new_plan = (*plan, PlanStep("steer", last, f"m{action.args[0]}"))
            elif action.kind == "user.abort":
                new_plan = (*plan, PlanStep("abort", last))
            new_last, new_counts = _advance(last, counts, model.observe(state, action, nxt))
            user = action.actor == "user"
            stack.append((nxt, new_plan, new_last, new_counts, user or new_counts != counts))
        if not moved and _shape(plan) == (steers, abort) and _abort_last(plan):
            found.add(plan)
    return sorted(found, key=lambda p: [s.label() for s in p])


def _shape(plan: tuple[PlanStep, ...]) -> tuple[int, bool]:
    return sum(step.action == "steer" for step in plan), any(step.action == "abort" for step in plan)


def _abort_last(plan: tuple[PlanStep, ...]) -> bool:
    """An abort comes after the steers: what happens to steers an abort finds queued or drained is the
    question; a steer sent into a run that is already shutting down adds nothing new."""
    actions = [step.action for step in plan]
    return "abort" not in actions or actions[-1] == "abort"


def _driver_choices(actions: list[Action], state: OpenClawState, fresh: bool, reverse: bool) -> Iterator[Action]:
    """The choices the driver can make: steer into the Agent (or abort) right after a point while a run
    is active (an idle session is the gateway's business), and let tools finish in launch order (or,
    `reverse`, the last launched first)."""
    running = [index for index, status in enumerate(state.calls) if status == RUNNING]
    finishing = (running[-1] if reverse else running[0]) if running else -1
    for action in actions:
        if action.kind == "tool.finish" and action.args[0] != finishing:
            continue
        if action.actor == "user" and (state.phase == IDLE or not fresh):
            continue
        yield action


def _advance(last: Point, counts: tuple[tuple[str, int], ...], events: list[Event]) -> tuple[Point, tuple]:
    table = dict(counts)
    for event in events:
        key = point_key(event)
        if key is None:
            continue
        table[key] = table.get(key, 0) + 1
        last = (key, table[key])
    return last, tuple(sorted(table.items()))


def generate(max_steers: int = 2, knob_labels: frozenset[str] | None = None, layer: str = "session",
             version: str = REFERENCE_VERSION) -> list[Scenario]:
    """All scenarios: for every knob setting (or those with the given labels), every placement of one
    steer and of one steer followed by an abort; several steers (up to `max_steers`), whose interplay
    is the drain mode's business, for every tool execution and drain mode."""
    out: list[Scenario] = []
    for knobs in knob_grid():
        if knob_labels is not None and knobs.label() not in knob_labels:
            continue
        for steers, abort in _shapes(knobs, max_steers):
            out += [Scenario(knobs, plan, layer, version) for plan in plans(knobs, steers, abort, layer, version)]
    return out


def _shapes(knobs: Knobs, max_steers: int) -> list[tuple[int, bool]]:
    plain = Knobs(tool_execution=knobs.tool_execution, steering_mode=knobs.steering_mode) == knobs
    most = max_steers if plain else 1
    return [(1, True), *((n, False) for n in range(1, most + 1))]
