"""Findings grouped by root cause, in the package's own vocabulary.

One mistake in the package shows as several findings: a start() that should have queued resumes the
chain instead, so a second turn starts (`one-active-turn`), the queued input enters out of order
(`fifo`) and beside a running handler (`cooperative`). A package owner needs the mistake, not its
echoes. Findings are grouped in two ways:

- **Known causes.** A `Cause` names a mistake in the package's terms (the call, what it returned, the
  code that does it, the promise it breaks), recognises the observation of a run at which the package
  first does it (`trigger`), and the findings that follow from it (`explains`). A finding at or after
  its run's trigger that the cause explains belongs to it. Each cause has a standalone reproduction
  (`steersim/models/foundry/harness/repro/<key>.py`, plain asyncio and the package's public API, exit 1 when it
  reproduces) that the report writes next to the cause's page.
- **By first divergent observation.** Any other finding is grouped with the findings of the run that
  first showed it which point at the same observation; the earliest such finding heads its group. A
  finding that trace validation found only after passing over an observation the model cannot produce
  (`detail["after"]`) may be an echo of that one, so it joins that finding's group rather than count as
  a root cause of its own; a known cause still claims it first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from steersim.models.foundry.harness.explore import Exploration, Found
from steersim.models.foundry.harness.runner import Recording

REPRO_DIR = Path(__file__).resolve().parent / "repro"


@dataclass(frozen=True)
class Cause:
    """A mistake in the package. `trigger(rec)`: the index of the observation at which the run first
    shows it, or None; `explains(found, rec)`: the finding follows from it."""

    key: str
    title: str
    where: str
    promise: str
    trigger: Callable[[Recording], int | None]
    explains: Callable[[Found, Recording], bool]

    @property
    def script(self) -> Path:
        return REPRO_DIR / f"{self.key.replace('-', '_')}.py"


@dataclass
class Group:
    """The findings of one root cause; `cause` is None for a group formed by first divergent observation."""

    cause: Cause | None
    members: list[Found] = field(default_factory=list)

    @property
    def head(self) -> Found:
        return self.members[0]

    @property
    def occurrences(self) -> int:
        return max(found.occurrences for found in self.members)


def _accepted_after_refusal(rec: Recording) -> int | None:
    """The first queued TaskRun returned after a start() raised SteeringQueueFull."""
    refused = False
    for i, o in enumerate(rec.observations):
        if o.event.name == "process.restart":
            refused = False
        elif o.event.name == "SteeringQueueFull":
            refused = True
        elif refused and o.event.name == "TaskRun" and o.event.data.get("is_queued"):
            return i
    return None


def _late_handles(rec: Recording) -> set[str]:
    """Inputs accepted onto the queue after a SteeringQueueFull refusal."""
    start = _accepted_after_refusal(rec)
    if start is None:
        return set()
    return {o.event.data["caller"] for o in rec.observations[start:]
            if o.event.name == "TaskRun" and o.event.data.get("is_queued")}


def _orphan_explains(found: Found, rec: Recording) -> bool:
    late = _late_handles(rec)
    if found.finding.property == "handles-resolve":
        return bool(late & set(found.finding.detail.get("unresolved", rec.unresolved)))
    position = found.finding.position
    if found.finding.property == "own-outcome" and position is not None and position < len(rec.observations):
        return rec.observations[position].event.data.get("caller") in late
    return False


def _start_on_busy_chain(rec: Recording) -> int | None:
    """The first start() that returned a non-queued TaskRun (a fresh or resumed turn) while a turn of
    the chain was running or inputs it had accepted onto the queue were still waiting to be entered."""
    waiting: set[str] = set()
    running: set[str] = set()
    for i, o in enumerate(rec.observations):
        e = o.event
        if e.name in ("process.restart", "process.crash"):
            waiting.clear()
            running.clear()
        elif e.name == "TaskRun" and e.data.get("is_queued"):
            waiting.add(e.data["caller"])
        elif e.name == "TaskRun" and (waiting or running):
            return i
        elif e.name == "handler.enter":
            waiting.discard(e.data.get("input"))
            running.add(e.data.get("input"))
        elif e.name == "handler.exit":
            running.discard(e.data.get("input"))
        elif e.name == "TaskRun.result" and e.data.get("outcome") == "TaskCancelled":
            waiting.discard(e.data.get("caller"))
    return None


def _two_turns_explains(found: Found, rec: Recording) -> bool:
    finding = found.finding
    if finding.signature.startswith("monitor:one-active-turn"):
        return True
    position = finding.position
    if finding.property in ("fifo", "cooperative") and position is not None and position < len(rec.observations):
        return rec.observations[position].event.name == "handler.enter"
    return False


def _first(rec: Recording, wanted: Callable[[dict], bool], name: str) -> int | None:
    return next((i for i, o in enumerate(rec.observations) if o.event.name == name and wanted(o.event.data)), None)


def _turn_with_foreign_id(rec: Recording) -> int | None:
    """The first turn whose ctx.input_id is not its own input's id."""
    return _first(rec, lambda d: d.get("input") is not None and d.get("input_id") not in (None, d.get("input")),
                  "handler.enter")


