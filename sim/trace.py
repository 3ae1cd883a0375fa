"""Traces in JSON Lines (design section 4), and replay.

The first line is a header: `{"steersim": 1, "model", "params", "bug", "seed", "timing", "init"}`. Then
one line per step: `{"i", "t", "action": {"actor", "kind", "args"}, "events", "facts", "state"}` with the
product state's fingerprint, and `"violations"` on the step that broke a property. A last line
`{"end": reason, "violations": [...]}` says why the run stopped, when it is known.

Reading is strict: a damaged, truncated or foreign file raises `TraceError` (exit 2) with a one-line
reason naming the line. Replay re-executes the trace against the current model and names the first step
that differs, so a trace is a regression test of the model as well as a record.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.errors import ModelError, UsageError
from sim.fingerprint import hex_fingerprint
from sim.model import Action, Event
from sim.paths import Path as ExplorerPath
from sim.paths import step_json
from sim.product import Product, PState, Transition, Violation
from sim.registry import get_model_spec
from sim.timing import TimingProfile

FORMAT_VERSION = 1


class TraceError(UsageError):
    """A trace file that cannot be read: the message names the file, the line and the problem."""


@dataclass
class TraceStep:
    i: int
    t: float | None
    action: dict[str, Any]
    events: list[dict[str, Any]]
    facts: list[dict[str, Any]]
    state: str
    violations: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = {"i": self.i, "t": self.t, "action": self.action, "events": self.events, "facts": self.facts,
               "state": self.state}
        if self.violations:
            out["violations"] = self.violations
        return out


@dataclass
class Trace:
    model: str
    params: dict[str, Any]
    bug: str | None
    seed: int | None
    timing: dict[str, Any] | None
    init: int
    steps: list[TraceStep]
    end: str | None = None
    violations: list[dict[str, str]] = field(default_factory=list)

    def header(self) -> dict[str, Any]:
        return {"steersim": FORMAT_VERSION, "model": self.model, "params": self.params, "bug": self.bug,
                "seed": self.seed, "timing": self.timing, "init": self.init}


def violation_json(violation: Violation) -> dict[str, str]:
    return {"property": violation.property, "message": violation.message}


def make_trace(model: str, params: Mapping[str, Any], bug: str | None, init: int,
               transitions: Iterable[Transition], times: Iterable[float | None] | None = None,
               seed: int | None = None, timing: Mapping[str, Any] | None = None, end: str | None = None,
               end_violations: Iterable[Violation] = ()) -> Trace:
    """A trace of `transitions` (each with its product-state target) taken from initial state `init`."""
    transitions = list(transitions)
    stamps = list(times) if times is not None else [None] * len(transitions)
    steps = []
    for i, (transition, t) in enumerate(zip(transitions, stamps, strict=True)):
        body = step_json(transition)
        steps.append(TraceStep(i, t, {"actor": body["actor"], "kind": body["kind"], "args": body["args"]},
                               body["events"], body["facts"], hex_fingerprint(transition.target),
                               [violation_json(v) for v in transition.violations]))
    stepped = {(v["property"], v["message"]) for s in steps for v in s.violations}
    tail = [violation_json(v) for v in end_violations if (v.property, v.message) not in stepped]
    return Trace(model, dict(params), bug, seed, dict(timing) if timing is not None else None, init, steps, end, tail)


def trace_from_path(model: str, params: Mapping[str, Any], bug: str | None, path: ExplorerPath,
                    times: Iterable[float | None] | None = None, seed: int | None = None,
                    timing: Mapping[str, Any] | None = None) -> Trace:
    """A trace of an explorer path (a counterexample or a witness), timed or not."""
    violations = [path.violation] if path.violation is not None else []
    stepped = {(v.property, v.message) for t in path.steps for v in t.violations}
    end = "violation" if violations or stepped else None
    return make_trace(model, params, bug, path.init_index, path.steps, times, seed, timing, end,
                      [v for v in violations if (v.property, v.message) not in stepped])


def write_trace(path: str | Path, trace: Trace) -> None:
    lines = [json.dumps(trace.header(), sort_keys=False)]
    lines += [json.dumps(step.to_json()) for step in trace.steps]
    if trace.end is not None or trace.violations:
        lines.append(json.dumps({"end": trace.end, "violations": trace.violations}))
    Path(path).write_text("\n".join(lines) + "\n")


def read_trace(path: str | Path) -> Trace:
    """The trace in `path`, every field of every line checked for its type and range, so that what a
    damaged or hand-edited file holds is refused here, naming the line and the field, and never fails
    later inside replay or a diagram."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TraceError(f"trace {name!r} does not exist") from None
    except (UnicodeDecodeError, OSError) as bad:
        raise TraceError(f"trace {name!r} cannot be read as text: {bad}") from None
    if not text.strip():
        raise TraceError(f"trace {name!r} is empty; a trace starts with a steersim header line")
    if not text.endswith("\n"):
        raise TraceError(f"trace {name!r} is truncated: its last line has no end (was the writer interrupted?)")
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as bad:
            raise TraceError(f"trace {name!r} line {number} is not JSON ({bad.msg})") from None
        except RecursionError:
            raise TraceError(f"trace {name!r} line {number} is nested too deeply to be a trace line") from None
    header = rows[0]
    if not isinstance(header, dict) or "steersim" not in header:
        raise TraceError(f"trace {name!r} is not a steersim trace: its first line has no \"steersim\" header")
    version = header["steersim"]
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise TraceError(f"trace {name!r} has format version {version!r}; this steersim reads version {FORMAT_VERSION}")
    first = _Line(name, 1, header)
    model, params = first.field("model", str), first.field("params", dict)
    bug, seed = first.field("bug", (str, None), None), first.field("seed", (_COUNT, None), None)
    timing, init = first.field("timing", (dict, None), None), first.field("init", _COUNT, 0)
    if timing is not None:
        try:
            TimingProfile.from_mapping(timing)
        except UsageError as bad:
            raise first.error("timing", str(bad)) from None
    end, violations = None, []
    body = rows[1:]
    if body and isinstance(body[-1], dict) and "end" in body[-1]:
        last = _Line(name, len(rows), body[-1])
        end, violations = last.field("end", (str, None)), last.violations("violations")
        body = body[:-1]
    steps = [_step(_Line(name, offset + 2, row), offset) for offset, row in enumerate(body)]
    timed = [(step.i, step.t) for step in steps if step.t is not None]
    for (_, before), (i, t) in itertools.pairwise(timed):
        if t < before:
            raise TraceError(f"trace {name!r} line {i + 2} field t: {t!r} is before the previous step's "
                             f"{before!r}; virtual time does not go back")
    return Trace(model, params, bug, seed, timing, init, steps, end, violations)


