"""The openai-ws model: the default configuration is checkable within the budget and every property
holds; every bug variant is caught by the property named for it; every steering error code is reachable;
every ambiguity setting keeps the invariants."""

from __future__ import annotations

from collections import deque

import pytest

from steersim import CheckOptions, check
from steersim.core.fingerprint import fingerprint
from steersim.core.model import Event
from steersim.models.openai_ws import SPEC
from steersim.models.openai_ws.wire import STEER_ERROR_CODES

STATE_BUDGET = 80_000  # two follow-up requests by default, so a lane queues one (server.start_queued)


def assert_all_hold(result) -> None:
    bad = {p.name: p.status for p in result.properties if p.status not in ("holds", "reached")}
    assert result.status == "ok" and not bad, bad


def test_default_configuration_holds_within_budget():
    result = check(SPEC.build(), CheckOptions(keep_going=True))
    assert_all_hold(result)
    assert result.states <= STATE_BUDGET
    names = {p.name for p in result.properties}
    assert {f"inv{n:02d}" for n in range(1, 22)} <= {name[:5] for name in names}
    assert {"client-no-resend-accepted", "client-no-stream-id-on-steer"} <= names


# The default's follow-up requests grow the graph thirtyfold; the bugs that do not need them are shown
# without them, the lane queue's with one steer.
SMALL = {"followups": 0}
BUG_PARAMS = {"queued-request-never-starts": {"steers": 1}}


@pytest.mark.parametrize("bug", sorted(SPEC.bugs))
def test_bug_is_caught_by_its_property(bug):
    params = {**SMALL, **SPEC.bug_params.get(bug, {}), **BUG_PARAMS.get(bug, {})}
    result = check(SPEC.build(params, bug), CheckOptions(keep_going=True))
    catcher = SPEC.bug_catchers[bug]
    verdict = {p.name: p for p in result.properties}[catcher]
    assert verdict.status == "violated"
    assert verdict.counterexample is not None and verdict.counterexample.steps


def reachable_codes(params: dict) -> set[str]:
    model = SPEC.build(params)
    seen, frontier, codes = set(), deque(model.init_states()), set()
    while frontier:
        state = frontier.popleft()
        for action in model.actions(state):
            target = model.next_state(state, action)
            events = model.observe(state, action, target)
            codes.update(e.data["error"]["code"] for e in events if e.name == "response.steer.failed")
            key = fingerprint(target)
            if key not in seen:
                seen.add(key)
                frontier.append(target)
    return codes


def test_every_steer_error_code_is_reachable():
    codes = reachable_codes({})
    assert codes == set(STEER_ERROR_CODES) - {"invalid_input", "steering_not_supported"}
    assert "invalid_input" in reachable_codes({"invalid_input": True, "steers": 1, "reconnects": 0})
    assert reachable_codes({"steerable": False, "steers": 2}) == {"steering_not_supported"}


AMBIGUITY_SETTINGS = [
    {"batching": "one"},
    {"interruption": "eager"},
    {"interruption": "finish"},
    {"late_steer": "reject"},
    {"completed_steer": "successor"},
    {"waiting_steer": "queue"},
    {"response_failures": True, "failed_parent_code": "successor_creation_failed", "steers": 2},
    {"sequence_scope": "connection", "stream_ids": "default"},
    {"steerable": False},
    {"invalid_input": True, "steers": 2},
    {"client_tools": 0, "hosted_tools": 2},
]


