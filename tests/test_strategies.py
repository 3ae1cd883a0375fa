"""Hypothesis strategies, and a property-based test of a small implementation with the teaching model
as its oracle."""

from __future__ import annotations

import heapq
import itertools
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from steersim.core.model import Event
from steersim.core.product import Product
from steersim.core.registry import ModelSpec, Param
from steersim.harness.validate import validate
from steersim.integrations.strategies import Environment, environments, params, steer_schedules, timing_profiles
from steersim.models.teaching import SPEC
from steersim.simulate.timing import TimingProfile

SMALL = {"K": (1, 3), "P": (1, 3), "Q": (1, 2)}


@given(params(SPEC))
def test_params_are_always_valid_for_the_spec(values: dict[str, Any]) -> None:
    assert SPEC.resolve(values) == values


@given(params(SPEC, bounds=SMALL, N=2))
def test_bounds_narrow_and_fixed_values_pin(values: dict[str, Any]) -> None:
    assert values["N"] == 2
    assert all(lo <= values[name] <= hi for name, (lo, hi) in SMALL.items())


CHOICES = ModelSpec("choices", "a spec with every kind of parameter", (
    Param("mode", "a", "a choice", choices=("a", "b")), Param("on", False, "a flag"), Param("n", 1, "open-ended"),
), (), factory=lambda p, bug: None)  # type: ignore[arg-type,return-value]


@given(params(CHOICES))
def test_choices_flags_and_open_ranges(values: dict[str, Any]) -> None:
    assert values["mode"] in ("a", "b") and isinstance(values["on"], bool) and 0 <= values["n"] <= 9


def test_unknown_parameter_names_are_refused() -> None:
    with pytest.raises(ValueError, match="no parameter 'X'"):
        params(SPEC, X=1)


@given(steer_schedules(max_steers=4, senders=("alice", "bob")))
def test_steer_schedules_are_in_time_order(steers: tuple) -> None:
    assert len(steers) <= 4
    assert [s.at for s in steers] == sorted(s.at for s in steers)
    assert {s.sender for s in steers} <= {"alice", "bob"}


@given(timing_profiles(["user.steer", "tool.finish"]))
def test_timing_profiles_are_accepted_by_the_simulator(profile: dict[str, Any]) -> None:
    parsed = TimingProfile.from_mapping(profile)
    assert parsed.to_mapping()["default"]["dist"] == profile["default"]["dist"]
    assert parsed.delay_for("tool.finish").dist == profile["tool.finish"]["dist"]


