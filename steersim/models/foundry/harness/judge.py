"""Judge one recorded run: the core monitors over its facts, and trace validation against the model.

A monitor finding is an invariant of design section 3 broken by what the implementation did. A
divergence is an observation the model cannot produce. Validation stops at the first divergence, so
when the model could have produced the same events with different field values, the judge names the
field (the package's `ctx.input_id`, a handle's outcome, ...), reports it, stops comparing that field of
that event and validates again: one run can show several independent divergences, each reported once,
and none hides the others (every differing field of the diverging event is reported, and masked,
together). When no step of the model can produce an observation at all, the judge reports it,
passes over that one observation and validates the rest again (resynchronises): a second mistake later
in the same run, say a crashed chain's new input that is dropped, is not hidden behind the first. Each
divergence is attributed to the invariant of spec section 6 whose observable it is.
"""

from __future__ import annotations

import re
from typing import Any

from steersim.core.model import Event
from steersim.core.product import Product, Transition
from steersim.core.replay import replay_monitors
from steersim.harness.finding import Finding
from steersim.harness.validate import Validation, default_match, steps_with_events, validate
from steersim.models.foundry import SPEC
from steersim.models.foundry.harness.runner import Recording
from steersim.models.foundry.spec import PACKAGE_QUEUE_CAP

MAX_ROUNDS = 6
SILENT_DEPTH = 4

FIELD_PROPERTY = {
    ("TaskRun", "input_id"): "turn-identity",
    ("TaskRun", "is_queued"): "no-lost-steers",
    ("handler.enter", "input_id"): "turn-identity",
    ("handler.enter", "entry_mode"): "turn-identity",
    ("handler.enter", "is_steered_turn"): "turn-identity",
    ("handler.enter", "input"): "fifo",
    ("handler.enter", "cancel"): "pre-cancel",
    ("handler.enter", "pending_input_count"): "live-count",
    ("handler.enter", "cancel_requested"): "cause-first",
    ("handler.check", "pending_input_count"): "live-count",
    ("handler.check", "cancel"): "signal",
    ("handler.check", "cancel_requested"): "cause-first",
    ("TaskRun.result", "outcome"): "own-outcome",
    ("TaskRun.result", "value"): "own-outcome",
    ("TaskRun.result", "caller"): "own-outcome",
    ("LastInputIdPreconditionFailed", "actual_last_input_id"): "if-match",
    ("TaskConflictError", "current_status"): "non-steerable",
    ("http.response", "status"): "responses",
    ("http.response", "code"): "responses",
    ("http.response", "response_status"): "responses",
}
START_RESULTS = {"TaskRun", "SteeringQueueFull", "LastInputIdPreconditionFailed", "TaskConflictError"}
EVENT_PROPERTY = {
    "SteeringQueueFull": "bound",
    "LastInputIdPreconditionFailed": "if-match",
    "TaskConflictError": "non-steerable",
    "TaskRun": "non-steerable",
    "handler.enter": "cooperative",
    "TaskRun.result": "own-outcome",
    "process.stop": "handles-resolve",
}


def model_params(rec: Recording) -> dict[str, Any]:
    """The model configuration that covers the scenario that was run."""
    scenario = rec.scenario
    events = rec.events
    return {
        "callers": max(rec.inputs, 1),
        "callers_in_order": not scenario.provider_yields,
        "queue_cap": PACKAGE_QUEUE_CAP,
        "steerable": scenario.steerable,
        "handler_steps": max((len(scenario.handler(k).steps) for k in range(max(rec.inputs, 1))), default=1),
        "preconditions": True,
        "crashes": sum(e.name == "process.crash" for e in events),
        "shutdowns": sum(e.name == "process.shutdown" for e in events),
        "queued_cancels": sum(e.name == "TaskRun.cancel" for e in events),
        "surface": scenario.surface,
    }


class HttpView:
    """The model as seen over HTTP: the Responses host shows no handles' futures, so the model's steps
    that emit only those are silent; the handler's safe points are its own, so they stay."""

    HIDDEN = frozenset({"TaskRun.result", "TaskRun.cancel"})
    # the model's facts without events are those of every event it emits, not of the ones this view shows
    step_facts = None
    successor_facts = None

    def __init__(self, model: Any) -> None:
        self.model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def observe(self, s: Any, a: Any, t: Any) -> list[Event]:
        return [e for e in self.model.observe(s, a, t) if e.name not in self.HIDDEN]


def judge(rec: Recording) -> list[Finding]:
    model = SPEC.build(model_params(rec))
    if rec.scenario.surface == "responses":
        model = HttpView(model)
    return monitor_findings(model, rec) + liveness_findings(rec) + divergence_findings(model, rec.events)


def monitor_findings(model: Any, rec: Recording) -> list[Finding]:
    """The core monitors over the facts of the recorded events: each one's first violation, and what
    each says of the end, when the run came to one (at the horizon nothing had happened for a long time)."""
    replayed = replay_monitors(model.facts(event) for event in rec.events)
    out = []
    for breach in replayed.first_breaches(ended=rec.end in ("quiescent", "horizon")):
        name = breach.monitor.name
        if breach.fact is None:
            out.append(Finding(name, "monitor", breach.message, f"monitor:{name}:at-end:{generic(breach.message)}"))
        else:
            out.append(Finding(name, "monitor", f"{breach.fact}: {breach.message}",
                               f"monitor:{name}:{generic(breach.message)}", position=breach.position))
    return out


def liveness_findings(rec: Recording) -> list[Finding]:
    if not rec.unresolved:
        return []
    ids = ", ".join(rec.unresolved)
    return [Finding("handles-resolve", "monitor",
                    f"the process lived to the horizon but these handles never resolved: {ids}",
                    "monitor:handles-resolve", detail={"unresolved": rec.unresolved})]


