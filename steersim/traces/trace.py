"""Traces in JSON Lines (design section 4), and replay.

The first line is a header: `{"steersim": 1, "model", "params", "bug", "seed", "timing", "init"}`. Then
one line per step: `{"i", "t", "action": {"actor", "kind", "args"}, "events", "facts", "state", "changes"}`
with the product state's fingerprint and what the step changed in the model state's view
(`steersim.core.stateview`; the header's `"view"` is the initial state's), and `"violations"` on the step that
broke a property. A last line `{"end": reason, "violations": [...]}` says why the run stopped, when it
is known. A violation may say where its cause lies: `"cause_step"` (the step that made the obligation
impossible), `"subject"` (the steer or call it concerns), `"lost"` (whether the subject left the
state unresolved) and `"summary"` (one sentence, `steersim.traces.cause`).
Traces written before views existed have neither `"view"` nor `"changes"`, and are read as they are.

Reading is strict: a damaged, truncated or foreign file raises `TraceError` (exit 2) with a one-line
reason naming the line. Replay re-executes the trace against the current model and names the first step
that differs, so a trace is a regression test of the model as well as a record.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steersim.core.fingerprint import hex_fingerprint
from steersim.core.model import Event, as_model_base, model_error
from steersim.core.paths import Path as ExplorerPath
from steersim.core.paths import action_from_json, step_json
from steersim.core.product import Product, PState, Transition, Violation
from steersim.core.registry import get_model_spec
from steersim.core.stateview import apply_changes, state_view, view_changes
from steersim.errors import ModelError, UsageError
from steersim.simulate.timing import TimingProfile

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
    violations: list[dict[str, Any]] = field(default_factory=list)
    changes: dict[str, Any] | None = None  # what the step changed in the state's view (None: an old trace)

    def to_json(self) -> dict[str, Any]:
        out = {"i": self.i, "t": self.t, "action": self.action, "events": self.events, "facts": self.facts,
               "state": self.state}
        if self.changes is not None:
            out["changes"] = self.changes
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
    violations: list[dict[str, Any]] = field(default_factory=list)
    view: dict[str, Any] | None = None  # the initial state's view (None: an old trace)

    def header(self) -> dict[str, Any]:
        out = {"steersim": FORMAT_VERSION, "model": self.model, "params": self.params, "bug": self.bug,
               "seed": self.seed, "timing": self.timing, "init": self.init}
        if self.view is not None:
            out["view"] = self.view
        return out

    def views(self) -> list[dict[str, Any]] | None:
        """The state's view before the first step and after each step, rebuilt from the changes."""
        if self.view is None:
            return None
        out = [self.view]
        for step in self.steps:
            out.append(apply_changes(out[-1], step.changes or {}))
        return out


def violation_json(violation: Violation) -> dict[str, str]:
    return {"property": violation.property, "message": violation.message}


def make_trace(model: str, params: Mapping[str, Any], bug: str | None, init: int,
               transitions: Iterable[Transition], times: Iterable[float | None] | None = None,
               seed: int | None = None, timing: Mapping[str, Any] | None = None, end: str | None = None,
               end_violations: Iterable[Violation] = (), system: Any = None) -> Trace:
    """A trace of `transitions` (each with its product-state target) taken from initial state `init`.
    `system` is the model that ran (by default the installed one `model` names): it renders the state's
    view at every step and explains each violation's cause; without it the trace has neither."""
    transitions = list(transitions)
    stamps = list(times) if times is not None else [None] * len(transitions)
    system = _system(model, params, bug) if system is None else system
    views = _views(system, init, transitions)
    steps = []
    for i, (transition, t) in enumerate(zip(transitions, stamps, strict=True)):
        body = step_json(transition)
        changes = None if views is None else view_changes(views[i], views[i + 1])
        steps.append(TraceStep(i, t, {"actor": body["actor"], "kind": body["kind"], "args": body["args"]},
                               body["events"], body["facts"], hex_fingerprint(transition.target),
                               [violation_json(v) for v in transition.violations], changes))
    stepped = {(v["property"], v["message"]) for s in steps for v in s.violations}
    tail = [violation_json(v) for v in end_violations if (v.property, v.message) not in stepped]
    trace = Trace(model, dict(params), bug, seed, dict(timing) if timing is not None else None, init, steps, end,
                  tail, None if views is None else views[0])
    if system is not None:
        from steersim.traces.cause import annotate_causes

        annotate_causes(trace, system)
    return trace


