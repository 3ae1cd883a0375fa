"""A lane runs its requests FIFO ("Requests with the same `stream_id` are processed FIFO"): a new request
that arrives while its lane is busy waits in the lane's queue and starts once the lane is free, so a client
that sends its next request before the previous one's `response.created` is served, not refused."""

from __future__ import annotations

from steersim import CheckOptions, check
from steersim.models.openai_ws import SPEC
from steersim.models.openai_ws.wire import response_id

PARAMS = {"followups": 2, "steers": 0, "client_tools": 0, "hosted_tools": 0, "reconnects": 0}


def take(model, state, kind, *args):
    """Take the enabled action of `kind` (with `args`, if given); fail if the model does not offer it."""
    offered = [a for a in model.actions(state) if a.kind == kind and (not args or a.args == args)]
    assert offered, (kind, args, [a.label() for a in model.actions(state)])
    return model.step(state, offered[0])


def created(events):
    return [e.data["response"]["previous_response_id"] for e in events if e.name == "response.created"]


def finish(model, state, index):
    """Run response `index` to its terminal event."""
    while state.responses[index].status == "in_progress":
        kind = next(a.kind for a in model.actions(state) if a.args == (index,) and a.kind.startswith("server."))
        state, _ = take(model, state, kind, index)
    return state


def test_a_second_new_request_waits_for_its_lane_then_starts():
    model = SPEC.build(PARAMS)
    state = model.init_states()[0]
    state, _ = take(model, state, "client.create")
    state = finish(model, state, 0)
    state, events = take(model, state, "client.followup", 0)
    assert created(events) == [response_id(0)]
    # the client sends its next new request before the first one's response.created reached it
    state, events = take(model, state, "client.followup", 0)
    assert [e.name for e in events] == ["response.create"] and created(events) == []
    assert state.queued == (0,)
    assert not [a for a in model.actions(state) if a.kind == "server.start_queued"]  # the lane is busy
    state = finish(model, state, 1)
    state, events = take(model, state, "server.start_queued", 0)
    assert created(events) == [response_id(0)] and state.queued == ()
    assert [r.status for r in state.responses] == ["completed", "completed", "in_progress"]


def test_queued_requests_keep_every_invariant():
    result = check(SPEC.build({"followups": 2, "steers": 2, "invalid_input": True}), CheckOptions(keep_going=True))
    bad = {p.name: p.status for p in result.properties if p.status not in ("holds", "reached")}
    assert result.status == "ok" and not bad, bad
    assert dict(result.coverage.fired)["server.start_queued"] > 0
