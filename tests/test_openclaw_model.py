"""The OpenClaw model: the default configuration holds, every bug variant is caught by its property,
and the hazards the documented semantics leave open show up as the violations they are."""

from __future__ import annotations

import checking
import pytest

from steersim.errors import UsageError
from steersim.models.openclaw import SPEC
from steersim.models.openclaw import events as E
from steersim.models.openclaw.state import IDLE, OpenClawState
from steersim.simulate.simulator import simulate


def verdicts(params=None, bug=None):
    return checking.verdicts(SPEC, params, bug)


def assert_all_hold(params):
    return checking.assert_all_hold(SPEC, params)


def test_default_configuration_holds_quickly():
    result = assert_all_hold({})
    assert result.status == "ok"
    assert {"steer-before-launch", "no-cancel-started", "steer-skips-a-call"} <= {p.name for p in result.properties}


@pytest.mark.parametrize("params", [
    {"tool_execution": "sequential"},
    {"steering_mode": "all"},
    {"follow_up_mode": "all", "agent_follow_ups": 2},
    {"tool_execution": "sequential", "agent_follow_ups": 1},
    {"blocked_call": 0},
    {"blocked_call": 1, "tool_execution": "sequential"},
    {"mode": "followup"},
    {"mode": "followup", "debounce_ms": 0},
    {"mode": "followup", "cap": 1, "drop": "old"},
    {"mode": "followup", "cap": 1, "drop": "new"},
    {"mode": "followup", "cap": 1, "drop": "summarize"},
    {"mode": "collect"},
    {"mode": "collect", "routes": 2, "messages": 3},
    {"mode": "interrupt"},
    {"runtime": "codex", "mode": "followup"},
    {"runtime": "codex", "codex_turn_kind": "review"},
    {"messages": 3, "calls": 3},
])
def test_configurations_hold(params):
    assert_all_hold(params)


@pytest.mark.parametrize("bug", sorted(SPEC.bugs))
def test_each_bug_is_caught_by_its_property(bug):
    _result, props = verdicts({}, bug)
    caught = props[SPEC.bug_catchers[bug]]
    assert caught.status == "violated", f"{bug}: {caught.name} is {caught.status}"
    assert caught.counterexample is not None and caught.counterexample.steps
    _, clean = verdicts(SPEC.bug_params.get(bug, {}))
    assert clean[SPEC.bug_catchers[bug]].status == "holds"


def test_every_bug_has_a_catcher():
    assert set(SPEC.bug_catchers) == set(SPEC.bugs)
    assert len(SPEC.bugs) >= 6


@pytest.mark.parametrize(("params", "prop"), [
    # shouldStopAfterTurn is consulted before polling when the batch drained nothing: at the bare Agent a
    # steer queued behind a one-at-a-time drain, or sent during a text-only turn, is left in the queue.
    ({"stop_after_turn": True, "tool_execution": "sequential", "layer": "agent"}, "no-lost-steers"),
    ({"stop_after_turn": True, "layer": "agent"}, "no-lost-steers"),
    # a parallel batch has no Checkpoint C: a steer accepted while its calls run does not outrank the hook.
    ({"stop_after_turn": True}, "steer-outranks-stop"),
    # stopIfAborted runs after the run-start poll and after a batch drain: beta.3 drops the drained steer.
    ({"abort": True}, "drained-not-lost"),
    # a steer accepted while agent_end listeners run is never drained by that run of the bare Agent.
    ({"end_listener_window": True, "layer": "agent"}, "no-lost-steers"),
    # a steer refused while compacting waits in the follow-up queue and a later one overtakes it.
    ({"compaction": True}, "ordered-history"),
    ({"runtime": "codex"}, "ordered-history"),
])
def test_documented_semantics_leave_these_hazards(params, prop):
    _, props = verdicts(params)
    assert props[prop].status == "violated"


@pytest.mark.parametrize("params", [
    # the session's post-run loop continues the Agent with a steer that landed in agent_end listeners
    {"end_listener_window": True},
    # ... and with one a shouldStopAfterTurn that came first left queued
    {"stop_after_turn": True, "tool_execution": "sequential"},
])
def test_the_session_layer_closes_these_hazards(params):
    assert_all_hold(params)


@pytest.mark.parametrize("params", [
    {"abort": True, "version": "2026.9.6"},
    {"abort": True, "restore_on_abort": "on", "agent_follow_ups": 1, "tool_execution": "sequential"},
])
def test_restoring_on_abort_keeps_drained_steers(params):
    """2026.9.6 puts a drained steer an aborted run never injected back into the queue. It then waits for
    the next prompt, by design, so the core no-lost-steers can still fail when no later prompt comes."""
    _, props = verdicts(params)
    assert props["drained-not-lost"].status == "holds"


def test_version_presets_set_the_version_dependent_parameters():
    beta, latest = (SPEC.build({"version": v}).cfg for v in ("2026.8.1-beta.3", "2026.9.6"))
    assert (beta.restore_on_abort, beta.skip_text) == (False, "Skipped due to queued user message.")
    assert (latest.restore_on_abort, latest.skip_text) == (True, "Skipped to process an incoming message.")
    own = SPEC.build({"version": "2026.9.6", "restore_on_abort": "off", "skip_text": "queued-user-message"}).cfg
    assert (own.restore_on_abort, own.skip_text) == (False, E.SKIP_TEXT)


