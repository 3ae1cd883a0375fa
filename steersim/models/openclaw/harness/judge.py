"""Judging one recorded run: the core fact monitors over what the real code did, trace validation
against the model, and the model's own properties along the path that explains the run.

Each problem becomes a `Finding` with its root cause (`causes.py`) where one is catalogued, or else a
signature, so that many scenarios that show the same behaviour are reported once, with the shortest
scenario that reproduces it. Within one run, checks that fail for the same cause make one finding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from steersim.core.model import Event
from steersim.core.monitors import CORE_PROPERTY_NAMES
from steersim.core.paths import step_json
from steersim.core.product import Product
from steersim.core.replay import replay_monitors
from steersim.harness.finding import Finding
from steersim.harness.validate import Divergence, default_match, steps_with_events, validate
from steersim.models.openclaw import SPEC
from steersim.models.openclaw.facts import facts as facts_of
from steersim.models.openclaw.harness.causes import CAUSES, cause_of, run_facts
from steersim.models.openclaw.harness.scenarios import Scenario
from steersim.models.openclaw.harness.translate import observed_events

IDS = re.compile(r"'(m|c|f|a)-?\d+'")


def judge(scenario: Scenario, result: dict[str, Any]) -> list[Finding]:
    """Everything wrong with one run: a driver error, monitor violations, a divergence from the model."""
    if result.get("error"):
        first = result["error"].splitlines()[0]
        return [Finding("driver", "divergence", f"the real run failed: {first}", f"error {first}", scenario=scenario)]
    events = observed_events(result["records"])
    findings = monitor_findings(scenario, events)
    steers = sum(1 for r in result["records"] if r["ev"] in ("steer", "steer_refused"))
    aborted = any(r["ev"] == "abort" for r in result["records"])
    model = SPEC.build(scenario.model_params(steers, aborted))
    validation = validate(model, events, require_quiescent=True)
    if validation.ok:
        findings += property_findings(scenario, validation.path)
    elif validation.divergence is not None:
        findings.append(divergence_finding(scenario, model, validation.divergence, events))
    if result.get("unperformed"):
        findings.append(Finding("plan", "divergence",
                                "the real run never reached a point where the model places a steer",
                                "unreached point", scenario=scenario))
    return by_cause(scenario, events, findings)


def by_cause(scenario: Scenario, events: Sequence[Event], findings: list[Finding]) -> list[Finding]:
    """Give each failed check its catalogued cause and keep one finding per cause: the first, which
    carries the path that explains it."""
    facts = run_facts(events)
    context = {"layer": scenario.layer, "parallel": scenario.knobs.tool_execution == "parallel",
               "stop_after_turn": scenario.knobs.stop_after_turn,
               "failed": {f.property for f in findings}}
    out: list[Finding] = []
    for finding in findings:
        cause = cause_of(finding.property, facts, context) if finding.kind != "divergence" else ""
        if cause:
            if any(kept.cause == cause for kept in out):
                continue
            finding.cause, finding.signature = cause, f"cause {cause}"
            finding.kind = "by-design" if CAUSES[cause].by_design else "defect"
            finding.summary = f"{CAUSES[cause].title} ({finding.property}: {finding.summary})"
        elif finding.kind != "divergence":
            finding.kind = "violation"
        out.append(finding)
    return out


def monitor_findings(scenario: Scenario, events: Sequence[Event]) -> list[Finding]:
    """The core invariants (`steersim.core.monitors.CORE_MONITORS`) over the facts of the recorded events,
    in the monitors' order: each one's first violation, or what it says of the end."""
    facts = [facts_of(event) for event in events]
    order = {name: index for index, name in enumerate(CORE_PROPERTY_NAMES)}
    out = []
    for breach in sorted(replay_monitors(facts).first_breaches(), key=lambda b: order[b.monitor.name]):
        if breach.position is None:
            message, last = breach.message, len(events)
        else:
            message, last = f"{events[breach.position].name}: {breach.message}", breach.position + 1
        cause = _cause(scenario)
        steps = [{"event": event.to_json(), "facts": [f.to_json() for f in event_facts]}
                 for event, event_facts in zip(events[:last], facts[:last], strict=True)]
        out.append(Finding(breach.monitor.name, "monitor", f"{message} [{cause}]",
                           f"{breach.monitor.name} {IDS.sub('ID', message)} {cause}", scenario=scenario, steps=steps))
    return out


def _cause(scenario: Scenario) -> str:
    """What in the scenario exposes a problem with no catalogued cause, so that different ones are
    reported apart."""
    if any(step.after[0].startswith("agent_end") for step in scenario.plan):
        return "a steer accepted while agent_end listeners run"
    if scenario.aborts:
        return "the run was aborted"
    if scenario.knobs.stop_after_turn:
        return "shouldStopAfterTurn ended the run"
    return "no abort, no stop hook"


def property_findings(scenario: Scenario, path: Sequence[Any]) -> list[Finding]:
    """The model's own properties broken on the path that explains the run (core ones are judged above)."""
    out = []
    for index, transition in enumerate(path):
        for violation in transition.violations:
            if violation.property in CORE_PROPERTY_NAMES:
                continue
            summary = f"{violation.message} (at model step {index + 1}, {transition.action.label()})"
            steps = [step_json(t) for t in path[: index + 1]]
            out.append(Finding(violation.property, "monitor", summary,
                               f"{violation.property} {transition.action.kind}", scenario=scenario, steps=steps))
    return out


def divergence_finding(scenario: Scenario, model: Any, divergence: Divergence, events: Sequence[Event]) -> Finding:
    """Name the first observed event that no model step can produce: the model's steps are atomic, so
    the step that comes closest (the longest run of matching events) is compared event by event, and
    the fields that differ from its event at the first mismatch are named."""
    position = divergence.position
    observed, expected = _closest_mismatch(model, divergence, events)
    if expected is not None and expected.name == observed.name:
        differing = _differing(observed, expected)
        detail = "; ".join(f"{k}: real {observed.data[k]!r}, model {expected.data.get(k)!r}" for k in differing)
        signature = f"{observed.name} " + " ".join(f"{k}={observed.data[k]!r}" for k in differing)
    else:
        offered = expected.name if expected is not None else "nothing (it was done)"
        detail = f"the real run has {observed.name} {dict(observed.data)}; the model's next step is {offered}"
        signature = f"{observed.name} instead of {offered}"
    summary = f"after {len(divergence.explained)} model steps the real run diverges: {detail}"
    steps = [step_json(t) for t in divergence.explained]
    steps.append({"observed": observed.to_json(), "position": position,
                  "expected": [e.to_json() for e in divergence.expected],
                  "observed_tail": [e.to_json() for e in events[position: position + 8]]})
    return Finding("trace-validation", "divergence", summary, f"divergence {IDS.sub('ID', signature)}",
                   scenario=scenario, steps=steps)


def _closest_mismatch(model: Any, divergence: Divergence, events: Sequence[Event]) -> tuple[Event, Event | None]:
    product = Product(model)
    state = divergence.explained[-1].target if divergence.explained else product.init_states()[0]
    position = divergence.position
    best: tuple[int, Event, Event | None] = (-1, divergence.observed, None)
    for transition in steps_with_events(product, state, budget=64):
        for offset, event in enumerate(transition.events):
            index = position + offset
            if index >= len(events) or not default_match(event, events[index]):
                if offset > best[0]:
                    best = (offset, events[index] if index < len(events) else divergence.observed, event)
                break
    return best[1], best[2]


def _differing(observed: Event, expected: Event) -> list[str]:
    return [k for k, v in observed.data.items() if k not in expected.data or expected.data[k] != v]
