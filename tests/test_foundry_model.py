"""The Foundry model: the default configuration holds within the budget, every bug variant is caught by
the property named for it, and the facts and native events say what the spec says they say."""

from __future__ import annotations

import checking
import pytest

from steersim import Product
from steersim.core.model import Event
from steersim.errors import UsageError
from steersim.models.foundry import SPEC
from steersim.models.foundry.facts import facts
from steersim.models.foundry.spec import PACKAGE_QUEUE_CAP
from steersim.simulate.simulator import simulate

# A smaller configuration than the default checks a variant or finds a bug in about a second; the bugs
# that need two inputs waiting at once get room for them.
SMALL = {"callers": 3, "queue_cap": 1}
NEEDS_TWO_WAITING = {"lifo-promotion", "no-precancel", "cancel-removes-head"}


def verdicts(params=None, bug=None):
    return checking.verdicts(SPEC, params, bug)


def assert_all_hold(params):
    return checking.assert_all_hold(SPEC, params)


def test_default_configuration_holds_within_budget():
    result = assert_all_hold({})
    assert result.status == "ok"
    assert result.states <= 60_000  # a graceful shutdown included: every action kind fires at the defaults
    names = {p.name for p in result.properties}
    assert {"fifo", "own-outcome", "cause-first", "if-match", "recovery", "queue-full", "crash-with-queue",
            "exit-for-recovery", "cancel-request-starts-clear", "suspended-chain-resumes"} <= names


@pytest.mark.parametrize("params", [
    {"steerable": False},
    {"surface": "responses"},
    {"last_input_id_advances_on": "execute"},
    {"precancel_if_successors": False},
    {"handler_steps": 2, "crashes": 0},
    {"explicit_cancel_outcome": "always_cancelled"},
    {"shutdowns": 1, "crashes": 0, "promote_during_shutdown": True},
    {"shutdowns": 1, "crashes": 0, "deferred_outcome": "TaskCancelled"},
])
def test_variants_of_the_parameters_hold(params):
    assert_all_hold({**SMALL, **params})


@pytest.mark.parametrize("bug", sorted(SPEC.bugs))
def test_each_bug_is_caught_by_its_property(bug):
    catcher = SPEC.bug_catchers[bug]
    params = {**SMALL, "queue_cap": 2 if bug in NEEDS_TWO_WAITING else 1, **SPEC.bug_params.get(bug, {})}
    _, props = verdicts(params, bug)
    assert props[catcher].status == "violated", f"{bug}: {catcher} is {props[catcher].status}"
    assert props[catcher].counterexample is not None and props[catcher].counterexample.steps


def test_every_bug_has_a_catcher_that_the_model_declares():
    names = {info.name for info in Product(SPEC.build()).property_infos()}
    assert set(SPEC.bug_catchers) == set(SPEC.bugs)
    assert set(SPEC.bug_catchers.values()) <= names


@pytest.mark.slow
@pytest.mark.parametrize("bug", sorted(SPEC.bugs))
def test_each_bug_is_caught_in_the_default_configuration(bug):
    _, props = verdicts(SPEC.bug_params.get(bug, {}), bug)
    assert props[SPEC.bug_catchers[bug]].status == "violated"


@pytest.mark.slow
def test_graceful_shutdown_holds():
    assert_all_hold({"shutdowns": 1})


@pytest.mark.slow
def test_the_package_queue_cap_fills_and_overflows():
    result = assert_all_hold({"callers": PACKAGE_QUEUE_CAP + 2, "queue_cap": PACKAGE_QUEUE_CAP, "crashes": 0,
                              "preconditions": False, "queued_cancels": 0, "handler_steps": 0})
    assert {p.name: p.status for p in result.properties}["queue-full"] == "reached"


def test_cancelling_queued_handles_at_shutdown_misreports_inputs_the_next_lifetime_runs():
    _, props = verdicts({**SMALL, "shutdowns": 1, "crashes": 0, "queued_handle_at_shutdown": "TaskCancelled"})
    assert props["no-lost-steers"].status == "violated"


