"""The monitors over recorded facts (`steersim.core.replay`), the one mechanism every judge of a recorded run
uses: it catches what a recorded run broke, where, and what it left open, exactly as the product does
while it steps; and the one `Finding` of the harnesses refuses a kind outside its vocabulary."""

from __future__ import annotations

import random

import pytest

from steersim.core import facts as F
from steersim.core.monitors import CORE_MONITORS, TruthfulResults
from steersim.core.product import Product, Transition
from steersim.core.replay import replay_monitors
from steersim.harness.finding import KINDS, Finding
from steersim.models.teaching import SPEC as TEACHING

# Recorded events, each with the facts it maps to: s2 is applied before s1, which was accepted earlier
# for the same target, and s1 is never resolved.
RECORDED = [
    [F.steer_submitted("s1", "c"), F.steer_accepted("s1")],
    [F.steer_submitted("s2", "c"), F.steer_accepted("s2")],
    [F.turn_started("t1", "c")],
    [F.steer_applied("s2", "t1")],
    [F.turn_ended("t1", "completed")],
]


def test_a_recorded_violation_is_caught_where_it_happened():
    replayed = replay_monitors(RECORDED)
    assert [(b.monitor.name, b.position, b.fact, b.subjects) for b in replayed.breaches] == [
        ("ordered-history", 3, F.steer_applied("s2", "t1"), ("s1",))]
    assert "'s2' applied before 's1'" in replayed.breaches[0].message


def test_what_a_run_left_open_is_judged_only_when_it_ended():
    ended = replay_monitors(RECORDED).first_breaches(ended=True)
    assert [(b.monitor.name, b.position) for b in ended] == [("ordered-history", 3), ("no-lost-steers", None)]
    assert "'s1' (accepted)" in ended[1].message and ended[1].subjects == ("s1",)
    assert [b.monitor.name for b in replay_monitors(RECORDED).first_breaches(ended=False)] == ["ordered-history"]


def test_a_broken_monitor_goes_on_from_the_state_it_had():
    twice = [[F.tool_result("c1", True)], [F.tool_result("c2", True)]]
    replayed = replay_monitors(twice)
    assert [(b.monitor.name, b.position) for b in replayed.breaches] == [
        ("paired-tool-results", 0), ("paired-tool-results", 1)]
    assert [(b.monitor.name, b.position) for b in replayed.first_breaches()] == [("paired-tool-results", 0)]
    accepted_twice = [[F.steer_submitted("s1", "c"), F.steer_accepted("s1")], [F.steer_accepted("s1")]]
    replayed = replay_monitors(accepted_twice)
    # s1 is still open at the end, but what follows a monitor's first violation is not reported
    assert replayed.monitors[0].at_end(replayed.final[0])
    assert [(b.monitor.name, b.position) for b in replayed.first_breaches()] == [("no-lost-steers", 1)]


def test_a_good_recording_breaks_nothing_and_only_the_monitors_given_are_run():
    good = [[F.steer_submitted("s1", "c"), F.steer_accepted("s1")], [F.turn_started("t1", "c")],
            [F.steer_applied("s1", "t1")], [F.turn_ended("t1", "completed")]]
    assert replay_monitors(good).first_breaches() == []
    unstarted = [[F.tool_requested("c1", "t1")], [F.tool_result("c1", False)]]
    assert replay_monitors(unstarted).first_breaches() == []
    assert [b.monitor.name for b in replay_monitors(unstarted, [TruthfulResults()]).breaches] == ["truthful-results"]


def walk(product: Product, seed: int, steps: int = 80) -> list[Transition]:
    """A random path of the product from its first initial state."""
    rng, state, path = random.Random(seed), product.init_states()[0], []
    for _ in range(steps):
        successors = product.successors(state)
        if not successors:
            break
        path.append(rng.choice(successors))
        state = path[-1].target
    return path


@pytest.mark.parametrize("bug", ["no-skip-result", "turn-left-open", None])
def test_the_facts_of_a_model_run_are_judged_as_the_product_judged_them(bug):
    """Random paths of the teaching model (with a seeded bug, and without): the monitors' violations the
    product put on each step are the breaches of the path's recorded facts, step for step, and the
    monitors end in the states the product carried."""
    product = Product(TEACHING.build({}, bug))
    names = {m.name for m in product.monitors}
    broken = 0
    for seed in range(20):
        path = walk(product, seed)
        replayed = replay_monitors([t.facts for t in path], product.monitors)
        stepped = [(i, v.property, v.message) for i, t in enumerate(path) for v in t.violations if v.property in names]
        assert [(b.position, b.monitor.name, f"{b.fact}: {b.message}") for b in replayed.breaches] == stepped
        assert replayed.final == path[-1].target[1]
        broken += bool(stepped)
    assert broken if bug else not broken


def test_a_finding_kind_comes_from_the_one_vocabulary():
    finding = Finding("no-lost-steers", "monitor", "s1 was never resolved", "monitor:no-lost-steers")
    assert finding.to_json() == {"property": "no-lost-steers", "kind": "monitor", "summary": "s1 was never resolved"}
    assert {"monitor", "divergence", "obligation", "malformed", "defect", "violation", "by-design"} <= set(KINDS)
    with pytest.raises(ValueError, match="finding kind 'monitr' is not one of monitor, divergence"):
        Finding("no-lost-steers", "monitr", "s1 was never resolved")
    with pytest.raises(TypeError):
        Finding("p", "monitor", "s", "sig", 3)  # what only some harnesses have is named where it is given


def test_the_core_monitors_are_the_default():
    assert replay_monitors([]).monitors == CORE_MONITORS