@pytest.mark.parametrize("params", AMBIGUITY_SETTINGS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_ambiguity_settings_keep_the_invariants(params):
    assert_all_hold(check(SPEC.build({"steers": 2, **params}), CheckOptions(keep_going=True)))


@pytest.mark.slow
@pytest.mark.parametrize("params", [{"steers": 4}, {"lanes": 2, "steers": 2}, {"reconnects": 2, "steers": 4}])
def test_bigger_configurations_hold(params):
    assert_all_hold(check(SPEC.build(params), CheckOptions(keep_going=True)))


def test_every_parameter_is_documented_in_one_line():
    for param in SPEC.params:
        assert param.doc and "\n" not in param.doc, param.name
    assert set(SPEC.bug_catchers) == set(SPEC.bugs)


@pytest.mark.parametrize("params", [SMALL, {**SMALL, "late_steer": "reject"}])
def test_a_refusal_that_names_the_wrong_parent_state_is_caught(params, monkeypatch):
    """inv22 judges the emitted refusal code against the parent: swapping the two codes breaks it."""
    from steersim.models.openai_ws.model import _Step

    original = _Step.refusal
    swap = {"response_already_completed": "response_not_active", "response_not_active": "response_already_completed"}

    def swapped(self, target, valid):
        code = original(self, target, valid)
        return swap.get(code, code)

    monkeypatch.setattr(_Step, "refusal", swapped)
    result = check(SPEC.build(params), CheckOptions(keep_going=True))
    assert {p.name: p.status for p in result.properties}["inv22-refusal-names-the-parent"] == "violated"


def test_the_connection_counter_handing_out_its_next_value_is_caught(monkeypatch):
    """sequence-numbers-consecutive judges each number against the next one of its scope: a connection
    counter that numbers its events from 1 (each event takes the counter's new value) breaks it, though
    the numbers still increase (inv20 holds)."""
    from steersim.models.openai_ws.model import _Step

    original = _Step.seq

    def from_one(self, index):
        if index is None or self.m.p["sequence_scope"] == "connection":
            self.conn_seq += 1
            return self.conn_seq
        return original(self, index)

    monkeypatch.setattr(_Step, "seq", from_one)
    params = {**SMALL, "sequence_scope": "connection", "steers": 2}
    statuses = {p.name: p.status for p in check(SPEC.build(params), CheckOptions(keep_going=True)).properties}
    assert statuses["sequence-numbers-consecutive"] == "violated"
    assert statuses["inv20-sequence-numbers-increase"] == "holds"


def test_a_stale_steer_is_caught_from_the_lineage_the_client_saw(monkeypatch):
    """client-steer-newest-response reads a parent's successor from the responses' previous_response_id, as a
    served client's tracker does: a server that never records which response continued a parent (so its
    client may steer the stale parent) is still caught."""
    from steersim.models.openai_ws.model import _Step

    original = _Step.update

    def forgetful(self, index, **changes):
        changes.pop("successor", None)
        return original(self, index, **changes)

    monkeypatch.setattr(_Step, "update", forgetful)
    statuses = {p.name: p.status for p in check(SPEC.build(SMALL), CheckOptions(keep_going=True)).properties}
    assert statuses["client-steer-newest-response"] == "violated"


def test_a_drop_closed_with_a_normal_close_is_caught(monkeypatch):
    """connection-events: after a close with code 1000 the SDK ends its iteration instead of reconnecting, so
    a drop the client reconnects after must close with a reconnecting code."""
    from steersim.models.openai_ws import wire
    from steersim.models.openai_ws.model import _Step

    monkeypatch.setattr(_Step, "send_close", lambda self: self.events.append(
        Event("server", "client", "websocket.close", wire.close_frame(1000, "bye"))))
    statuses = {p.name: p.status for p in check(SPEC.build(SMALL), CheckOptions(keep_going=True)).properties}
    assert statuses["connection-events"] == "violated"


def statuses_of(params: dict, bug: str | None = None) -> dict[str, str]:
    return {p.name: p.status for p in check(SPEC.build(params, bug), CheckOptions(keep_going=True)).properties}


def test_requests_waiting_in_a_lane_queue_start_in_arrival_order():
    """lane-fifo: with three new requests two can wait in one lane's queue ("Requests with the same stream_id
    are processed FIFO"); the older one starts first, and a server that starts the newer one is caught."""
    params = {"followups": 3, "steers": 1}
    assert statuses_of(params)["lane-fifo"] == "holds"
    assert statuses_of(params, "queued-requests-lifo")["lane-fifo"] == "violated"


def test_a_committed_steer_joins_its_own_lanes_history():
    """history-on-own-lane: the commit of a steer names the chain its acceptance named (the lane's stream_id),
    on the named lanes and on the default lane alike."""
    assert statuses_of(SMALL)["history-on-own-lane"] == "holds"
    assert statuses_of({**SMALL, "stream_ids": "default"})["history-on-own-lane"] == "holds"
    assert statuses_of(SMALL, "history-on-default-lane")["history-on-own-lane"] == "violated"