class ToyAgent:
    """A small event-driven implementation of the teaching model's agent: K tool calls per turn, at
    most P in flight, a steer queue of capacity Q, a pending steer skipping every unlaunched call.
    It records what it does in the teaching model's native vocabulary. `skip_results` False is the bug
    of forgetting the skipped calls' results."""

    def __init__(self, K: int, P: int, Q: int, skip_results: bool = True) -> None:
        self.K, self.P, self.Q, self.skip_results = K, P, Q, skip_results
        self.events: list[Event] = []
        self.queue: list[str] = []
        self.history: list[str] = []
        self.busy = False
        self.finished: set[int] = set()
        self.launched = self.collected = self.next_call = 0

    def emit(self, name: str, **data: Any) -> None:
        self.events.append(Event("", "", name, data))

    def run(self, env: Environment) -> list[Event]:
        self.env, self.now, self.turns = env, 0.0, 0
        self.clock: list[tuple[float, int, str, int]] = []
        self.order = itertools.count()
        for n, steer in enumerate(env.steers, 1):
            self.schedule(steer.at, "steer", n)
        self.start_turn()
        while self.clock:
            self.now, _, what, arg = heapq.heappop(self.clock)
            if what == "steer":
                self.on_steer(arg)
            elif what == "model":
                self.on_model_response()
            else:
                self.finished.add(arg)
                self.emit("tool.done", call=f"call_{arg}")
                self.advance()
        return self.events

    def schedule(self, at: float, what: str, arg: int) -> None:
        heapq.heappush(self.clock, (at, next(self.order), what, arg))

    def on_steer(self, n: int) -> None:
        sid = f"s{n}"
        self.emit("steer", id=sid)
        if len(self.queue) >= self.Q:
            self.emit("steer.rejected", id=sid)
            return
        self.queue.append(sid)
        self.emit("steer.queued", id=sid, depth=len(self.queue))
        if not self.busy:
            self.deliver()
            self.start_turn()

    def start_turn(self) -> None:
        self.busy = True
        self.schedule(self.now + self.env.model_latency(self.turns), "model", 0)
        self.turns += 1

    def on_model_response(self) -> None:
        """The model call as one step, as the model has it: request and response when the call returns."""
        self.emit("model.request", history=list(self.history))
        self.emit("model.response", tool_calls=[f"call_{j}" for j in range(self.K)])
        self.launched = self.collected = self.next_call = 0
        self.finished = set()
        self.steered = False
        self.advance()

    def advance(self) -> None:
        """Launch while allowed, collect results in order, and end the turn when all are in."""
        while True:
            if self.next_call < self.K and self.launched - self.collected < self.P:
                if self.queue:
                    if self.skip_results:
                        for j in range(self.launched, self.K):
                            self.emit("tool.skipped", call=f"call_{j}")
                    self.next_call, self.steered = self.K, True
                    continue
                j = self.next_call
                self.emit("tool.start", call=f"call_{j}")
                self.schedule(self.now + self.env.tool_duration(j), "tool", j)
                self.next_call, self.launched = j + 1, self.launched + 1
            elif self.collected < self.launched:
                if self.collected not in self.finished:
                    return
                self.emit("tool.result", call=f"call_{self.collected}")
                self.collected += 1
            else:
                delivered = self.deliver()
                self.emit("queue.remove", removed=delivered)
                self.emit("turn.end", status="steered" if self.steered else "completed")
                if delivered:
                    self.start_turn()
                else:
                    self.busy = False
                return

    def deliver(self) -> int:
        for sid in self.queue:
            self.emit("steer.delivered", id=sid, index=len(self.history))
            self.history.append(sid)
        delivered, self.queue = len(self.queue), []
        return delivered


def oracle_verdict(values: dict[str, Any], env: Environment, skip_results: bool = True) -> str | None:
    """None if the toy's run is a behaviour of the teaching model with no property broken; else why."""
    model = SPEC.build({**values, "N": len(env.steers)})
    events = ToyAgent(values["K"], values["P"], values["Q"], skip_results).run(env)
    validation = validate(model, events, require_quiescent=True)
    if not validation.ok:
        return validation.divergence.summary() if validation.divergence else "the run does not end where the model can"
    broken = [v for t in validation.path for v in t.violations]
    final = validation.path[-1].target if validation.path else Product(model).init_states()[0]
    broken += Product(model).end_violations(final)
    return "; ".join(f"{v.property}: {v.message}" for v in broken) or None


@settings(max_examples=60, deadline=None)
@given(params(SPEC, bounds=SMALL), environments(max_steers=3, max_tools=3))
def test_toy_implementation_conforms_to_the_teaching_model(values: dict[str, Any], env: Environment) -> None:
    assert oracle_verdict(values, env) is None


def test_the_oracle_catches_an_implementation_that_forgets_skipped_results() -> None:
    found = []

    @settings(max_examples=200, deadline=None, database=None, phases=[Phase.generate])
    @given(params(SPEC, bounds=SMALL), environments(max_steers=2, max_tools=3))
    def forgetful(values: dict[str, Any], env: Environment) -> None:
        verdict = oracle_verdict(values, env, skip_results=False)
        if verdict is not None:
            found.append(verdict)
        assert verdict is None

    with pytest.raises(AssertionError):
        forgetful()
    assert found, "no environment made the forgetful implementation diverge"


@settings(max_examples=30)
@given(st.data())
def test_environment_durations_are_positive(data: st.DataObject) -> None:
    env = data.draw(environments())
    assert all(d > 0 for d in env.tool_durations + env.model_latencies)
    assert env.tool_duration(7) in env.tool_durations and env.model_latency(4) in env.model_latencies
