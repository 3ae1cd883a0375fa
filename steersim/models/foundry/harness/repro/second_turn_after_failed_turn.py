"""Reproduce: a start() issued as soon as a failed turn's TaskFailed is delivered starts a second turn
beside the promoted queued input, on the unmodified local store.

azure-ai-agentserver-core, the multi-turn failure path of `TaskManager._execute_task_loop`: when a
steerable chain's handler raises with inputs queued, the chain record is written `suspended`, the
failed turn's future gets `TaskFailed`, and the loop yields (`await asyncio.sleep(0)`, "step 5 MUST be
observable BEFORE step 6") before `_try_drain_steering` promotes the queue head. A caller that reacts to
its `TaskFailed` by sending the next message runs in that yield: `start()` reads `status="suspended"`,
resumes the chain as a fresh turn, and the drain then starts the queued input's turn too. Two handler
invocations of one chain run at once, which the docs say steering avoids ("This avoids both rejecting
the new turn and running two turns at once").

Plain asyncio and the package's public API inside `AgentServerHost`'s lifespan (after `startup()`).
Exit 1 when two turns of the chain run at once, 0 when they do not.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ["AGENTSERVER_STATE_ROOT"] = tempfile.mkdtemp(prefix="repro-failed-turn-")
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import (  # noqa: E402
    TaskContext,
    TaskFailed,
    multi_turn_task,
    set_resilient_tasks_enabled,
)

running: set[str] = set()
overlaps: list[tuple[str, list[str]]] = []
release_first_turn: asyncio.Event | None = None


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    msg = ctx.input["msg"]
    if running:
        overlaps.append((msg, sorted(running)))
    running.add(msg)
    try:
        if msg == "m0" and release_first_turn is not None:
            await release_first_turn.wait()
            raise RuntimeError("the model call of turn m0 failed")
        await asyncio.sleep(0.05)
        return {"reply": msg}
    finally:
        running.discard(msg)


async def main() -> int:
    global release_first_turn
    release_first_turn = asyncio.Event()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        first = await conversation.start(task_id="c1", input={"msg": "m0"}, input_id="m0")
        steer = await conversation.start(task_id="c1", input={"msg": "m1"}, input_id="m1")
        print(f"start(input_id='m1') while m0 runs: is_queued={steer.is_queued}")
        release_first_turn.set()
        try:
            await first.result()
        except TaskFailed:
            print("m0's TaskRun.result() raised TaskFailed; the caller sends its next message at once")
        follow_up = await conversation.start(task_id="c1", input={"msg": "m2"}, input_id="m2")
        print(f"start(input_id='m2') with m1 still queued: is_queued={follow_up.is_queued}")
        await asyncio.wait_for(asyncio.gather(steer.result(), follow_up.result()), timeout=10)
    for entered, beside in overlaps:
        print(f"handler entered for {entered} while {', '.join(beside)} was still running")
    return 1 if overlaps else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
