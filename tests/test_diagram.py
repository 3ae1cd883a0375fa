"""Timing diagrams, re-timing of untimed runs and state-space pictures."""

from __future__ import annotations

from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.cli import main
from steersim.core.registry import get_model_spec
from steersim.draw.diagram import (
    CHAR_WIDTH,
    LANE,
    MAX_SPAN,
    arrow_label,
    diagram_svg,
    fact_origins,
    lane_positions,
    save_diagram,
    timing_diagram,
)
from steersim.draw.graphview import (
    GraphTooLarge,
    explore_graph,
    graph_figure,
    path_nodes,
    state_summary,
    summary_figure,
)
from steersim.draw.layout import MAX_SHOWN, lane_order, layout
from steersim.draw.style import figure_bytes
from steersim.simulate.retime import retime_actions, retime_path, retime_trace
from steersim.simulate.simulator import simulate
from steersim.traces.trace import Trace, TraceStep, read_trace, trace_from_path, write_trace

SPEC = get_model_spec("teaching")
PARAMS = SPEC.resolve({})


@cache
def counterexample(bug: str, prop: str, small: bool = False):
    model = SPEC.build(SPEC.resolve({"K": 2, "N": 2}) if small else PARAMS, bug)
    result = check(model, CheckOptions(keep_going=True))
    found = next(p for p in result.properties if p.name == prop)
    assert found.status == "violated" and found.counterexample is not None
    return model, found.counterexample


@pytest.mark.parametrize("seed", [0, 1, 7, 42])
def test_retime_gives_a_simulated_run_its_own_times(seed: int) -> None:
    model = SPEC.build(PARAMS)
    run = simulate(model, seed)
    actions = [step.transition.action for step in run.steps]
    assert retime_actions(model, actions, run.init_index, seed=seed) == [step.t for step in run.steps]


def test_retimed_counterexample_is_monotone_and_matches_its_trace() -> None:
    model, path = counterexample("lost-at-boundary", "no-lost-steers")
    times = retime_path(model, path, seed=3)
    assert len(times) == len(path.steps)
    assert all(b >= a for a, b in pairwise(times))
    untimed = trace_from_path("teaching", PARAMS, "lost-at-boundary", path)
    timed = retime_trace(untimed, seed=3)
    assert [s.t for s in timed.steps] == times
    assert timed.timing is not None and timed.violations == untimed.violations


def test_retime_refuses_an_action_that_is_not_enabled() -> None:
    model, path = counterexample("lost-at-boundary", "no-lost-steers")
    with pytest.raises(ValueError, match="not enabled"):
        retime_actions(model, list(reversed(path.actions)))


def test_layout_has_a_lane_per_participant_user_first_tools_last() -> None:
    _, path = counterexample("lost-at-boundary", "no-lost-steers")
    trace = trace_from_path("teaching", PARAMS, "lost-at-boundary", path)
    lanes = lane_order(trace)
    assert lanes[0] == "user"
    assert {"agent", "queue", "model", "tool:call_0"} <= set(lanes)
    tools = [k for k, lane in enumerate(lanes) if lane.startswith("tool")]
    assert tools == list(range(len(lanes) - len(tools), len(lanes)))


def test_layout_marks_steer_lives_spans_and_the_end_violation() -> None:
    _, path = counterexample("lost-at-boundary", "no-lost-steers")
    plan = layout(trace_from_path("teaching", PARAMS, "lost-at-boundary", path))
    lives = {life.id: life for life in plan.steers}
    assert lives["s1"].accepted and not lives["s1"].settled  # the lost steer stays open to the end
    assert [stage for _, stage in lives["s3"].marks] == ["steer.submitted", "steer.rejected"]
    submitted, accepted = lives["s1"].marks[:2]
    assert submitted[0] < accepted[0]  # two events of one step, drawn on two lines
    assert {(s.kind, s.lane) for s in plan.spans} >= {("turn", "agent"), ("tool", "tool:call_0")}
    assert plan.banners[-1].step is None and plan.banners[-1].broken[0][0] == "no-lost-steers"