def _run_with_task_id(rec: Recording) -> int | None:
    """The first non-queued TaskRun whose input_id is not the one its start() passed."""
    return _first(rec, lambda d: not d.get("is_queued") and d.get("input_id") != d.get("caller"), "TaskRun")


def _busy_answered_5xx(rec: Recording) -> int | None:
    """The first POST /responses answered with a server error."""
    return _first(rec, lambda d: d.get("status", 0) >= 500, "http.response")


def _stale_count_after_queued_cancel(rec: Recording) -> int | None:
    """The first read of ctx.pending_input_count, after a queued handle was cancelled, that counts more
    inputs than the record's pending_inputs hold."""
    cancelled = False
    for i, o in enumerate(rec.observations):
        e = o.event
        if e.name == "TaskRun.result" and e.data.get("outcome") == "TaskCancelled" and not e.data.get("entered"):
            cancelled = True
        elif (cancelled and e.name in ("handler.enter", "handler.check") and o.record is not None
              and e.data.get("pending_input_count", 0) > len(o.record["pending_inputs"])):
            return i
    return None


def _cancelled_while_running(rec: Recording) -> int | None:
    """The first handle of a promoted input that resolved TaskCancelled while its turn's handler ran."""
    running: set[str] = set()
    for i, o in enumerate(rec.observations):
        e = o.event
        if e.name == "handler.enter":
            running.add(e.data.get("input"))
        elif e.name == "handler.exit":
            running.discard(e.data.get("input"))
        elif e.name in ("process.restart", "process.crash"):
            running.clear()
        elif (e.name == "TaskRun.result" and e.data.get("outcome") == "TaskCancelled" and e.data.get("queued")
              and e.data.get("caller") in running):
            return i
    return None


def _recovered_without_input(rec: Recording) -> int | None:
    """The first turn re-entered by recovery whose ctx.input is None."""
    return _first(rec, lambda d: d.get("entry_mode") == "recovered" and d.get("input") is None, "handler.enter")


def _inputless_turn_explains(found: Found, rec: Recording) -> bool:
    position = found.finding.position
    return (position is not None and position < len(rec.observations)
            and rec.observations[position].event.name.startswith("handler.")
            and rec.observations[position].event.data.get("input", "") is None)


def _foreign_outcome(rec: Recording) -> int | None:
    """The first handle of a queued input that resolved with the reply of another input's turn."""
    return _first(rec, lambda d: d.get("queued") and d.get("value") is not None and d.get("value") != d.get("caller"),
                  "TaskRun.result")


