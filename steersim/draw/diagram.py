"""Timing diagrams of traces and counterexamples: who sent what, when a steer was accepted, which tool
was skipped, where the invariant broke.

Time runs down the page. Each participant has a lane (a column with a lifeline); a message is an arrow
between lanes with its native name and payload above it; a turn or tool call in progress is a bar on
its lane; each steer has a narrow track of its own on the left showing its life (submitted, accepted,
then applied, failed, rejected or unknown; a red line ending in ✗ where a violation's cause says it was
lost; a dotted grey line when it is merely still open at the end); a step that broke a property is
banded in red with the property's name and message, and the step that caused it (`steersim.traces.cause`), when
that is an earlier one, in amber with the cause in one sentence. The left margin lists each step's
number, virtual time and action, so the picture doubles as a step table.

Untimed counterexamples are given times from the model's timing profile first (`steersim.simulate.retime`).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from steersim.core.model import Event, Model
from steersim.core.paths import Path
from steersim.core.registry import get_model_spec
from steersim.draw.lanes import keep_lanes
from steersim.draw.layout import Arrow, Layout, SteerLife, layout
from steersim.draw.style import COLORS, inline_svg, new_figure, save_figure
from steersim.errors import UsageError
from steersim.simulate.retime import retime_path, retime_trace
from steersim.simulate.timing import TimingProfile
from steersim.traces.trace import Trace, trace_from_path

LINE = 0.25  # inches per text line
TITLE_LINE = 0.2  # inches per line of the (wrapped) title
MARGIN = 3.0  # inches of step / time / action columns
STEP_COLUMN, TIME_COLUMN, ACTION_COLUMN = 0.45, 1.1, 1.2  # inches: where the step and t end, the action starts
TRACK = 0.34  # inches per steer track
LANE = 1.75  # inches between lifelines at least (more where the labels between them need it)
MAX_SPAN = 4.2  # inches a label may widen the space between two lifelines at most
RIGHT = 1.9  # inches after the last lifeline, for the labels that lean right
MIN_WIDTH = 8.5
SMALL, NORMAL = 7.0, 8.0
LEGEND_ROW = 0.22  # inches per row of the legend
PANEL = 3.2  # inches of the state-changes panel right of the lanes
PANEL_CHARS = 52  # characters per line of it (monospaced 6.5 pt)
LOST_LABEL = "lost (✗ where it left the state; dashed: never settled)"
OPEN_LABELS = {True: "unsettled: the run was cut", False: "unsettled when the trace ends"}
CHAR_WIDTH = 0.055  # inches per character of SMALL text, on average
MARKERS = {
    "steer.submitted": dict(marker="o", mfc="white"),
    "steer.accepted": dict(marker="o"),
    "steer.applied": dict(marker="s"),
    "steer.failed": dict(marker="X"),
    "steer.rejected": dict(marker="X"),
    "steer.unknown": dict(marker="D"),
}
FONT_SCALES = (0.5, 4.0)  # the font scales a diagram is drawn at: beyond them labels outgrow any page


@dataclass(frozen=True)
class Scale:
    """A font scale and the distances text decides. Text is drawn `factor` times its usual size, and so
    are the distances that exist to hold text (line height, the step / time / action columns, the
    steer tracks with their ids, label widths, the legend, the state panel); strokes, markers, turn bars,
    the least gap between lifelines and the least page width keep their size. So the text grows against
    the drawing, which is what a slide shown across a room needs, and no label runs into another."""

    factor: float = 1.0

    def pt(self, size: float) -> float:
        return size * self.factor

    def inch(self, distance: float) -> float:
        return distance * self.factor


BAND_FILL = {"violation": "#fcebeb", "cause": "#fdf1de"}
LEGEND = (("steer.submitted", "submitted"), ("steer.accepted", "accepted"), ("steer.applied", "applied"),
          ("steer.failed", "failed / rejected"), ("steer.unknown", "unknown"))


def timed_trace(source: Trace | Path, model: Model | None = None, params: Mapping[str, Any] | None = None,
                bug: str | None = None, timing: TimingProfile | None = None, seed: int = 0) -> tuple[Trace, str]:
    """`source` as a trace with times, and a note of where the times came from. A Path needs the model
    it came from; an untimed trace is re-timed from the model it names when that model is installed."""
    if isinstance(source, Path):
        if model is None:
            raise ValueError("drawing an explorer Path needs its model: timing_diagram(path, model=...)")
        times = retime_path(model, source, timing, seed)
        profile = TimingProfile.for_model(model, timing)
        trace = trace_from_path(model.name, params or {}, bug, source, times, seed, profile.to_mapping(),
                                system=model)
        return trace, f"times drawn from the timing profile with seed {seed}"
    if source.steps and all(step.t is not None for step in source.steps):
        return source, "recorded times" if source.seed is None else f"virtual times, seed {source.seed}"
    try:
        return retime_trace(source, timing, seed), f"times drawn from the timing profile with seed {seed}"
    except (ValueError, UsageError) as why:
        return source, f"untimed ({why})"


def timing_diagram(source: Trace | Path, model: Model | None = None, *, params: Mapping[str, Any] | None = None,
                   bug: str | None = None, timing: TimingProfile | None = None, seed: int = 0,
                   title: str | None = None, state_panel: bool = True, steps: tuple[int, int] | None = None,
                   lanes: Sequence[str] | None = None, font_scale: float = 1.0) -> Figure:
    """The timing diagram of a trace or of an explorer path, as a matplotlib Figure (a notebook shows it
    as it is; `save_diagram` writes it). `steps`: only steps first..last, inclusive, numbered from 0;
    `lanes`: only these lanes (names or patterns, see `steersim.draw.lanes`); `font_scale`: text that
    many times its usual size, with the room it needs (see `Scale`)."""
    return _diagram(source, model, params, bug, timing, seed, title, state_panel, steps, lanes, font_scale)[0]


def _diagram(source: Trace | Path, model: Model | None = None, params: Mapping[str, Any] | None = None,
             bug: str | None = None, timing: TimingProfile | None = None, seed: int = 0, title: str | None = None,
             state_panel: bool = True, steps: tuple[int, int] | None = None,
             lanes: Sequence[str] | None = None, font_scale: float = 1.0) -> tuple[Figure, Trace]:
    """The figure and the timed trace it draws (whose header the file's metadata describes)."""
    trace, provenance = timed_trace(source, model, params, bug, timing, seed)
    loop_start = source.loop_start if isinstance(source, Path) else None
    return draw_trace(trace, title, provenance, loop_start, model, state_panel, steps, lanes, font_scale), trace


def draw_trace(trace: Trace, title: str | None = None, note: str = "", loop_start: int | None = None,
               model: Model | None = None, state_panel: bool = True, steps: tuple[int, int] | None = None,
               lanes: Sequence[str] | None = None, font_scale: float = 1.0) -> Figure:
    """The timing diagram of `trace` as it is (timed or not); `note` follows the title. The model (by
    default the installed one the trace names) tells which event carried which fact. `state_panel`: a
    column right of the lanes with what each step changed in the state (when the trace has views).
    `steps` (first, last): draw only those steps, the rest as one row before and one after. `lanes`: draw
    only these lanes (`steersim.draw.lanes`). `font_scale`: see `Scale`."""
    if not FONT_SCALES[0] <= font_scale <= FONT_SCALES[1]:
        raise UsageError(f"font scale {font_scale}: give a factor from {FONT_SCALES[0]} to {FONT_SCALES[1]} "
                         "(1 is the usual size)")
    if steps is not None and not 0 <= steps[0] <= steps[1] < len(trace.steps):
        raise UsageError(f"steps {steps[0]}..{steps[1]}: the trace has steps 0..{len(trace.steps) - 1}; "
                         "give a window inside them")
    heading = title or default_title(trace)
    origins = fact_origins(trace, model or _model_of(trace))
    plan = layout(trace, f"{heading}  ·  {note}" if note else heading, loop_start, origins, steps)
    if lanes:
        plan = keep_lanes(plan, lanes)
    return render(plan, len(trace.steps), state_panel, Scale(font_scale))


def _model_of(trace: Trace) -> Model | None:
    try:
        return get_model_spec(trace.model).build(trace.params, trace.bug)
    except UsageError:
        return None


def fact_origins(trace: Trace, model: Model | None) -> list[list[int] | None] | None:
    """For each step, the position of the event that carried each of its facts, asked of the model (a
    step lists its facts apart from its events). A step whose events the model no longer maps to the
    recorded facts gets None, and its facts are placed by their payloads instead."""
    if model is None:
        return None
    out: list[list[int] | None] = []
    for step in trace.steps:
        try:
            per_event = [[f.to_json() for f in model.facts(Event(e["source"], e["target"], e["name"], e["data"]))]
                         for e in step.events]
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):  # a payload read back from JSON
            out.append(None)
            continue
        flat = json.loads(json.dumps([f for facts in per_event for f in facts]))
        out.append([k for k, facts in enumerate(per_event) for _ in facts] if flat == step.facts else None)
    return out