def _system(name: str, params: Mapping[str, Any], bug: str | None) -> Any:
    """The installed model a trace names, or None when it cannot be built here."""
    try:
        return get_model_spec(name).build(params, bug)
    except (UsageError, ModelError):
        return None


def _views(system: Any, init: int, transitions: list[Transition]) -> list[dict[str, Any]] | None:
    """The view of the initial state and of each step's target, or None without a model to ask."""
    if system is None:
        return None
    try:
        first = system.init_states()[init]
    except Exception as broken:
        raise model_error(broken, None, what="init_states()") from broken
    base = as_model_base(system)
    states = [first] + [t.target[0] for t in transitions]
    views = []
    for state in states:
        try:
            views.append(state_view(base, state))
        except Exception as broken:
            raise model_error(broken, state, what="render_state()") from broken
    return views


def trace_from_path(model: str, params: Mapping[str, Any], bug: str | None, path: ExplorerPath,
                    times: Iterable[float | None] | None = None, seed: int | None = None,
                    timing: Mapping[str, Any] | None = None, system: Any = None) -> Trace:
    """A trace of an explorer path (a counterexample or a witness), timed or not."""
    violations = [path.violation] if path.violation is not None else []
    stepped = {(v.property, v.message) for t in path.steps for v in t.violations}
    end = "violation" if violations or stepped else None
    return make_trace(model, params, bug, path.init_index, path.steps, times, seed, timing, end,
                      [v for v in violations if (v.property, v.message) not in stepped], system)


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
        except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
            raise TraceError(f"trace {name!r} line {number} holds a whole number of more than "
                             f"{sys.get_int_max_str_digits()} digits, which no trace field takes") from None
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
    view = first.field("view", (dict, None), None)
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
    steps = [_step(_Line(name, offset + 2, row), offset, view is not None) for offset, row in enumerate(body)]
    causes = [(offset + 2, v) for offset, step in enumerate(steps) for v in step.violations]
    causes += [(len(rows), v) for v in violations]
    for number, record in causes:
        cause = record.get("cause_step")
        if cause is not None and cause >= len(steps):
            raise TraceError(f"trace {name!r} line {number} field cause_step: step {cause} does not exist "
                             f"(the trace has {len(steps)} steps)")
    timed = [(step.i, step.t) for step in steps if step.t is not None]
    for (_, before), (i, t) in itertools.pairwise(timed):
        if t < before:
            raise TraceError(f"trace {name!r} line {i + 2} field t: {t!r} is before the previous step's "
                             f"{before!r}; virtual time does not go back")
    return Trace(model, params, bug, seed, timing, init, steps, end, violations, view)


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

    def violations(self, key: str) -> list[dict[str, Any]]:
        items = self.records(key, {"property": str, "message": str}, [])
        for index, item in enumerate(items):
            for sub, kind in (("cause_step", (_COUNT, None)), ("subject", str), ("lost", bool), ("summary", str)):
                self.field(sub, kind, None, row=item, where=f"{key}[{index}].{sub}")
        return items


_KIND_NAMES = {_COUNT: "a whole number >= 0", _TIME: "a finite number >= 0 or null", None: "null", str: "a string",
               dict: "an object", list: "a list", bool: "true or false"}


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


