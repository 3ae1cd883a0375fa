"""Where a counterexample went wrong, not only where a monitor noticed.

A monitor notices a lost steer when something later depends on it (a younger steer applied first, the
run ending with it open); the steer was lost earlier, at the step that took it out of the system's
state. The monitor names the obligations at stake (`MonitorViolation.subjects`, `open_subjects`); this
module replays the trace's facts through the monitors to learn them, then looks in the state's view at
each step (`steersim.core.stateview`) for the last step after which the subject no longer appears anywhere: the
step that made the obligation impossible. A subject still in the state when the monitor noticed was not
lost, so the cause is the detection itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from steersim.core.facts import Fact
from steersim.core.monitors import Monitor, MonitorViolation
from steersim.core.replay import replay_monitors
from steersim.core.stateview import View, mentions

if TYPE_CHECKING:
    from steersim.traces.trace import Trace, TraceStep

EVENTUALLY = ".eventually"


@dataclass(frozen=True)
class Cause:
    """`cause_step` is the step that made the obligation impossible (the detection step when nothing
    was lost; None for a violation of the end state with nothing lost), `subject` the steer or call it
    concerns, `lost` whether the subject left the state unresolved."""

    cause_step: int | None
    subject: str | None
    lost: bool
    summary: str

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cause_step": self.cause_step}
        if self.subject is not None:
            out["subject"] = self.subject
        out["lost"] = self.lost
        out["summary"] = self.summary
        return out


def annotate_causes(trace: Trace, system: Any) -> None:
    """Add each violation's cause to its record in `trace` (`cause_step`, `subject`, `summary`)."""
    from steersim.core.product import Product

    monitors = Product(system).monitors
    noticed = _monitor_findings(trace.steps, monitors)
    views = trace.views()
    for step in trace.steps:
        for record in step.violations:
            subjects = noticed.get((record["property"], step.i), [])
            record.update(explain(trace, views, monitors, record, step.i, subjects.pop(0) if subjects else None))
    for record in trace.violations:
        at_end = noticed.get((record["property"], None), [])
        record.update(explain(trace, views, monitors, record, None, at_end[0] if at_end else None))


def _monitor_findings(steps: Sequence[TraceStep],
                      monitors: Sequence[Monitor]) -> dict[tuple[str, int | None], list[tuple]]:
    """Replay the facts through the monitors as the product does: per (monitor, step) the subjects of
    each violation it raised there, in order, and per (monitor, None) what was still open at the end."""
    replayed = replay_monitors(([Fact.from_json(obj) for obj in step.facts] for step in steps), monitors)
    found: dict[tuple[str, int | None], list[tuple]] = {}
    for breach in replayed.breaches:
        found.setdefault((breach.monitor.name, steps[breach.position].i), []).append(breach.subjects)
    for monitor, state in zip(monitors, replayed.final, strict=True):
        found[(monitor.name, None)] = [monitor.open_subjects(state)]
        found[(monitor.name + EVENTUALLY, None)] = [monitor.open_subjects(state)]
    return found


def explain(trace: Trace, views: list[View] | None, monitors: Sequence[Monitor], record: Mapping[str, Any],
            detected: int | None, subjects: tuple | None) -> dict[str, Any]:
    """The cause of one violation record, detected at step `detected` (None: by the end state)."""
    name = record["property"]
    monitor = next((m for m in monitors if name in (m.name, m.name + EVENTUALLY)), None)
    last = len(trace.steps) - 1 if detected is None else detected
    if views is not None and monitor is not None:
        still_open = _open_after(trace.steps, monitor)
        losses = [(step, subject) for subject in subjects or ()
                  if (step := _left_at(views, subject, last)) is not None and subject in still_open[step]]
        if losses:
            step, subject = min(losses)
            return Cause(step, subject, True, _lost_sentence(trace, views, monitor, subject, step, detected)).to_json()
    subject = (subjects or (None,))[0]
    summary = _noticed_sentence(trace, name, record["message"], detected)
    where = None if views is None or subject is None else _place(views[last], subject)
    if where is not None:
        summary += f" ({subject} was still in {where} when the step began, so no earlier step lost it)"
    return Cause(detected, subject, False, summary).to_json()


def _place(view: View, subject: str) -> str | None:
    """The first entry of a state's view that holds `subject`, or None."""
    return next((key for key, value in view.items() if mentions(value, subject)), None)


def _open_after(steps: Sequence[TraceStep], monitor: Monitor) -> list[frozenset[str]]:
    """The subjects `monitor` still waits on after each step. Leaving the state is a loss only for a
    subject still open then: a steer applied and merely left in its slot, removed later, was not lost
    by the step that removed it."""
    state, out = monitor.initial(), []
    for step in steps:
        for fact in (Fact.from_json(obj) for obj in step.facts):
            if fact.name in monitor.watches:
                with suppress(MonitorViolation):  # as the product does: a monitor that raises keeps its state
                    state = monitor.step(state, fact)
        out.append(frozenset(monitor.open_subjects(state)))
    return out


def _left_at(views: list[View], subject: str, last: int) -> int | None:
    """The step after which `subject` is gone from the state for good (up to the state after step
    `last`), or None when it is still there then or was never there."""
    if mentions(views[last + 1], subject):
        return None
    for k in range(last, -1, -1):
        if mentions(views[k], subject):
            return k
    return None


def _lost_sentence(trace: Trace, views: list[View], monitor: Monitor, subject: str, step: int,
                   detected: int | None) -> str:
    where = _place(views[step], subject) or "the state"
    opened = _last_fact_about(trace.steps[:step] or trace.steps[: step + 1], subject)
    said = "" if opened is None else f" was {opened[1]} at step {opened[0]} and"
    when = "at the end" if detected is None else f"at step {detected}"
    return (f"{subject}{said} was removed from {where} at step {step} ({_action(trace.steps[step])}) without "
            f"{monitor.unmet}; {monitor.name} noticed {when}")


def _noticed_sentence(trace: Trace, name: str, message: str, detected: int | None) -> str:
    if detected is None:
        return f"{name} is broken at the end: {message}"
    return f"{name} is broken at step {detected} ({_action(trace.steps[detected])}): {message}"


def _last_fact_about(steps: Sequence[TraceStep], subject: str) -> tuple[int, str] | None:
    """The latest step whose facts name `subject`, and that fact's verb (`steer.accepted`: accepted)."""
    for step in reversed(steps):
        for fact in reversed(step.facts):
            if any(value == subject for key, value in fact.items() if key != "fact"):
                return step.i, fact["fact"].rsplit(".", 1)[-1]
    return None


def _action(step: TraceStep) -> str:
    return step.action["kind"]
