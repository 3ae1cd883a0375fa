"""The Foundry model's specification: parameters (spec section 8), the named bug variants (each a plausible
implementation mistake) with the property (spec sections 6-7) that catches each, and the default timing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.core.registry import Bug, Param, Reading

PACKAGE_QUEUE_CAP = 9  # _DEFAULT_MAX_PENDING_STEERING in azure/ai/agentserver/core/tasks/_decorator.py

PARAMS = (
    Param("callers", 4, "callers, each sending one input m<k> to the chain", low=1, high=12),
    Param("callers_in_order", True,
          "callers call in index order (inputs named in call order); off: any idle caller may call next"),
    Param("queue_cap", 2,
          f"inputs that may wait behind the running turn; the package fixes {PACKAGE_QUEUE_CAP}, which needs "
          f"{PACKAGE_QUEUE_CAP + 2} callers to fill and overflow, far beyond the default state budget, so the "
          "default is 2 (the same code path with 4 callers) and a slow test checks 9",
          low=1, high=PACKAGE_QUEUE_CAP),
    Param("steerable", True, "the chain's `steerable` flag: a start() on a busy chain queues (else TaskConflictError)"),
    Param("handler_steps", 1, "safe points at which a handler reads its context before it must return or raise",
          low=0, high=4),
    Param("preconditions", True, "callers may pass if_last_input_id naming any input issued so far"),
    Param("crashes", 1, "process crashes while a handler runs (each followed by a restart)", low=0, high=3),
    Param("shutdowns", 1, "graceful shutdowns (ctx.shutdown, exit_for_recovery, the grace period)", low=0, high=2),
    Param("queued_cancels", 1, "TaskRun.cancel() calls on queued handles", low=0, high=4),
    Param("precancel_if_successors", True,
          "a promoted or recovered turn starts with ctx.cancel set iff inputs remain behind it"),
    Param("last_input_id_advances_on", "accept",
          "when last_input_id advances: `accept` (the docs' \"last accepted input\") or `execute`",
          choices=("accept", "execute")),
    Param("explicit_cancel_outcome", "handler",
          "TaskRun.cancel() on a running turn: the handle gets the handler's outcome (`handler`), or TaskCancelled "
          "whatever the handler does (`always_cancelled`)", choices=("handler", "always_cancelled")),
    Param("promote_during_shutdown", False,
          "a turn that ends during a graceful shutdown promotes the queue head (else the queue stays persisted "
          "for the next lifetime)"),
    Param("queued_handle_at_shutdown", "TaskDeferred",
          "what in-process waiters on queued inputs get when the process stops; TaskCancelled tells a caller its "
          "input failed although the next lifetime still runs it, which no-lost-steers reports",
          choices=("TaskDeferred", "TaskCancelled")),
    Param("deferred_outcome", "TaskDeferred",
          "what the handle of a turn that returned ctx.exit_for_recovery() gets (its docstring alone says "
          "TaskCancelled)", choices=("TaskDeferred", "TaskCancelled")),
    Param("surface", "tasks",
          "`tasks`: start() and its exceptions; `responses`: POST /responses and the HTTP reply (queued 200, "
          "409 conversation_fork_not_supported, 409 conversation_locked, 429 busy)",
          choices=("tasks", "responses")),
)

BUGS = (
    Bug("lifo-promotion", "the end of a turn promotes the newest queued input instead of the oldest", "fifo"),
    Bug("orphan-future-on-full", "a start() refused with SteeringQueueFull leaves its registered future behind, so "
        "the next promoted turn resolves a handle nobody holds",
        "own-outcome"),
    Bug("resolve-after-promote", "the next queued input is promoted before the finished turn's handle is resolved",
        "resolution-order"),
    Bug("no-signal", "an enqueue behind a running turn does not set its ctx.cancel", "signal"),
    Bug("cancel-before-count", "an enqueue sets ctx.cancel before the pending count is visible", "cause-first"),
    Bug("stale-count-after-cancel", "cancelling a queued handle leaves ctx.pending_input_count at the old value",
        "live-count"),
    Bug("input-id-is-chain-head", "a turn's ctx.input_id is the chain's last accepted input id, not its own",
        "turn-identity"),
    Bug("no-precancel", "a promoted turn with inputs behind it starts with ctx.cancel clear", "pre-cancel"),
    Bug("full-advances-head", "a start() refused with SteeringQueueFull still advances last_input_id",
        "side-effect-free-rejection"),
    Bug("off-by-one-cap", "the capacity check lets one input more than queue_cap wait", "bound"),
    Bug("capacity-before-precondition", "a full queue is reported before a stale if_last_input_id", "if-match"),
    Bug("nonsteerable-queues", "a non-steerable chain queues a concurrent start() instead of raising "
        "TaskConflictError (its variant runs with -p steerable=false)",
        "non-steerable", {"steerable": False}),
    Bug("raise-ends-chain", "after a handler raises, the chain is suspended with its queue left waiting",
        "chain-survives"),
    Bug("cancel-removes-head", "cancelling a queued handle removes the queue head instead of its own input",
        "queued-cancel"),
    Bug("recover-queue-head", "recovery after a crash enters the queue head instead of the interrupted turn",
        "recovery"),
    Bug("promote-keeps-cancel-request", "a promoted turn inherits ctx.cancel_requested from a turn before it that "
        "TaskRun.cancel() stopped", "cancel-request-starts-clear"),
    Bug("last-input-id-on-execute", "last_input_id_advances_on is read the wrong way round: at `accept`, "
        "last_input_id advances when an input's turn is entered instead of when its start() is accepted, so a caller "
        "naming the input just queued is refused", "last-input-id"),
    Bug("request-skipped-when-signalled", "TaskRun.cancel() on the running turn leaves ctx.cancel_requested clear "
        "when its ctx.cancel is already set (by a steer), so the handler cannot tell it was cancelled",
        "explicit-cancel"),
    Bug("exit-for-recovery-releases-turn", "a turn that returned ctx.exit_for_recovery() ends like a returned one: "
        "the record moves on to the queue head (or the chain is suspended), so no later lifetime re-enters it",
        "deferred-turn-kept"),
    Bug("promotion-keeps-budget", "a promoted turn's handler starts with the safe points the turn before it spent "
        "instead of a fresh budget, so a steered turn may never read its context", "turn-budget"),
    Bug("interrupting-steer", "a steer on a busy chain starts its turn at once, interrupting the running handler",
        "one-active-turn"),
)

DEFAULT_TIMING: Mapping[str, Any] = {
    "default": {"dist": "exponential", "mean": 0.01},
    "caller.start": {"dist": "exponential", "mean": 2.0},
    "caller.cancel": {"dist": "exponential", "mean": 3.0},
    "handler.check": {"dist": "lognormal", "median": 1.0, "sigma": 0.5},
    "handler.return": {"dist": "lognormal", "median": 2.0, "sigma": 0.5},
    "handler.raise": {"dist": "lognormal", "median": 6.0, "sigma": 0.5},
    "handler.exit_for_recovery": {"dist": "exponential", "mean": 0.5},
    "fault.crash": {"dist": "exponential", "mean": 20.0},
    "process.restart": {"dist": "exponential", "mean": 5.0},
    "process.shutdown": {"dist": "exponential", "mean": 30.0},
    "process.stop": {"dist": "constant", "value": 25.0},
}


def kinds_not_enabled(params: Mapping[str, Any]) -> dict[str, str]:
    """Action kinds these parameters cannot fire, with what enables each: without a graceful shutdown the
    process never stops, so nothing exits for recovery."""
    if params["shutdowns"]:
        return {}
    return dict.fromkeys(("handler.exit_for_recovery", "process.shutdown", "process.stop"), "shutdowns=1 or more")

READINGS = (
    Reading({"promote_during_shutdown": True, "deferred_outcome": "TaskCancelled"},
            "a turn ending during a graceful shutdown promotes the queue head, and exit_for_recovery's handle gets "
            "TaskCancelled, as its docstring alone says"),
    Reading({"steerable": False, "surface": "responses"},
            "a non-steerable chain on the Responses host: a concurrent POST /responses answers 409"),
    Reading({"precancel_if_successors": False, "last_input_id_advances_on": "execute",
             "explicit_cancel_outcome": "always_cancelled"},
            "the other readings of ctx.cancel at promotion, of last_input_id and of TaskRun.cancel()'s outcome"),
    Reading({"callers": 3, "callers_in_order": False, "surface": "responses"},
            "the Responses host with callers in any order, so the queue's HTTP replies meet every order of inputs"),
)
