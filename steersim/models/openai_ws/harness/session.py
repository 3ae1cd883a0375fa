"""One model-driven session with a real client: the model decides, the real client's frames are matched
to the model's client actions, and everything is recorded for checking.

The server side of each step is the model's (its events are sent verbatim), so the only thing a real
client contributes is its frames. A frame is matched to an enabled client action by its structure
(`frame_matches`): free text (prompts, steer input) is the client's own, but targets, lanes, tool
outputs and the validity of a steer's input must be ones the model can produce. The client obligations
are judged on the real frames (`WireTracker`), and at the end the whole observation is validated
against the model (`steersim.harness.validate.validate`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from steersim.core.model import Action, Event
from steersim.core.paths import action_from_json
from steersim.core.product import Product, Transition, Violation
from steersim.core.registry import get_model_spec
from steersim.errors import EXIT_INCOMPLETE, EXIT_OK, EXIT_VIOLATION
from steersim.harness.finding import Finding
from steersim.harness.validate import Validation, validate
from steersim.models.openai_ws import wire
from steersim.models.openai_ws.client import WireTracker, rule_text
from steersim.models.openai_ws.frames import excerpt
from steersim.models.openai_ws.matching import frame_matches
from steersim.models.openai_ws.state import PENDING, WAITING

# The serving model: the seed example's shape (default lane), a client that may declare its function tool
# (then the root ends with a call of it and steering waits for its output), and a client as wide as the
# docs: steers with any input (an invalid one is refused), up to six steer frames and three new requests
# after a chain ended (reaching either bound ends the session incomplete, not as a divergence).
SERVE_DEFAULTS: Mapping[str, Any] = {"stream_ids": "default", "client_tools": 2, "invalid_input": True,
                                     "steers": 6, "followups": 3}


MODEL_NAME = "openai-ws"


def served_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters a served session's model runs with. `client_tools` 1 says the model's own client
    declares its function tool; a served real client decides that itself in its `response.create`, so the
    server calls the tool whenever the client declares one (as with 2) and serves a client that declares
    none without a tool call, rather than refusing a request the docs allow (the `tools` of
    `response.create` are "the same top-level fields as `POST /v1/responses`", all optional)."""
    if params.get("client_tools") == 1:
        return {**params, "client_tools": 2}
    return dict(params)


