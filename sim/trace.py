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

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.errors import UsageError
from sim.fingerprint import hex_fingerprint
from sim.model import Action, Event
from sim.paths import Path as ExplorerPath
from sim.paths import step_json
from sim.product import Product, PState, Transition, Violation
from sim.registry import get_model_spec

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
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TraceError(f"trace {name!r} does not exist") from None
    except (UnicodeDecodeError, IsADirectoryError, PermissionError) as bad:
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
    header = rows[0]
    if not isinstance(header, dict) or "steersim" not in header:
        raise TraceError(f"trace {name!r} is not a steersim trace: its first line has no \"steersim\" header")
    if header["steersim"] != FORMAT_VERSION:
        raise TraceError(f"trace {name!r} has format version {header['steersim']!r}; this steersim reads "
                         f"version {FORMAT_VERSION}")
    for key, kind in (("model", str), ("params", dict)):
        if not isinstance(header.get(key), kind):
            raise TraceError(f"trace {name!r} header has no valid {key!r}")
    end, violations = None, []
    body = rows[1:]
    if body and isinstance(body[-1], dict) and "end" in body[-1]:
        end, violations = body[-1]["end"], body[-1].get("violations", [])
        body = body[:-1]
    steps = []
    for offset, row in enumerate(body):
        number = offset + 2
        try:
            action = row["action"]
            if not (isinstance(action["actor"], str) and isinstance(action["kind"], str)):
                raise TypeError("actor and kind must be strings")
            steps.append(TraceStep(int(row["i"]), row.get("t"), action, list(row["events"]), list(row["facts"]),
                                   str(row["state"]), list(row.get("violations", []))))
        except (KeyError, TypeError, ValueError) as bad:
            reason = f"{type(bad).__name__}: {bad}"
            raise TraceError(f"trace {name!r} line {number} is not a trace step ({reason})") from None
        if steps[-1].i != offset:
            raise TraceError(f"trace {name!r} line {number} is step {steps[-1].i}, expected step {offset}")
    return Trace(header["model"], header["params"], header.get("bug"), header.get("seed"), header.get("timing"),
                 int(header.get("init", 0)), steps, end, violations)


@dataclass
class ReplayResult:
    ok: bool
    steps: int
    message: str
    violations: list[Violation]


def replay(trace: Trace) -> ReplayResult:
    """Re-execute `trace` against the model it names; stop at the first step that differs."""
    spec = get_model_spec(trace.model)
    model = spec.build(trace.params, trace.bug)
    product = Product(model)
    inits = product.init_states()
    if not 0 <= trace.init < len(inits):
        return ReplayResult(False, 0, f"initial state {trace.init} does not exist (the model has {len(inits)})", [])
    state: PState = inits[trace.init]
    violations: list[Violation] = []
    matcher = getattr(model, "match_event", None)
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
        broke = [violation_json(v) for v in transition.violations]
        if broke != step.violations:
            return ReplayResult(False, step.i, f"step {step.i} ({_label(wanted)}): the model now breaks "
                                f"{json.dumps(broke)} instead of the recorded {json.dumps(step.violations)}",
                                violations)
        violations.extend(transition.violations)
        state = transition.target
    ending = product.end_violations(state) if not product.successors(state) else None
    wrong_end = _end_differs(trace, product, bool(violations), ending)
    if wrong_end is not None:
        return ReplayResult(False, len(trace.steps), f"the recorded end differs: {wrong_end}", violations)
    if ending is not None and trace.end in ("quiescent", "violation"):
        violations.extend(v for v in ending if v not in violations)
    return ReplayResult(True, len(trace.steps), f"{len(trace.steps)} steps reproduced", violations)


# why a simulated run stops (sim.simulator); other writers record ends of their own ("session ended",
# "divergence") that claim nothing about the model's run beyond the violations listed
SIMULATED_ENDS = ("quiescent", "step-limit", "time-limit", "violation")


def _end_differs(trace: Trace, product: Product, stepped: bool, ending: tuple[Violation, ...] | None) -> str | None:
    """Why the trace's last line is not what re-executing its steps gives (None: it is). `stepped` says
    whether a step broke a property, `ending` is what the monitors say of the last state when nothing
    more can happen there (None: something can). A listed violation must be one the last state shows, or
    a liveness property's, which only the explorer's lasso shows; a run cut by a limit lists none."""
    if trace.end is None and not trace.violations:
        return None
    shown = [violation_json(v) for v in ending or ()]
    live = {p.name for p in product.liveness}
    unshown = [v for v in trace.violations
               if v not in shown and not (isinstance(v, dict) and v.get("property") in live)]
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


def _find_action(actions: Iterable[Action], wanted: Mapping[str, Any]) -> Action | None:
    for action in actions:
        if action.to_json() == wanted:
            return action
    return None


def _label(action: Mapping[str, Any]) -> str:
    args = ", ".join(json.dumps(a) for a in action.get("args", []))
    return f"{action.get('actor')}: {action.get('kind')}({args})"
