"""State views in traces, the cause of a counterexample, and counterexamples as files."""

from __future__ import annotations

import json
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path

import pytest

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.cli import main
from steersim.core.registry import get_model_spec
from steersim.core.stateview import apply_changes, state_view, view_changes
from steersim.draw.layout import layout
from steersim.errors import UsageError
from steersim.report.artefacts import report_path
from steersim.traces.trace import TraceError, read_trace, trace_from_path, write_trace

BUG = "lost-at-boundary"
# every guard of the teaching model, each written as a witness trace beside a counterexample
GUARDS = sorted(p.name for p in get_model_spec("teaching").build().properties() if p.kind == "sometimes")


def _lost_at_boundary():
    spec = get_model_spec("teaching")
    params = spec.resolve({}, BUG)
    model = spec.build(params, BUG)
    result = check(model, CheckOptions())
    prop = next(p for p in result.properties if p.status == "violated")
    return model, params, prop


@dataclass(frozen=True)
class _Fields:
    queue: tuple[int, ...]
    seen: frozenset[str]


class _Plain:
    pass


class _Named(_Plain):
    def render_state(self, state: _Fields) -> dict:
        return {"waiting": [f"s{n}" for n in state.queue]}


def test_the_default_view_is_the_fields_made_json_in_a_fixed_order() -> None:
    view = state_view(_Plain(), _Fields((1, 2), frozenset({"b", "a"})))
    assert view == {"queue": [1, 2], "seen": ["a", "b"]}
    assert state_view(_Plain(), namedtuple("P", "x y")(1, (2,))) == {"x": 1, "y": [2]}


def test_a_model_names_its_state_through_the_render_state_hook() -> None:
    assert state_view(_Named(), _Fields((1,), frozenset())) == {"waiting": ["s1"]}


def test_changes_hold_only_what_differs_and_rebuild_the_next_view() -> None:
    before, after = {"a": 1, "b": [1]}, {"a": 1, "b": []}
    assert view_changes(before, after) == {"b": []}
    assert apply_changes(before, view_changes(before, after)) == after


def test_every_trace_line_carries_the_changes_and_the_file_round_trips(tmp_path: Path) -> None:
    model, params, prop = _lost_at_boundary()
    trace = trace_from_path("teaching", params, BUG, prop.counterexample, system=model)
    file = tmp_path / "t.jsonl"
    write_trace(file, trace)
    lines = [json.loads(line) for line in file.read_text().splitlines()]
    assert lines[0]["view"]["queue"] == []
    steps = [line for line in lines[1:] if "end" not in line]
    assert len(steps) == 15 and all("changes" in line for line in steps)
    assert lines[13]["changes"] == {"phase": "idle", "queue": []}  # step 12: agent.clear drops s1
    assert read_trace(file).views() == trace.views()


def _write_lines(file: Path, lines: list[dict]) -> None:
    file.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_step_without_changes_in_a_viewed_trace_is_refused(tmp_path: Path) -> None:
    model, params, prop = _lost_at_boundary()
    file = tmp_path / "t.jsonl"
    write_trace(file, trace_from_path("teaching", params, BUG, prop.counterexample, system=model))
    lines = [json.loads(line) for line in file.read_text().splitlines()]
    del lines[3]["changes"]
    _write_lines(file, lines)
    with pytest.raises(TraceError, match="line 4 field changes: missing"):
        read_trace(file)
    lines[3]["changes"] = ["phase"]
    _write_lines(file, lines)
    with pytest.raises(TraceError, match="line 4 field changes: expected an object"):
        read_trace(file)


def test_an_old_trace_without_views_is_read_as_it_is(tmp_path: Path) -> None:
    model, params, prop = _lost_at_boundary()
    file = tmp_path / "t.jsonl"
    write_trace(file, trace_from_path("teaching", params, BUG, prop.counterexample, system=model))
    lines = [json.loads(line) for line in file.read_text().splitlines()]
    del lines[0]["view"]
    for line in lines[1:]:
        line.pop("changes", None)
        for record in line.get("violations", []):
            for key in ("cause_step", "subject", "lost", "summary"):
                record.pop(key, None)
    _write_lines(file, lines)
    trace = read_trace(file)
    assert trace.view is None and trace.views() is None and len(trace.steps) == 15
    lines[2]["changes"] = {"queue": []}
    _write_lines(file, lines)
    with pytest.raises(TraceError, match="line 3 field changes: the header has no view"):
        read_trace(file)


def test_a_cause_step_outside_the_trace_is_refused(tmp_path: Path) -> None:
    model, params, prop = _lost_at_boundary()
    file = tmp_path / "t.jsonl"
    write_trace(file, trace_from_path("teaching", params, BUG, prop.counterexample, system=model))
    lines = [json.loads(line) for line in file.read_text().splitlines()]
    lines[15]["violations"][0]["cause_step"] = 99
    _write_lines(file, lines)
    with pytest.raises(TraceError, match="line 16 field cause_step: step 99 does not exist"):
        read_trace(file)
    lines[15]["violations"][0]["cause_step"] = "12"
    _write_lines(file, lines)
    with pytest.raises(TraceError, match=r"violations\[0\].cause_step: expected a whole number"):
        read_trace(file)


def test_the_cause_is_where_the_steer_left_the_queue_not_where_it_was_noticed() -> None:
    _, _, prop = _lost_at_boundary()
    assert prop.name == "ordered-history"
    assert prop.cause is not None
    assert (prop.cause["detect_step"], prop.cause["cause_step"]) == (14, 12)
    assert prop.cause["summary"] == ("s1 was accepted at step 11 and was removed from queue at step 12 "
                                     "(agent.clear) without being applied; ordered-history noticed at step 14")
    assert prop.to_json()["counterexample"]["cause_step"] == 12


