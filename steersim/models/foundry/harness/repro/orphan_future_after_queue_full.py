"""Reproduce: a start() refused with SteeringQueueFull leaves its future registered, so a later queued
start() on the same chain never resolves.

azure-ai-agentserver-core, `MultiTurnTask.start()` on a steerable chain: the steering path registers a
result future for the new input (`TaskManager._register_steering_future`) before it appends the input
to the persisted queue; when the append raises `SteeringQueueFull` the future stays in the manager's
per-chain list. Drains bind futures to promoted inputs by position, so every later queued input is
bound to the future of the one before it, and the last one's handle never resolves. The docs promise
that each handle "resolves with turn 2's outcome" (its own turn's).

Plain asyncio and the package's public API, served the way `AgentServerHost` serves: start() is called
only inside the host's lifespan, after `TaskManager.startup()` has completed. Exit 1 when the divergence
reproduces (the handle of the start() accepted after the refusal is still pending after every queued
turn ended), 0 when it does not.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ["AGENTSERVER_STATE_ROOT"] = tempfile.mkdtemp(prefix="repro-orphan-")
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import (  # noqa: E402
    SteeringQueueFull,
    TaskContext,
    multi_turn_task,
    set_resilient_tasks_enabled,
)

QUEUE_CAPACITY = 9  # inputs that may wait behind the running turn
release_first_turn: asyncio.Event | None = None
entered: list[str] = []


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    entered.append(ctx.input["msg"])
    if ctx.input["msg"] == "m0" and release_first_turn is not None:
        await release_first_turn.wait()
    return {"reply": ctx.input["msg"]}


async def main() -> int:
    global release_first_turn
    release_first_turn = asyncio.Event()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        first = await conversation.start(task_id="c1", input={"msg": "m0"}, input_id="m0")
        queued = [await conversation.start(task_id="c1", input={"msg": f"m{k}"}, input_id=f"m{k}")
                  for k in range(1, QUEUE_CAPACITY + 1)]
        try:
            await conversation.start(task_id="c1", input={"msg": "m10"}, input_id="m10")
        except SteeringQueueFull:
            print("start(input_id='m10') raised SteeringQueueFull: 9 inputs wait behind turn m0")
        else:
            print("start(input_id='m10') was accepted: the queue holds more than 9 inputs; nothing to reproduce")
            return 0
        release_first_turn.set()
        await first.result()
        await queued[0].result()
        late = await conversation.start(task_id="c1", input={"msg": "m11"}, input_id="m11")
        print(f"start(input_id='m11') after the refusal: is_queued={late.is_queued}")
        for handle in queued[1:]:
            await asyncio.wait_for(handle.result(), timeout=10)
        await asyncio.sleep(0)  # the next turn starts at once: queued turns do no work
        try:
            reply = await asyncio.wait_for(late.result(), timeout=1)
        except TimeoutError:
            ran = "its turn ran" if "m11" in entered else "its turn never ran"
            print(f"m11's TaskRun.result() is still pending after every queued turn ended ({ran}; "
                  "turns entered: " + ", ".join(entered) + ")")
            return 1
        print(f"m11's TaskRun.result() returned {reply!r}: no divergence")
        return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