def _recovered_count_short(rec: Recording) -> int | None:
    """The first read of ctx.pending_input_count in a turn re-entered by recovery that counts fewer
    inputs than the record's pending_inputs hold."""
    recovered: set[str] = set()
    for i, o in enumerate(rec.observations):
        e = o.event
        if e.name == "handler.enter" and e.data.get("entry_mode") == "recovered":
            recovered.add(e.data.get("input"))
        elif e.name == "handler.enter":
            recovered.discard(e.data.get("input"))
        if (e.name in ("handler.enter", "handler.check") and e.data.get("input") in recovered
                and o.record is not None and e.data.get("pending_input_count", 0) < len(o.record["pending_inputs"])):
            return i
    return None


def _cause_unset_after_cancel(rec: Recording) -> int | None:
    """The first read of the context, after TaskRun.cancel() on the handle of a turn that was never
    queued, that shows ctx.cancel set and ctx.cancel_requested not."""
    unqueued: set[str] = set()
    cancelled: set[str] = set()
    for i, o in enumerate(rec.observations):
        e = o.event
        if e.name == "TaskRun" and not e.data.get("is_queued"):
            unqueued.add(e.data["caller"])
        elif e.name == "TaskRun.cancel" and e.data.get("caller") in unqueued:
            cancelled.add(e.data["caller"])
        elif (e.name in ("handler.enter", "handler.check") and e.data.get("input") in cancelled
              and e.data.get("cancel") and not e.data.get("cancel_requested")):
            return i
    return None


def _host_count_short(rec: Recording) -> int | None:
    """The first read of the Responses host's context.pending_input_count that counts fewer responses than
    were answered `queued` and have not yet been entered."""
    waiting: set[str] = set()
    for i, o in enumerate(rec.observations):
        e = o.event
        if e.name == "http.response" and e.data.get("response_status") == "queued":
            waiting.add(e.data["caller"])
        elif e.name == "handler.enter":
            waiting.discard(e.data.get("input"))
        elif e.name == "handler.check" and e.data.get("pending_input_count", len(waiting)) < len(waiting):
            return i
    return None


def _at_trigger(trigger: Callable[[Recording], int | None]) -> Callable[[Found, Recording], bool]:
    """A cause that shows as one divergence, at the observation of its trigger."""
    return lambda found, rec: found.finding.position == trigger(rec)


