"""The geometry of a timing diagram, computed from a trace without drawing anything.

Time runs down the page, one column (lane) per participant, so that every message label is horizontal
text on a line of its own and never overlaps another. Vertical positions are in text lines. A step
takes one line per event; the gap before it grows with the virtual time that passed (up to a cap, past
which the gap is marked as compressed). Long traces are shortened in two ways, each leaving a row that
says what it stands for: runs of uneventful steps (no steer, turn or violation nearby) collapse into one
row, and if the diagram is still too long its middle is cut, keeping the start and the end (where the
violation usually is).

This module is pure data so that tests can inspect a layout; `sim.diagram` draws it.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from sim.trace import Trace, TraceStep

COLLAPSE_ABOVE = 40  # traces with more steps than this collapse their uneventful stretches
CONTEXT = 1  # uneventful steps kept on each side of an eventful one
MIN_RUN = 3  # shorter uneventful runs are drawn, not collapsed
MAX_SHOWN = 60  # steps drawn at most; past this the middle is cut
HEAD_SHOWN = 15  # steps kept before the cut (the rest of MAX_SHOWN are kept after it)
STEP_GAP = 0.35  # lines between two steps at no elapsed time
MAX_TIME_GAP = 2.0  # extra lines for elapsed time at most; longer gaps are drawn compressed
STEER_STAGES = ("steer.submitted", "steer.accepted", "steer.applied", "steer.failed", "steer.unknown",
                "steer.rejected")
EVENTFUL_FACTS = frozenset(STEER_STAGES) | {"turn.started", "turn.ended"}


@dataclass(frozen=True)
class Arrow:
    """A message between two lanes, or (source == target) a note on one lane."""

    y: float
    source: str
    target: str
    name: str
    detail: str


@dataclass(frozen=True)
class StepRow:
    """The margin entry of a drawn step: its number, time and action, over `lines` lines from `y`."""

    y: float
    lines: int
    index: int
    t: float | None
    action: str
    compressed_gap: float | None = None  # elapsed time drawn shorter than scale, shown as a break


@dataclass(frozen=True)
class Elision:
    """A row standing for steps that are not drawn: which, over what time, and what they did."""

    y: float
    first: int
    last: int
    t_first: float | None
    t_last: float | None
    summary: str
    cut: bool  # True: cut to cap the length; False: an uneventful stretch collapsed


@dataclass
class Span:
    """An activity: a turn or a tool call in progress on `lane`, nested at `level` when spans overlap."""

    lane: str
    kind: str  # "turn" | "tool"
    key: str
    y0: float
    y1: float | None = None  # None: still open at the end of the trace
    level: int = 0


@dataclass
class SteerLife:
    """One steer's marks in its own narrow track: (y, stage) in order of the trace."""

    id: str
    marks: list[tuple[float, str]] = field(default_factory=list)

    @property
    def settled(self) -> bool:
        return any(stage not in ("steer.submitted", "steer.accepted") for _, stage in self.marks)

    @property
    def accepted(self) -> bool:
        return any(stage == "steer.accepted" for _, stage in self.marks)


@dataclass(frozen=True)
class Banner:
    """Properties broken at a step (or by the end state, `step` None), drawn as one red band with a
    line (property, message) for each."""

    y0: float
    y1: float
    step: int | None
    broken: tuple[tuple[str, str], ...]


@dataclass
class Layout:
    title: str
    lanes: list[str]
    steps: list[StepRow]
    arrows: list[Arrow]
    elisions: list[Elision]
    spans: list[Span]
    steers: list[SteerLife]
    banners: list[Banner]
    height: float
    timed: bool
    notes: list[str]


def lane_order(trace: Trace) -> list[str]:
    """Every participant in order of first appearance, the user first and tools last, so that steers
    flow left to right and tool lanes stay out of the way."""
    seen: dict[str, None] = {}
    for step in trace.steps:
        seen.setdefault(step.action["actor"])
        for event in step.events:
            seen.setdefault(event["source"])
            seen.setdefault(event["target"])
    names = list(seen)
    return sorted(names, key=lambda n: (0 if n == "user" else 2 if n.startswith("tool") else 1, names.index(n)))


def action_text(action: Mapping[str, Any]) -> str:
    args = ", ".join(str(a) for a in action.get("args", []))
    return f"{action['kind']}({args})"