def test_diagram_svg_shows_lanes_steers_and_the_violated_property() -> None:
    model, path = counterexample("lost-at-boundary", "no-lost-steers")
    svg = diagram_svg(path, "t", model, params=PARAMS, bug="lost-at-boundary")
    for text in ("user", "agent", "queue", "tool:call_0", "s1", "steer.queued", "no-lost-steers violated"):
        assert text in svg
    assert svg.startswith("<svg") and "<metadata>" not in svg


def test_step_violations_are_banded_at_their_step() -> None:
    model, path = counterexample("no-skip-result", "paired-tool-results")
    trace = trace_from_path("teaching", PARAMS, "no-skip-result", path, retime_path(model, path))
    plan = layout(trace)
    banners = [b for b in plan.banners if b.step is not None]
    last = next(b for b in banners if any(prop == "paired-tool-results" for prop, _ in b.broken))
    assert last.step == len(path.steps) - 1
    assert all(prop == "paired-tool-results" for prop, _ in last.broken)
    # on the way there, the skip's boundary already broke results-recorded, banded at its own step
    assert [b.step for b in banners if b is not last] == [3]


def test_figures_are_byte_identical_across_runs(tmp_path: Path) -> None:
    model, path = counterexample("lost-at-boundary", "no-lost-steers", small=True)
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    for suffix in ("svg", "png"):
        first, second = tmp_path / "one" / f"cx.{suffix}", tmp_path / "two" / f"cx.{suffix}"
        save_diagram(path, first, model)
        save_diagram(path, second, model)
        assert first.read_bytes() == second.read_bytes()
    assert b"<dc:date>" not in (tmp_path / "one" / "cx.svg").read_bytes()


def test_a_path_needs_its_model() -> None:
    _, path = counterexample("lost-at-boundary", "no-lost-steers")
    with pytest.raises(ValueError, match="needs its model"):
        timing_diagram(path)


def synthetic_long_trace(steps: int) -> Trace:
    """A long run: one turn, a tool that keeps reporting progress, one steer in the middle and a
    violation at the last step."""
    rows = [TraceStep(0, 0.0, {"actor": "agent", "kind": "turn", "args": []},
                      [{"source": "agent", "target": "model", "name": "request", "data": {"turn": "t1"}}],
                      [{"fact": "turn.started", "turn": "t1", "chain": "c"}], "0")]
    for i in range(1, steps):
        events = [{"source": "tool:x", "target": "agent", "name": "progress", "data": {"n": i}}]
        facts: list[dict] = []
        violations: list[dict] = []
        if i == steps // 2:
            events = [{"source": "user", "target": "agent", "name": "steer", "data": {"id": "s1"}}]
            facts = [{"fact": "steer.submitted", "id": "s1", "target": "c"}, {"fact": "steer.accepted", "id": "s1"}]
        if i == steps - 1:
            violations = [{"property": "demo-property", "message": "broken on purpose"}]
        rows.append(TraceStep(i, float(i), {"actor": "tool:x", "kind": "tool.progress", "args": [i]}, events, facts,
                              f"{i:x}", violations))
    return Trace("teaching", {}, None, 0, None, 0, rows)


def test_long_traces_collapse_and_cut_with_a_note() -> None:
    trace = synthetic_long_trace(400)
    plan = layout(trace)
    assert len(plan.steps) <= MAX_SHOWN
    assert {e.cut for e in plan.elisions} == {False}  # only the long quiet stretches, each one row
    covered = sum(e.last - e.first + 1 for e in plan.elisions)
    assert covered + len(plan.steps) == 400
    assert any(step.index == 200 for step in plan.steps)  # the steer stays in view
    assert any(step.index == 399 for step in plan.steps) and plan.banners[0].step == 399
    assert all("tool.progress" in e.summary for e in plan.elisions)


def test_many_eventful_steps_are_cut_in_the_middle() -> None:
    trace = synthetic_long_trace(300)
    for step in trace.steps[1:]:
        step.facts.append({"fact": "turn.ended", "turn": "t1", "status": "done"})
    plan = layout(trace)
    cuts = [e for e in plan.elisions if e.cut]
    assert len(cuts) == 1 and len(plan.steps) <= MAX_SHOWN
    assert plan.steps[-1].index == 299