def default_title(trace: Trace, every: bool = False) -> str:
    """The model, the parameters that differ from its defaults (`every`: all of them, for the file's
    metadata; a slide has room for what is special about this run only) and the bug variant."""
    defaults = {} if every else _defaults(trace.model)
    params = ", ".join(f"{k}={v}" for k, v in trace.params.items() if k not in defaults or defaults[k] != v)
    text = f"{trace.model}({params})" if params else trace.model
    return text + (f"  bug {trace.bug}" if trace.bug else "")


def _defaults(reference: str) -> dict[str, Any]:
    try:
        return {p.name: p.default for p in get_model_spec(reference).params}
    except UsageError:
        return {}


def diagram_metadata(trace: Trace) -> dict[str, str]:
    """What an SVG or PNG file says of itself: the full title and every parameter."""
    return {"Title": default_title(trace, every=True),
            "Description": json.dumps({"model": trace.model, "params": trace.params, "bug": trace.bug,
                                       "seed": trace.seed, "steps": len(trace.steps)})}


def save_diagram(source: Trace | Path, file: str | FilePath, model: Model | None = None, width_px: int | None = None,
                 **options: Any) -> None:
    """Write the timing diagram as SVG or PNG, chosen by the suffix of `file` (`width_px`: a PNG's
    width in pixels)."""
    figure, trace = _diagram(source, model, **options)
    save_figure(figure, file, salt=FilePath(file).stem, metadata=diagram_metadata(trace), width_px=width_px)