CAUSES: tuple[Cause, ...] = (
    Cause(
        "orphan-future-after-queue-full",
        "a start() refused with SteeringQueueFull leaves its result future registered, so a later queued "
        "start() is bound to the wrong turn and its TaskRun.result() never resolves",
        "MultiTurnTask.start() (Task._lifecycle_start_inner in core/tasks/_decorator.py) registers the future "
        "(TaskManager._register_steering_future) before _append_steering_input raises SteeringQueueFull, and "
        "nothing removes it; "
        "_try_drain_steering binds futures to promoted inputs by position (pop(0))",
        "each handle resolves with its own turn's outcome (\"r2 resolves with turn 2's outcome\"); a refused "
        "start() changes nothing (spec sections 4.4, 4.6)",
        _accepted_after_refusal, _orphan_explains,
    ),
    Cause(
        "second-turn-after-failed-turn",
        "a start() that lands between a turn's end and the promotion of the queue head reads the record "
        "as suspended and resumes the chain: two turns of one chain run at once",
        "TaskManager._execute_task_loop writes the record suspended at the end of the turn, then yields "
        "(the failure path's `await asyncio.sleep(0)` after TaskFailed; with a remote store every store "
        "call) before _try_drain_steering claims it back; MultiTurnTask.start() (Task._lifecycle_start_inner) "
        "resumes a suspended record without looking at its pending_inputs",
        "\"A new input queues behind the active turn ... This avoids both rejecting the new turn and "
        "running two turns at once\"; queued inputs are entered in order (spec sections 1, 6.1, 6.2)",
        _start_on_busy_chain, _two_turns_explains,
    ),
    Cause(
        "ctx-input-id-is-last-input-id",
        "a turn promoted from the steering queue or re-entered by recovery sees the chain's last accepted "
        "input id as ctx.input_id, not its own input's id",
        "TaskManager._try_drain_steering and TaskManager._start_existing_task build the turn's TaskContext with "
        "input_id=payload[\"last_input_id\"]",
        "TaskContext.input_id is this turn's input's id (spec section 2, invariant 10)",
        _turn_with_foreign_id, _at_trigger(_turn_with_foreign_id),
    ),
    Cause(
        "resumed-run-input-id-is-task-id",
        "the TaskRun of a start() that resumes (or recovers) a chain carries the task id as input_id, not the "
        "input_id start() was called with",
        "TaskManager._start_existing_task returns TaskRun(...) without input_id, so TaskRun falls back to "
        "task_id",
        "TaskRun.input_id is this handle's input's id (spec section 2, invariant 10)",
        _run_with_task_id, _at_trigger(_run_with_task_id),
    ),
    Cause(
        "queued-cancel-keeps-pending-count",
        "after TaskRun.cancel() removes a queued input, the running turn's ctx.pending_input_count still "
        "counts it",
        "TaskManager._cancel_queued_steering_input rewrites pending_inputs but not the in-memory count that "
        "ctx.pending_input_count reads (only the enqueue and the drain set it)",
        "ctx.pending_input_count is the \"live count of queued steering inputs\" (spec section 2, invariant 9)",
        _stale_count_after_queued_cancel, _at_trigger(_stale_count_after_queued_cancel),
    ),
    Cause(
        "cancel-after-promotion-drops-outcome",
        "TaskRun.cancel() on a handle that came back queued, once its input is the running turn, resolves the "
        "handle with TaskCancelled at once while the turn runs on uncancelled; its outcome reaches nobody",
        "TaskRun.cancel() takes the queued path whenever the handle was created queued (_queued_cancel_callback "
        "is never cleared on promotion); _cancel_queued_steering_input finds no queue entry and resolves the "
        "future with TaskCancelled",
        "outside the queue cancel() \"sets ctx.cancel_requested = True BEFORE setting ctx.cancel\" and the "
        "outcome is what the handler then does; a queued cancel leaves the active turn alone (spec 2, 4.4)",
        _cancelled_while_running, _at_trigger(_cancelled_while_running),
    ),
    Cause(
        "active-cancel-leaves-cause-unset",
        "TaskRun.cancel() on the handle of a running turn that was never queued sets ctx.cancel but not "
        "ctx.cancel_requested: the handler sees the signal with no cause",
        "TaskRun.cancel() (core/tasks/_run.py) sets ctx.cancel_requested through the handle's _cancel_ctx_ref, "
        "but no TaskRun(...) the package builds passes cancel_ctx_ref, so only the cancel event is set",
        "TaskRun.cancel() \"sets ctx.cancel_requested = True BEFORE setting ctx.cancel, so a handler observing "
        "ctx.cancel.is_set() == True is guaranteed to see at least one cause boolean already True\" (its "
        "docstring; spec section 2, invariant 8)",
        _cause_unset_after_cancel, _at_trigger(_cause_unset_after_cancel),
    ),
    Cause(
        "recovered-steered-turn-loses-input",
        "when the process dies during a turn promoted from the steering queue, the next process's recovery "
        "re-enters that turn with ctx.input None: the steered input is lost",
        "_try_drain_steering keeps the promoted input in payload[\"steering\"][\"active_input\"] after the turn "
        "end cleared payload[\"input\"]; the recovery scan (_recover_stale_tasks, _start_existing_task) re-enters "
        "the turn from payload[\"input\"]",
        "after a crash the interrupted turn is re-entered (\"recovered\") with its own input before any queued "
        "input (spec sections 2, 4.8, invariant 18)",
        _recovered_without_input, _inputless_turn_explains,
    ),
    Cause(
        "futures-bound-by-position",
        "a queued start()'s TaskRun resolves with another input's outcome: after a crash the first start() "
        "queued in the next process gets an input of the previous process's; with a remote store two "
        "concurrent queued start() calls can swap outcomes",
        "_try_drain_steering binds each promoted input to the next registered future by position "
        "(pending_steering_futures.pop(0)), not by input; inputs that survived a crash have no future in the "
        "new process, and concurrent start() calls register their futures and append their inputs in "
        "different orders",
        "each handle resolves with its own turn's outcome (\"r2 resolves with turn 2's outcome\"; spec 1, 4.4, "
        "invariant 4)",
        _foreign_outcome, _at_trigger(_foreign_outcome),
    ),
    Cause(
        "recovered-turn-pending-count-is-zero",
        "a turn re-entered by recovery reads ctx.pending_input_count 0 although inputs are queued behind it "
        "(and ctx.cancel is set for them)",
        "ctx.pending_input_count reads an in-memory count that only _append_steering_input and "
        "_try_drain_steering set; the recovery path (_recover_stale_tasks, _start_existing_task) does not set "
        "it from the persisted pending_inputs",
        "ctx.pending_input_count is the \"live count of queued steering inputs\"; whenever ctx.cancel is set its "
        "cause is visible (spec section 2, invariants 8, 9)",
        _recovered_count_short, lambda found, rec: found.finding.property == "live-count",
    ),
    Cause(
        "responses-pending-count-is-entry-snapshot",
        "on the Responses host, context.pending_input_count is the count when the turn started: a turn on which "
        "responses queue reads 0, while the cancellation signal that they set fires",
        "the resilient orchestrator (responses/hosting/_resilient_orchestrator.py) copies the task context's "
        "pending_input_count onto the ResponseContext once, at turn entry (context.pending_input_count = "
        "ctx.pending_input_count), as a plain attribute that nothing updates",
        "ResponseContext.pending_input_count is \"queued steering inputs (live count)\" (its docstring), mirroring "
        "the core's; the documented wind-down `if cancel.is_set() and pending_input_count > 0` then never fires "
        "on the turn that was steered (spec sections 1, 3, invariant 9)",
        _host_count_short, _at_trigger(_host_count_short),
    ),
    Cause(
        "steering-queue-full-answers-500",
        "on a steerable conversation of the Responses host, a POST /responses that finds the steering queue "
        "full is answered HTTP 500 server_error, not a busy answer",
        "the create endpoint (responses/hosting/_endpoint_handler.py) maps LastInputIdPreconditionFailed to 409 "
        "conversation_fork_not_supported and TaskConflictError to 409 conversation_locked, but SteeringQueueFull "
        "falls through to the platform-error case: 500 \"internal server error\"",
        "\"The steering queue is bounded. When it is full ... show the user a clear 'please wait' message "
        "instead of silently discarding the input\" (spec sections 1, 3, 6.19)",
        _busy_answered_5xx, _at_trigger(_busy_answered_5xx),
    ),
)


