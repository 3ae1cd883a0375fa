"""Reproduce: after TaskRun.cancel() removes a queued input, the running turn's
`ctx.pending_input_count` still counts it.

azure-ai-agentserver-core, `TaskManager._cancel_queued_steering_input` (what `TaskRun.cancel()` runs for
a queued handle) removes the entry from the persisted `pending_inputs` but does not update the
in-memory count that `ctx.pending_input_count` reads, which only the enqueue and the drain set. The
`TaskContext` docstring promises a "live count of queued steering inputs" (spec section 2, invariant 9).

Plain asyncio and the package's public API inside `AgentServerHost`'s lifespan (after `startup()`).
Exit 1 when the running handler reads a count above the number of inputs still queued, 0 otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ["AGENTSERVER_STATE_ROOT"] = tempfile.mkdtemp(prefix="repro-queued-cancel-")
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import (  # noqa: E402
    TaskCancelled,
    TaskContext,
    multi_turn_task,
    set_resilient_tasks_enabled,
)

cancelled_one: asyncio.Event | None = None
counts: list[int] = []


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    if ctx.input["msg"] == "m0" and cancelled_one is not None:
        await cancelled_one.wait()
        counts.append(ctx.pending_input_count)
    return {"reply": ctx.input["msg"]}


async def main() -> int:
    global cancelled_one
    cancelled_one = asyncio.Event()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        first = await conversation.start(task_id="c1", input={"msg": "m0"}, input_id="m0")
        kept = await conversation.start(task_id="c1", input={"msg": "m1"}, input_id="m1")
        dropped = await conversation.start(task_id="c1", input={"msg": "m2"}, input_id="m2")
        await dropped.cancel()
        try:
            await dropped.result()
        except TaskCancelled:
            print("TaskRun.cancel() on queued m2: its result() raised TaskCancelled; m1 alone is still queued")
        cancelled_one.set()
        await asyncio.wait_for(asyncio.gather(first.result(), kept.result()), timeout=10)
    print(f"the running turn m0 then read ctx.pending_input_count={counts[0]}")
    return 1 if counts[0] > 1 else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
