"""Judge one recording: the core monitors over its facts, LangGraph's own promises over the records it
shows, and trace validation against the model.

The monitors and the record checks say what the server did wrong in the common vocabulary and in
LangGraph's words; validation says where the server left the documented behaviour first (the model
offers what it could have done there). A divergence alone, with no property broken, is reported too:
it is a behaviour the model does not have, and so a gap in the model or a defect, to be told apart.
"""

from __future__ import annotations

from typing import Any

from steersim.core.model import Event
from steersim.core.replay import replay_monitors
from steersim.harness.finding import Finding
from steersim.harness.validate import validate
from steersim.models.langgraph import SPEC
from steersim.models.langgraph.harness.graph import NODES
from steersim.models.langgraph.harness.runner import Recording

IN_FLIGHT = ("pending", "running")


def model_params(rec: Recording) -> dict[str, Any]:
    """The model configuration that covers the scenario."""
    return {"runs": len(rec.scenario.arrivals), "nodes": NODES, "strategy": "any",
            "stream_clients": rec.scenario.joins, "node_errors": bool(rec.scenario.fail),
            "cancels": 0}  # the harness cancels a run only by creating another


def judge(rec: Recording) -> list[Finding]:
    model = SPEC.build(model_params(rec))
    return [*monitor_findings(model, rec), *record_findings(rec), *divergence_findings(model, rec)]


def monitor_findings(model: Any, rec: Recording) -> list[Finding]:
    """The core monitors over the facts of the recorded events: each one's first violation, and what each
    says of the end when the run came to rest."""
    replayed = replay_monitors(model.facts(event) for event in rec.events)
    out = []
    for breach in replayed.first_breaches(ended=rec.end == "quiescent"):
        name = breach.monitor.name
        summary = breach.message if breach.fact is None else f"{breach.fact}: {breach.message}"
        out.append(Finding(name, "monitor", summary, position=breach.position))
    return out


class Records:
    """The thread's records as the recorded events show them, replayed event by event."""

    def __init__(self) -> None:
        self.runs: dict[str, str] = {}
        self.checkpoints: dict[str, tuple[str, tuple[str, ...], str | None]] = {}  # name -> owner, values, parent
        self.thread: tuple[str, tuple[str, ...]] = ("idle", ())
        self.rolled_back: set[str] = set()

    def apply(self, event: Event) -> None:
        d = event.data
        if event.name == "run.created":
            if d["strategy"] == "rollback":
                self.rolled_back |= {run for run, status in self.runs.items() if status in IN_FLIGHT}
            self.runs[d["run"]] = "pending"
        elif event.name == "run.status":
            self.runs[d["run"]] = d["status"]
        elif event.name == "run.deleted":
            self.runs[d["run"]] = "deleted"
        elif event.name == "checkpoint":
            self.checkpoints[d["name"]] = (d["run"], tuple(d["values"]), d["parent"])
        elif event.name == "checkpoints.deleted":
            self.checkpoints = {k: v for k, v in self.checkpoints.items() if v[0] != d["run"]}
        elif event.name == "thread":
            self.thread = (d["status"], tuple(d["values"]))

    def head(self) -> tuple[str, ...]:
        return list(self.checkpoints.values())[-1][1] if self.checkpoints else ()

    def in_flight(self) -> bool:
        return any(status in IN_FLIGHT for status in self.runs.values())


def record_findings(rec: Recording) -> list[Finding]:
    """LangGraph's own promises, judged on the records: the thread is busy while a run is in flight
    (at the end of each step), and at the end a rolled-back run has left no trace and the thread
    agrees with its latest checkpoint."""
    records = Records()
    found: dict[str, Finding] = {}
    observations = rec.observations
    for position, observation in enumerate(observations):
        records.apply(observation.event)
        last_of_step = position + 1 == len(observations) or observations[position + 1].step != observation.step
        if last_of_step and records.in_flight() and records.thread[0] != "busy" and "thread-busy" not in found:
            found["thread-busy"] = Finding("thread-busy-while-in-flight", "record",
                                           f"the thread is {records.thread[0]} while "
                                           f"{', '.join(r for r, s in records.runs.items() if s in IN_FLIGHT)} "
                                           "is in flight", position=position)
    if rec.end != "quiescent":
        return list(found.values())
    head = records.head()
    names = set(records.checkpoints)
    for run in sorted(records.rolled_back):
        left = [n for n, (owner, _, _) in records.checkpoints.items() if owner == run]
        problems = []
        if records.runs.get(run) != "deleted":
            problems.append(f"its record is still there ({records.runs.get(run)})")
        if left:
            problems.append(f"its checkpoints {', '.join(left)} remain")
        if run in head or run in records.thread[1]:
            problems.append(f"its input {run} is in the thread's values {list(records.thread[1])}")
        if problems:
            found[f"rollback-{run}"] = Finding("rollback-leaves-no-trace", "record",
                                               f"{run} was rolled back, but " + "; ".join(problems))
    dangling = sorted(n for n, (_, _, parent) in records.checkpoints.items() if parent and parent not in names)
    if dangling:
        found["dangling"] = Finding("rollback-leaves-no-trace", "record",
                                    f"checkpoints {', '.join(dangling)} have a parent that was deleted")
    if records.thread[1] != head:
        found["values"] = Finding("thread-agrees-with-last-run", "record",
                                  f"the thread's values {list(records.thread[1])} are not its latest "
                                  f"checkpoint's {list(head)}")
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
