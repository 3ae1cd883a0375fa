"""The geometry of a timing diagram, computed from a trace without drawing anything.

Time runs down the page, one column (lane) per participant, so that every message label is horizontal
text on a line of its own and never overlaps another. Vertical positions are in text lines. A step
takes one line per event; the gap before it grows with the virtual time that passed (up to a cap, past
which the gap is marked as compressed). Long traces are shortened in two ways, each leaving a row that
says what it stands for: runs of uneventful steps (no steer, turn or violation nearby) collapse into one
row, and if the diagram is still too long its middle is cut, keeping the start and the end (where the
violation usually is).

This module is pure data so that tests can inspect a layout; `steersim.draw.diagram` draws it.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from steersim.simulate.simulator import STEP_LIMIT, TIME_LIMIT
from steersim.traces.trace import Trace, TraceStep

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
CUT_ENDS = (STEP_LIMIT, TIME_LIMIT)  # a simulated run stopped by a limit: what is open was merely unfinished


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
    """The margin entry of a drawn step: its number, time and action, at line `y`."""

    y: float
    index: int
    t: float | None
    action: str
    compressed_gap: float | None = None  # elapsed time drawn shorter than scale, shown as a break
    loop_start: bool = False  # a liveness counterexample repeats from this step on
    changes: tuple[str, ...] = ()  # what the step changed in the state's view, one `name=value` each
    lines: int = 1  # text lines the step takes (one per event)


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
    lost_at: float | None = None  # the line of the step that lost it, when a violation's cause says so
    stranded: bool = False  # still held when nothing more could happen, and a violation of the end names it

    @property
    def settled(self) -> bool:
        return any(stage not in ("steer.submitted", "steer.accepted") for _, stage in self.marks)

    @property
    def accepted(self) -> bool:
        return any(stage == "steer.accepted" for _, stage in self.marks)


@dataclass(frozen=True)
class Banner:
    """Properties broken at a step (or by the end state, `step` None), drawn as one red band with a
    line (property, message) for each; or (`kind` "cause") the step where what they noticed went wrong,
    with a line (property, summary) for each, drawn in its own colour."""

    y0: float
    y1: float
    step: int | None
    broken: tuple[tuple[str, str], ...]
    kind: str = "violation"  # "violation" | "cause"


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
    notes: list[str]
    cut: bool = False  # the run was stopped by a limit, so what is open at the end was merely unfinished


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


def event_detail(data: Mapping[str, Any], width: int = 56) -> str:
    """The scalar fields of an event's payload, `key=value`, cut to `width` characters. Nested objects
    count one level down (`error.code`, shown as `code` unless two fields share that name); the fields
    a reader looks for first (codes, reasons, statuses,
    ids) come first, long free text last and shortened, so that cutting to the width drops what matters
    least. A `type` field repeats the event's name, which the label already shows; a null says nothing."""
    fields = [(k, v) for k, v in _flat(data) if k != "type" and v is not None]
    ranked = sorted(fields, key=lambda kv: (_rank(kv), fields.index(kv)))
    leaves = Counter(k.rsplit(".", 1)[-1] for k, _ in fields)
    parts = [f"{k if leaves[k.rsplit('.', 1)[-1]] > 1 else k.rsplit('.', 1)[-1]}={_short(v)}" for k, v in ranked]
    text = " ".join(parts)
    return text if len(text) <= width else text[: width - 1] + "…"


KEY_FIELDS = ("code", "reason", "status", "id")
# characters of a message label at most: what fits the widest gap between lanes (steersim.draw.diagram)
LABEL_CHARS = 70
LONG_TEXT = 24  # characters past which a string field is free text, shown last and shortened


