"""The Pydantic AI model: the default configuration holds, every bug variant is caught by the property
named for it, and the facts say what the runs did."""

from __future__ import annotations

import checking
import pytest

from steersim import Product
from steersim.core.model import Event
from steersim.models.pydantic_ai import SPEC
from steersim.models.pydantic_ai.facts import facts

BUGS = {bug.name: bug for bug in SPEC.variants}


def test_default_configuration_holds():
    result = checking.assert_all_hold(SPEC, {})
    names = {p.name for p in result.properties}
    assert {"no-lost-steers", "paired-tool-results", "when-idle-waits-for-end", "asap-redirects-end",
            "when-idle-continues-run", "cancelled-with-calls-open"} <= names


@pytest.mark.parametrize("params", [
    {"reprioritise": True, "messages": 3, "cancel": False},
    {"cancelled_queue": "carried"},
    {"priority": "when_idle", "tool_calls": 1, "tool_rounds": 2},
    {"runs": 1, "tool_calls": 3},
])
def test_variants_of_the_parameters_hold(params):
    checking.assert_all_hold(SPEC, params)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_bug_is_caught_by_its_property(bug):
    _, props = checking.verdicts(SPEC, dict(BUGS[bug].params), bug)
    catcher = BUGS[bug].caught_by
    assert props[catcher].status == "violated", f"{bug}: {catcher} is {props[catcher].status}"
    assert props[catcher].counterexample is not None and props[catcher].counterexample.steps


def test_every_catcher_is_a_property_of_the_model():
    names = {info.name for info in Product(SPEC.build()).property_infos()}
    assert {bug.caught_by for bug in SPEC.variants} <= names


def test_an_enqueue_is_a_steer_delivered_into_a_request():
    accepted = facts(Event("client", "agent", "enqueue",
                           {"msg": "m1", "priority": "asap", "target": "c.asap", "accepted": True}))
    assert [f.name for f in accepted] == ["steer.submitted", "steer.accepted"]
    refused = facts(Event("client", "agent", "enqueue",
                          {"msg": "m2", "priority": "asap", "target": "c.asap", "accepted": False}))
    assert refused[1].name == "steer.rejected" and refused[1]["code"] == "UserError"
    request = facts(Event("agent", "model", "request",
                          {"run": "r2", "turn": "r2.1", "closed_out": ("r1.1.t1",), "delivered": ("m1",)}))
    assert [f.name for f in request] == ["tool.result", "steer.applied", "history.appended", "turn.started"]
    assert request[0]["synthetic"] is True


def test_a_cancelled_run_strands_what_it_still_queued():
    assert facts(Event("client", "agent", "cancel", {"run": "r1"})) == ()
    cancelled = facts(Event("agent", "client", "stopped", {"run": "r1", "turn": "r1.1", "stranded": ("m2",)}))
    assert [(f.name, f.fields[-1][1]) for f in cancelled] == [("turn.ended", "cancelled"),
                                                              ("steer.failed", "run-cancelled")]


def test_a_real_return_needs_a_start_and_a_synthesized_one_does_not():
    """The opt-in monitor: a call closed out with a synthesized return may never have started (or have
    started), but a call's own return without its start is a breach."""
    from steersim.core import facts as F
    from steersim.core.monitors import MonitorViolation
    from steersim.models.pydantic_ai.monitors import RealResultAfterStart

    monitor = RealResultAfterStart()
    state = monitor.step(monitor.initial(), F.tool_started("r1.1.t1"))
    state = monitor.step(state, F.tool_result("r1.1.t1", True))
    assert monitor.step(state, F.tool_result("r1.1.t2", True)) == ()
    with pytest.raises(MonitorViolation):
        monitor.step(state, F.tool_result("r1.1.t2", False))