def test_overlapping_turns_are_nested() -> None:
    trace = synthetic_long_trace(5)
    trace.steps[3].events = [{"source": "agent", "target": "model", "name": "request", "data": {"turn": "t2"}}]
    trace.steps[3].facts = [{"fact": "turn.started", "turn": "t2", "chain": "c"}]
    plan = layout(trace)
    assert sorted(s.level for s in plan.spans if s.kind == "turn") == [0, 1]


def test_cli_draws_a_trace_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, path = counterexample("lost-at-boundary", "no-lost-steers", small=True)
    trace_file = tmp_path / "cx.jsonl"
    write_trace(trace_file, trace_from_path("teaching", SPEC.resolve({"K": 2, "N": 2}), "lost-at-boundary", path))
    assert read_trace(trace_file).steps[0].t is None
    assert main(["diagram", str(trace_file), "-o", str(tmp_path / "cx.svg")]) == 0
    assert main(["diagram", str(trace_file), "-o", str(tmp_path / "cx.png")]) == 0
    assert (tmp_path / "cx.png").read_bytes()[:4] == b"\x89PNG"
    assert "no-lost-steers" in (tmp_path / "cx.svg").read_text()
    assert main(["diagram", str(trace_file), "-o", str(tmp_path / "cx.pdf")]) == 2
    assert "must end in .svg or .png" in capsys.readouterr().err


def test_state_graph_matches_the_explorer_and_holds_the_path() -> None:
    model, path = counterexample("lost-at-boundary", "no-lost-steers", small=True)
    graph = explore_graph(model)
    assert graph.number_of_nodes() == state_summary(model).states
    nodes = path_nodes(path)
    assert all(graph.has_edge(u, v) for u, v in pairwise(nodes))
    assert graph.nodes[nodes[-1]]["violated"]
    assert b"<svg" in figure_bytes(graph_figure(graph, nodes, "demo"), "svg")


def test_state_graph_refuses_large_configurations() -> None:
    with pytest.raises(GraphTooLarge, match="summary"):
        explore_graph(SPEC.build(PARAMS), max_states=50)
    summary = state_summary(SPEC.build(PARAMS), max_states=50)
    assert not summary.complete and summary.states == 50
    assert b"counting stopped" in figure_bytes(summary_figure(summary, "big"), "svg")


def test_summary_counts_every_state_by_depth() -> None:
    model = SPEC.build(PARAMS)
    summary = state_summary(model)
    assert summary.complete and sum(summary.per_depth) == summary.states
    assert summary.states == check(model, CheckOptions(keep_going=True, liveness=False)).states
    assert sum(n for _, n in summary.by_kind) == summary.transitions


def test_the_model_says_which_event_carried_each_fact() -> None:
    model, path = counterexample("lost-at-boundary", "no-lost-steers")
    trace = trace_from_path("teaching", PARAMS, "lost-at-boundary", path)
    origins = fact_origins(trace, model)
    steer = next(k for k, step in enumerate(trace.steps) if step.action["kind"] == "user.steer")
    assert origins[steer] == [0, 1]  # submitted by the user's message, accepted by the queue's answer
    trace.steps[steer].facts.reverse()  # a trace the model no longer explains is placed by its payloads
    assert fact_origins(trace, model)[steer] is None


def test_a_liveness_loop_is_marked_where_it_starts() -> None:
    plan = layout(synthetic_long_trace(6), loop_start=3)
    assert [row.index for row in plan.steps if row.loop_start] == [3]
    assert any("repeats forever" in note for note in plan.notes)


def test_lanes_spread_until_every_label_fits_between_its_lanes() -> None:
    trace = synthetic_long_trace(5)
    trace.steps[2].events = [{"source": "tool:x", "target": "agent", "name": "a.very.long.event.name",
                              "data": {"payload": "x" * 30}}]
    plan = layout(trace)
    xs = lane_positions(plan, 0.0)
    for arrow in plan.arrows:
        if arrow.source != arrow.target:
            need = min(MAX_SPAN, len(arrow_label(arrow)) * CHAR_WIDTH + 0.3)
            assert abs(xs[arrow.target] - xs[arrow.source]) >= need - 1e-9
    gaps = [b - a for a, b in pairwise(xs[lane] for lane in plan.lanes)]
    assert min(gaps) >= LANE - 1e-9
