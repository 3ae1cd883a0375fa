"""The Codex app-server model: the defaults and every documented reading hold, each bug variant is caught by
the property it names, and the facts it emits tell a steer's whole story."""

from __future__ import annotations

from dataclasses import replace

import pytest

from steersim import CheckOptions, check
from steersim.core.model import Action
from steersim.core.product import Product
from steersim.models.codex import SPEC, CodexModel
from steersim.models.codex import protocol as P
from steersim.models.codex.state import CodexState

WELL_FORMED = {"bad_steers": False}  # the other readings without the malformed steers, which triple the states
READINGS = [
    {},
    {**WELL_FORMED, "interrupt_pending": "carry"},
    {**WELL_FORMED, "tool_on_interrupt": "stops", "start_while_active": "reject"},
    {**WELL_FORMED, "preempt_stream": False},
    {"bad_steers": True, "steers": 1, "turns": 2, "interrupts": 0},
]


@pytest.mark.parametrize("params", READINGS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "defaults")
def test_every_reading_holds(params):
    result = check(SPEC.build(params), CheckOptions())
    assert result.status == "ok", [(p.name, p.status) for p in result.properties]
    assert all(p.status in ("holds", "reached") for p in result.properties)


@pytest.mark.parametrize("bug", [b.name for b in SPEC.variants])
def test_each_bug_is_caught_by_its_property(bug):
    variant = next(b for b in SPEC.variants if b.name == bug)
    model = SPEC.build({**WELL_FORMED, **SPEC.bug_params.get(bug, {})}, bug)
    kinds = {info.name: info.kind for info in Product(model).property_infos()}
    assert variant.caught_by in kinds
    result = check(model, CheckOptions(keep_going=True))
    assert result.exit_code == 1
    status = {p.name: p.status for p in result.properties}
    assert status[variant.caught_by] == "violated", status


def test_a_steer_during_a_tool_call_reaches_the_next_request_after_the_tool_output():
    """The path of the documented case: turn/start, exec_command, turn/steer while it runs, the tool ends,
    Codex writes the steer's userMessage and asks the model again with it."""
    model = SPEC.build({})
    s = CodexState()
    events = []
    for kind in ("client.turn_start", "codex.request", "model.tool_call", "client.steer", "tool.finish",
                 "codex.record", "codex.request"):
        action = next(a for a in model.actions(s) if a.kind == kind)
        s, emitted = model.step(s, action)
        events += emitted
    names = [str(f) for e in events for f in model.facts(e)]
    assert names[-3:] == ["tool.result(call='c1', synthetic=False)", "history.appended(chain='thread', item='s1')",
                          "steer.applied(id='s1', turn='t1')"]
    last = events[-1]
    assert last.name == P.REQUEST and last.data["carries"] == ("p1", "s1") and last.data["reached"] == ("s1",)


def test_an_interrupt_fails_the_unsent_steer_and_persists_it():
    model = SPEC.build({})
    s = CodexState()
    for kind in ("client.turn_start", "codex.request", "model.tool_call", "client.steer", "client.interrupt"):
        s, events = model.step(s, next(a for a in model.actions(s) if a.kind == kind))
    facts = [str(f) for e in events for f in model.facts(e)]
    assert facts == ["history.appended(chain='thread', item='s1')", "steer.failed(id='s1', code='interrupted')",
                     "turn.ended(turn='t1', status='interrupted')"]
    assert s.history == ("p1", "s1") and s.running_tool == "c1"


SMALL = {**WELL_FORMED, "turns": 1, "steers": 1}


def _violated(model) -> set[str]:
    result = check(model, CheckOptions(keep_going=True))
    return {p.name for p in result.properties if p.status == "violated"}


def test_facts_that_misread_the_events_are_caught(monkeypatch):
    """facts-tell-the-step judges the mapping recorded runs are read with too: a command's own output read
    as a synthetic result, or an agentMessage read as a user message, tells a story the thread does not."""
    from steersim.core import facts as F
    from steersim.models.codex import facts as codex_facts

    original = codex_facts.facts
    assert "facts-tell-the-step" not in _violated(SPEC.build(SMALL))

    def synthetic(event):
        return tuple(F.tool_result(f.get("call"), True) if f.name == "tool.result" else f for f in original(event))

    monkeypatch.setattr(codex_facts, "facts", synthetic)
    assert "facts-tell-the-step" in _violated(SPEC.build(SMALL))

    def agent_as_user(event):
        if event.name == "item/completed" and event.data["type"] == P.AGENT_MESSAGE:
            return (F.history_appended("thread", event.data["item"]),)
        return original(event)

    monkeypatch.setattr(codex_facts, "facts", agent_as_user)
    assert "facts-tell-the-step" in _violated(SPEC.build(SMALL))


class _EagerClient(CodexModel):
    """A client outside the scenario: it may read the thread back before any turn, and send a stale steer
    in the first turn, when no earlier turn exists for it to name."""

    def actions(self, s):
        out = list(super().actions(s))
        if not s.read and s.turns == 0:
            out.append(Action("client", "client.read"))
        if s.turns == 1 and s.phase != "idle" and P.STALE not in s.bad:
            out.append(Action("client", "client.bad_steer", (P.STALE,)))
        return out


def test_a_client_outside_the_scenario_is_caught():
    model = _EagerClient(SPEC.resolve({"turns": 1, "steers": 0, "interrupts": 0}))
    assert "within-parameters" in _violated(model)
    assert "within-parameters" not in _violated(SPEC.build({"turns": 1, "steers": 0, "interrupts": 0}))


def _statuses(model) -> dict[str, str]:
    return {p.name: p.status for p in check(model, CheckOptions(keep_going=True)).properties}


class _NeverPreempts(CodexModel):
    """Codex that lets the stream run on although preempt_stream says a steer ends it."""

    def _system_actions(self, s):
        return [a for a in super()._system_actions(s) if a.kind != "codex.preempt"]


class _AnswersWithoutAsking(CodexModel):
    """Codex that may complete a new turn without a model request carrying its prompt."""

    def _client_turn_start(self, s):
        t, events = super()._client_turn_start(s)
        return replace(t, need_request=False), events


class _IgnoresCommandEnd(CodexModel):
    """Codex that does not ask the model again when a command ends (only a written steer makes it)."""

    def _tool_finish(self, s):
        t, events = super()._tool_finish(s)
        return replace(t, need_request=t.need_request and bool(s.running_tool)), events


def test_a_narrowed_or_hasty_codex_is_caught():
    params = SPEC.resolve({**WELL_FORMED, "turns": 1, "interrupts": 0})
    assert _statuses(CodexModel(params))["steer-preempts-stream"] == "reached"
    assert _statuses(_NeverPreempts(params))["steer-preempts-stream"] == "unreached"
    assert _statuses(_AnswersWithoutAsking(params))["tool-output-sent-back"] == "violated"
    assert _statuses(CodexModel(params))["tool-output-reaches-model"] == "reached"
    assert _statuses(_IgnoresCommandEnd(params))["tool-output-reaches-model"] == "unreached"
