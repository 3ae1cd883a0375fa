"""Judge one recorded run: is it a behaviour of the model, and if not, which defect explains it?

The observation is validated against the model at the smallest configuration that can take the
scenario's steps (`steersim.harness.validate`). A run the model cannot explain is tried against each bug
variant as a hypothesis: a variant that explains the whole run, or further than the model does, names the
root cause and the property it breaks. A divergence no variant explains is reported as it is, at the
first event the model cannot produce; a run that stalled (Codex never sent what a step waited for) is
reported with what it waited for.
"""

from __future__ import annotations

from collections.abc import Iterable

from steersim.core.model import Event
from steersim.core.product import Violation
from steersim.harness.finding import Finding
from steersim.harness.validate import Validation, validate
from steersim.models.codex import SPEC
from steersim.models.codex.harness.observe import observe
from steersim.models.codex.harness.runner import Recording
from steersim.models.codex.harness.scenarios import Scenario
from steersim.models.codex.model import CodexModel
from steersim.traces.trace import Trace, make_trace

DIVERGENCE, DEFECT, STALLED, SCHEMA = "divergence", "defect", "stalled", "schema"


def _reach(validation: Validation, total: int) -> int:
    return total if validation.ok else validation.divergence.position if validation.divergence else 0


def session_trace(scenario: Scenario, bug: str | None, validation: Validation, finding: str | None) -> Trace:
    """The explaining model path as a steersim trace (`steersim diagram` draws it), with the finding last."""
    end = [Violation("conformance", finding)] if finding else []
    params = SPEC.resolve(scenario.model_params())
    return make_trace(SPEC.name, params, bug, 0, validation.path, end="finding" if finding else None,
                      end_violations=end, system=CodexModel(params, bug))


def _hypothesis(params: dict[str, object], bug: str, events: list[Event]) -> tuple[int, str, Validation]:
    tried = validate(CodexModel(SPEC.resolve(params), bug), events)
    return _reach(tried, len(events)), bug, tried


def judge(scenario: Scenario, recording: Recording) -> tuple[list[Finding], Trace]:
    """The findings of one run (none when the model explains it) and the trace of the session."""
    return judge_events(scenario, recording.end, observe(recording))


def judge_events(scenario: Scenario, end: str, events: list[Event]) -> tuple[list[Finding], Trace]:
    """Judge a run's events (`end`: how the run ended). A run no single bug variant explains is tried with
    two at once: one run may show two defects."""
    params = scenario.model_params()
    base = validate(SPEC.build(params), events)
    if base.ok:
        if end == "ok":
            return [], session_trace(scenario, None, base, None)
        finding = _finding(STALLED, "trace-validation", "stalled", end, scenario, len(events), events)
        return [finding], session_trace(scenario, None, base, finding.summary)
    assert base.divergence is not None
    position, observed = base.divergence.position, base.divergence.observed
    names = [v.name for v in SPEC.variants]
    tried = [_hypothesis(params, name, events) for name in names]
    best = max(tried, key=lambda t: t[0])  # the first of the furthest-reaching, in the spec's order
    if best[0] < len(events):
        pairs = [_hypothesis(params, f"{a}+{b}", events) for i, a in enumerate(names) for b in names[i + 1:]]
        best = max([best, *pairs], key=lambda t: t[0])
    if best[0] <= position:
        signature = f"{observed.name}:{observed.data.get('type', observed.data.get('outcome', ''))}"
        finding = _finding(DIVERGENCE, "trace-validation", signature, base.divergence.summary(), scenario, position,
                           events)
        return [finding], session_trace(scenario, None, base, finding.summary)
    verb = "explain" if "+" in best[1] else "explains"
    how = f"{verb} the whole run" if best[0] == len(events) else f"{verb} it up to event {best[0]}"
    summary = (f"event {position} {observed.name} {dict(observed.data)} is not a behaviour of the model; "
               f"{' and '.join(best[1].split('+'))} {how}")
    trace = session_trace(scenario, best[1], best[2], summary)
    variants = {v.name: v for v in SPEC.variants}
    findings = [_finding(DEFECT, variants[name].caught_by or "trace-validation", name,
                         f"{summary} ({name}: {variants[name].doc})", scenario, position, events)
                for name in best[1].split("+")]
    return findings, trace


def schema_findings(scenario: Scenario, problems: Iterable[tuple[str, str]]) -> list[Finding]:
    """A message the build's own JSON Schema refuses, one finding per place (direction, method, field)."""
    return [_finding(SCHEMA, "protocol-schema", where, f"{where}: {what}", scenario, 0, []) for where, what in problems]


def _finding(kind: str, prop: str, cause: str, summary: str, scenario: Scenario, position: int,
             events: list[Event]) -> Finding:
    """A finding of one run: `cause` is the bug variant that explains it, or the divergence's signature;
    the run's events up to it go with it."""
    return Finding(prop, kind, summary, cause, position=position, cause=cause, scenario=scenario.name,
                   steps=[e.to_json() for e in events])