def cause_of(found: Found) -> Cause | None:
    """The known cause that explains `found` in the run that first showed it, if any."""
    rec = found.recording
    for cause in CAUSES:
        trigger = cause.trigger(rec)
        position = found.finding.position
        if trigger is not None and (position is None or position >= trigger) and cause.explains(found, rec):
            return cause
    return None


def group(exploration: Exploration) -> list[Group]:
    """The root causes of an exploration's findings, in order of first discovery."""
    groups: list[Group] = []
    by_cause: dict[str, Group] = {}
    by_observation: dict[tuple[int, int], Group] = {}
    by_signature: dict[str, Group] = {}
    for found in exploration.found.values():
        cause = cause_of(found)
        if cause is not None:
            known = by_cause.get(cause.key)
            if known is None:
                known = by_cause[cause.key] = Group(cause)
                groups.append(known)
            known.members.append(found)
            by_signature[found.finding.signature] = known
            continue
        echoed = by_signature.get(found.finding.detail.get("after", ""))
        if echoed is not None:
            echoed.members.append(found)
            by_signature[found.finding.signature] = echoed
            continue
        position = found.finding.position
        key = (found.run_index, position) if position is not None else None
        same = by_observation.get(key) if key is not None else None
        if same is None:
            same = Group(None)
            groups.append(same)
            if key is not None:
                by_observation[key] = same
        same.members.append(found)
        by_signature[found.finding.signature] = same
    return groups

