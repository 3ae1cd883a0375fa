"""The OpenClaw model's vacuity guards and event-judged properties: each `sometimes` guard of a
parameter-enabled behaviour is reached with the behaviour on and fails with it switched off, and
`one-start-one-end` judges the emitted tool events, not the model's call statuses."""

from __future__ import annotations

import dataclasses

import checking
import pytest

from steersim import CheckOptions, check
from steersim.models.openclaw import SPEC
from steersim.models.openclaw import codex as openclaw_codex
from steersim.models.openclaw import model as openclaw_model
from steersim.models.openclaw.state import set_at

# (parameters that switch the behaviour on, what switches it off in the transitions, its guard)
GUARDS = [
    ({"abort": True}, {"abort": False}, "abort-ends-run"),
    ({"compaction": True}, {"compaction": False}, "run-compacts"),
    ({"stop_after_turn": True}, {"stop_after_turn": False}, "stop-hook-ends-run"),
    ({"agent_follow_ups": 1}, {"agent_follow_ups": 0}, "agent-follow-up-runs"),
    ({}, {"mode": "followup"}, "steer-injected-mid-run"),
    ({"mode": "followup"}, {"mode": "steer"}, "followup-drains-one-by-one"),
    ({"mode": "collect"}, {"mode": "followup"}, "collect-coalesces"),
    ({"mode": "collect", "routes": 2}, {"routes": 1}, "collect-keeps-routes-apart"),
    ({"mode": "interrupt"}, {"mode": "steer"}, "interrupt-replaces"),
    ({"mode": "followup", "cap": 1, "drop": "summarize"}, {"cap": 20}, "overflow-summary-runs"),
    ({"mode": "followup", "cap": 1, "drop": "old"}, {"cap": 20}, "cap-evicts-oldest"),
    ({"mode": "followup", "cap": 1, "drop": "new"}, {"cap": 20}, "cap-rejects-newest"),
    ({"runtime": "codex"}, {"runtime": "agent-core"}, "codex-consumes-steer"),
    ({}, {"layer": "agent"}, "session-continues-steer"),
    ({"end_listener_window": True}, {"end_listener_window": False}, "steer-lands-in-end-listeners"),
    ({}, {"tool_execution": "sequential"}, "steer-lands-after-launch"),
]


def guard_status(model, name):
    result = check(model, CheckOptions(keep_going=True))
    return {p.name: p.status for p in result.properties}[name]


@pytest.mark.parametrize(("on", "off", "guard"), GUARDS, ids=[g for _, _, g in GUARDS])
def test_each_guard_fails_when_its_behaviour_is_switched_off(on, off, guard):
    model = SPEC.build(on)
    assert guard_status(model, guard) == "reached"
    # The guards stay those of the configuration with the behaviour on; the transitions run without it.
    model.cfg = dataclasses.replace(model.cfg, **off)
    assert guard_status(model, guard) == "unreached"


def test_one_start_one_end_judges_the_emitted_start_event(monkeypatch):
    """A mutant whose parallel prepare phase marks the call started without emitting
    tool_execution_start still moves every status field as before; the property sees the missing event."""
    _, clean = checking.verdicts(SPEC, {})
    assert clean["one-start-one-end"].status == "holds"

    def start_without_event(cfg, st):
        st.calls = set_at(st.calls, st.call, "ready")
        st.phase = "par-resolve"

    monkeypatch.setitem(openclaw_model.RUNTIME_HANDLERS, "tool.start", start_without_event)
    _, mutated = checking.verdicts(SPEC, {})
    assert mutated["one-start-one-end"].status == "violated"


@pytest.mark.parametrize("bug", [None, "streaming-through-agent-end"])
def test_a_listener_window_that_is_off_never_opens(bug):
    """The seeded variant keeps the Agent streaming through agent_end with end_listener_window off: the
    run.finish step it takes is of a kind that configuration switches off."""
    _, props = checking.verdicts(SPEC, {}, bug)
    assert props["switched-off-stays-off"].status == ("violated" if bug else "holds")


def test_compaction_that_is_off_never_runs(monkeypatch):
    """A turn's end that compacts with compaction off: the same property sees the run.compact step."""
    def end_turn_compacting(cfg, st):
        openclaw_model.core.end_turn(dataclasses.replace(cfg, compaction=True), st)

    monkeypatch.setitem(openclaw_model.RUNTIME_HANDLERS, "turn.end", end_turn_compacting)
    _, props = checking.verdicts(SPEC, {})
    assert props["switched-off-stays-off"].status == "violated"


CODEX_ONE_MESSAGE = {"runtime": "codex", "messages": 1}


@pytest.mark.parametrize("bug", [None, "steer-consumed-twice"])
def test_codex_echoes_each_sent_batch_once(bug):
    """The seeded variant keeps the batches a model boundary consumed, so the next boundary echoes them
    again: what Codex holds no longer follows from the turn/steer requests and userMessage items."""
    _, props = checking.verdicts(SPEC, CODEX_ONE_MESSAGE, bug)
    assert props["codex-consumes-what-was-sent"].status == ("violated" if bug else "holds")


