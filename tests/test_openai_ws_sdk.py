"""SDK conformance of the model's vocabulary: every event the model can emit, on every transition of
small explored graphs, parses strictly into the `openai==3.51.0` class for its `type`."""

from __future__ import annotations

import typing
from collections import deque

import pytest
from openai.types.responses.responses_client_event_param import ResponsesClientEventParam
from openai.types.responses.responses_server_event import ResponsesServerEvent
from pydantic import TypeAdapter

from steersim.core.fingerprint import fingerprint
from steersim.models.openai_ws import SPEC

SERVER_EVENTS = TypeAdapter(ResponsesServerEvent)
CLIENT_EVENTS = TypeAdapter(ResponsesClientEventParam)
CONFIGURATIONS = [
    {"steers": 2},
    {"steers": 2, "invalid_input": True, "response_failures": True, "reconnects": 0},
    {"steers": 1, "stream_ids": "default", "sequence_scope": "connection", "client_tools": 0},
    {"steers": 1, "steerable": False, "reconnects": 0},
]


def class_for_type() -> dict[str, type]:
    """The SDK's own map from a server event's `type` to its class, read off the union's members."""
    members = typing.get_args(typing.get_args(ResponsesServerEvent)[0])
    out = {}
    for member in members:
        (literal,) = typing.get_args(member.model_fields["type"].annotation)
        out[literal] = member
    return out


def explored_events(params: dict):
    """Every event of every transition of the explored graph (each transition walked once)."""
    model = SPEC.build(params)
    seen, frontier = set(), deque(model.init_states())
    while frontier:
        state = frontier.popleft()
        for action in model.actions(state):
            target = model.next_state(state, action)
            yield from model.observe(state, action, target)
            key = fingerprint(target)
            if key not in seen:
                seen.add(key)
                frontier.append(target)


def test_every_emitted_event_parses_strictly_into_its_sdk_class():
    classes = class_for_type()
    server_types, client_types = set(), set()
    for params in CONFIGURATIONS:
        for event in explored_events(params):
            data = dict(event.data)
            if event.source == "server" and event.target == "client" and "type" in data:
                parsed = SERVER_EVENTS.validate_python(data, strict=True)
                assert type(parsed) is classes[data["type"]], data["type"]
                classes[data["type"]].model_validate(data, strict=True)
                server_types.add(data["type"])
            elif event.source == "client" and "type" in data:
                CLIENT_EVENTS.validate_python(data, strict=True)
                client_types.add(data["type"])
    assert {"response.steer.accepted", "response.steer.pending", "response.steer.failed", "response.created",
            "response.in_progress", "response.completed", "response.incomplete", "response.failed",
            "response.output_item.added", "response.output_item.done", "response.web_search_call.in_progress",
            "response.web_search_call.completed"} <= server_types
    assert client_types == {"response.create", "response.steer"}


def test_strict_validation_refuses_a_steer_event_missing_a_required_field():
    """Guards the test above: strict parsing does fail on a malformed event."""
    with pytest.raises(ValueError):
        SERVER_EVENTS.validate_python({"type": "response.steer.accepted", "sequence_number": 4, "steer": {}},
                                      strict=True)
