"""Each core monitor catches what it exists to catch, on hand-written fact streams, and passes good ones."""

from __future__ import annotations

import pytest

from steersim.core import facts as F
from steersim.core.monitors import MonitorViolation, NoLostSteers, OneActiveTurn, OrderedHistory, PairedToolResults


def run(monitor, stream):
    state = monitor.initial()
    for fact in stream:
        state = monitor.step(state, fact)
    return state


def accepted(sid, target="c"):
    return [F.steer_submitted(sid, target), F.steer_accepted(sid)]


GOOD_STEERS = [
    *accepted("s1"), *accepted("s2"), F.steer_submitted("s3", "c"), F.steer_rejected("s3", "queue_full"),
    F.steer_applied("s1", "t2"), F.steer_failed("s2", "response_not_found"),
    F.steer_submitted("s4", "c"), F.steer_unknown("s4"),
]


def test_no_lost_steers_passes_a_good_stream():
    monitor = NoLostSteers()
    end = run(monitor, GOOD_STEERS)
    assert monitor.at_end(end) is None and monitor.settled(end)


@pytest.mark.parametrize(
    ("stream", "words"),
    [
        ([*accepted("s1"), F.steer_applied("s1", "t"), F.steer_applied("s1", "t")], "not an accepted, unresolved"),
        ([*accepted("s1"), F.steer_applied("s1", "t"), F.steer_failed("s1", "x")], "not an accepted, unresolved"),
        ([F.steer_submitted("s1", "c"), F.steer_applied("s1", "t")], "not an accepted, unresolved"),
        ([F.steer_accepted("s9")], "not an open submission"),
        ([*accepted("s1"), F.steer_rejected("s1", "x")], "not an open submission"),
    ],
)
def test_no_lost_steers_catches_double_or_orphan_resolution(stream, words):
    with pytest.raises(MonitorViolation, match=words):
        run(NoLostSteers(), stream)


def test_no_lost_steers_flags_an_unresolved_steer_at_the_end():
    monitor = NoLostSteers()
    end = run(monitor, [*accepted("s1"), *accepted("s2"), F.steer_applied("s2", "t")])
    assert "'s1' (accepted)" in monitor.at_end(end)
    assert not monitor.settled(end)


def test_one_active_turn():
    monitor = OneActiveTurn()
    good = [F.turn_started("t1", "a"), F.turn_started("u1", "b"), F.turn_ended("t1", "completed"),
            F.turn_started("t2", "a"), F.turn_ended("t2", "steered"), F.turn_ended("u1", "completed")]
    assert run(monitor, good) == ()
    with pytest.raises(MonitorViolation, match="while turn 't1' is active"):
        run(monitor, [F.turn_started("t1", "a"), F.turn_started("t2", "a")])
    with pytest.raises(MonitorViolation, match="not active"):
        run(monitor, [F.turn_started("t1", "a"), F.turn_ended("t1", "x"), F.turn_ended("t1", "x")])


def test_ordered_history():
    monitor = OrderedHistory()
    good = [*accepted("s1"), *accepted("s2"), *accepted("s3", "other"), F.steer_applied("s3", "t"),
            F.steer_applied("s1", "t"), F.history_appended("c", "s1"), F.steer_failed("s2", "x")]
    run(monitor, good)
    with pytest.raises(MonitorViolation, match="'s2' applied before 's1'"):
        run(monitor, [*accepted("s1"), *accepted("s2"), F.steer_applied("s2", "t")])
    with pytest.raises(MonitorViolation, match="a second time"):
        run(monitor, [F.history_appended("c", "m1"), F.history_appended("c", "m1")])
    # a failed earlier steer does not block a later one
    run(monitor, [*accepted("s1"), *accepted("s2"), F.steer_failed("s1", "x"), F.steer_applied("s2", "t")])


def test_paired_tool_results():
    monitor = PairedToolResults()
    good = [F.turn_started("t1", "c"), F.tool_requested("a", "t1"), F.tool_requested("b", "t1"),
            F.tool_started("a"), F.tool_result("a", False), F.tool_result("b", True), F.turn_ended("t1", "x"),
            F.turn_started("t2", "c"), F.tool_requested("a", "t2"), F.tool_result("a", True)]
    end = run(monitor, good)
    assert monitor.at_end(end) is None
    cases = [
        ([F.turn_started("t1", "c"), F.tool_requested("a", "t1"), F.turn_started("t2", "c")], "has no result"),
        ([F.tool_requested("a", "t1"), F.tool_result("a", False), F.tool_result("a", True)], "second result"),
        ([F.tool_requested("a", "t1"), F.tool_started("a"), F.tool_started("a")], "started twice"),
        ([F.tool_started("zz")], "no open request"),
        ([F.tool_requested("a", "t1"), F.tool_requested("a", "t1")], "requested again"),
    ]
    for stream, words in cases:
        with pytest.raises(MonitorViolation, match=words):
            run(monitor, stream)
    end = run(monitor, [F.turn_started("t1", "c"), F.tool_requested("a", "t1")])
    assert "'a'" in monitor.at_end(end)
    # another chain's turn does not need this chain's results
    run(monitor, [F.turn_started("t1", "c"), F.tool_requested("a", "t1"), F.turn_started("u1", "d")])
