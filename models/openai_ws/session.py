"""One model-driven session with a real client: the model decides, the real client's frames are matched
to the model's client actions, and everything is recorded for checking.

The server side of each step is the model's (its events are sent verbatim), so the only thing a real
client contributes is its frames. A frame is matched to an enabled client action by its structure
(`frame_matches`): free text (prompts, steer input) is the client's own, but targets, lanes, tool
outputs and the validity of a steer's input must be ones the model can produce. The client obligations
are judged on the real frames (`WireTracker`), and at the end the whole observation is validated
against the model (`sim.harness.validate.validate`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from models.openai_ws.client import WireTracker
from models.openai_ws.frames import excerpt
from models.openai_ws.matching import frame_matches
from models.openai_ws.spec import SPEC
from sim.core.model import Action, Event
from sim.core.product import Product, Transition
from sim.harness.validate import Validation, validate

# The serving model: the seed example's shape (default lane, no client tools) and a permissive client.
SERVE_DEFAULTS: Mapping[str, Any] = {"stream_ids": "default", "client_tools": 0, "invalid_input": True,
                                     "steers": 3}


@dataclass
class Finding:
    property: str
    kind: str  # monitor | divergence | obligation | malformed (a frame the server could not read)
    summary: str

    def to_json(self) -> dict[str, str]:
        return {"property": self.property, "kind": self.kind, "summary": self.summary}


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

    def __post_init__(self) -> None:
        self.model = SPEC.build(self.params, self.bug)
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
        """A client frame (or a reconnect) arrived: take the model's matching client action and return the
        server frames to send, or None when no enabled client action explains it (a divergence)."""
        observed = Event("client", "server", name, dict(data))
        for action in self.enabled():
            if action.actor != "client":
                continue
            events = self.model.events(self.state[0], action)
            if events and frame_matches(events[0], observed):
                if "type" in data:
                    for rule, message in self.tracker.client_frame(data):
                        self.findings.append(Finding(rule, "obligation", message))
                return self._take(action, observed)
        self.findings.append(Finding("model", "divergence", f"client sent {name} {excerpt(json.dumps(dict(data)))} "
                                     f"which the model cannot produce here; it offers: "
                                     f"{[a.label() for a in self.enabled()]}"))
        return None

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
        result = self.validation()
        if not result.ok and result.divergence is not None:
            self.findings.append(Finding("model", "divergence", result.divergence.summary()))
        return self.findings

    def actions_taken(self) -> Sequence[Action]:
        return [t.action for t in self.transitions]