def diagram_svg(source: Trace | Path, salt: str, model: Model | None = None, **options: Any) -> str:
    """The timing diagram as an inline `<svg>` element (ids salted with `salt`, unique within a page)."""
    return inline_svg(timing_diagram(source, model, **options), salt)


def lane_positions(plan: Layout, first: float, scale: Scale = Scale()) -> dict[str, float]:
    """Lifelines at least LANE apart, pushed further apart until every message label fits centred
    between its two lanes (up to MAX_SPAN) and neighbouring lane names clear each other. Taking the
    labels in order of their right-hand lane and shifting that lane and all after it keeps every label
    already placed satisfied, so one pass does."""
    index = {lane: k for k, lane in enumerate(plan.lanes)}
    xs = [first + LANE * k for k in range(len(plan.lanes))]
    char = scale.inch(CHAR_WIDTH)
    needs = sorted([*((max(index[a.source], index[a.target]), min(index[a.source], index[a.target]),
                       min(scale.inch(MAX_SPAN), len(arrow_label(a)) * char + 0.3))
                      for a in plan.arrows if a.source != a.target),
                    *((k, k - 1, (len(plan.lanes[k - 1]) + len(plan.lanes[k])) / 2 * char * NORMAL / SMALL + 0.5)
                      for k in range(1, len(plan.lanes)))])
    for right, left, width in needs:
        short = width - (xs[right] - xs[left])
        if short > 0:
            for k in range(right, len(xs)):
                xs[k] += short
    return dict(zip(plan.lanes, xs, strict=True))


