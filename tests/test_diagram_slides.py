"""`steersim diagram` options for slides: a title of one's own, a window of steps and a choice of lanes;
bad values are refused in one line."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.cli import main
from steersim.core.registry import get_model_spec
from steersim.draw.lanes import keep_lanes
from steersim.draw.layout import layout
from steersim.traces.trace import read_trace, trace_from_path, write_trace

SPEC = get_model_spec("teaching")

PARAMS = {"K": 2, "N": 2}


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    model = SPEC.build(SPEC.resolve(PARAMS), "lost-at-boundary")
    result = check(model, CheckOptions(keep_going=True))
    path = next(p for p in result.properties if p.name == "no-lost-steers").counterexample
    out = tmp_path / "cx.jsonl"
    write_trace(out, trace_from_path("teaching", SPEC.resolve(PARAMS), "lost-at-boundary", path))
    return out


def test_title_replaces_the_default_heading(trace_file: Path, tmp_path: Path) -> None:
    default, titled = tmp_path / "default.svg", tmp_path / "titled.svg"
    assert main(["diagram", str(trace_file), "-o", str(default)]) == 0
    assert main(["diagram", str(trace_file), "-o", str(titled), "--title", "A steer lost at the boundary"]) == 0
    assert "A steer lost at the boundary" in titled.read_text()
    assert "A steer lost at the boundary" not in default.read_text()
    # the default heading is drawn and also the file's metadata title; with --title only the metadata keeps it
    assert titled.read_text().count("teaching(") == default.read_text().count("teaching(") - 1


@pytest.mark.parametrize("title", ["", "   ", "two\nlines"])
def test_a_blank_title_is_refused_in_one_line(trace_file: Path, tmp_path: Path, capsys, title: str) -> None:
    assert main(["diagram", str(trace_file), "-o", str(tmp_path / "x.svg"), "--title", title]) == 2
    err = capsys.readouterr().err
    assert "--title" in err and "one non-empty line" in err and err.count("\n") == 1


def test_a_step_window_draws_those_steps_and_names_the_rest(trace_file: Path, tmp_path: Path) -> None:
    trace = read_trace(trace_file)
    last = len(trace.steps) - 1
    plan = layout(trace, window=(3, 5))
    assert [row.index for row in plan.steps] == [3, 4, 5]
    assert [(gap.first, gap.last) for gap in plan.elisions] == [(0, 2), (6, last)]
    assert [row.index for row in layout(trace).steps] == list(range(last + 1)), "no window: every step"
    out = tmp_path / "window.svg"
    assert main(["diagram", str(trace_file), "-o", str(out), "--steps", "3..5"]) == 0
    svg = out.read_text()
    assert "steps 0 to 2 not drawn" in svg and f"steps 6 to {last} not drawn" in svg
    (tmp_path / "again").mkdir()
    assert main(["diagram", str(trace_file), "-o", str(tmp_path / "again" / "window.svg"), "--steps", "3..5"]) == 0
    assert (tmp_path / "again" / "window.svg").read_text() == svg, "the same window draws the same bytes"


@pytest.mark.parametrize(("window", "says"), [("5..3", "FIRST <= LAST"), ("3", "FIRST..LAST"), ("a..b", "FIRST..LAST"),
                                              ("-1..2", "FIRST..LAST"), ("0..999", "the trace has steps 0..")])
def test_a_bad_step_window_is_refused_in_one_line(trace_file: Path, tmp_path: Path, capsys, window: str,
                                                  says: str) -> None:
    out = tmp_path / "x.svg"
    assert main(["diagram", str(trace_file), "-o", str(out), f"--steps={window}"]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and not out.exists()


def test_a_lane_filter_keeps_those_lanes_and_counts_the_messages_left_out(trace_file: Path) -> None:
    trace = read_trace(trace_file)
    plan = layout(trace, "t")
    assert {"model", "tool:call_0"} <= set(plan.lanes)
    kept = keep_lanes(plan, ["user", "queue", "tool:*"])
    assert kept.lanes == [lane for lane in plan.lanes if lane in ("user", "queue") or lane.startswith("tool:")]
    assert all(a.source in kept.lanes and a.target in kept.lanes for a in kept.arrows)
    assert all(s.lane in kept.lanes for s in kept.spans)
    crossing = [a for a in plan.arrows if (a.source in kept.lanes) != (a.target in kept.lanes)]
    assert crossing and f"{len(crossing)} messages to or from agent" in kept.title
    assert kept.steers == plan.steers and kept.banners == plan.banners, "steers and bands belong to no lane"
    assert keep_lanes(plan, plan.lanes) == plan


def test_lanes_reach_the_svg(trace_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "lanes.svg"
    assert main(["diagram", str(trace_file), "-o", str(out), "--lanes", "user,queue"]) == 0
    svg = out.read_text()
    assert "lanes user, queue only" in svg and "tool:call_0" not in svg.split("</metadata>")[-1]


@pytest.mark.parametrize(("lanes", "says"), [("user,nope", "no lane 'nope'"), ("user,,queue", "lane names separated")])
def test_bad_lanes_are_refused_in_one_line(trace_file: Path, tmp_path: Path, capsys, lanes: str, says: str) -> None:
    assert main(["diagram", str(trace_file), "-o", str(tmp_path / "x.svg"), "--lanes", lanes]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def _text_boxes(figure) -> list[tuple[str, float, float, float, float, float]]:
    """(text, font size, x0, x1, y0, y1) in display units of every label the diagram draws."""
    renderer = figure.canvas.get_renderer()
    boxes = []
    for text in figure.axes[0].texts:
        if text.get_text():
            box = text.get_window_extent(renderer)
            boxes.append((text.get_text(), text.get_fontsize(), box.x0, box.x1, box.y0, box.y1))
    return boxes


def test_a_font_scale_grows_the_text_against_the_drawing_and_keeps_it_clear(trace_file: Path) -> None:
    from steersim.draw.diagram import timing_diagram

    trace = read_trace(trace_file)
    usual, large = timing_diagram(trace), timing_diagram(trace, font_scale=2.0)
    sizes = {text: size for text, size, *_ in _text_boxes(usual)}
    for text, size, *_ in _text_boxes(large):
        assert size == pytest.approx(2 * sizes[text]), text
    # text against the page: larger, since strokes, bars and the least lane gap do not grow
    assert large.get_figwidth() < 2 * usual.get_figwidth()
    assert max(s for _, s, *_ in _text_boxes(large)) / large.get_figwidth() > \
        1.2 * max(s for _, s, *_ in _text_boxes(usual)) / usual.get_figwidth()
    # every label on the page, and the step table's rows clear of each other
    width, height = (large.get_figwidth() * large.dpi, large.get_figheight() * large.dpi)
    boxes = _text_boxes(large)
    assert all(x0 >= -1 and x1 <= width + 1 and y0 >= -1 and y1 <= height + 1 for _, _, x0, x1, y0, y1 in boxes)
    steps = sorted((y0, y1) for text, _, x0, _, y0, y1 in boxes if text.isdigit() and x0 < 0.5 * large.dpi * 2)
    assert len(steps) > 3 and all(lower[1] <= upper[0] + 1 for lower, upper in pairwise(steps))


def test_font_scale_reaches_the_svg_and_bad_factors_are_refused(trace_file: Path, tmp_path: Path, capsys) -> None:
    usual, large = tmp_path / "usual.svg", tmp_path / "large.svg"
    assert main(["diagram", str(trace_file), "-o", str(usual)]) == 0
    assert main(["diagram", str(trace_file), "-o", str(large), "--font-scale", "1.5"]) == 0
    assert "font-size: 10.5px" in large.read_text() and "font-size: 10.5px" not in usual.read_text()
    capsys.readouterr()
    for bad in ("0", "9", "big", "nan"):
        assert main(["diagram", str(trace_file), "-o", str(tmp_path / "x.svg"), "--font-scale", bad]) == 2
        err = capsys.readouterr().err
        assert "from 0.5 to 4" in err and err.count("\n") == 1