def divergence_findings(model: Any, observed: list[Event]) -> list[Finding]:
    """Validate, then name the diverging field and stop comparing it, or pass over the observation the
    model cannot produce, and validate again. A finding's position is its observation's index in the
    whole run; one found after passing over observations lists them in `detail["passed_over"]`, and the
    signature of the first finding passed over in `detail["after"]` (it may be an echo of that one)."""
    findings: list[Finding] = []
    masked: dict[str, set[str]] = {}
    passed_over: list[int] = []
    after = ""
    for _ in range(MAX_ROUNDS):
        kept = [i for i in range(len(observed)) if i not in passed_over]
        events = [mask(observed[i], masked) for i in kept]
        validation = validate(model, events)
        if validation.ok:
            break
        finding = explain(model, validation, events, kept)
        if passed_over:
            finding.detail.update(passed_over=list(passed_over), after=after)
        findings.append(finding)
        name, keys = finding.detail.get("event"), finding.detail.get("fields")
        if keys:
            masked.setdefault(name, set()).update(keys)
        elif name == "end":
            break
        else:
            passed_over.append(finding.position)
            after = after or finding.signature
    return findings


def explain(model: Any, validation: Validation, observed: list[Event], index: list[int] | None = None) -> Finding:
    """What the model offered where the observation left it. Of the model steps that could come next,
    the ones that explain the most observations are closest; if one of them differs from the next
    observation only in field values, those fields are the divergence, else the observation itself is.
    `index[i]` is the position in the whole run of `observed[i]` (observed may leave some out)."""
    product = Product(model)
    state = validation.path[-1].target if validation.path else product.init_states()[0]
    position = sum(len(t.events) for t in validation.path)
    reach, nearest = _nearest(steps_with_events(product, state, max_silent=SILENT_DEPTH), observed, position)
    event = observed[position + reach] if position + reach < len(observed) else None
    at = _in_run(position + reach, index)
    diffs = _fewest_differing_fields([t.events[reach] for t in nearest], event)
    if event is not None and diffs:
        key, expected, got = diffs[0]
        prop = FIELD_PROPERTY.get((event.name, key), "conformance")
        also = "".join(f"; {k}: expected {e!r}, got {g!r}" for k, e, g in diffs[1:])
        summary = (f"{event.name}.{key}: the model expects {expected!r}, the package gave {got!r}{also} "
                   f"(observation {at}: {event.name} {dict(event.data)})")
        detail = {"event": event.name, "field": key, "fields": [k for k, _, _ in diffs], "expected": expected,
                  "observed": got, "observation": at}
        signature = f"divergence:{prop}:{event.name}.{key}:{direction(expected, got)}"
        return Finding(prop, "divergence", summary, signature, position=at, detail=detail, explained=validation.path)
    offered = sorted({t.events[reach].name for t in nearest})
    name = event.name if event is not None else "end"
    prop = "start-outcome" if offered and {name, *offered} <= START_RESULTS else EVENT_PROPERTY.get(name, "conformance")
    summary = (f"observation {at} {name} {dict(event.data) if event else ''} is not a behaviour of the model, "
               f"which offers here: {', '.join(offered) or 'nothing more'}")
    shape = generic(repr(dict(event.data))) if event is not None else ""
    return Finding(prop, "divergence", summary, f"divergence:{prop}:{name}:{shape}", position=at,
                   detail={"event": name, "offered": offered, "observation": at}, explained=validation.path)


def _in_run(k: int, index: list[int] | None) -> int:
    """The position in the whole run of the k-th validated observation (past the last: the run's end)."""
    if index is None:
        return k
    return index[k] if k < len(index) else (index[-1] + 1 if index else k)


def _nearest(candidates: list[Transition], observed: list[Event], position: int) -> tuple[int, list[Transition]]:
    """The most observations any candidate step explains in full from `position`, and the candidates
    that explain that many and then offer one more event."""
    reach, nearest = 0, []
    for transition in candidates:
        k = 0
        while (k < len(transition.events) and position + k < len(observed)
               and default_match(transition.events[k], observed[position + k])):
            k += 1
        if k == len(transition.events):
            continue
        if k > reach:
            reach, nearest = k, []
        if k == reach:
            nearest.append(transition)
    return reach, nearest


def _fewest_differing_fields(offered: list[Event], event: Event | None) -> list[tuple[str, Any, Any]]:
    """The fields in which the closest offered event of the same name differs from `event`."""
    best: list[tuple[str, Any, Any]] = []
    for expected in offered:
        if event is None or expected.name != event.name:
            continue
        diffs = [(key, expected.data[key], event.data[key])
                 for key in event.data if key in expected.data and expected.data[key] != event.data[key]]
        if diffs and (not best or len(diffs) < len(best)):
            best = diffs
    return best


def direction(expected: Any, got: Any) -> str:
    """How an observed value differs, abstracted from the run: ids become `m#`, counts compare."""
    if isinstance(expected, int) and isinstance(got, int) and not isinstance(expected, bool):
        return "higher" if got > expected else "lower"
    return generic(f"{expected!r}->{got!r}")


def mask(event: Event, masked: dict[str, set[str]]) -> Event:
    keys = masked.get(event.name)
    if not keys:
        return event
    return Event(event.source, event.target, event.name, {k: v for k, v in event.data.items() if k not in keys})


def generic(text: str) -> str:
    """A message with its input ids abstracted, so that one problem seen on m1 and on m2 is one."""
    return re.sub(r"\bm\d+\b", "m#", text)
