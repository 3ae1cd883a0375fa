"""The LangGraph model: the default configuration holds, every bug variant is caught by the property
named for it, and the facts say what the runs did."""

from __future__ import annotations

import checking
import pytest

from steersim import Product
from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.core.model import Event
from steersim.models.langgraph import SPEC
from steersim.models.langgraph.facts import facts
from steersim.models.langgraph.model import LangGraphModel
from steersim.models.langgraph.properties import continues, settled, shown

BUGS = {bug.name: bug for bug in SPEC.variants}


def test_default_configuration_holds():
    result = checking.assert_all_hold(SPEC, {})
    names = {p.name for p in result.properties}
    assert {"one-active-turn", "rollback-leaves-no-trace", "reject-409-iff-in-flight",
            "thread-agrees-with-last-run", "running-run-rolled-back", "events-tell-record-changes",
            "checkpoints-continue-history", "creation-answers-after-cancelling", "thread-settles",
            "node-error-ends-run", "creation-refused"} <= names


@pytest.mark.parametrize("params", [
    {"interrupted_thread_status": "idle", "stream_clients": False},
    {"nodes": 2, "stream_clients": False, "node_errors": False},
    *({"strategy": s, "runs": 3, "stream_clients": False, "node_errors": False}
      for s in ("reject", "enqueue", "interrupt", "rollback")),
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


def test_a_run_is_a_steer_and_a_turn():
    created = [f.name for f in facts(Event("client", "server", "run.created", {"run": "r1", "strategy": "enqueue"}))]
    assert created == ["steer.submitted", "steer.accepted"]
    ended = facts(Event("worker", "client", "task.ended", {"run": "r1", "kept": False}))
    assert [f.name for f in ended] == ["turn.ended", "steer.failed"]
    kept = facts(Event("worker", "client", "task.ended", {"run": "r1", "kept": True}))
    assert kept[1].name == "steer.applied"
    never_started = facts(Event("server", "store", "run.deleted", {"run": "r2", "started": False, "settled": False}))
    assert [f.name for f in never_started] == ["steer.failed"]
    marked_first = facts(Event("server", "store", "run.deleted", {"run": "r2", "started": False, "settled": True}))
    assert marked_first == ()


def test_a_run_the_client_interrupts_alone_leaves_the_thread_interrupted():
    """runs.cancel on the one running run, after its input checkpoint: once its task settles, nothing is in
    flight and the thread shows the run's status (interrupted, nodes left) with its last checkpoint's values."""
    model = SPEC.build({"runs": 1, "stream_clients": False, "node_errors": False})
    s = model.init_states()[0]
    for kind in ("client.create", "client.respond", "dispatcher.pick", "worker.checkpoint", "worker.checkpoint",
                 "client.cancel", "server.signal", "worker.notice", "worker.cancelled", "worker.settle"):
        s, _ = model.step(s, next(a for a in model.actions(s) if a.kind == kind))
    assert (s.status, s.thread_status, s.thread_values) == (("interrupted",), "interrupted", ("r1",))
    _, props = checking.verdicts(SPEC, {"runs": 1, "stream_clients": False, "node_errors": False},
                                 "interrupted-thread-stays-busy")
    assert props["thread-agrees-with-last-run"].status == "violated"


@pytest.mark.parametrize("settle_first", [False, True])
def test_a_run_rolled_back_then_interrupted_writes_the_thread_only_while_its_record_is_there(settle_first):
    """r2 rolls r1 back and r3 interrupts it before the deletion is carried out. Deleted first, r1's
    settle writes nothing (set_joint_status finds no run: 404); settled first, it writes its values, and
    the deletion then takes its checkpoints away, as the real server does (repro/ of
    rollback-deletes-run-after-it-wrote-thread)."""
    model = SPEC.build({"runs": 3, "stream_clients": False, "node_errors": False})
    s = model.init_states()[0]
    order = ("worker.cancelled", "worker.settle", "server.delete") if settle_first else (
        "server.delete", "worker.cancelled", "worker.settle")
    steps = [("client.create", (0, "reject")), ("dispatcher.pick", ()), ("client.create", (1, "rollback")),
             ("client.create", (2, "interrupt")), ("server.signal", (0,)), ("worker.checkpoint", (0,)),
             ("worker.checkpoint", (0,)), ("worker.notice", (0,)), *((kind, (0,)) for kind in order)]
    for kind, args in steps:
        s, _ = model.step(s, next(a for a in model.actions(s) if a.kind == kind and a.args == args))
    assert s.checkpoints == () and s.status[0] == "deleted" and s.thread_status == "busy"
    assert s.thread_values == (("r1",) if settle_first else ())


def _walk(model, steps):
    s = model.init_states()[0]
    for kind, args in steps:
        a = next(a for a in model.actions(s) if a.kind == kind and a.args == args)
        t, events = model.step(s, a)
        yield s, a, t, events
        s = t


def _as_shown(events):
    return sorted((e.name, repr(sorted(e.data.items()))) for e in events)


STEPS = [("client.create", (0, "enqueue")), ("client.respond", (0,)), ("dispatcher.pick", ()),
         ("client.create", (1, "enqueue")), ("worker.checkpoint", (0,)), ("worker.checkpoint", (0,)),
         ("worker.checkpoint", (0,)), ("worker.finish", (0,)), ("worker.stop", (0,))]
PARAMS = {"strategy": "enqueue", "stream_clients": False, "node_errors": False, "cancels": 0}


def test_each_step_shows_what_changed_in_the_records():
    """The model's events of each step are the changes the recorder would read off the records; announcing
    the busy thread again when a second run is enqueued is one change too many."""
    for s, a, t, events in _walk(SPEC.build(PARAMS), STEPS):
        assert _as_shown(events) == _as_shown([Event("", "", n, d) for n, d in shown(s, a, t)]), a
    enqueued = list(_walk(SPEC.build(PARAMS, "thread-announced-unchanged"), STEPS[:4]))[-1]
    s, a, t, events = enqueued
    assert (s.thread_status, t.thread_status) == ("busy", "busy")
    assert "thread" in [e.name for e in events] and "thread" not in [n for n, _ in shown(s, a, t)]


def test_a_run_starts_from_the_threads_latest_checkpoint():
    """r2's input checkpoint has r1's last checkpoint as parent and its values; with the bug it starts empty."""
    steps = [*STEPS, ("client.respond", (1,)), ("dispatcher.pick", ()), ("worker.checkpoint", (1,))]
    for bug, holds in ((None, True), ("run-starts-from-empty-state", False)):
        *_, (s, _, t, _) = _walk(SPEC.build(PARAMS, bug), steps)
        written = t.checkpoints[-1]
        assert written.name == "r2.0" and continues(s.checkpoints, written) is holds
        assert (written.parent, written.values) == (("r1.2", ("r1", "r1.1")) if holds else (None, ()))


def test_the_thread_settles_only_once_every_creation_is_answered():
    model = SPEC.build(PARAMS)
    states = [t for _, _, t, _ in _walk(model, STEPS)]
    assert not settled(states[-1])  # r2 is pending and unanswered
    assert not any(settled(s) for s in states[:-1]) and settled(model.init_states()[0])


def test_a_run_fails_only_in_a_node_and_streams_join_only_stored_runs():
    """A run whose last node wrote its checkpoint may only finish (with the bug it may still fail); a stream
    client may join a refused run only with the bug."""
    for bug, offered in ((None, {"worker.finish"}), ("error-after-last-node", {"worker.finish", "worker.fail"})):
        model = SPEC.build({"runs": 1, "stream_clients": False, "cancels": 0}, bug)
        *_, (_, _, s, _) = _walk(model, [("client.create", (0, "reject")), ("dispatcher.pick", ()),
                                         *[("worker.checkpoint", (0,))] * 3])
        assert {a.kind for a in model.actions(s) if a.actor == "worker:r1"} == offered
    steps = [("client.create", (0, "reject")), ("client.create", (1, "reject")), ("client.respond", (1,))]
    for bug, joins in ((None, False), ("join-refused-run", True)):
        *_, (_, _, s, _) = _walk(SPEC.build({"strategy": "reject", "cancels": 0}, bug), steps)
        assert s.status[1] == "rejected"
        assert any(a.kind == "stream.join" and a.args == (1,) for a in SPEC.build(
            {"strategy": "reject", "cancels": 0}, bug).actions(s)) is joins


class RefusalReadAsNothing(LangGraphModel):
    """The 409 of a refused creation is read as no fact: the refused run shows neither submitted nor refused."""

    def facts(self, event):
        return () if event.name == "run.rejected" else super().facts(event)


REFUSALS = {"runs": 3, "strategy": "reject", "stream_clients": False, "node_errors": False, "cancels": 0}


def test_every_creation_shows_by_the_end():
    """creations-answered catches a creation that shows nothing: the seeded refusal-left-unanswered (its 409
    never comes) and a 409 not read as an answer; the model as it is passes it."""
    _, props = checking.verdicts(SPEC, dict(BUGS["refusal-left-unanswered"].params), "refusal-left-unanswered")
    assert props["creations-answered"].status == "violated"
    result = check(RefusalReadAsNothing(SPEC.resolve(REFUSALS, None)), CheckOptions(keep_going=True))
    assert {p.name: p.status for p in result.properties}["creations-answered"] == "violated"
    assert check(SPEC.build(REFUSALS), CheckOptions()).status == "ok"
