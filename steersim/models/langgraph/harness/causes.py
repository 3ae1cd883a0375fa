"""The root causes behind the findings, each recognised by its mechanism in the recorded events, with
what LangGraph documents about it and the standalone script that reproduces it (`repro/`).

A recording's findings are explained by the causes whose evidence it shows; a finding no known cause
explains is reported as `unexplained` with the recording, for a person to read. `documented` says
whether the behaviour contradicts LangGraph's own documentation (a defect) or only the model's
stricter reading (steersim's core invariant, which the docs neither promise nor rule out).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from steersim.harness.finding import Finding
from steersim.models.langgraph.harness.runner import Recording

REPRO = Path(__file__).parent / "repro"
DOCS = "https://docs.langchain.com/langsmith/double-texting"
ROLLBACK_DOCS = "https://docs.langchain.com/langsmith/rollback-concurrent"
STATUS_DOCS = "https://langchain-ai.github.io/langgraph/cloud/how-tos/check_thread_status"


@dataclass(frozen=True)
class Cause:
    name: str
    title: str
    mechanism: str
    documented: bool
    contract: str
    script: str
    conform: bool = True  # False: the harness cannot show it (it needs a hop to the thread pool to be slow,
    # which the virtual-time loop runs inline); the model's search finds it and the script reproduces it


    @property
    def repro(self) -> Path:
        return REPRO / self.script


CAUSES = (
    Cause("next-run-starts-before-cancelled-task-stops",
          "a cancelled run's task still runs when the next run starts",
          "Runs.cancel writes status `interrupted` at once, and Runs.next only looks for a run whose status is "
          "`running`, so the dispatcher starts the next run while the cancelled run's task is still unwinding "
          "(its node's clean-up awaits); under rollback with a stream client, the next run starts from the "
          "cancelled run's checkpoints, which the cancelled task deletes when it stops",
          False,
          f"not promised either way: the docs ({DOCS}) say interrupt 'halts the current execution' and rollback "
          "'reverts all progress', not when the next run may start; under rollback the outcome contradicts "
          f"'the first run is completely deleted from the database' ({ROLLBACK_DOCS})",
          "overlap_after_cancel.py"),
    Cause("rollback-orphans-checkpoints",
          "rollback deletes a running run before its task stops writing checkpoints",
          "with no stream client on the running run, Runs.cancel deletes its record and checkpoints at once; the "
          "checkpoints its task writes before the cancellation reaches it are never deleted (the worker's own "
          "delete finds no record, 404, and is ignored), and the next run starts from them with the "
          "rolled-back input in its values",
          True, f"rollback: 'the first run is completely deleted from the database' ({ROLLBACK_DOCS})",
          "rollback_orphans.py"),
    Cause("rollback-keeps-watched-pending-run",
          "rollback keeps a pending run a stream client watches",
          "Runs.cancel deletes a pending run under rollback only when no stream client is subscribed to it "
          "(`if queues or action != 'rollback'`); a watched one is marked `interrupted` and stays",
          True, f"rollback: 'the first run is completely deleted from the database' ({ROLLBACK_DOCS})",
          "rollback_keeps_watched.py"),
    Cause("cancel-of-pending-run-idles-thread",
          "cancelling a pending run marks the thread idle while another run is pending",
          "Runs.cancel sets the thread `idle` for every pending run it cancels, whatever else is in flight on the "
          "thread; the new run is pending, and the thread says idle, also once that run runs (Runs.next does not "
          "set it busy), until a task writes its final status",
          True, f"'idle ... means that all runs executed on the thread have finished running' ({STATUS_DOCS}); "
          "the SDK's ThreadStatus says only 'not currently processing any task', which a pending run arguably is not",
          "idle_while_pending.py"),
    Cause("cancelled-run-writes-thread-last",
          "an interrupted run whose clean-up outlasts the run that interrupted it writes the thread last",
          "the next run starts while the cancelled run's task still unwinds (next-run-starts-before-cancelled-task-"
          "stops); when that task finally stops, after the next run succeeded, the worker sets the thread's status "
          "(`interrupted`) and values from the cancelled run's last checkpoint, so the thread shows a state that "
          "is no longer its latest checkpoint's",
          True, "a thread's `values` are 'the current state of the thread' (LangGraph SDK Thread reference); "
          f"interrupt 'halts the current execution' and the new run goes on ({DOCS})",
          "late_cancelled_run_overwrites_thread.py"),
    Cause("rollback-deletes-run-after-it-wrote-thread",
          "a rollback deletes a running run after a later interrupt let it write the thread",
          "Runs.cancel under rollback leaves a running run nobody streams as it is and logs 'Eagerly deleting' "
          "with `await logger.ainfo`, a hop to the default thread pool, before it gathers the control message "
          "and Runs.delete; while that log write is slow, a creation with interrupt marks the run interrupted "
          "and its control message reaches the task first, so the task stops and the worker sets the thread's "
          "status and values from the run's last checkpoint; the rollback then deletes the run's record and "
          "checkpoints, and the thread keeps values no checkpoint has (the model's search finds it with a "
          "client cancel of the interrupting run, `cancels`; the harness runs the executor inline)",
          True, "a thread's `values` are 'the current state of the thread' (LangGraph SDK Thread reference); "
          f"rollback: 'the first run is completely deleted from the database' ({ROLLBACK_DOCS})",
          "interrupted_run_deleted_after_writing_thread.py", conform=False),
)
BY_NAME = {cause.name: cause for cause in CAUSES}
UNEXPLAINED = "unexplained"


def evidence(rec: Recording) -> dict[str, int]:
    """The causes whose mechanism this recording shows, each with the observation that first shows it."""
    out: dict[str, int] = {}
    alive: set[str] = set()
    status: dict[str, str] = {}
    victims: set[str] = set()  # pending runs a rollback cancelled while a stream client watched them
    joined: set[str] = set()
    created: list[str] = []
    cut_short: set[str] = set()  # runs cancelled while they ran

    def seen(cause: Cause, position: int) -> None:
        out.setdefault(cause.name, position)

    overlap, orphans, watched, idle, late = CAUSES[:5]
    for position, event in enumerate(rec.events):
        d = event.data
        if event.name == "run.created":
            created.append(d["run"])
            if d["strategy"] == "rollback":
                victims |= {r for r, st in status.items() if st == "pending" and r in joined}
            status[d["run"]] = "pending"
        elif event.name == "stream.joined":
            joined.add(d["run"])
        elif event.name == "stream.left":
            joined.discard(d["run"])
        elif event.name == "run.status":
            status[d["run"]] = d["status"]
            if d["status"] == "running":
                if alive:
                    seen(overlap, position)
                alive.add(d["run"])
            elif d["status"] == "interrupted" and not d["started"] and d["run"] in victims:
                seen(watched, position)
            elif d["status"] == "interrupted" and d["started"]:
                cut_short.add(d["run"])
        elif event.name == "task.ended":
            later = created[created.index(d["run"]) + 1:] if d["run"] in created else []
            wrote_thread = position > 0 and rec.events[position - 1].name == "thread"  # as its task stopped
            if d["run"] in cut_short and wrote_thread and any(status.get(r) == "success" for r in later):
                seen(late, position - 1)
            alive.discard(d["run"])
        elif event.name == "run.deleted":
            status[d["run"]] = "deleted"
        elif event.name == "checkpoint" and status.get(d["run"]) == "deleted":
            seen(orphans, position)
        elif event.name == "thread" and d["status"] != "busy" and any(
                st in ("pending", "running") for st in status.values()):
            seen(idle, position)
    return out


RECORD_CAUSE = {"thread-busy-while-in-flight": CAUSES[3].name, "one-active-turn": CAUSES[0].name,
                "thread-agrees-with-last-run": CAUSES[4].name}


def attribute(rec: Recording, findings: list[Finding]) -> dict[str, list[Finding]]:
    """Each finding under the cause that explains it: the one its property names, the one whose
    evidence is the diverging observation, or else the earliest cause shown before it; `unexplained`
    when the recording shows none."""
    shown = evidence(rec)
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        cause = RECORD_CAUSE.get(finding.property)
        if finding.property == "rollback-leaves-no-trace" and "record is still there" in finding.summary:
            cause = CAUSES[2].name if CAUSES[2].name in shown else None
        elif finding.property == "rollback-leaves-no-trace":
            cause = next((c for c in (CAUSES[1].name, CAUSES[0].name) if c in shown), None)
        if cause is None or cause not in shown:
            at = finding.position if finding.position is not None else len(rec.events)
            exact = [name for name, position in shown.items() if position == at]
            before = sorted((position, name) for name, position in shown.items() if position <= at)
            cause = exact[0] if exact else (before[0][1] if before else UNEXPLAINED)
        out.setdefault(cause, []).append(finding)
    return out
