"""Reproduce: TaskRun.cancel() on the handle of a running turn (one that was not queued) sets
`ctx.cancel` but never `ctx.cancel_requested`, so the handler sees the signal with no cause.

azure-ai-agentserver-core, `TaskRun.cancel()` (core/tasks/_run.py) sets `ctx.cancel_requested` through
the handle's `_cancel_ctx_ref`, but no `TaskRun(...)` the package builds passes `cancel_ctx_ref`, so
only the cancel event is set. The method's docstring promises that it "sets ctx.cancel_requested = True
BEFORE setting ctx.cancel, so a handler observing ctx.cancel.is_set() == True is guaranteed to see at
least one cause boolean already True"; the `TaskContext.cancel` docstring tells handlers to "observe
timeout_exceeded, cancel_requested, pending_input_count to disambiguate" (spec section 2, invariant 8).

Plain asyncio and the package's public API inside `AgentServerHost`'s lifespan (after `startup()`).
Exit 1 when the handler sees ctx.cancel set with every cause False, 0 otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ["AGENTSERVER_STATE_ROOT"] = tempfile.mkdtemp(prefix="repro-active-cancel-")
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import TaskContext, multi_turn_task, set_resilient_tasks_enabled  # noqa: E402

started: asyncio.Event | None = None
causes: list[dict[str, object]] = []


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    if started is not None:
        started.set()
    await ctx.cancel.wait()
    causes.append({"cancel_requested": ctx.cancel_requested, "timeout_exceeded": ctx.timeout_exceeded,
                   "pending_input_count": ctx.pending_input_count})
    return {"reply": ctx.input["msg"], "partial": True}


async def main() -> int:
    global started
    started = asyncio.Event()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        run = await conversation.start(task_id="c1", input={"msg": "m0"}, input_id="m0")
        print(f"start(m0): TaskRun.is_queued={run.is_queued}")
        await asyncio.wait_for(started.wait(), timeout=10)
        await run.cancel()
        print(f"TaskRun.cancel() on m0, then result(): {await asyncio.wait_for(run.result(), timeout=10)}")
    seen = causes[0]
    print(f"the handler saw ctx.cancel set with {seen}")
    return 1 if not (seen["cancel_requested"] or seen["timeout_exceeded"] or seen["pending_input_count"]) else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
