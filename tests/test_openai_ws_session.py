"""A serving session without sockets: real client frames are matched to the model, answered with the
model's events (returning the client's own steer input), judged by the client obligations and validated."""

from __future__ import annotations

from steersim.models.openai_ws import SPEC
from steersim.models.openai_ws.client import WireTracker, judge
from steersim.models.openai_ws.harness.session import SERVE_DEFAULTS, Session

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
    assert judge(tracker.view(), continuation) == []  # still running: it may yet need the client's input
    tracker.server_event({"type": "response.incomplete", "sequence_number": 3,
                          "response": {"id": "resp_0001", "status": "incomplete", "output": []}})
    assert [rule for rule, _ in judge(tracker.view(), continuation)] == ["client-no-automatic-continuation"]
    tracker.server_event({"type": "response.created", "sequence_number": 0,
                          "response": {"id": "resp_0002", "previous_response_id": "resp_0001"}})
    assert [rule for rule, _ in judge(tracker.view(), continuation)] == ["client-no-automatic-continuation"]


def test_a_steer_at_a_superseded_response_is_flagged_only_once_the_client_used_the_successor():
    tracker = WireTracker()
    tracker.server_event({"type": "response.created", "sequence_number": 0,
                          "response": {"id": "resp_0002", "previous_response_id": "resp_0001"}})
    # in flight when the successor was created: a correct client may send it
    assert tracker.client_frame(steer("resp_0001", "a")) == []
    assert tracker.client_frame(steer("resp_0002", "b")) == []
    assert [rule for rule, _ in tracker.client_frame(steer("resp_0001", "c"))] == ["client-steer-newest-response"]


def test_a_steer_with_stream_id_is_refused_invalid_input_and_named():
    session = new_session()
    target = session.client_event("response.create", CREATE)[0]["response"]["id"]
    (failed,) = session.client_event("response.steer", steer(target, "keep it small", stream_id="lane-a"))
    assert (failed["type"], failed["error"]["code"], "id" in failed["steer"]) == (
        "response.steer.failed", "invalid_input", False)
    findings = session.finish()
    assert [(f.property, f.kind) for f in findings] == [("client-no-stream-id-on-steer", "obligation")]
    assert "Do not send `stream_id`" in findings[0].summary
    assert session.exit_code() == 1


def test_an_obligation_the_model_cannot_place_is_reported_as_that_obligation():
    session = new_session()
    target = session.client_event("response.create", CREATE)[0]["response"]["id"]
    session.client_event("response.steer", steer(target, "keep it small"))
    while not session.state[0].responses[0].terminal:
        session.server_step(next(a for a in session.server_actions() if a.kind != "fault.disconnect"))
    assert session.state[0].responses[0].next == "auto"  # its queued steer continues automatically
    again = {"type": "response.create", "model": "gpt-6-astra", "previous_response_id": target, "input": "more"}
    assert session.client_event("response.create", again) is None
    assert [(f.property, f.kind) for f in session.finish()] == [("client-no-automatic-continuation", "obligation")]


def test_a_steer_beyond_the_bound_ends_the_session_incomplete():
    session = new_session(steers=1)
    target = session.client_event("response.create", CREATE)[0]["response"]["id"]
    session.client_event("response.steer", steer(target, "one"))
    assert session.client_event("response.steer", steer(target, "two")) is None
    assert session.finish() == []
    assert session.exit_code() == 3 and "steers=1" in session.verdict()


def test_a_session_without_a_steer_is_incomplete():
    session = new_session()
    session.client_event("response.create", CREATE)
    assert session.finish() == [] and session.exit_code() == 3