def test_a_violation_that_lost_nothing_is_its_own_cause() -> None:
    spec = get_model_spec("teaching")
    params = spec.resolve({"K": 2}, "launch-after-steer")
    result = check(spec.build(params, "launch-after-steer"), CheckOptions())
    prop = next(p for p in result.properties if p.status == "violated")
    assert prop.cause is not None
    assert prop.cause["cause_step"] == prop.cause["detect_step"] == len(prop.counterexample.steps) - 1
    assert prop.cause["summary"].startswith(f"{prop.name} is broken at step {prop.cause['detect_step']}")


def test_the_diagram_bands_the_cause_and_marks_only_the_lost_steer() -> None:
    model, params, prop = _lost_at_boundary()
    plan = layout(trace_from_path("teaching", params, BUG, prop.counterexample, system=model))
    assert [(b.kind, b.step) for b in plan.banners] == [("cause", 12), ("violation", 14)]
    lost = {life.id: life.lost_at is not None for life in plan.steers}
    assert lost == {"s1": True, "s2": False}


def test_check_traces_then_diagram_from_a_shell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, report = tmp_path / "D", tmp_path / "r.json"
    code = main(["check", "teaching", "--bug", BUG, "--quiet", "--traces", str(folder), "--json", str(report)])
    assert code == 1
    out = capsys.readouterr().out
    assert "cause: s1 was accepted at step 11 and was removed from queue at step 12" in out
    assert "state: phase=\"idle\", queue=[]" in out
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["counterexample-ordered-history.jsonl", "counterexample-ordered-history.svg",
                     *(f"witness-{guard}.{ext}" for guard in GUARDS for ext in ("jsonl", "svg"))]

    trace = read_trace(folder / "counterexample-ordered-history.jsonl")
    assert trace.steps[14].violations[0]["cause_step"] == 12
    assert main(["replay", str(folder / "counterexample-ordered-history.jsonl")]) == 1  # reproduces the violation
    svg = tmp_path / "x.svg"
    assert main(["diagram", str(folder / "counterexample-ordered-history.jsonl"), "-o", str(svg)]) == 0
    assert "cause (step 12)" in svg.read_text()
    assert main(["diagram", str(report), "-o", str(svg)]) == 0
    assert "cause (step 12)" in svg.read_text()


def test_a_report_names_the_counterexample_it_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    main(["check", "teaching", "--bug", BUG, "--quiet", "--json", str(report)])
    data = json.loads(report.read_text())
    with pytest.raises(UsageError, match="no counterexample for 'nothing'"):
        report_path(data, "nothing", str(report))
    data["properties"][2]["counterexample"]["steps"][0]["kind"] = "agent.fly"
    report.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["diagram", str(report), "-o", str(tmp_path / "x.svg")]) == 2
    assert "step 0 of 'ordered-history'" in capsys.readouterr().err


def test_simulate_traces_keeps_every_run_or_only_the_violating_ones(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    every, broken = tmp_path / "every", tmp_path / "broken"
    args = ["simulate", "teaching", "--bug", "launch-after-steer", "--seeds", "7..10", "--out", str(tmp_path / "o")]
    assert main([*args, "--traces", str(every)]) == 1
    assert main([*args, "--traces", str(broken), "--traces-for", "violations"]) == 1
    report = capsys.readouterr().out
    assert "wrote 4 traces" in report
    runs = sorted(p.name for p in every.iterdir())
    assert runs == sorted(f"teaching-launch-after-steer-seed{k}.jsonl" for k in range(7, 11))
    violating = {p.name for p in broken.iterdir()}
    judged = {name for name in runs if any(s.violations for s in read_trace(every / name).steps)}
    assert violating == judged and 0 < len(violating) < 4  # seed 9 runs clear of the bug
    assert main(["replay", str(every / runs[0])]) in (0, 1)
    assert "steps reproduced" in capsys.readouterr().out


def test_report_writes_a_trace_and_diagram_of_each_counterexample_beside_the_page(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "teaching", "--bug", BUG, "-o", str(tmp_path)]) == 1
    written = 3 + len(GUARDS)  # three counterexamples and a witness of each guard
    assert f"beside it {written} traces" in capsys.readouterr().out
    traces = sorted(p.name for p in tmp_path.glob("*.jsonl"))
    assert "counterexample-no-lost-steers.eventually.jsonl" in traces and len(traces) == written  # dots kept
    assert len(list(tmp_path.glob("*.svg"))) == written and (tmp_path / "index.html").exists()


def test_the_diagram_has_a_panel_of_state_changes_that_slides_can_leave_out(tmp_path: Path) -> None:
    model, params, prop = _lost_at_boundary()
    trace = trace_from_path("teaching", params, BUG, prop.counterexample, system=model)
    plan = layout(trace)
    assert next(r for r in plan.steps if r.index == 12).changes == ('phase="idle"', "queue=[]")
    from steersim.draw.diagram import save_diagram

    with_panel, without = tmp_path / "a.svg", tmp_path / "b.svg"
    save_diagram(trace, with_panel)
    save_diagram(trace, without, state_panel=False)
    assert "state changes" in with_panel.read_text() and "queue=[]" in with_panel.read_text()
    assert "state changes" not in without.read_text()
    assert "<dc:title>teaching(K=3, N=3, Q=2, P=3)  bug lost-at-boundary</dc:title>" in without.read_text()
