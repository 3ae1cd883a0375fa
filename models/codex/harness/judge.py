"""Judge one recorded run: is it a behaviour of the model, and if not, which defect explains it?

The observation is validated against the model at the smallest configuration that can take the
scenario's steps (`sim.harness.validate`). A run the model cannot explain is tried against each bug
variant as a hypothesis: a variant that explains the whole run, or further than the model does, names the
root cause and the property it breaks. A divergence no variant explains is reported as it is, at the
first event the model cannot produce; a run that stalled (Codex never sent what a step waited for) is
reported with what it waited for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from models.codex.harness.observe import observe
from models.codex.harness.runner import Recording
from models.codex.harness.scenarios import Scenario
from models.codex.spec import SPEC
from sim.core.model import Event
from sim.harness.validate import Validation, validate

DIVERGENCE, DEFECT, STALLED = "divergence", "defect", "stalled"


@dataclass
class Finding:
    kind: str
    property: str
    cause: str  # the bug variant that explains the run, or a signature of the divergence
    summary: str
    scenario: str
    position: int
    events: list[Event] = field(default_factory=list)
    scenarios: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "property": self.property, "cause": self.cause, "summary": self.summary,
                "scenario": self.scenario, "position": self.position, "scenarios": sorted(self.scenarios),
                "events": [e.to_json() for e in self.events]}


def _reach(validation: Validation, total: int) -> int:
    return total if validation.ok else validation.divergence.position if validation.divergence else 0


def judge(scenario: Scenario, recording: Recording) -> list[Finding]:
    events = observe(recording)
    params = scenario.model_params()
    base = validate(SPEC.build(params), events)
    if base.ok:
        if recording.end == "ok":
            return []
        return [Finding(STALLED, "trace-validation", "stalled", recording.end, scenario.name, len(events), events)]
    assert base.divergence is not None
    position = base.divergence.position
    best: tuple[int, str] | None = None
    for variant in SPEC.variants:
        reach = _reach(validate(SPEC.build(params, variant.name), events), len(events))
        if reach > position and (best is None or reach > best[0]):
            best = (reach, variant.name)
    observed = base.divergence.observed
    if best is None:
        signature = f"{observed.name}:{observed.data.get('type', observed.data.get('outcome', ''))}"
        return [Finding(DIVERGENCE, "trace-validation", signature, base.divergence.summary(), scenario.name,
                        position, events)]
    variant = next(v for v in SPEC.variants if v.name == best[1])
    how = "explains the whole run" if best[0] == len(events) else f"explains it up to event {best[0]}"
    summary = (f"event {position} {observed.name} {dict(observed.data)} is not a behaviour of the model; the "
               f"variant {variant.name} ({variant.doc}) {how}")
    return [Finding(DEFECT, variant.caught_by or "trace-validation", variant.name, summary, scenario.name, position,
                    events)]