class _Canvas:
    """Inches on the page, y growing downwards, lines converted to inches."""

    def __init__(self, plan: Layout, state_panel: bool = True, scale: Scale = Scale()) -> None:
        self.plan = plan
        self.u = scale.inch  # a distance that holds text, at this scale
        self.scale = scale
        self.track_x0 = self.u(MARGIN) + self.u(0.15)
        self.track = self.u(TRACK)
        self.line = self.u(LINE)
        self.lane_x = lane_positions(plan, self.track_x0 + self.track * len(plan.steers) + 0.25 + LANE / 2, scale)
        last = max(self.lane_x.values(), default=self.track_x0)
        self.width = max(MIN_WIDTH, last + self.u(RIGHT), *(self._label_end(arrow) + 0.2 for arrow in plan.arrows))
        self.panel_x = None  # the side panel of state changes, when the trace has them
        if state_panel and any(row.changes for row in plan.steps):
            self.panel_x = self.width
            self.width += self.u(PANEL)
        self.title_lines = textwrap.wrap(plan.title, max(40, int((self.width - 0.3) / self.u(0.088))))
        self.legend_y = self.u(0.12 + TITLE_LINE * len(self.title_lines) + 0.15)
        self.legend = legend_items(plan)
        self.legend_at = place_legend(self.legend, self.width, scale)
        self.legend_rows_extra = max((row for _, row in self.legend_at), default=0)
        self.top = (self.legend_y + self.u(LEGEND_ROW) * self.legend_rows_extra
                    + self.u(0.55 if plan.notes else 0.35) + self.u(0.55))
        self.height = self.top + (plan.height + 0.6) * self.line + 0.2
        self.figure = new_figure(self.width, self.height)
        ax = self.figure.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, self.width)
        ax.set_ylim(self.height, 0)
        ax.axis("off")
        self.ax = ax

    def _label_end(self, arrow: Arrow) -> float:
        """Where an arrow's label ends on the right, placed as `_arrows` places it."""
        x0, x1 = self.lane_x[arrow.source], self.lane_x[arrow.target]
        width = len(arrow_label(arrow)) * self.u(CHAR_WIDTH)
        if x0 == x1:
            return x0 + 0.1 + width
        if width > abs(x1 - x0) - 0.2:
            return min(x0, x1) + self.u(0.12) + width
        return (x0 + x1) / 2 + width / 2

    def y(self, line: float) -> float:
        return self.top + line * self.line

    def text(self, x: float, y: float, s: str, size: float = SMALL, **kw: Any) -> None:
        self.ax.text(x, y, s, fontsize=self.scale.pt(size), color=kw.pop("color", COLORS["text"]), **kw)


def render(plan: Layout, total_steps: int, state_panel: bool = True, scale: Scale = Scale()) -> Figure:
    canvas = _Canvas(plan, state_panel, scale)
    _header(canvas)
    _lifelines(canvas)
    _banners(canvas)
    _elisions(canvas, total_steps)
    _spans(canvas)
    _margin(canvas)
    _panel(canvas)
    _arrows(canvas)
    for k, life in enumerate(plan.steers):
        _steer_track(canvas, k, life)
    return canvas.figure


def arrow_label(arrow: Arrow) -> str:
    return f"{arrow.name}  {arrow.detail}".strip()


def short_id(steer: str) -> str:
    """A steer's id short enough for its narrow track: long generated ids keep their distinctive tail
    (the step table of a report lists them in full)."""
    return steer if len(steer) <= 5 else "…" + steer[-3:]


def legend_items(plan: Layout) -> list[tuple[str, str, str]]:
    """(glyph, key, label) of each legend entry the diagram needs, in reading order."""
    items = [("marker", stage, label) for stage, label in LEGEND]
    items += [("patch", kind, label) for kind, label in (("turn", "turn (started → ended)"),
                                                         ("tool", "tool call (started → result)"))]
    if any(life.lost_at is not None or life.stranded for life in plan.steers):
        items.append(("lost", "violation", LOST_LABEL))
    if any(life.accepted and not life.settled and life.lost_at is None and not life.stranded for life in plan.steers):
        items.append(("open", "open", OPEN_LABELS[plan.cut]))
    items += [("band", kind, label) for kind, label in (("cause", "cause"), ("violation", "property violated"))
              if any(b.kind == kind for b in plan.banners)]
    return items


def _item_width(glyph: str, label: str, scale: Scale) -> float:
    glyph_width = {"marker": 0.2, "patch": 0.3, "lost": 0.45, "open": 0.45, "band": 0.45}[glyph]
    return scale.inch(glyph_width + 0.065 * len(label))