@dataclass
class Session:
    """The model's run against one real client, across its connections."""

    params: dict[str, Any]
    bug: str | None = None
    transitions: list[Transition] = field(default_factory=list)
    observed: list[Event] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    tracker: WireTracker = field(default_factory=WireTracker)
    inputs: dict[str, Any] = field(default_factory=dict)  # steer id -> the client's own input
    submitted: Any = None  # the input of the latest steer frame
    clock: Callable[[], float] | None = None  # seconds since the session started, for the trace's times
    times: list[float] = field(default_factory=list)
    incomplete: str = ""  # why the session stopped short of a verdict, if it did
    stopped: Finding | None = None  # the finding that ended the session early, if one did
    last_frame: tuple[str, dict[str, Any]] | None = None  # a client frame that no step took, if any
    overdue: float | None = None  # the tool-output timeout that ran out, if one did

    def __post_init__(self) -> None:
        # by its registered name, as every command builds a model: the model judges a recorded session
        # again through this class on replay, so the two modules must not import each other
        self.params = served_params(self.params)
        self.model = get_model_spec(MODEL_NAME).build(self.params, self.bug)
        self.product = Product(self.model)
        self.state = self.product.init_states()[0]

    # ------------------------------------------------------------------ what can happen now
    def enabled(self) -> list[Action]:
        return list(self.product.actions(self.state))

    def server_actions(self) -> list[Action]:
        return [a for a in self.enabled() if a.actor != "client"]

    @property
    def connected(self) -> bool:
        return self.state[0].connected

    @property
    def finished(self) -> bool:
        return not self.enabled()

    # ------------------------------------------------------------------ steps
    def client_event(self, name: str, data: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """A client frame (or a reconnect) arrived: judge it by the client obligations first, then take the
        model's matching client action and return the server frames to send. None ends the session: the
        frame broke an obligation and the model cannot place it (the finding says which), a bound of the
        model's client was reached (`incomplete`), or nothing explains it (a divergence)."""
        observed = Event("client", "server", name, dict(data))
        self.last_frame = (name, dict(data))
        if self._over_bound(name, data):
            return None
        broken = [Finding(rule, "obligation", f"{message}: {rule_text(rule)}")
                  for rule, message in (self.tracker.client_frame(data) if "type" in data else [])]
        self.findings.extend(broken)
        for action in self.enabled():
            if action.actor != "client":
                continue
            events = self.model.events(self.state[0], action)
            if events and frame_matches(events[0], observed):
                self.last_frame = None
                return self._take(action, observed)
        if broken:
            self.stopped = broken[0]
            return None
        self.stopped = Finding("model", "divergence", f"client sent {name} {excerpt(json.dumps(dict(data)))} "
                               f"which the model cannot produce here; it offers: {[a.label() for a in self.enabled()]}")
        self.findings.append(self.stopped)
        return None

    def _over_bound(self, name: str, data: Mapping[str, Any]) -> bool:
        """A steer beyond `steers`, or a new request beyond `followups`: the model's client is bounded so
        its runs stay finite, so the session ends there, incomplete (exit 3), judging nothing more."""
        s = self.state[0]
        if name == "response.steer" and len(s.steers) >= self.params["steers"]:
            self.incomplete = f"the client sent more than steers={self.params['steers']} steer frames"
        followups = sum(1 for r in s.responses if r.origin == "followup") + len(s.queued)
        if (name == "response.create" and data.get("previous_response_id") and followups >= self.params["followups"]
                and not any(a.kind == "client.tool_output" for a in self.enabled())):
            self.incomplete = f"the client sent more than followups={self.params['followups']} new requests"
        return bool(self.incomplete)

    def waiting_for_required_input(self) -> list[int]:
        """The responses of this connection that wait for the client's tool output."""
        s = self.state[0]
        return [i for i, r in enumerate(s.responses) if r.conn == s.conn and r.next == WAITING and not r.answered]

    def required_input_overdue(self, seconds: float) -> None:
        """The server waited `seconds` (the announced tool-output timeout) and heard nothing: every parent
        whose steers are pending on required input the client did not return is a finding."""
        s = self.state[0]
        self.overdue = seconds
        for index in self.waiting_for_required_input():
            if any(s.steers[n].status == PENDING for n in s.responses[index].queue):
                rule = "client-returns-required-input"
                self.findings.append(Finding(rule, "obligation", f"no continuation of {wire.response_id(index)} "
                                             f"within {seconds:g} s of response.steer.pending: {rule_text(rule)}"))

    @property
    def steer_judged(self) -> bool:
        """Some steer frame of the client was answered (accepted or refused)."""
        return any(t.action.kind == "client.steer" for t in self.transitions)

    def server_step(self, action: Action) -> list[dict[str, Any]]:
        return self._take(action, None)

    def _take(self, action: Action, observed: Event | None) -> list[dict[str, Any]]:
        transition = self.product.step(self.state, action)
        if transition is None:
            raise RuntimeError(f"{action.label()} is a no-op: the model offered an action it cannot take")
        events = list(transition.events)
        if observed is not None:
            events[0] = observed
            if observed.name == "response.steer":
                self.submitted = observed.data.get("input")
        events = [self._realised(event) for event in events]
        transition = transition._replace(events=tuple(events))
        self.transitions.append(transition)
        if self.clock is not None:
            self.times.append(self.clock())
        self.observed.extend(events)
        self.state = transition.target
        for violation in transition.violations:
            self.findings.append(Finding(violation.property, "monitor", violation.message))
        frames = []
        for event in events:
            if event.source == "server" and event.target == "client" and "type" in event.data:
                self.tracker.server_event(event.data)
                frames.append(dict(event.data))
            elif event.name == "websocket.close":
                self.tracker.closed()
        return frames

    def _realised(self, event: Event) -> Event:
        """A refused or failed steer returns the client's own input (inv17), not the model's stand-in."""
        if event.name == "response.steer.accepted":
            self.inputs[event.data["steer"]["id"]] = self.submitted
        if event.name != "response.steer.failed":
            return event
        steer = dict(event.data["steer"])
        steer["input"] = self.inputs.get(steer["id"], self.submitted) if "id" in steer else self.submitted
        return event._replace(data={**event.data, "steer": steer})

    # ------------------------------------------------------------------ verdict
    def validation(self) -> Validation:
        return validate(self.model, self.observed, match=frame_matches)

    def finish(self) -> list[Finding]:
        """Validate the whole observation; every finding of the session."""
        if self.stopped is None:
            result = self.validation()
            if not result.ok and result.divergence is not None:
                self.findings.append(Finding("model", "divergence", result.divergence.summary()))
        return self.findings

    def exit_code(self) -> int:
        """1 for any finding; 3 when nothing was judged (no client, or no steer answered) or a bound of the
        model's client ended the session; else 0."""
        if self.findings:
            return EXIT_VIOLATION
        if self.incomplete or not self.steer_judged:
            return EXIT_INCOMPLETE
        return EXIT_OK

    def verdict(self) -> str:
        if self.findings:
            return f"{len(self.findings)} finding(s)"
        if self.incomplete:
            return f"incomplete: {self.incomplete}"
        if not self.transitions:
            return "incomplete: no client connected"
        if not self.steer_judged:
            return "incomplete: the session ended before any steer was judged"
        return "ok: every client frame and server answer conforms"

    def actions_taken(self) -> Sequence[Action]:
        return [t.action for t in self.transitions]

    def trace_end(self) -> str:
        """The last line's `end` of the session's trace: enough to judge it again (`rejudge`)."""
        end: dict[str, Any] = {"verdict": self.verdict()}
        if self.last_frame is not None:
            end["unplaced_frame"] = {"name": self.last_frame[0], "data": self.last_frame[1]}
        if self.overdue is not None:
            end["tool_output_timeout"] = self.overdue
        return SERVED_END + json.dumps(end)


SERVED_END = "served session "


def rejudge(trace: Any) -> list[Violation]:
    """The findings of a recorded served session, judged again: its client frames through a fresh
    session (the obligations, the model's matching, the frame that no step took) and the final
    validation. A trace that was not served has none."""
    if not (trace.end or "").startswith(SERVED_END):
        return []
    end = json.loads(trace.end.removeprefix(SERVED_END))
    session = Session(dict(trace.params), trace.bug)
    for step in trace.steps:
        if step.action["actor"] == "client":
            first = step.events[0]
            session.client_event(first["name"], first["data"])
        else:
            action = action_from_json(step.action, session.server_actions())
            if action is None:
                raise ValueError(f"step {step.i} of the served session is no server action of the model now")
            session.server_step(action)
    if "unplaced_frame" in end:
        session.client_event(end["unplaced_frame"]["name"], end["unplaced_frame"]["data"])
    if "tool_output_timeout" in end:
        session.required_input_overdue(end["tool_output_timeout"])
    # the model's own monitors are replayed step by step already
    return [Violation(f.property, f"{f.kind}: {f.summary}") for f in session.finish() if f.kind != "monitor"]
