"""Reproduce: a turn re-entered by recovery reads `ctx.pending_input_count` 0 although inputs are
queued behind it.

azure-ai-agentserver-core: `ctx.pending_input_count` reads an in-memory count that only an enqueue
(`_append_steering_input`) and a drain (`_try_drain_steering`) set; the recovery scan of a new process
(`TaskManager.startup()` -> `_recover_stale_tasks` -> `_start_existing_task`) re-enters the interrupted
turn without setting it from the persisted `pending_inputs`, so the turn reads 0 while it has ctx.cancel
set for those very inputs. The `TaskContext` docstring promises a "live count of queued steering
inputs" (spec section 2, invariants 8 and 9).

A real crash: this script runs itself as a child process that serves the chain behind
`AgentServerHost`, queues two steers behind a running turn and ends with `os._exit`; a second host over
the same state directory (same agent and session) recovers the chain. Plain asyncio and the package's
public API. Exit 1 when the recovered turn reads a count of 0 with inputs queued, 0 otherwise.
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
os.environ.setdefault("AGENTSERVER_STATE_ROOT", tempfile.mkdtemp(prefix="repro-recovered-count-"))
os.environ["FOUNDRY_AGENT_NAME"] = "repro-agent"
os.environ["FOUNDRY_AGENT_SESSION_ID"] = "repro-session"
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import TaskContext, multi_turn_task, set_resilient_tasks_enabled  # noqa: E402

CRASHING = "--crash" in sys.argv
recovered: asyncio.Future | None = None


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    if CRASHING:
        await asyncio.sleep(3600)  # the first turn runs until the process dies
    if ctx.entry_mode == "recovered" and recovered is not None and not recovered.done():
        recovered.set_result((ctx.input, ctx.cancel.is_set(), ctx.pending_input_count))
    return {"reply": (ctx.input or {}).get("msg")}


async def crash() -> None:
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        await conversation.start(task_id="c1", input={"msg": "m0"}, input_id="m0")
        for k in (1, 2):
            await conversation.start(task_id="c1", input={"msg": f"m{k}"}, input_id=f"m{k}")
        print("child: the process dies with m0 running and m1, m2 queued", flush=True)
        os._exit(0)


async def recover() -> int:
    global recovered
    recovered = asyncio.get_running_loop().create_future()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        value, cancel, count = await asyncio.wait_for(recovered, timeout=10)
        await asyncio.sleep(0.5)  # let the queued turns drain before the host stops
    print(f"next process: the recovered turn (ctx.input={value!r}) read ctx.cancel.is_set()={cancel}, "
          f"ctx.pending_input_count={count} with m1 and m2 queued")
    return 1 if count == 0 else 0


def main() -> int:
    if CRASHING:
        asyncio.run(crash())
        return 2  # not reached
    child = subprocess.run([sys.executable, __file__, "--crash"], env=os.environ, timeout=60)
    if child.returncode != 0:
        print(f"the child process did not crash as planned (exit {child.returncode}); nothing to reproduce")
        return 0
    return asyncio.run(recover())


if __name__ == "__main__":
    sys.exit(main())