_COUNT = "count"  # a whole number >= 0
_TIME = "time"  # a finite number >= 0, or null (an untimed step)
_ANY = "any"  # any JSON value


class _Line:
    """One parsed line of a trace file, and the checks of its fields, each failing with a TraceError
    that names the file, the line and the field."""

    def __init__(self, name: str, number: int, row: Any) -> None:
        self.name, self.number, self.row = name, number, row
        if not isinstance(row, dict):
            raise TraceError(f"trace {name!r} line {number} is not a JSON object")

    def error(self, field: str, problem: str) -> TraceError:
        return TraceError(f"trace {self.name!r} line {self.number} field {field}: {problem}")

    def field(self, key: str, kind: Any, default: Any = ..., row: Any = None, where: str = "") -> Any:
        row = self.row if row is None else row
        where = where or key
        if key not in row:
            if default is ...:
                raise self.error(where, "missing")
            return default
        value = row[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not any(_is(value, k) for k in kinds):
            wanted = " or ".join(_KIND_NAMES[k] for k in kinds)
            raise self.error(where, f"expected {wanted}, not {_shown(value)}")
        return value

    def records(self, key: str, fields: Mapping[str, Any], default: Any = ...) -> list[dict[str, Any]]:
        """A list of objects, each with `fields` of the given kinds."""
        items = self.field(key, list, default)
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise self.error(f"{key}[{index}]", f"expected an object, not {_shown(item)}")
            for sub, kind in fields.items():
                self.field(sub, kind, row=item, where=f"{key}[{index}].{sub}")
        return items

    def violations(self, key: str) -> list[dict[str, str]]:
        return self.records(key, {"property": str, "message": str}, [])


_KIND_NAMES = {_COUNT: "a whole number >= 0", _TIME: "a finite number >= 0 or null", None: "null", str: "a string",
               dict: "an object", list: "a list"}


def _is(value: Any, kind: Any) -> bool:
    if kind is None:
        return value is None
    if kind is _ANY:
        return True
    if kind is _COUNT:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if kind is _TIME:
        return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                 and math.isfinite(value) and value >= 0)
    return isinstance(value, kind)


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _step(line: _Line, offset: int) -> TraceStep:
    i = line.field("i", _COUNT)
    if i != offset:
        raise line.error("i", f"is step {i}, expected step {offset}")
    action = line.field("action", dict)
    for key, kind in (("actor", str), ("kind", str), ("args", list)):
        line.field(key, kind, row=action, where=f"action.{key}")
    events = line.records("events", {"source": str, "target": str, "name": str, "data": _ANY})
    facts = line.records("facts", {"fact": str})
    return TraceStep(i, line.field("t", _TIME, None), action, events, facts, line.field("state", str),
                     line.violations("violations"))