def place_legend(items: list[tuple[str, str, str]], width: float, scale: Scale = Scale()) -> list[tuple[float, int]]:
    """(x, row) of each legend entry: left to right, wrapping before an entry that would cross the right
    edge, so that a narrow diagram keeps its whole legend."""
    out, x, row = [], 0.15, 0
    for glyph, _, label in items:
        w = _item_width(glyph, label, scale)
        if x > 0.15 and x + w > width - 0.1:
            x, row = 0.15, row + 1
        out.append((x, row))
        x += w
    return out


def _legend_entry(c: _Canvas, x: float, y: float, glyph: str, key: str, label: str) -> None:
    if glyph == "marker":
        c.ax.plot([x], [y], color=COLORS[key], ms=5, **MARKERS[key])
        c.text(x + c.u(0.09), y, label, va="center")
    elif glyph == "patch":
        c.ax.add_patch(Rectangle((x, y - 0.07), 0.12, 0.14, color=COLORS[key], alpha=0.45, lw=0))
        c.text(x + c.u(0.18), y, label, va="center")
    elif glyph == "lost":
        c.ax.plot([x, x + 0.22], [y, y], color=COLORS[key], lw=1.6)
        c.ax.plot([x + 0.22], [y], marker="x", ms=6, mew=1.8, color=COLORS[key])
        c.text(x + c.u(0.3), y, label, va="center")
    elif glyph == "open":
        c.ax.plot([x, x + 0.22], [y, y], color=COLORS[key], lw=1.6, ls=":")
        c.ax.plot([x + 0.22], [y], marker="v", ms=5, color=COLORS[key])
        c.text(x + c.u(0.3), y, label, va="center")
    else:
        c.ax.add_patch(Rectangle((x, y - 0.07), 0.25, 0.14, color=COLORS[key], alpha=0.2, lw=0))
        c.text(x + c.u(0.31), y, label, va="center")


def _header(c: _Canvas) -> None:
    c.text(0.15, 0.12, "\n".join(c.title_lines), size=9.5, weight="bold", va="top", linespacing=1.25)
    for (glyph, key, label), (x, row) in zip(c.legend, c.legend_at, strict=True):
        _legend_entry(c, x, c.legend_y + c.u(LEGEND_ROW) * row, glyph, key, label)
    y = c.legend_y + c.u(LEGEND_ROW) * c.legend_rows_extra
    if c.plan.notes:
        c.text(0.15, y + c.u(0.22), "; ".join(c.plan.notes), color=COLORS["violation"], va="center")
    head = c.top - c.u(0.3)
    for x_col, label, ha in ((STEP_COLUMN, "step", "right"), (TIME_COLUMN, "t", "right"),
                             (ACTION_COLUMN, "action", "left")):
        c.text(c.u(x_col), head, label, color=COLORS["muted"], ha=ha, va="center", style="italic")
    if c.plan.steers:
        c.text(c.track_x0, head - c.u(0.2), "steers", color=COLORS["muted"], va="center", style="italic")
    for k, life in enumerate(c.plan.steers):
        c.text(c.track_x0 + c.track * (k + 0.5), head, short_id(life.id), ha="center", va="center", size=6.5)
    bottom = c.y(c.plan.height + 0.2)
    for name, x in c.lane_x.items():
        for y, va in ((head, "center"), (bottom, "top")):
            if va == "top" and c.plan.height < 30:
                continue
            c.text(x, y, name, size=NORMAL, ha="center", va=va, weight="bold",
                   bbox=dict(boxstyle="round,pad=0.25", fc="#f2f2f2", ec="#c8c8c8", lw=0.6))


def _lifelines(c: _Canvas) -> None:
    y0, y1 = c.y(-0.3), c.y(c.plan.height)
    for x in c.lane_x.values():
        c.ax.plot([x, x], [y0, y1], color=COLORS["lifeline"], lw=0.8, zorder=0)