def event_detail(data: Mapping[str, Any], width: int = 44) -> str:
    """The scalar fields of an event's payload, `key=value`, cut to `width` characters."""
    parts = [f"{k}={v}" for k, v in data.items() if isinstance(v, (str, int, float, bool)) or v is None]
    text = " ".join(parts)
    return text if len(text) <= width else text[: width - 1] + "…"


def _mentions(value: Any, wanted: str) -> bool:
    if isinstance(value, Mapping):
        return any(_mentions(v, wanted) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_mentions(v, wanted) for v in value)
    return value == wanted


def _event_about(step: TraceStep, wanted: str, after: int = -1) -> int:
    """The position of the first event of `step` after position `after` whose payload mentions `wanted`
    (else the last such event at or before it, else the first event): facts are listed per step, so this
    ties a fact back to the line of the event that carried it."""
    mentions = [k for k, event in enumerate(step.events) if _mentions(event.get("data", {}), wanted)]
    later = [k for k in mentions if k > after]
    if later:
        return later[0]
    return max((k for k in mentions if k <= after), default=0)


def _eventful(step: TraceStep) -> bool:
    return bool(step.violations) or any(f.get("fact") in EVENTFUL_FACTS for f in step.facts)


def choose_shown(trace: Trace) -> list[tuple[str, int, int]]:
    """The plan of rows: ("step", i, i) for a drawn step, ("collapse", a, b) or ("cut", a, b) for a
    stretch of steps a..b drawn as one row."""
    steps = trace.steps
    count = len(steps)
    plan: list[tuple[str, int, int]] = []
    if count <= COLLAPSE_ABOVE:
        return [("step", i, i) for i in range(count)]
    keep = [False] * count
    for i, step in enumerate(steps):
        if _eventful(step) or i in (0, count - 1):
            for j in range(max(0, i - CONTEXT), min(count, i + CONTEXT + 1)):
                keep[j] = True
    i = 0
    while i < count:
        j = i
        while j < count and keep[j] == keep[i]:
            j += 1
        if keep[i] or j - i < MIN_RUN:
            plan.extend(("step", k, k) for k in range(i, j))
        else:
            plan.append(("collapse", i, j - 1))
        i = j
    drawn = [k for k, row in enumerate(plan) if row[0] == "step"]
    if len(drawn) > MAX_SHOWN:
        first_cut, last_cut = drawn[HEAD_SHOWN], drawn[len(drawn) - (MAX_SHOWN - HEAD_SHOWN) - 1]
        a, b = plan[first_cut][1], plan[last_cut][2]
        plan = [*plan[:first_cut], ("cut", a, b), *plan[last_cut + 1 :]]
    return plan


def _summary(steps: Sequence[TraceStep]) -> str:
    kinds = Counter(step.action["kind"] for step in steps)
    return ", ".join(f"{kind} x{n}" if n > 1 else kind for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]))


def _time_scale(trace: Trace) -> float | None:
    """Lines per unit of virtual time: the median gap between steps gets one line."""
    times = [s.t for s in trace.steps]
    if not times or any(t is None for t in times):
        return None
    gaps = [b - a for a, b in pairwise(times) if b > a]
    return 1.0 / statistics.median(gaps) if gaps else None