@dataclass
class ReplayResult:
    ok: bool
    steps: int
    message: str
    violations: list[Violation]


def replay(trace: Trace) -> ReplayResult:
    """Re-execute `trace` against the model it names; stop at the first step that differs. A model error
    names the trace's steps that led to it."""
    product = Product(get_model_spec(trace.model).build(trace.params, trace.bug))
    done: list[str] = []
    try:
        return _replay(trace, product, done)
    except ModelError as error:
        raise error.with_path(tuple(done), f"initial state {trace.init} of the trace") from None


def _replay(trace: Trace, product: Product, done: list[str]) -> ReplayResult:
    """The replay itself; `done` collects the labels of the steps reproduced."""
    inits = product.init_states()
    if not 0 <= trace.init < len(inits):
        return ReplayResult(False, 0, f"initial state {trace.init} does not exist (the model has {len(inits)})", [])
    state: PState = inits[trace.init]
    violations: list[Violation] = []
    matcher = product.model.match_event
    for step in trace.steps:
        wanted = step.action
        action = _find_action(product.actions(state), wanted)
        if action is None:
            offered = ", ".join(a.label() for a in product.actions(state)) or "nothing"
            return ReplayResult(False, step.i, f"step {step.i}: action {_label(wanted)} is not enabled; "
                                f"the model offers: {offered}", violations)
        transition = product.step(state, action)
        if transition is None:
            return ReplayResult(False, step.i, f"step {step.i}: action {_label(wanted)} is now a no-op", violations)
        body = step_json(transition)
        if matcher is not None and _events_match(matcher, transition.events, step.events):
            body["events"] = step.events
        for part in ("events", "facts"):
            if body[part] != getattr(step, part):
                return ReplayResult(False, step.i, f"step {step.i} ({_label(wanted)}): the model now produces "
                                    f"different {part}: {json.dumps(body[part])} instead of "
                                    f"{json.dumps(getattr(step, part))}", violations)
        if hex_fingerprint(transition.target) != step.state:
            return ReplayResult(False, step.i, f"step {step.i} ({_label(wanted)}): the model reaches a different "
                                "state (fingerprint differs)", violations)
        violations.extend(transition.violations)
        state = transition.target
        done.append(action.label())
    ended = trace.end == "quiescent" or (trace.end == "violation" and trace.violations)
    if ended and not product.successors(state):
        violations.extend(product.end_violations(state))
    if product.model.judge_recorded is not None:  # a model that judges again what a real peer sent
        violations.extend(product.model.judge_recorded(trace))
    return ReplayResult(True, len(trace.steps), f"{len(trace.steps)} steps reproduced", violations)


def _events_match(matcher: Any, expected: Iterable[Event], recorded: list[dict[str, Any]]) -> bool:
    """A model's own `match_event` judges recorded events that carry what a real peer sent (a client's
    own text where the model has a placeholder)."""
    expected = list(expected)
    if len(expected) != len(recorded):
        return False
    try:
        observed = [Event(r["source"], r["target"], r["name"], r["data"]) for r in recorded]
    except (KeyError, TypeError):
        return False
    return all(matcher(e, o) for e, o in zip(expected, observed, strict=True))


def _find_action(actions: Iterable[Action], wanted: Mapping[str, Any]) -> Action | None:
    for action in actions:
        if action.to_json() == wanted:
            return action
    return None


def _label(action: Mapping[str, Any]) -> str:
    args = ", ".join(json.dumps(a) for a in action.get("args", []))
    return f"{action.get('actor')}: {action.get('kind')}({args})"
