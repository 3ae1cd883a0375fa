"""A serving session without sockets: real client frames are matched to the model, answered with the
model's events (returning the client's own steer input), judged by the client obligations and validated."""

from __future__ import annotations

from models.openai_ws.client import WireTracker, judge
from models.openai_ws.session import SERVE_DEFAULTS, Session
from models.openai_ws.spec import SPEC

CREATE = {"type": "response.create", "model": "gpt-6-astra", "input": "Draft a plan."}


def new_session(**params) -> Session:
    return Session(SPEC.resolve({**SERVE_DEFAULTS, "reconnects": 0, **params}))


def steer(target: str, text: str, **extra) -> dict:
    return {"type": "response.steer", "previous_response_id": target, "input": text, **extra}


def run_server_until(session: Session, event_type: str) -> list[dict]:
    """Take the server's first offered move until it sends `event_type`."""
    sent: list[dict] = []
    while not any(frame["type"] == event_type for frame in sent):
        sent += session.server_step(session.server_actions()[0])
    return sent


def test_a_late_steer_is_refused_with_the_clients_own_input():
    session = new_session()
    created = session.client_event("response.create", CREATE)
    assert [f["type"] for f in created] == ["response.created", "response.in_progress"]
    target = created[0]["response"]["id"]
    run_server_until(session, "response.completed")
    (failed,) = session.client_event("response.steer", steer(target, "my own words"))
    assert failed["error"]["code"] == "response_already_completed"
    assert failed["steer"] == {"previous_response_id": target, "input": "my own words"}
    assert session.finish() == []


def test_resending_an_accepted_steer_breaks_a_client_obligation():
    session = new_session()
    target = session.client_event("response.create", CREATE)[0]["response"]["id"]
    (accepted,) = session.client_event("response.steer", steer(target, "keep it small"))
    assert accepted["type"] == "response.steer.accepted"
    session.client_event("response.steer", steer(target, "keep it small"))
    assert [f.property for f in session.finish()] == ["client-no-resend-accepted"]


def test_a_frame_the_model_cannot_produce_is_a_divergence():
    session = new_session()
    assert session.client_event("response.steer", steer("resp_0001", "too early")) is None
    assert [(f.property, f.kind) for f in session.findings] == [("model", "divergence")]


def test_client_rules_on_single_frames():
    tracker = WireTracker()
    assert [rule for rule, _ in tracker.client_frame(steer("resp_0001", "x", stream_id="lane-a"))] == [
        "client-no-stream-id-on-steer"]
    tracker.server_event({"type": "response.steer.accepted", "sequence_number": 2,
                          "steer": {"id": "steer_1", "previous_response_id": "resp_0001"}})
    continuation = {"type": "response.create", "previous_response_id": "resp_0001", "input": []}
    assert [rule for rule, _ in judge(tracker.view(), continuation)] == ["client-no-automatic-continuation"]