def _flat(data: Mapping[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, Mapping):
            out += [(f"{key}.{k}", v) for k, v in value.items() if _scalar(v)]
        elif _scalar(value):
            out.append((key, value))
    return out


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


def _rank(field: tuple[str, Any]) -> int:
    """0 for a key field (`error.code`, `reason`, `previous_response_id`, `toolCallId`), 2 for free
    text, 1 for the rest."""
    key, value = field
    last = key.rsplit(".", 1)[-1].lower()
    if isinstance(value, str) and len(value) > LONG_TEXT:
        return 2
    return 0 if last in KEY_FIELDS or last.endswith(("_id", "id", "_code")) else 1


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= LONG_TEXT else text[: LONG_TEXT // 2] + "…"


def _mentions(value: Any, wanted: str) -> bool:
    if isinstance(value, Mapping):
        return any(_mentions(v, wanted) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_mentions(v, wanted) for v in value)
    return value == wanted


def _fact_key(fact: Mapping[str, Any]) -> str:
    return str(fact.get("id", fact.get("call", fact.get("turn", ""))))


def guess_fact_events(step: TraceStep) -> list[int]:
    """For each fact of `step`, the position of the event that most likely carried it, when the model
    cannot be asked: the first event after the one that carried the previous fact about the same steer,
    call or turn whose payload mentions it (a "send" step often shows a submission and its
    acknowledgement as two events), else the first event."""
    used: dict[str, int] = {}
    out = []
    for fact in step.facts:
        key = _fact_key(fact)
        after = used.get(key, -1)
        mentions = [k for k, event in enumerate(step.events) if _mentions(event.get("data", {}), key)]
        later = [k for k in mentions if k > after]
        k = later[0] if later else max(after, 0)
        used[key] = k
        out.append(k)
    return out


def _eventful(step: TraceStep) -> bool:
    return bool(step.violations) or any(f.get("fact") in EVENTFUL_FACTS for f in step.facts)


def causes(trace: Trace) -> dict[int, list[Mapping[str, Any]]]:
    """The violation records whose cause lies at a step of its own (a subject lost before it was
    noticed), by that step."""
    out: dict[int, list[Mapping[str, Any]]] = {}
    records = [v for step in trace.steps for v in step.violations] + list(trace.violations)
    for record in records:
        if record.get("lost") and record.get("cause_step") is not None:
            out.setdefault(record["cause_step"], []).append(record)
    return out


def choose_shown(trace: Trace, window: tuple[int, int] | None = None) -> list[tuple[str, int, int]]:
    """The plan of rows: ("step", i, i) for a drawn step, ("collapse", a, b) or ("cut", a, b) for a
    stretch of steps a..b drawn as one row. A `window` (first, last), for a slide, draws exactly those
    steps, each in full, and the steps before and after it as one cut row each, so that what happened
    outside it is still named."""
    steps = trace.steps
    count = len(steps)
    plan: list[tuple[str, int, int]] = []
    if window is not None:
        first, last = window
        return ([("cut", 0, first - 1)] if first > 0 else []) + [("step", i, i) for i in range(first, last + 1)] + \
            ([("cut", last + 1, count - 1)] if last < count - 1 else [])
    if count <= COLLAPSE_ABOVE:
        return [("step", i, i) for i in range(count)]
    keep = [False] * count
    caused = causes(trace)
    for i, step in enumerate(steps):
        if _eventful(step) or i in caused or i in (0, count - 1):
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


class _Rows:
    """Places rows top to bottom: steps, collapsed or cut stretches, violation bands."""

    def __init__(self, scale: float | None, loop_start: int | None,
                 caused: Mapping[int, list[Mapping[str, Any]]]) -> None:
        self.scale, self.loop_start, self.caused = scale, loop_start, caused
        self.y = 0.0
        self.previous_t: float | None = None
        self.steps: list[StepRow] = []
        self.arrows: list[Arrow] = []
        self.elisions: list[Elision] = []
        self.banners: list[Banner] = []
        self.notes: list[str] = []
        self.line_of: dict[int, list[float]] = {}  # step index -> y of each of its event lines

    def advance_to(self, t: float | None) -> float | None:
        """Leave the gap that the time since the previous row calls for; return the elapsed time when
        the gap had to be drawn shorter than scale."""
        gap, compressed = STEP_GAP, None
        if self.scale is not None and self.previous_t is not None and t is not None:
            extra = (t - self.previous_t) * self.scale
            gap += min(extra, MAX_TIME_GAP)
            if extra > MAX_TIME_GAP:
                compressed = t - self.previous_t
        self.y += gap
        return compressed

    def stretch(self, chunk: Sequence[TraceStep], cut: bool) -> None:
        y = self.y
        self.elisions.append(Elision(y, chunk[0].i, chunk[-1].i, chunk[0].t, chunk[-1].t, _summary(chunk), cut))
        for step in chunk:
            self.line_of[step.i] = [y] * max(1, len(step.events))
        broken = tuple((v["property"], v["message"]) for step in chunk for v in step.violations)
        if broken:
            self.banners.append(Banner(y - 0.5, y + len(broken) + 0.6, chunk[-1].i, broken))
            self.y += len(broken)
        self.y += 1.0
        self.previous_t = chunk[-1].t

    def step(self, step: TraceStep, compressed: float | None) -> None:
        ys = [self.y + k for k in range(max(1, len(step.events)))]
        self.line_of[step.i] = ys
        loops_here = step.i == self.loop_start
        changes = tuple(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in (step.changes or {}).items())
        self.steps.append(StepRow(ys[0], step.i, step.t, action_text(step.action), compressed, loops_here, changes,
                                  len(ys)))
        for event, y in zip(step.events, ys, strict=False):
            detail = event_detail(event.get("data", {}), max(16, LABEL_CHARS - len(event["name"]) - 2))
            self.arrows.append(Arrow(y, event["source"], event["target"], event["name"], detail))
        self.y += len(ys)
        if loops_here:
            self.notes.append(f"↻ from step {step.i} on the run repeats forever: a fair cycle that never meets "
                              "the obligation")
        caused = self.caused.get(step.i, ())
        if caused and not step.violations:
            self.banners.append(Banner(ys[0] - 0.5, self.y + len(caused) + 0.1, step.i,
                                       tuple((v["property"], v["summary"]) for v in caused), "cause"))
            self.y += len(caused) + 0.2
        if step.violations:
            self.banners.append(Banner(ys[0] - 0.5, self.y + len(step.violations) + 0.1, step.i,
                                       tuple((v["property"], v["message"]) for v in step.violations)))
            self.y += len(step.violations) + 0.2
        self.previous_t = step.t

    def end(self, violations: Sequence[Mapping[str, str]]) -> float:
        """Band the violations of the end state, if any; return the height of the whole diagram."""
        if violations:
            self.y += STEP_GAP
            self.banners.append(Banner(self.y - 0.3, self.y + len(violations) + 0.1, None,
                                       tuple((v["property"], v["message"]) for v in violations)))
            self.y += len(violations) + 0.2
        return self.y + STEP_GAP


def layout(trace: Trace, title: str = "", loop_start: int | None = None,
           fact_events: Sequence[Sequence[int] | None] | None = None, window: tuple[int, int] | None = None) -> Layout:
    """Place every step, message, span, steer mark and violation of `trace`. `fact_events[i][j]` is the
    position of the event of step i that carried its fact j (from the model, see `steersim.draw.diagram`); steps
    without it are guessed from the events' payloads. `window`: draw only steps first..last (see
    `choose_shown`)."""
    caused = causes(trace)
    rows = _Rows(_time_scale(trace), loop_start, caused)
    for kind, first, last in choose_shown(trace, window):
        chunk = trace.steps[first : last + 1]
        compressed = rows.advance_to(chunk[0].t)
        if kind == "step":
            rows.step(chunk[0], compressed)
        else:
            rows.stretch(chunk, cut=kind == "cut")
    end = rows.end(trace.violations)
    origins = []
    for position, step in enumerate(trace.steps):
        known = fact_events[position] if fact_events is not None else None
        origins.append(list(known) if known is not None else guess_fact_events(step))
    spans = list(_spans(trace, origins, rows.line_of))
    _nest(spans, end)
    lives = _steer_lives(trace, origins, rows.line_of)
    for step, records in caused.items():
        for life in lives:
            if any(r.get("subject") == life.id for r in records):
                life.lost_at = rows.line_of[step][-1]
    stranded = {r.get("subject") for r in trace.violations if not r.get("lost")}
    for life in lives:
        life.stranded = life.lost_at is None and not life.settled and life.id in stranded
    return Layout(title, lane_order(trace), rows.steps, rows.arrows, rows.elisions, spans, lives, rows.banners,
                  end, rows.notes, trace.end in CUT_ENDS)


def _line(line_of: Mapping[int, list[float]], step: TraceStep, event: int) -> float:
    ys = line_of[step.i]
    return ys[min(event, len(ys) - 1)]


def _spans(trace: Trace, origins: Sequence[Sequence[int]], line_of: Mapping[int, list[float]]) -> Iterator[Span]:
    """Turns from turn.started to turn.ended (matched by turn id, first opened first closed) on the lane
    of the event that started them; tool calls from tool.started to tool.result on the call's own lane."""
    lanes = lane_order(trace)
    open_spans: dict[tuple[str, str], list[Span]] = {}
    for step, events in zip(trace.steps, origins, strict=True):
        for fact, k in zip(step.facts, events, strict=True):
            name = fact.get("fact")
            if name in ("turn.started", "tool.started"):
                kind, key = ("turn", str(fact["turn"])) if name == "turn.started" else ("tool", str(fact["call"]))
                event = step.events[k] if step.events else {"source": step.action["actor"], "target": ""}
                lane = event["source"] if kind == "turn" else _tool_lane(lanes, key, event)
                span = Span(lane, kind, key, _line(line_of, step, k))
                open_spans.setdefault((kind, key), []).append(span)
                yield span
            elif name in ("turn.ended", "tool.result"):
                kind, key = ("turn", str(fact["turn"])) if name == "turn.ended" else ("tool", str(fact["call"]))
                waiting = open_spans.get((kind, key))
                if waiting:
                    waiting.pop(0).y1 = _line(line_of, step, k) + 0.5


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


def _steer_lives(trace: Trace, origins: Sequence[Sequence[int]],
                 line_of: Mapping[int, list[float]]) -> list[SteerLife]:
    lives: dict[str, SteerLife] = {}
    for step, events in zip(trace.steps, origins, strict=True):
        for fact, k in zip(step.facts, events, strict=True):
            if fact.get("fact") in STEER_STAGES:
                sid = str(fact["id"])
                lives.setdefault(sid, SteerLife(sid)).marks.append((_line(line_of, step, k), fact["fact"]))
    return list(lives.values())
