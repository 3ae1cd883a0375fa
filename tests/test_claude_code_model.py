"""The Claude Code model: the defaults and every documented reading hold, each bug variant is caught by the
property it names, and the path of the documented case (a message joining at a tool result) emits the
facts the harness maps a recorded run to."""

from __future__ import annotations

import pytest

from steersim import CheckOptions, check
from steersim.core.product import Product
from steersim.models.claude_code import SPEC
from steersim.models.claude_code import protocol as P
from steersim.models.claude_code.state import ClaudeCodeState

READINGS = [
    {},
    {"now_during_tool": "stops"},
    {"cancel_queued": True, "batch_turn_start": False},
    {"default_priority": "later", "priorities": "now,default"},
    {"priorities": "next,default", "interrupts": 0},
]


@pytest.mark.parametrize("params", READINGS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "defaults")
def test_every_reading_holds(params):
    result = check(SPEC.build(params), CheckOptions())
    assert result.status == "ok", [(p.name, p.status) for p in result.properties]
    assert all(p.status in ("holds", "reached") for p in result.properties)


@pytest.mark.parametrize("bug", [b.name for b in SPEC.variants])
def test_each_bug_is_caught_by_its_property(bug):
    variant = next(b for b in SPEC.variants if b.name == bug)
    model = SPEC.build({}, bug)
    kinds = {info.name: info.kind for info in Product(model).property_infos()}
    assert variant.caught_by in kinds
    result = check(model, CheckOptions(keep_going=True))
    assert result.exit_code == 1
    status = {p.name: p.status for p in result.properties}
    assert status[variant.caught_by] == "violated", status


def _walk(model, steps):
    s, events = ClaudeCodeState(), []
    for kind, *args in steps:
        action = next(a for a in model.actions(s) if a.kind == kind and a.args == tuple(args))
        s, emitted = model.step(s, action)
        events += emitted
    return s, events


def test_next_joins_at_the_tool_result_and_later_waits_for_the_end():
    """m1 starts a turn that runs Bash; m2 (next) and m3 (later) arrive while it runs; at the tool result m2
    joins the turn's next request, m3 starts a turn of its own once the first has ended."""
    model = SPEC.build({})
    _, events = _walk(model, [("client.send", "next"), ("cli.start_turn",), ("cli.ask",), ("model.tool_use",),
                              ("model.tool_input",), ("client.send", "next"), ("client.send", "later"),
                              ("tool.finish",), ("cli.tool_result",), ("cli.request",), ("cli.ask",), ("model.text",),
                              ("model.end",), ("cli.end_turn",), ("cli.start_turn",), ("cli.ask",)])
    requests = [e for e in events if e.name == P.REQUEST]
    assert [(r.data["turn"], r.data["reached"]) for r in requests] == [("t1", ("m1",)), ("t1", ("m2",)),
                                                                       ("t2", ("m3",))]
    names = [str(f) for e in events[-3:] for f in model.facts(e)]
    assert names == ["turn.started(turn='t2', chain='session')", "history.appended(chain='session', item='m3')",
                     "steer.applied(id='m3', turn='t2')"]


def test_a_now_message_while_text_streams_stops_the_turn():
    model = SPEC.build({})
    s, events = _walk(model, [("client.send", "next"), ("cli.start_turn",), ("cli.ask",), ("model.text",),
                              ("client.send", "now"), ("cli.stop_for_now",)])
    assert [(e.name, dict(e.data)) for e in events[-2:]] == [
        (P.RESULT, {"turn": "t1", "how": "stopped"}),
        (P.LIFECYCLE, {"message": "m1", "state": P.CANCELLED, "turn": "", "unsent": False})]
    assert s.queue == (("m2", "now"),)


def test_an_interrupt_keeps_the_queue_and_ends_the_running_command():
    model = SPEC.build({})
    s, events = _walk(model, [("client.send", "next"), ("cli.start_turn",), ("cli.ask",), ("model.tool_use",),
                              ("model.tool_input",), ("client.send", "later"), ("client.interrupt",)])
    assert events[-4].data["still_queued"] == ("m2",)
    assert (events[-3].name, events[-3].data["synthetic"]) == (P.TOOL_RESULT, True)
    assert s.queue == (("m2", "later"),)


def test_an_interrupt_with_cancel_queued_cancels_the_queue_first():
    model = SPEC.build({"cancel_queued": True})
    s, events = _walk(model, [("client.send", "next"), ("cli.start_turn",), ("cli.ask",), ("model.text",),
                              ("client.send", "later"), ("client.interrupt",)])
    assert [(e.name, e.data.get("message"), e.data.get("state")) for e in events[-4:]] == [
        (P.LIFECYCLE, "m2", P.CANCELLED), (P.INTERRUPT, None, None), (P.RESULT, None, None),
        (P.LIFECYCLE, "m1", P.CANCELLED)]
    assert (events[-3].data["still_queued"], events[-3].data["cancelled"], s.queue) == ((), ("m2",), ())
    assert "steer.failed(id='m2', code='cancelled')" in [str(f) for f in model.facts(events[-4])]


def test_a_message_whose_turn_stops_before_its_request_is_cancelled_unsent():
    """A `now` message that lands after m1 was `started` and before its request went out: m1 is cancelled
    unsent (failed, as the client is told), and the next request carries its text without reaching it."""
    model = SPEC.build({})
    _, events = _walk(model, [("client.send", "next"), ("cli.start_turn",), ("client.send", "now"),
                              ("cli.stop_for_now",), ("cli.start_turn",), ("cli.ask",)])
    facts = [str(f) for e in events for f in model.facts(e)]
    assert "steer.failed(id='m1', code='cancelled')" in facts
    assert (events[-1].data["carries"], events[-1].data["reached"]) == (("m1", "m2"), ("m2",))