def test_a_turn_deferred_by_exit_for_recovery_stays_the_records_turn():
    """Spec 4.9: exit_for_recovery leaves the record in progress on the deferred turn, so the next lifetime
    re-enters it; a model that moves the record on past it is caught by deferred-turn-kept."""
    _, props = verdicts({**SMALL, "crashes": 0}, "exit-for-recovery-releases-turn")
    assert props["deferred-turn-kept"].status == "violated"
    _, props = verdicts({**SMALL, "crashes": 0})
    assert props["deferred-turn-kept"].status == "holds"


def test_every_turn_starts_with_its_safe_points_ahead():
    """A promoted turn gets a fresh budget (spec 4.3), so its handler can read ctx.cancel: a promoted turn
    that inherits the safe points spent before it is caught by turn-budget."""
    _, props = verdicts({**SMALL, "handler_steps": 1}, "promotion-keeps-budget")
    assert props["turn-budget"].status == "violated"
    _, props = verdicts({**SMALL, "handler_steps": 2})
    assert props["turn-budget"].status == "holds"


def test_a_steer_behind_a_running_turn_is_accepted_then_applied_at_its_first_entry():
    queued = Event("chain", "caller:1", "TaskRun", {"caller": "m1", "input_id": "m1", "is_queued": True})
    assert [f.name for f in facts(queued)] == ["steer.submitted", "steer.accepted"]
    entry = Event("chain", "handler", "handler.enter", {"input": "m1", "first": True, "queued": True})
    assert [f.name for f in facts(entry)] == ["turn.started", "history.appended", "steer.applied"]
    again = Event("chain", "handler", "handler.enter", {"input": "m1", "first": False, "queued": True})
    assert [f.name for f in facts(again)] == ["turn.started"]


def test_refusals_are_loud_and_name_their_exception():
    full = Event("chain", "caller:3", "SteeringQueueFull", {"caller": "m3"})
    assert [str(f) for f in facts(full)][-1] == "steer.rejected(id='m3', code='SteeringQueueFull')"
    locked = Event("host", "caller:1", "http.response", {"caller": "m1", "status": 409, "code": "conversation_locked"})
    assert facts(locked)[-1]["code"] == "conversation_locked"


def test_a_simulated_run_is_a_path_that_uses_the_package_vocabulary():
    run = simulate(SPEC.build(), seed=3, max_steps=200)
    names = {e.name for step in run.steps for e in step.transition.events}
    assert not run.violations and run.steps
    assert names <= {"start", "TaskRun", "SteeringQueueFull", "LastInputIdPreconditionFailed", "TaskConflictError",
                     "handler.enter", "handler.check", "handler.exit", "TaskRun.result", "TaskRun.cancel",
                     "process.crash", "process.restart"}


def test_a_bad_parameter_is_refused_with_the_allowed_values():
    with pytest.raises(UsageError, match="accept, execute"):
        SPEC.build({"last_input_id_advances_on": "never"})


@pytest.mark.parametrize(("params", "bug"), [
    (SMALL, None),
    ({**SMALL, "shutdowns": 1, "handler_steps": 2}, None),
    ({**SMALL, "callers_in_order": False, "preconditions": False}, None),
    (SMALL, "resolve-after-promote"),
    (SMALL, "stale-count-after-cancel"),
])
def test_the_remembered_actions_of_every_reachable_state_are_its_enabled_actions(params, bug):
    """`actions` remembers the enabled actions per the state fields they depend on: in every reachable state
    they are the ones the state enables, and the facts of every step's shared events are those of its
    events read afresh."""
    model = SPEC.build(params, bug)
    frontier, seen = list(model.init_states()), set(model.init_states())
    while frontier:
        s = frontier.pop()
        assert model.actions(s) == tuple(model._enabled(s))
        for action in model.actions(s):
            t, events = model.step(s, action)
            assert [f for e in events for f in model.facts(e)] == [f for e in events for f in facts(e)]
            if t not in seen:
                seen.add(t)
                frontier.append(t)
    assert len(seen) > 100