def layout(trace: Trace, title: str = "", loop_start: int | None = None) -> Layout:
    """Place every step, message, span, steer mark and violation of `trace`."""
    scale = _time_scale(trace)
    timed = all(s.t is not None for s in trace.steps)
    rows: list[StepRow] = []
    arrows: list[Arrow] = []
    elisions: list[Elision] = []
    banners: list[Banner] = []
    line_of: dict[int, list[float]] = {}  # step index -> y of each of its event lines
    notes: list[str] = []
    y = 0.0
    previous_t: float | None = None
    for kind, first, last in choose_shown(trace):
        chunk = trace.steps[first : last + 1]
        t0 = chunk[0].t
        gap, compressed = STEP_GAP, None
        if scale is not None and previous_t is not None and t0 is not None:
            extra = (t0 - previous_t) * scale
            gap += min(extra, MAX_TIME_GAP)
            if extra > MAX_TIME_GAP:
                compressed = t0 - previous_t
        y += gap
        if kind != "step":
            elisions.append(Elision(y, first, last, t0, chunk[-1].t, _summary(chunk), kind == "cut"))
            for step in chunk:
                line_of[step.i] = [y] * max(1, len(step.events))
            broken = tuple((v["property"], v["message"]) for step in chunk for v in step.violations)
            if broken:
                banners.append(Banner(y - 0.5, y + len(broken) + 0.6, last, broken))
                y += len(broken)
            y += 1.0
            previous_t = chunk[-1].t
            continue
        step = chunk[0]
        lines = max(1, len(step.events))
        ys = [y + k for k in range(lines)]
        line_of[step.i] = ys
        rows.append(StepRow(y, lines, step.i, step.t, action_text(step.action), compressed))
        for event, ey in zip(step.events, ys, strict=False):
            detail = event_detail(event.get("data", {}))
            arrows.append(Arrow(ey, event["source"], event["target"], event["name"], detail))
        y += lines
        if loop_start is not None and step.i == loop_start:
            notes.append(f"the run loops back to step {loop_start} forever")
        if step.violations:
            banners.append(Banner(ys[0] - 0.5, y + len(step.violations) + 0.1, step.i,
                                  tuple((v["property"], v["message"]) for v in step.violations)))
            y += len(step.violations) + 0.2
        previous_t = step.t
    if trace.violations:
        y += STEP_GAP
        count = len(trace.violations)
        banners.append(Banner(y - 0.3, y + count + 0.1, None,
                              tuple((v["property"], v["message"]) for v in trace.violations)))
        y += count + 0.2
    end = y + STEP_GAP
    spans = list(_spans(trace, line_of))
    _nest(spans, end)
    return Layout(title, lane_order(trace), rows, arrows, elisions, spans, _steer_lives(trace, line_of),
                  banners, end, timed, notes)


def _spans(trace: Trace, line_of: Mapping[int, list[float]]) -> Iterator[Span]:
    """Turns from turn.started to turn.ended (matched by turn id, first opened first closed) on the lane
    that started them; tool calls from tool.started to tool.result on the call's own lane."""
    lanes = lane_order(trace)
    open_spans: dict[tuple[str, str], list[Span]] = {}
    for step in trace.steps:
        ys = line_of[step.i]
        for fact in step.facts:
            name = fact.get("fact")
            if name in ("turn.started", "tool.started"):
                kind, key = ("turn", str(fact["turn"])) if name == "turn.started" else ("tool", str(fact["call"]))
                k = _event_about(step, key)
                event = step.events[k] if step.events else {"source": step.action["actor"], "target": ""}
                lane = event["source"] if kind == "turn" else _tool_lane(lanes, key, event)
                span = Span(lane, kind, key, ys[min(k, len(ys) - 1)])
                open_spans.setdefault((kind, key), []).append(span)
                yield span
            elif name in ("turn.ended", "tool.result"):
                kind, key = ("turn", str(fact["turn"])) if name == "turn.ended" else ("tool", str(fact["call"]))
                waiting = open_spans.get((kind, key))
                if waiting:
                    waiting.pop(0).y1 = ys[min(_event_about(step, key), len(ys) - 1)] + 0.5


def _tool_lane(lanes: Sequence[str], call: str, event: Mapping[str, Any]) -> str:
    for lane in lanes:
        if call in lane:
            return lane
    return event["target"] or event["source"]


def _nest(spans: list[Span], end: float) -> None:
    """Give overlapping spans of one lane increasing levels, so that two turns at once show as two bars."""
    by_lane: dict[str, list[Span]] = {}
    for span in spans:
        by_lane.setdefault(span.lane, []).append(span)
    for lane_spans in by_lane.values():
        active: list[Span] = []
        for span in sorted(lane_spans, key=lambda s: s.y0):
            active = [a for a in active if (a.y1 if a.y1 is not None else end) > span.y0]
            used = {a.level for a in active}
            span.level = next(level for level in range(len(active) + 1) if level not in used)
            active.append(span)


def _steer_lives(trace: Trace, line_of: Mapping[int, list[float]]) -> list[SteerLife]:
    """Each stage of a steer is put on the line of the event that carried it: the first event after the
    one that carried its previous stage in this step that mentions the steer (a step such as "send"
    often shows the submission and the acknowledgement as two events)."""
    lives: dict[str, SteerLife] = {}
    for step in trace.steps:
        ys = line_of[step.i]
        used: dict[str, int] = {}
        for fact in step.facts:
            if fact.get("fact") in STEER_STAGES:
                sid = str(fact["id"])
                k = _event_about(step, sid, after=used.get(sid, -1))
                used[sid] = k
                lives.setdefault(sid, SteerLife(sid)).marks.append((ys[min(k, len(ys) - 1)], fact["fact"]))
    return list(lives.values())