def _banners(c: _Canvas) -> None:
    columns = max(40, int((c.width - 0.5) / c.u(0.062)))
    for banner in c.plan.banners:
        y0, y1 = c.y(banner.y0), c.y(banner.y1)
        colour = COLORS[banner.kind]
        c.ax.add_patch(Rectangle((0.05, y0), c.width - 0.1, y1 - y0, color=colour, alpha=0.09, lw=0, zorder=0))
        c.ax.plot([0.05, 0.05], [y0, y1], color=colour, lw=2.5, ls="-" if banner.kind == "violation" else "--",
                  zorder=1)
        where = f"step {banner.step}" if banner.step is not None else "at the end"
        if banner.kind == "cause":
            texts = [f"◆ cause (step {banner.step}): {summary}" for _, summary in banner.broken]
        else:
            texts = [f"✗ {prop} violated ({where}): {message}" for prop, message in banner.broken]
        lines = [textwrap.shorten(text, columns, placeholder=" …") for text in texts]
        c.text(0.15, y1 - c.u(0.06), "\n".join(lines), size=NORMAL, color=colour, weight="bold",
               va="bottom", linespacing=1.45, zorder=5, bbox=dict(fc=BAND_FILL[banner.kind], ec="none", pad=1))


def _elisions(c: _Canvas, total_steps: int) -> None:
    for gap in c.plan.elisions:
        y = c.y(gap.y)
        c.ax.add_patch(Rectangle((0.05, y - 0.4 * c.line), c.width - 0.1, 0.8 * c.line, color="#eeeeee", lw=0,
                                 zorder=0.5))
        span = "" if gap.t_first is None else f", t {gap.t_first:.3f} to {gap.t_last:.3f}"
        if gap.cut:
            head = (f"✂ steps {gap.first} to {gap.last} not drawn, to keep the diagram short "
                    f"({total_steps} steps in all{span})")
        else:
            head = f"⋯ steps {gap.first} to {gap.last} collapsed: nothing steer-related happened{span}"
        c.text(0.15, y, textwrap.shorten(f"{head}: {gap.summary}", int(190 / c.scale.factor),
                                        placeholder=" …"), color=COLORS["muted"],
               va="center", style="italic", zorder=3)


def _spans(c: _Canvas) -> None:
    end = c.plan.height
    for span in c.plan.spans:
        x = c.lane_x[span.lane] - 0.06 + 0.11 * span.level
        y0 = c.y(span.y0 - 0.35)
        y1 = c.y(span.y1 if span.y1 is not None else end)
        open_end = span.y1 is None
        c.ax.add_patch(Rectangle((x, y0), 0.12, y1 - y0, facecolor=COLORS[span.kind], alpha=0.45,
                                 edgecolor=COLORS[span.kind], lw=0.6, ls="--" if open_end else "-", zorder=1))


def _panel(c: _Canvas) -> None:
    """The state changes of each drawn step, to the right of the lanes: wrapped over the step's own
    lines, the rest elided, so that the panel never runs into the next step."""
    if c.panel_x is None:
        return
    c.text(c.panel_x, c.top - c.u(0.3), "state changes", color=COLORS["muted"], va="center", style="italic")
    c.ax.plot([c.panel_x - 0.1, c.panel_x - 0.1], [c.y(-0.3), c.y(c.plan.height)], color=COLORS["lifeline"],
              lw=0.5, ls=":", zorder=0)
    for row in c.plan.steps:
        if not row.changes:
            continue
        lines = textwrap.wrap(", ".join(row.changes), PANEL_CHARS, break_long_words=True) or [""]
        if len(lines) > row.lines:
            lines = [*lines[: row.lines - 1], textwrap.shorten(" ".join(lines[row.lines - 1 :]), PANEL_CHARS,
                                                               placeholder=" …")]
        for k, line in enumerate(lines):
            c.text(c.panel_x, c.y(row.y + k), line, va="center", family="DejaVu Sans Mono", size=6.5,
                   color=COLORS["muted"])


