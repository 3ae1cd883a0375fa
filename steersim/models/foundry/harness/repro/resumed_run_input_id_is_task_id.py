"""Reproduce: the TaskRun returned by a start() that resumes a suspended chain carries the chain's
task id as its `input_id`, not the `input_id` it was called with.

azure-ai-agentserver-core, `TaskManager._start_existing_task` (the resume and recovery path of
`MultiTurnTask.start()`) builds its `TaskRun` without `input_id`, so `TaskRun.__init__` falls back to
`task_id`. The `TaskRun` docstring says `input_id` is this handle's input's id (spec section 2,
invariant 10); the fresh and the queued paths pass it.

Plain asyncio and the package's public API inside `AgentServerHost`'s lifespan (after `startup()`).
Exit 1 when the resumed handle's `input_id` is not the one passed to start(), 0 when it is.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ["AGENTSERVER_STATE_ROOT"] = tempfile.mkdtemp(prefix="repro-run-input-id-")
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import TaskContext, multi_turn_task, set_resilient_tasks_enabled  # noqa: E402


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    return {"reply": ctx.input["msg"]}


async def main() -> int:
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        first = await conversation.start(task_id="c1", input={"msg": "m0"}, input_id="m0")
        await first.result()
        resumed = await conversation.start(task_id="c1", input={"msg": "m1"}, input_id="m1")
        await resumed.result()
    print(f"start(input_id='m0') on a new chain returned TaskRun.input_id={first.input_id!r}")
    print(f"start(input_id='m1') on the suspended chain returned TaskRun.input_id={resumed.input_id!r}")
    return 1 if resumed.input_id != "m1" else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