def test_an_abort_between_two_parallel_launches_ends_the_later_call_unstarted():
    """The launch checkpoint, then each ready call's launch: an abort placed inside c0's start reaches c1."""
    model = SPEC.build({"abort": True, "messages": 0})
    state = model.init_states()[0]
    seen = []
    for _ in range(60):
        actions = model.actions(state)
        if not actions:
            break
        launched_c0 = state.phase == "par-launch" and state.call == 1
        action = next((a for a in actions if a.kind == "user.abort" and launched_c0),
                      next(a for a in actions if a.actor != "user"))
        seen += [(e.name, e.data.get("toolCallId"), e.data.get("executionStarted"))
                 for e in model.observe(state, action, model.next_state(state, action))
                 if e.name in ("tool_execute", "tool_execution_end")]
        state = model.next_state(state, action)
    assert seen == [("tool_execute", "c0", None), ("tool_execution_end", "c1", False),
                    ("tool_execution_end", "c0", True)]


def test_one_at_a_time_injects_one_steer_per_boundary():
    """Spec section 5: with S1 and S2 queued, the next model call ends with S1 only, the one after with S2."""
    model = SPEC.build({"tool_execution": "sequential", "messages": 2})
    state = model.init_states()[0]
    script = ["run.start", "user.message", "user.message", "model.respond"]
    requests = []
    for _ in range(40):
        actions = model.actions(state)
        if not actions:
            break
        wanted = script.pop(0) if script else None
        action = next(a for a in actions if (wanted is None and a.actor != "user") or a.kind == wanted)
        requests += [e.data["users"] for e in model.observe(state, action, model.next_state(state, action))
                     if e.name == "model_request"]
        state = model.next_state(state, action)
    assert requests == [["p0"], ["p0", "m1"], ["p0", "m1", "m2"]]


def test_skip_text_and_details_are_exact():
    assert E.SKIP_TEXT == "Skipped due to queued user message."
    assert E.SKIP_DETAILS == {"status": "skipped", "deniedReason": "steering"}


def test_simulation_runs_on_the_explored_graph():
    model = SPEC.build({"mode": "collect", "messages": 3})
    for seed in range(5):
        trace = simulate(model, seed)
        assert trace.steps


def test_bad_parameters_are_refused():
    with pytest.raises(UsageError):
        SPEC.build({"mode": "queue"})
    with pytest.raises(UsageError):
        SPEC.build({"cap": 0})


@pytest.mark.slow
def test_larger_configurations_hold():
    assert_all_hold({"messages": 4, "calls": 3, "tool_turns": 2, "tool_execution": "sequential"})
    assert_all_hold({"messages": 4, "calls": 3, "tool_turns": 2})


def drained_prompt(params, **state):
    """The prompt of the one gateway drain step from an idle session holding `state`."""
    model = SPEC.build(params)
    source = OpenClawState(phase=IDLE, **state)
    [action] = [a for a in model.actions(source) if a.kind == "gateway.drain"]
    [drain] = [e for e in model.observe(source, action, model.next_state(source, action)) if e.name == "followup_drain"]
    return drain.data["id"]


def test_collect_coalesces_again_once_what_is_left_shares_a_route():
    """forceIndividualCollect is reset when the queue is no longer cross-route and holds more than one."""
    collect = {"mode": "collect", "routes": 2}
    assert drained_prompt(collect, fq=("m1", "m3"), forced=True) == "m1+m3"
    assert drained_prompt(collect, fq=("m1", "m2", "m3"), forced=False) == "m1"


def test_an_overflow_summary_is_its_own_run_per_route():
    collect = {"mode": "collect", "routes": 2, "cap": 1}
    assert drained_prompt(collect, fq=("m4",), dropped=("m1", "m3", "m2")) == "overflow:m1+overflow:m3"
    assert drained_prompt(collect, fq=("m4",), dropped=("m2",)) == "overflow:m2"


def test_result_message_is_judged_against_the_end_event_of_an_earlier_step():
    """A parallel call ends in one step and its result message follows at the commit: the end's result,
    kept in `seen`, is what the message must carry (a skip reads the skip, never the abort text)."""
    from steersim.core.model import Action
    from steersim.models.openclaw.properties import _result_matches_end, replay_lifecycle

    skipped = E.tool_end("c0", E.SKIP_TEXT, started=False, details=E.SKIP_DETAILS)
    s = OpenClawState(phase="par-commit", calls=("skipped",), seen=replay_lifecycle((1,), [skipped]))
    commit = Action("runtime", "tool.commit")
    assert _result_matches_end(s, commit, s, E.tool_result_message("c0", E.SKIP_TEXT, E.SKIP_DETAILS))
    assert not _result_matches_end(s, commit, s, E.tool_result_message("c0", E.ABORT_TEXT))
    assert not _result_matches_end(s, commit, s, E.tool_result_message("c0", E.SKIP_TEXT))  # details dropped