def _margin(c: _Canvas) -> None:
    for row in c.plan.steps:
        y = c.y(row.y)
        c.text(c.u(STEP_COLUMN), y, str(row.index), ha="right", va="center", color=COLORS["muted"])
        if row.loop_start:
            c.text(0.08, y, "↻", va="center", color=COLORS["violation"], size=NORMAL, weight="bold")
        if row.t is not None:
            c.text(c.u(TIME_COLUMN), y, f"{row.t:.3f}", ha="right", va="center", color=COLORS["muted"])
        c.text(c.u(ACTION_COLUMN), y, textwrap.shorten(row.action, 34, placeholder="…"), va="center",
               family="DejaVu Sans Mono", size=6.5)
        if row.compressed_gap is not None:
            c.text(c.u(TIME_COLUMN), y - 0.5 * c.line - c.u(0.08), f"≈ +{row.compressed_gap:.2f}", ha="right",
                   va="center", color=COLORS["muted"], size=6.5, style="italic")
            for x in c.lane_x.values():
                c.ax.plot([x - 0.05, x + 0.05], [y - 0.5 * c.line - 0.1, y - 0.5 * c.line - 0.06],
                          color=COLORS["muted"], lw=0.8)


def _arrows(c: _Canvas) -> None:
    for arrow in c.plan.arrows:
        y = c.y(arrow.y)
        x0, x1 = c.lane_x[arrow.source], c.lane_x[arrow.target]
        label = arrow_label(arrow)
        if arrow.source == arrow.target:
            c.ax.plot([x0], [y], marker="o", ms=3, color=COLORS["text"], zorder=3)
            c.text(x0 + c.u(0.1), y, label, va="center", color=COLORS["muted"], zorder=3)
            continue
        c.ax.add_patch(FancyArrowPatch((x0, y), (x1, y), arrowstyle="-|>", mutation_scale=8, lw=0.9,
                                       color=COLORS["text"], shrinkA=0, shrinkB=2, zorder=2))
        if len(label) * c.u(CHAR_WIDTH) > abs(x1 - x0) - 0.2:  # too long to centre: start clear of the left bar
            c.text(min(x0, x1) + c.u(0.12), y - c.u(0.025), label, ha="left", va="bottom", zorder=3)
        else:
            c.text((x0 + x1) / 2, y - c.u(0.025), label, ha="center", va="bottom", zorder=3)


def _steer_track(c: _Canvas, k: int, life: SteerLife) -> None:
    x = c.track_x0 + c.track * (k + 0.5)
    marks = [(c.y(line), stage) for line, stage in life.marks]
    for k in range(len(marks) - 2, -1, -1):  # two stages on one line: lift the earlier one clear
        if marks[k][0] >= marks[k + 1][0] - 0.05:
            marks[k] = (marks[k + 1][0] - 0.3 * c.line, marks[k][1])
    accepted_at = next((y for y, stage in marks if stage == "steer.accepted"), None)
    first_y = marks[0][0]
    last_y = marks[-1][0]
    if accepted_at is not None and accepted_at > first_y:
        c.ax.plot([x, x], [first_y, accepted_at], color=COLORS["steer.submitted"], lw=1, ls=":")
    if accepted_at is not None:
        if life.settled:
            c.ax.plot([x, x], [accepted_at, last_y], color=COLORS["steer.accepted"], lw=1.6)
        elif life.lost_at is not None:  # a violation's cause: it left the state here, unresolved
            lost = c.y(life.lost_at)
            c.ax.plot([x, x], [accepted_at, lost], color=COLORS["violation"], lw=1.6)
            c.ax.plot([x], [lost], marker="x", ms=7, mew=2, color=COLORS["violation"], zorder=4)
        elif life.stranded:  # held to the end, when nothing more could happen: lost all the same
            end = c.y(c.plan.height)
            c.ax.plot([x, x], [accepted_at, end], color=COLORS["violation"], lw=1.6, ls="--")
            c.ax.plot([x], [end], marker="v", ms=6, color=COLORS["violation"], zorder=4)
        else:  # open at the end, nothing says it was lost: the run was cut, or the trace just stops
            end = c.y(c.plan.height)
            c.ax.plot([x, x], [accepted_at, end], color=COLORS["open"], lw=1.6, ls=":")
            c.ax.plot([x], [end], marker="v", ms=6, color=COLORS["open"], zorder=4)
    for y, stage in marks:
        c.ax.plot([x], [y], color=COLORS[stage], ms=5.5, zorder=4, **MARKERS[stage])
