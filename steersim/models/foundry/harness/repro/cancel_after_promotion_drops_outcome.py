"""Reproduce: TaskRun.cancel() on a handle that came back queued, called once its input has become the
running turn, resolves the handle with TaskCancelled at once while the turn runs on, uncancelled.

azure-ai-agentserver-core, `TaskRun.cancel()` takes the queued path whenever the handle was created
queued (`_queued_cancel_callback` is never cleared when the drain promotes the input); the callback
finds no queue entry ("already drained") and resolves the future with `TaskCancelled`. The running
turn's `ctx.cancel_requested` and `ctx.cancel` stay clear and its outcome reaches nobody. The
`TaskRun.cancel()` docstring promises that, outside the queue, it "sets ctx.cancel_requested = True
BEFORE setting ctx.cancel" (a cooperative cancel whose outcome is the handler's), and that the active
turn is not affected by a queued cancel (spec sections 2, 4.4).

Plain asyncio and the package's public API inside `AgentServerHost`'s lifespan (after `startup()`).
Exit 1 when the handle resolves with TaskCancelled while its turn's handler saw no cancel request,
0 otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ["AGENTSERVER_STATE_ROOT"] = tempfile.mkdtemp(prefix="repro-cancel-promoted-")
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import (  # noqa: E402
    TaskCancelled,
    TaskContext,
    multi_turn_task,
    set_resilient_tasks_enabled,
)

release_first_turn: asyncio.Event | None = None
second_turn_running: asyncio.Event | None = None
second_turn_saw: dict[str, bool] = {}


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    if ctx.input["msg"] == "m0" and release_first_turn is not None:
        await release_first_turn.wait()
    if ctx.input["msg"] == "m1" and second_turn_running is not None:
        second_turn_running.set()
        for _ in range(20):
            await asyncio.sleep(0.01)
        second_turn_saw.update(cancel_requested=bool(ctx.cancel_requested), cancel=ctx.cancel.is_set())
    return {"reply": ctx.input["msg"]}


async def main() -> int:
    global release_first_turn, second_turn_running
    release_first_turn, second_turn_running = asyncio.Event(), asyncio.Event()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        first = await conversation.start(task_id="c1", input={"msg": "m0"}, input_id="m0")
        steer = await conversation.start(task_id="c1", input={"msg": "m1"}, input_id="m1")
        print(f"start(input_id='m1') while m0 runs: is_queued={steer.is_queued}")
        release_first_turn.set()
        await first.result()
        await second_turn_running.wait()
        await steer.cancel()
        try:
            outcome = await asyncio.wait_for(steer.result(), timeout=0.05)
        except TaskCancelled:
            outcome = "TaskCancelled"
        except TimeoutError:
            outcome = "pending (the cooperative cancel is waiting for the handler)"
        print(f"TaskRun.cancel() on m1 while its turn runs: result() -> {outcome}")
        for _ in range(100):
            if second_turn_saw:
                break
            await asyncio.sleep(0.01)
    print(f"m1's handler, running on, saw cancel_requested={second_turn_saw.get('cancel_requested')}, "
          f"cancel={second_turn_saw.get('cancel')}")
    return 1 if outcome == "TaskCancelled" and not second_turn_saw.get("cancel_requested") else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