def _step(line: _Line, offset: int, viewed: bool) -> TraceStep:
    """One step line; `viewed`: the header has a view, so the step must say what it changed."""
    i = line.field("i", _COUNT)
    if i != offset:
        raise line.error("i", f"is step {i}, expected step {offset}")
    action = line.field("action", dict)
    for key, kind in (("actor", str), ("kind", str), ("args", list)):
        line.field(key, kind, row=action, where=f"action.{key}")
    events = line.records("events", {"source": str, "target": str, "name": str, "data": _ANY})
    facts = line.records("facts", {"fact": str})
    if not viewed and "changes" in line.row:
        raise line.error("changes", "the header has no view, so a step has no changes to apply; "
                                    "drop the field or add the initial state's view to the header")
    changes = line.field("changes", dict) if viewed else None
    return TraceStep(i, line.field("t", _TIME, None), action, events, facts, line.field("state", str),
                     line.violations("violations"), changes)


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
        action = action_from_json(wanted, product.actions(state))
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
        broke = [violation_json(v) for v in transition.violations]
        recorded = [{"property": v.get("property"), "message": v.get("message")} for v in step.violations]
        if broke != recorded:  # what was broken; the cause a writer added beside it is an explanation
            return ReplayResult(False, step.i, f"step {step.i} ({_label(wanted)}): the model now breaks "
                                f"{json.dumps(broke)} instead of the recorded {json.dumps(step.violations)}",
                                violations)
        violations.extend(transition.violations)
        state = transition.target
        done.append(action.label())
    judged = [] if product.model.judge_recorded is None else list(product.model.judge_recorded(trace))
    ending = product.end_violations(state) if not product.successors(state) else None
    wrong_end = _end_differs(trace, product, bool(violations), ending, judged)
    if wrong_end is not None:
        return ReplayResult(False, len(trace.steps), f"the recorded end differs: {wrong_end}", violations)
    if ending is not None and trace.end in ("quiescent", "violation"):
        violations.extend(v for v in ending if v not in violations)
    violations.extend(judged)  # what a model judges again of a real peer's recorded messages
    return ReplayResult(True, len(trace.steps), f"{len(trace.steps)} steps reproduced", violations)


# why a simulated run stops (steersim.simulate.simulator); other writers record ends of their own ("session ended",
# "divergence") that claim nothing about the model's run beyond the violations listed
SIMULATED_ENDS = ("quiescent", "step-limit", "time-limit", "violation")


def _end_differs(trace: Trace, product: Product, stepped: bool, ending: tuple[Violation, ...] | None,
                 judged: Sequence[Violation] = ()) -> str | None:
    """Why the trace's last line is not what re-executing its steps gives (None: it is). `stepped` says
    whether a step broke a property, `ending` is what the monitors say of the last state when nothing
    more can happen there (None: something can). A listed violation must be one the last state shows, or
    a liveness property's, which only the explorer's lasso shows; a run cut by a limit lists none."""
    if trace.end is None and not trace.violations:
        return None
    shown = [violation_json(v) for v in (*(ending or ()), *judged)]
    live = {p.name for p in product.liveness}
    unshown = [v for v in trace.violations  # a cause beside the property and message explains, not claims
               if {"property": v.get("property"), "message": v.get("message")} not in shown
               and v.get("property") not in live]
    if unshown:
        return f"it lists {json.dumps(unshown)}, which the last state does not show"
    if trace.end == "quiescent":
        if ending is None:
            return "it says quiescent, but actions are still enabled at the last state"
        if stepped or ending:
            return "it says quiescent, but the run breaks a property"
    elif trace.end == "violation":
        if not stepped and not trace.violations:
            return "it says violation, but lists none and no step breaks a property"
    elif trace.end in ("step-limit", "time-limit"):
        if stepped or trace.violations:
            return f"it says {trace.end}, but the run breaks a property (it would have ended there)"
        if trace.end == "time-limit" and ending is not None:
            return "it says time-limit, but nothing can happen at the last state (the run is quiescent)"
    elif trace.end is not None and not isinstance(trace.end, str):
        return f"the end reason must be a string, not {trace.end!r}"
    return None


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


def _label(action: Mapping[str, Any]) -> str:
    args = ", ".join(json.dumps(a) for a in action.get("args", []))
    return f"{action.get('actor')}: {action.get('kind')}({args})"

def explain_result(model: Any, result: Any) -> None:
    """Give each counterexample of a check result its cause (`PropertyResult.cause`): where the
    violation was noticed (`detect_step`, None for the end state) and where its cause lies. Both engines'
    results pass through here, so their reports stay the same."""
    for prop in result.properties:
        path = prop.counterexample
        if prop.status != "violated" or path is None:
            continue
        trace = trace_from_path(model.name, {}, None, path, system=model)
        found = [(step.i, v) for step in trace.steps for v in step.violations if v["property"] == prop.name]
        found += [(None, v) for v in trace.violations if v["property"] == prop.name]
        if found:
            detected, record = found[0]
            prop.cause = {"detect_step": detected, "cause_step": record["cause_step"], "summary": record["summary"]}