def test_codex_never_consumes_a_batch_no_turn_steer_sent(monkeypatch):
    """A quiet window that hands its batch to Codex without the turn/steer request moves every state field
    as before; the property sees that Codex echoes a message nobody sent it."""
    from steersim.models.openclaw import codex

    def flush_without_request(st):
        st.inflight, st.batch, st.steer_batches = (*st.inflight, st.batch), (), st.steer_batches + 1

    monkeypatch.setattr(codex, "flush", flush_without_request)
    _, props = checking.verdicts(SPEC, CODEX_ONE_MESSAGE)
    assert props["codex-consumes-what-was-sent"].status == "violated"


@pytest.mark.parametrize("params", [{"mode": "followup", "abort": True}, {"mode": "interrupt"},
                                    {"mode": "interrupt", "tool_execution": "sequential"}])
@pytest.mark.parametrize("bug", [None, "poll-after-abort"])
def test_an_aborted_turn_polls_no_steering(params, bug):
    """The seeded variant polls steering after an aborted turn before it leaves through stopIfAborted:
    the after-turn checkpoint's steering_poll lands in a run already aborted."""
    _, props = checking.verdicts(SPEC, params, bug)
    assert props["abort-skips-turn-checkpoints"].status == ("violated" if bug else "holds")


@pytest.mark.parametrize("params", [{"mode": "followup", "cap": 1}, {"mode": "followup", "cap": 1, "routes": 2},
                                    {"mode": "followup", "cap": 1, "tool_execution": "sequential"}])
@pytest.mark.parametrize("bug", [None, "summary-joins-followup"])
def test_an_overflow_summary_runs_alone_outside_collect(params, bug):
    """The seeded variant prepends the overflow summary to the next queued message's run, as only collect
    does: a followup_drain carries summary lines and a message together."""
    _, props = checking.verdicts(SPEC, params, bug)
    assert props["overflow-summary-runs-alone"].status == ("violated" if bug else "holds")


def test_the_double_end_variant_ends_a_skip_as_the_checkpoint_did():
    """double-end-event repeats the launch checkpoint's skip end (one builder, `skip_end`): only the
    repetition breaks the pairing, never the skip's own text, details or executionStarted."""
    _, props = checking.verdicts(SPEC, {}, "double-end-event")
    assert props["one-start-one-end"].status == "violated"
    assert props["skip-result-exact"].status == "holds"


@pytest.mark.parametrize("bug", [None, "cap-admits-one-more"])
@pytest.mark.parametrize("drop", ["summarize", "old"])
def test_the_follow_up_queue_takes_a_message_only_below_its_cap(drop, bug):
    """applyQueueDropPolicy runs at `pending >= cap`: the seeded variant runs it one message late, so a full
    queue of one takes a second message."""
    _, props = checking.verdicts(SPEC, {"mode": "followup", "cap": 1, "drop": drop}, bug)
    assert props["enqueue-within-cap"].status == ("violated" if bug else "holds")


@pytest.mark.parametrize("bug", [None, "follow-up-drain-unreported"])
def test_every_drain_of_the_agent_queues_is_reported(bug):
    """The seeded variant takes the agent follow-up queue without the poll the harness sees."""
    _, props = checking.verdicts(SPEC, {"agent_follow_ups": 1}, bug)
    assert props["drains-reported"].status == ("violated" if bug else "holds")


@pytest.mark.parametrize("bug", [None, "echo-skips-transcript"])
def test_every_batch_codex_echoes_is_written_into_the_transcript(bug):
    """The seeded variant drops the userMessage echo's write into the session transcript."""
    _, props = checking.verdicts(SPEC, {"runtime": "codex", "messages": 1}, bug)
    assert props["echo-in-transcript"].status == ("violated" if bug else "holds")


@pytest.mark.parametrize("bug", [None, "finish-run-keeps-streaming"])
def test_every_bare_agent_run_settles(bug):
    """The seeded variant never clears the bare Agent's streaming state, so waitForIdle never resolves."""
    _, props = checking.verdicts(SPEC, {"layer": "agent"}, bug)
    assert props["run-settles"].status == ("violated" if bug else "holds")


@pytest.mark.parametrize("flushes", [True, False])
def test_a_codex_turn_consumes_a_steer_its_quiet_window_sent(flushes, monkeypatch):
    """A quiet window that never sends its batch (a no-op flush: no safety property can see it, since a turn
    may close before its window elapses) leaves the guard unreached: the message comes back as a follow-up,
    whose own turn ends its transcript with the message but sent no turn/steer."""
    if not flushes:
        monkeypatch.setattr(openclaw_codex, "flush", lambda st: None)
    _, props = checking.verdicts(SPEC, {"runtime": "codex", "messages": 1})
    assert props["codex-consumes-steer"].status == ("reached" if flushes else "unreached")
