"""Reproduce: when the process dies during a turn that was promoted from the steering queue, the next
process re-enters that turn with `ctx.input` None: the steered input is lost.

azure-ai-agentserver-core: the drain (`TaskManager._try_drain_steering`) keeps the promoted input in
`payload["steering"]["active_input"]`, while the turn end before it cleared `payload["input"]`; the
recovery scan of the next lifetime (`TaskManager.startup()` -> `_recover_stale_tasks` ->
`_start_existing_task`) re-enters the interrupted turn from `payload["input"]`. The docs promise that
recovery re-enters the interrupted turn with its own input ("if a steerable task crashed mid-drain,
`is_steered_turn` will be True"; spec sections 2, 4.8, invariant 18).

A real crash: this script runs itself as a child process that serves the chain behind
`AgentServerHost`, queues a steer, and ends with `os._exit` while the steered turn runs; then a second
host over the same state directory (same agent and session, so it owns the record) recovers it. Plain
asyncio and the package's public API. Exit 1 when the recovered turn's `ctx.input` is not the steered
input, 0 when it is.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import tempfile

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ.setdefault("AGENTSERVER_STATE_ROOT", tempfile.mkdtemp(prefix="repro-recovered-steer-"))
os.environ["FOUNDRY_AGENT_NAME"] = "repro-agent"
os.environ["FOUNDRY_AGENT_SESSION_ID"] = "repro-session"
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import TaskContext, multi_turn_task, set_resilient_tasks_enabled  # noqa: E402

CRASHING = "--crash" in sys.argv
release_first_turn: asyncio.Event | None = None
recovered: asyncio.Future | None = None


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    if CRASHING:
        if ctx.input["msg"] == "m0" and release_first_turn is not None:
            await release_first_turn.wait()
            return {"reply": "m0"}
        print(f"child: steered turn entered with ctx.input={ctx.input!r}, is_steered_turn={ctx.is_steered_turn}; "
              "the process dies now", flush=True)
        os._exit(0)
    if recovered is not None and not recovered.done():
        recovered.set_result((ctx.entry_mode, ctx.is_steered_turn, ctx.input))
    return {"reply": "recovered"}


async def crash() -> None:
    global release_first_turn
    release_first_turn = asyncio.Event()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        first = await conversation.start(task_id="c1", input={"msg": "m0"}, input_id="m0")
        steer = await conversation.start(task_id="c1", input={"msg": "m1"}, input_id="m1")
        print(f"child: start(input_id='m1') while m0 runs: is_queued={steer.is_queued}", flush=True)
        release_first_turn.set()
        await first.result()
        await asyncio.sleep(5)  # the steered turn's handler ends the process before this returns


async def recover() -> int:
    global recovered
    recovered = asyncio.get_running_loop().create_future()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        mode, steered, value = await asyncio.wait_for(recovered, timeout=10)
    print(f"next process: startup() re-entered the turn with entry_mode={mode!r}, is_steered_turn={steered}, "
          f"ctx.input={value!r}")
    return 0 if value == {"msg": "m1"} else 1


def main() -> int:
    if CRASHING:
        asyncio.run(crash())
        return 2  # not reached: the steered turn ends the process
    child = subprocess.run([sys.executable, __file__, "--crash"], env=os.environ, timeout=60)
    if child.returncode != 0:
        print(f"the child process did not die in its steered turn (exit {child.returncode}); nothing to reproduce")
        return 0
    return asyncio.run(recover())


if __name__ == "__main__":
    sys.exit(main())
