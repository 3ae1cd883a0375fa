"""Judge one recording: the core monitors over its facts, Pydantic AI's own promises over the events it
shows, and trace validation against the model.

The monitors say in the common vocabulary what the run did wrong (a message accepted and never delivered,
delivered twice or out of order; a tool call without its one result); the promises say it in Pydantic AI's
words (`when_idle` waits for the end; `enqueue` on an ended run raises); validation says where the run
left the documented behaviour first. A divergence alone, with no property broken, is reported too.
"""

from __future__ import annotations

from typing import Any

from steersim.core.replay import replay_monitors
from steersim.harness.finding import Finding
from steersim.harness.validate import validate
from steersim.models.pydantic_ai import SPEC
from steersim.models.pydantic_ai.harness.runner import Recording


def model_params(rec: Recording) -> dict[str, Any]:
    """The model configuration that covers the scenario."""
    s = rec.scenario
    return {"runs": s.runs, "messages": len(s.arrivals), "priority": "any", "tool_calls": s.calls,
            "tool_rounds": 1 if s.calls else 0, "dequeue": s.dequeue, "reprioritise": s.promote,
            "cancel": bool(s.cancel), "cancelled_queue": "stranded"}


def judge(rec: Recording) -> list[Finding]:
    model = SPEC.build(model_params(rec))
    found = [*monitor_findings(model, rec), *record_findings(rec), *divergence_findings(model, rec)]
    if rec.end != "quiescent":
        found.append(Finding("run-completes", "record", f"the scenario ended at its {rec.end}: "
                             f"{'; '.join(rec.notes) or 'no note'}"))
    return found


def monitor_findings(model: Any, rec: Recording) -> list[Finding]:
    """The core monitors over the facts of the recorded events: each one's first violation, and what each
    says of the end when the runs came to rest."""
    replayed = replay_monitors(model.facts(event) for event in rec.events)
    out = []
    for breach in replayed.first_breaches(ended=rec.end == "quiescent"):
        summary = breach.message if breach.fact is None else f"{breach.fact}: {breach.message}"
        out.append(Finding(breach.monitor.name, "monitor", summary, position=breach.position))
    return out


def record_findings(rec: Recording) -> list[Finding]:
    """Pydantic AI's own promises, judged on the events: a `when_idle` message is delivered only by the end
    of a run (`redirect`), never into a request the run makes on its own; `enqueue` on a run that has ended
    raises `UserError`; the results of tool calls that finished before a cancellation are kept in the history a
    continuing run sends."""
    priority: dict[str, str] = {}
    ended: set[str] = set()
    current = "r1"
    found: dict[str, Finding] = {}
    for position, event in enumerate(rec.events):
        d = event.data
        if event.name == "run.started":
            current = d["run"]
        elif event.name in ("run.ended", "stopped"):
            ended.add(d["run"])
        elif event.name in ("enqueue", "priority"):
            priority[d["msg"]] = d["priority"]
            if event.name == "enqueue" and d["accepted"] and current in ended and "after-end" not in found:
                found["after-end"] = Finding("enqueue-raises-after-end", "record",
                                             f"{d['msg']} was accepted by {current}, which had ended",
                                             position=position)
        elif event.name == "request":
            early = [m for m in d["delivered"] if priority.get(m) == "when_idle"]
            if early and "early" not in found:
                found["early"] = Finding("when-idle-waits-for-end", "record",
                                         f"when_idle {', '.join(early)} went into {d['turn']}, a request the run "
                                         "made on its own", position=position)
    if rec.lost_results:
        found["kept"] = Finding("finished-results-kept", "record",
                                f"calls {', '.join(rec.lost_results)} returned before the run was cancelled, but the "
                                "continuing run's first request does not carry their results")
    return list(found.values())


def divergence_findings(model: Any, rec: Recording) -> list[Finding]:
    validation = validate(model, rec.events, require_quiescent=rec.end == "quiescent")
    if validation.ok or validation.divergence is None:
        return []
    d = validation.divergence
    offered = sorted({f"{e.name} {dict(e.data)}" for e in d.expected})
    return [Finding("trace-validation", "divergence",
                    f"{d.observed.name} {dict(d.observed.data)} is not what the documented behaviour does "
                    f"there (observation {d.position})", position=d.position, detail={"offered": offered},
                    explained=tuple(validation.path))]
