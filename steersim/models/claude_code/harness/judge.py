"""Judge one recorded run three ways: by the core monitors over its facts, by Claude Code's own records,
and by trace validation against the model.

The core monitors read the facts of the observed events directly (`steersim.core.replay`), so a lost or
doubled message, a turn started over a running one or a Bash call without its tool_result is named by
the invariant it breaks, whatever the model says. The transcript's `queue-operation` records must balance:
every message `enqueue`d is `dequeue`d or `remove`d once. Then the observation is validated against the
model at the smallest configuration that can take the scenario's steps; a run the model cannot explain
is tried against each bug variant: one that explains the whole run, or further than the model does, names
the root cause and the property it breaks. A divergence no variant explains is reported as it is; a run
that stalled is reported with what it waited for.
"""

from __future__ import annotations

from steersim.core.model import Event
from steersim.core.product import Violation
from steersim.core.replay import replay_monitors
from steersim.harness.finding import Finding
from steersim.harness.validate import Validation, validate
from steersim.models.claude_code import SPEC
from steersim.models.claude_code.harness.observe import observe
from steersim.models.claude_code.harness.runner import Recording
from steersim.models.claude_code.harness.scenarios import Scenario
from steersim.models.claude_code.model import ClaudeCodeModel
from steersim.traces.trace import Trace, make_trace

DIVERGENCE, DEFECT, STALLED, MONITOR, RECORD = "divergence", "defect", "stalled", "monitor", "record"


def _reach(validation: Validation, total: int) -> int:
    return total if validation.ok else validation.divergence.position if validation.divergence else 0


def session_trace(scenario: Scenario, bug: str | None, validation: Validation, finding: str | None) -> Trace:
    """The explaining model path as a steersim trace (`steersim diagram` draws it), with the finding last."""
    end = [Violation("conformance", finding)] if finding else []
    params = SPEC.resolve(scenario.model_params())
    return make_trace(SPEC.name, params, bug, 0, validation.path, end="finding" if finding else None,
                      end_violations=end, system=ClaudeCodeModel(params, bug))


def judge(scenario: Scenario, recording: Recording) -> tuple[list[Finding], Trace]:
    """The findings of one run (none when everything holds) and the trace of the session."""
    events = observe(recording)
    found = monitor_findings(scenario, recording.end, events) + record_findings(scenario, recording)
    judged, trace = judge_events(scenario, recording.end, events)
    return found + judged, trace


def monitor_findings(scenario: Scenario, end: str, events: list[Event]) -> list[Finding]:
    """The core invariants over the observed facts; their end state counts only for a run that ended."""
    model = SPEC.build(scenario.model_params())
    replay = replay_monitors(model.facts(event) for event in events)
    return [_finding(MONITOR, breach.monitor.name, breach.monitor.name, breach.message, scenario,
                     len(events) if breach.position is None else breach.position, events)
            for breach in replay.first_breaches(ended=end == "ok")]


def record_findings(scenario: Scenario, recording: Recording) -> list[Finding]:
    """The transcript's queue must balance: as many `dequeue`s and `remove`s as `enqueue`s."""
    if recording.end != "ok":
        return []
    ops = [e.get("operation") for e in recording.transcript if e.get("type") == "queue-operation"]
    enqueued, taken = ops.count("enqueue"), ops.count("dequeue") + ops.count("remove")
    if enqueued == taken:
        return []
    summary = (f"the transcript records {enqueued} enqueue(s) but {taken} dequeue(s) and remove(s): "
               f"{', '.join(str(op) for op in ops)}")
    return [_finding(RECORD, "queue-operations-balance", "queue-operations-balance", summary, scenario, 0, [])]


def _hypothesis(params: dict[str, object], bug: str, events: list[Event]) -> tuple[int, str, Validation]:
    tried = validate(ClaudeCodeModel(SPEC.resolve(params), bug), events)
    return _reach(tried, len(events)), bug, tried


def judge_events(scenario: Scenario, end: str, events: list[Event]) -> tuple[list[Finding], Trace]:
    """Validate a run's events (`end`: how the run ended) against the model and, where it diverges,
    against each bug variant."""
    params = scenario.model_params()
    base = validate(SPEC.build(params), events)
    if base.ok:
        if end == "ok":
            return [], session_trace(scenario, None, base, None)
        finding = _finding(STALLED, "trace-validation", "stalled", end, scenario, len(events), events)
        return [finding], session_trace(scenario, None, base, finding.summary)
    assert base.divergence is not None
    position, observed = base.divergence.position, base.divergence.observed
    tried = [_hypothesis(params, variant.name, events) for variant in SPEC.variants]
    best = max(tried, key=lambda t: t[0])  # the first of the furthest-reaching, in the spec's order
    if best[0] <= position:
        signature = f"{observed.name}:{observed.data.get('state', observed.data.get('how', ''))}"
        finding = _finding(DIVERGENCE, "trace-validation", signature, base.divergence.summary(), scenario, position,
                           events)
        return [finding], session_trace(scenario, None, base, finding.summary)
    how = "explains the whole run" if best[0] == len(events) else f"explains it up to event {best[0]}"
    summary = f"event {position} {observed.name} {dict(observed.data)} is not a behaviour of the model; {best[1]} {how}"
    variant = next(v for v in SPEC.variants if v.name == best[1])
    finding = _finding(DEFECT, variant.caught_by or "trace-validation", variant.name,
                       f"{summary} ({variant.name}: {variant.doc})", scenario, position, events)
    return [finding], session_trace(scenario, best[1], best[2], summary)


def _finding(kind: str, prop: str, cause: str, summary: str, scenario: Scenario, position: int,
             events: list[Event]) -> Finding:
    """A finding of one run: `cause` is the bug variant or check that explains it, or the divergence's
    signature; the run's events up to it go with it."""
    return Finding(prop, kind, summary, cause, position=position, cause=cause, scenario=scenario.name,
                   steps=[e.to_json() for e in events])
