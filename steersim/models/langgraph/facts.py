"""The LangGraph model's events, and the harness's recorded ones, in the common vocabulary.

A run is a steer of the thread and a turn: its creation is submitted and then accepted (stored) or
rejected (409); its task's start and stop are the turn's; its input is applied when its task stops
with its input still in a stored checkpoint, and failed when it does not (rolled back, or cancelled
before its input was written), or when a run cancelled while pending is first marked interrupted or
deleted.
"""

from __future__ import annotations

from collections.abc import Sequence

from steersim.core import facts as F
from steersim.core.facts import Fact
from steersim.core.model import Event
from steersim.models.langgraph.state import INTERRUPTED, RUNNING, THREAD


def facts(event: Event) -> Sequence[Fact]:
    d = event.data
    name = event.name
    if name == "run.created":
        return (F.steer_submitted(d["run"], THREAD), F.steer_accepted(d["run"]))
    if name == "run.rejected":
        return (F.steer_submitted(d["run"], THREAD), F.steer_rejected(d["run"], str(d["code"])))
    if name == "run.status":
        if d["status"] == RUNNING:
            return (F.turn_started(d["run"], THREAD),)
        if d["status"] == INTERRUPTED and not d["started"]:
            return (F.steer_failed(d["run"], "interrupted"),)
        return ()
    if name == "run.deleted":  # a run marked interrupted while pending has failed already
        return () if d["started"] or d["settled"] else (F.steer_failed(d["run"], "rolled-back"),)
    if name == "checkpoint":
        return (F.history_appended(THREAD, d["adds"]),) if d["adds"] == d["run"] else ()
    if name == "task.ended":
        outcome = F.steer_applied(d["run"], d["run"]) if d["kept"] else F.steer_failed(d["run"], "cancelled")
        return (F.turn_ended(d["run"], "stopped"), outcome)
    return ()


# The order in which the events of one atomic step are recorded (the recorder reads a step's changes
# all at once): new checkpoints, deleted checkpoints, new runs, status changes, deleted runs, the
# thread, stream clients, then what the harness saw happen (answers, a task's end).
STEP_ORDER = ("checkpoint", "checkpoints.deleted", "run.created", "run.status", "run.deleted", "thread",
              "stream.joined", "stream.left", "run.response", "run.rejected", "task.ended")


def canonical(events: Sequence[Event]) -> list[Event]:
    """The events of one step in recording order (stable: runs keep their order within a kind)."""
    return sorted(events, key=lambda e: STEP_ORDER.index(e.name))
