"""The Foundry model's specification: parameters (spec section 8), bug variants and their catchers."""

from __future__ import annotations

from models.foundry.bugs import BUG_CATCHERS, BUG_PARAMS, BUGS
from models.foundry.model import FoundryModel
from sim.core.registry import ModelSpec, Param

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
    Param("shutdowns", 0, "graceful shutdowns (ctx.shutdown, exit_for_recovery, the grace period)", low=0, high=2),
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

SPEC = ModelSpec(
    name="foundry",
    doc="Foundry steerable chains: queued starts, cooperative cancel, If-Match, bounded queue, crash recovery",
    params=PARAMS,
    bugs=BUGS,
    factory=lambda params, bug: FoundryModel(params, bug),
    bug_catchers=BUG_CATCHERS,
    bug_params=BUG_PARAMS,
)
