"""The openai-ws readings and vacuity guards: each reading property fails on a server that silently follows
the other reading of its ambiguity, and each guard fails when the behaviour it stands for is switched off."""

from __future__ import annotations

import pytest

from steersim import CheckOptions, check
from steersim.models.openai_ws import SPEC
from steersim.models.openai_ws.model import OpenAIWsModel, _Step
from steersim.models.openai_ws.state import COMPLETED


def statuses(model: OpenAIWsModel) -> dict[str, str]:
    return {p.name: p.status for p in check(model, CheckOptions(keep_going=True)).properties}


def reading_as(name: str, value: str, methods: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's `methods` decide as if parameter `name` were `value`; the properties still read the
    configured one."""
    for method in methods:
        original = getattr(_Step, method)

        def other(self, *args, _original=original):
            configured = self.m.p
            self.m.p = {**configured, name: value}
            try:
                return _original(self, *args)
            finally:
                self.m.p = configured

        monkeypatch.setattr(_Step, method, other)


ADMISSION = ("refusal", "restartable")
# Without the default's follow-up requests, which grow the graph thirtyfold and change no reading or guard
# these tests switch (`sometimes-followup` is switched off at followups=1).
SMALL = {"followups": 0}
READINGS = [
    ({}, "waiting_steer", "queue", ADMISSION, "steer-admission-readings"),
    ({"waiting_steer": "queue"}, "waiting_steer", "reject", ADMISSION, "steer-admission-readings"),
    ({}, "late_steer", "reject", ADMISSION, "steer-admission-readings"),
    ({"late_steer": "reject"}, "late_steer", "join", ADMISSION, "steer-admission-readings"),
    ({}, "completed_steer", "successor", ADMISSION, "steer-admission-readings"),
    ({"completed_steer": "successor"}, "completed_steer", "reject", ADMISSION, "steer-admission-readings"),
    ({}, "batching", "one", ("commit_from",), "batch-readings"),
    ({"batching": "one"}, "batching", "all", ("commit_from",), "batch-readings"),
]


@pytest.mark.parametrize(("params", "name", "other", "methods", "caught_by"), READINGS,
                         ids=[f"{n}:{p.get(n, 'default')}->{o}" for p, n, o, _, _ in READINGS])
def test_a_server_following_the_other_reading_is_caught(params, name, other, methods, caught_by, monkeypatch):
    configured = {"steers": 2, **SMALL, **params}
    assert statuses(SPEC.build(configured))[caught_by] == "holds"
    reading_as(name, other, methods, monkeypatch)
    assert statuses(SPEC.build(configured))[caught_by] == "violated"


class Without(OpenAIWsModel):
    """The model without the actions `removed` names: (kind, predicate over state and action) pairs."""

    removed: tuple[tuple[str, object], ...] = ()

    def actions(self, s):
        return [a for a in super().actions(s)
                if not any(a.kind == kind and (when is None or when(s, a)) for kind, when in self.removed)]


def without(*removed: tuple[str, object]) -> type[OpenAIWsModel]:
    return type("Without", (Without,), {"removed": removed})


def _at_completed(s, a):
    return s.responses[a.args[0]].status == COMPLETED


def _queued(s, a):
    return bool(s.responses[a.args[0]].queue)


def _followed(s, a):
    return s.responses[a.args[0]].successor >= 0


# (guard, configuration, the model with the behaviour switched off)
SWITCHED_OFF = [
    ("sometimes-completed", SMALL, without(("server.complete", None))),
    ("sometimes-steered-interrupt", SMALL, without(("server.interrupt", None))),
    ("sometimes-completed-then-successor", SMALL, without(("server.successor", _at_completed))),
    ("sometimes-steer-pending", SMALL, without(("server.pending", None))),
    ("sometimes-explicit-commit", SMALL, without(("client.tool_output", _queued))),
    ("sometimes-steer-lost-to-drop", SMALL, without(("fault.disconnect", None))),
    ("sometimes-reconnected", SMALL, without(("fault.disconnect", None))),
    ("sometimes-hosted-tool-finishes", SMALL, without(("tool.finish", None))),
    ("sometimes-successor-creation-failed", SMALL, without(("server.successor_fails", None))),
    ("sometimes-batch-of-two", SMALL, without(("client.steer", _queued))),
    ("sometimes-followup", {"followups": 1, "steers": 2}, without(("client.followup", None))),
    # a client that sends each new request only after the last one's response.created: none waits in a lane
    ("sometimes-request-queued", {"steers": 1}, without(("client.followup", _followed))),
    ("sometimes-response-failed", {**SMALL, "response_failures": True, "steers": 2}, without(("server.fail", None))),
    ("sometimes-steer-fails-with-parent", {**SMALL, "response_failures": True, "steers": 2},
     without(("server.fail", _queued))),
    ("sometimes-steering-not-supported", {"steerable": False}, without(("client.steer", None))),
    ("sometimes-invalid-input", {**SMALL, "invalid_input": True, "steers": 2},
     without(("client.steer", lambda s, a: not a.args[2]))),
]


@pytest.mark.parametrize(("guard", "params", "model"), SWITCHED_OFF, ids=[g for g, _, _ in SWITCHED_OFF])
def test_each_guard_fails_when_its_behaviour_is_switched_off(guard, params, model):
    resolved = SPEC.resolve(params, None)
    assert statuses(OpenAIWsModel(resolved))[guard] == "reached"
    assert statuses(model(resolved))[guard] == "unreached"


def test_every_guard_of_the_tested_configurations_has_a_switched_off_test():
    guards = {p.name for params in {str(p): p for _, p, _ in SWITCHED_OFF}.values()
              for p in SPEC.build(params).properties() if p.kind == "sometimes"}
    assert guards == {g for g, _, _ in SWITCHED_OFF}


def test_a_successor_that_loses_its_previous_response_id_is_caught(monkeypatch):
    """The invariants that follow a successor through its previous_response_id skip one that has none;
    response-lineage names it."""
    original = _Step.response_json

    def orphaned(self, index, reason=None):
        body = original(self, index, reason)
        return {**body, "previous_response_id": None} if self.responses[index].origin == "auto" else body

    monkeypatch.setattr(_Step, "response_json", orphaned)
    found = statuses(SPEC.build(SMALL))
    assert found["response-lineage"] == "violated"
    assert found["inv06-commit-after-parent-terminal"] == "holds"


def test_a_client_tool_output_read_as_synthetic_is_caught(monkeypatch):
    """The defect lives in the fact mapping (`facts.py`), which the model and its properties both read."""
    import steersim.models.openai_ws.model
    import steersim.models.openai_ws.properties
    from steersim.models.openai_ws.facts import facts

    def synthetic_outputs(event):
        found = facts(event)
        if event.name != "response.create":
            return found
        return [type(f)(f.name, tuple((k, True if k == "synthetic" else v) for k, v in f.fields)) for f in found]

    assert statuses(SPEC.build(SMALL))["result-facts"] == "holds"
    monkeypatch.setattr(steersim.models.openai_ws.model, "facts", synthetic_outputs)
    monkeypatch.setattr(steersim.models.openai_ws.properties, "facts", synthetic_outputs)
    assert statuses(SPEC.build(SMALL))["result-facts"] == "violated"


def test_a_response_that_fails_silently_is_caught(monkeypatch):
    """Without its response.failed the chain's turn never ends; no invariant over the events that were
    sent sees what was not."""
    original = _Step.lifecycle

    def silent_failure(self, kind, index, reason=None):
        if kind != "failed":
            original(self, kind, index, reason)

    monkeypatch.setattr(_Step, "lifecycle", silent_failure)
    assert statuses(SPEC.build({**SMALL, "response_failures": True, "steers": 2}))["terminal-events"] == "violated"
