"""Judge one recording: the core monitors over its facts, LangGraph's own promises over the records it
shows, and trace validation against the model.

The monitors and the record checks say what the server did wrong in the common vocabulary and in
LangGraph's words; validation says where the server left the documented behaviour first (the model
offers what it could have done there). A divergence alone, with no property broken, is reported too:
it is a behaviour the model does not have, and so a gap in the model or a defect, to be told apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from models.langgraph.harness.graph import NODES
from models.langgraph.harness.runner import Recording
from models.langgraph.spec import SPEC
from sim.core.model import Event
from sim.core.monitors import CORE_MONITORS, MonitorViolation
from sim.harness.validate import validate

IN_FLIGHT = ("pending", "running")


@dataclass
class Finding:
    """One problem in one recording: the property it breaks, `kind` (monitor, record or divergence),
    what happened, and the index of the observation where it showed (None: at the end)."""

    property: str
    kind: str
    summary: str
    position: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    explained: tuple[Any, ...] = ()  # a divergence's model path through the observations before it


def model_params(rec: Recording) -> dict[str, Any]:
    """The model configuration that covers the scenario."""
    return {"runs": len(rec.scenario.arrivals), "nodes": NODES, "strategy": "any",
            "stream_clients": rec.scenario.joins, "node_errors": bool(rec.scenario.fail)}


def judge(rec: Recording) -> list[Finding]:
    model = SPEC.build(model_params(rec))
    return [*monitor_findings(model, rec), *record_findings(rec), *divergence_findings(model, rec)]


def monitor_findings(model: Any, rec: Recording) -> list[Finding]:
    states = [m.initial() for m in CORE_MONITORS]
    broken: dict[str, Finding] = {}
    for position, event in enumerate(rec.events):
        for fact in model.facts(event):
            for index, monitor in enumerate(CORE_MONITORS):
                if monitor.name in broken or fact.name not in monitor.watches:
                    continue
                try:
                    states[index] = monitor.step(states[index], fact)
                except MonitorViolation as violation:
                    broken[monitor.name] = Finding(monitor.name, "monitor", f"{fact}: {violation}", position)
    if rec.end == "quiescent":
        for index, monitor in enumerate(CORE_MONITORS):
            message = monitor.at_end(states[index])
            if message and monitor.name not in broken:
                broken[monitor.name] = Finding(monitor.name, "monitor", message)
    return list(broken.values())


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
                                           "is in flight", position)
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
                    f"there (observation {d.position})", d.position, {"offered": offered}, validation.path)]
