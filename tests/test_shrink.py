"""Shrinking simulated counterexamples: shorter, still violating the same property, replayable."""

from __future__ import annotations

from pathlib import Path

import pytest

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.cli import main
from steersim.core.model import Action
from steersim.models.teaching import SPEC
from steersim.simulate.shrink import shrink_file, shrink_run, trace_property
from steersim.simulate.simulator import Simulator
from steersim.simulate.sweep import run_sweep
from steersim.traces.trace import read_trace, replay

PARAMS = SPEC.resolve({})
# How far above the explorer's shortest a shrunk run may stay. The simulated runs of lost-at-boundary
# lose a steer after an earlier turn that a steer cut short; the explorer's shortest loses all three in
# one turn. Merging the turns takes moving two steers past a turn while removing it, which no single
# removal, move or bounded shortcut search does: they shrink to 19 steps where the explorer has 15.
SLACK = {"lost-at-boundary": 4}


def bug_params(bug: str) -> dict:
    """The defaults, beneath the parameters the bug needs to show at all."""
    return SPEC.resolve({}, bug)


def explorer_lengths(bug: str) -> dict[str, int]:
    result = check(SPEC.build(bug_params(bug), bug), CheckOptions(keep_going=True))
    return {p.name: len(p.counterexample.steps) for p in result.properties if p.counterexample is not None}


@pytest.mark.parametrize("bug", list(SPEC.bugs))
def test_first_counterexample_shrinks_to_near_the_explorers_shortest(bug: str, tmp_path: Path) -> None:
    params = bug_params(bug)
    report = run_sweep("teaching", params, bug, SPEC.build(params, bug), range(500), out=tmp_path)
    assert report.first_trace is not None
    original = read_trace(report.first_trace)
    prop = trace_property(original)
    target, shrunk = shrink_file(report.first_trace)
    assert target == tmp_path / f"{Path(report.first_trace).stem}-shrunk.jsonl"
    assert len(shrunk.steps) <= explorer_lengths(bug)[prop] + SLACK.get(bug, 2)
    assert len(shrunk.steps) <= len(original.steps)
    again = replay(read_trace(target))
    assert again.ok, again.message
    assert prop in {v.property for v in again.violations}


def test_a_run_that_violates_by_ending_shrinks_through_shortcuts() -> None:
    """Seed 2564 loses a steer that the monitors notice only when nothing more can happen: removal and
    moves alone leave it at 28 steps; the shortcut pass brings it down."""
    model = SPEC.build(PARAMS, "lost-at-boundary")
    run = Simulator(model).run(2564, record=True)
    assert run.end == "violation" and run.violations[0].property == "no-lost-steers"
    times = [s.t for s in run.steps]
    delays = [t - before for t, before in zip(times, [0.0, *times[:-1]], strict=True)]
    shrunk = shrink_run(model, run.init_index, [s.transition.action for s in run.steps], delays, "no-lost-steers")
    assert len(shrunk.transitions) <= explorer_lengths("lost-at-boundary")["no-lost-steers"] + SLACK["lost-at-boundary"]
    assert len(shrunk.transitions) < 28 < len(run.steps)
    assert {v.property for v in shrunk.end_violations} == {"no-lost-steers"}


def test_shrinking_removes_what_the_violation_does_not_need() -> None:
    model = SPEC.build(PARAMS, "launch-after-steer")
    noise = [Action("agent", "agent.model_call"), Action("agent", "agent.launch", (0,)),
             Action("tool:call_0", "tool.finish", (0,)), Action("agent", "agent.launch", (1,)),
             Action("user", "user.steer", (1,)), Action("agent", "agent.launch", (2,))]
    shrunk = shrink_run(model, 0, noise, [1.0, 0.5, 2.0, 0.25, 0.1, 0.3], "steer-before-launch")
    assert [a.kind for a in shrunk.actions] == ["agent.model_call", "user.steer", "agent.launch"]
    # among the three-step runs, the one whose steps take the smallest delays of the original run
    assert shrunk.delays == (0.25, 0.1, 0.3)
    assert shrunk.times() == pytest.approx([0.25, 0.35, 0.65])


def test_a_run_that_does_not_violate_is_refused() -> None:
    with pytest.raises(ValueError, match="does not violate"):
        shrink_run(SPEC.build(PARAMS), 0, [Action("agent", "agent.model_call")], [1.0], "no-lost-steers")


def test_simulate_shrink_writes_a_replayable_trace_beside_the_first(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    code = main(["simulate", "teaching", "--bug", "no-skip-result", "--seeds", "0..50", "--out", str(tmp_path),
                 "--shrink"])
    assert code == 1
    out = capsys.readouterr().out
    shrunk = next(tmp_path.glob("*-shrunk.jsonl"))
    assert f"trace {shrunk}" in out
    assert main(["replay", str(shrunk)]) == 1  # reproduced, and it violates
    assert "ok: 4 steps reproduced" in capsys.readouterr().out
