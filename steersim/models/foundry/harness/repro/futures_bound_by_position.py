"""Reproduce: a queued start()'s handle resolves with another input's outcome, because the drain binds
result futures to promoted inputs by position. Shown here after a crash: the first start() queued in
the next process gets the outcome of an input that the previous process had queued.

azure-ai-agentserver-core, `TaskManager._try_drain_steering` binds each promoted input to the next
registered result future by position (`pending_steering_futures.pop(0)`), not by input. Inputs queued
before a crash survive in the record but their futures died with the process, so in the next process
the first queued start() registers the only future and the drain of the oldest surviving input
resolves it. (With a remote store the same binding swaps the outcomes of two concurrent queued
start() calls whose futures are registered in one order and whose appends land in the other.) The
docs promise that each handle resolves with its own turn's outcome ("r2 resolves with
turn 2's outcome"; spec sections 1, 4.4, invariant 4).

A real crash: this script runs itself as a child process that serves the chain behind
`AgentServerHost`, queues two steers behind a running turn and ends with `os._exit`; a second host over
the same state directory (same agent and session) recovers the chain and takes one more start().
Plain asyncio and the package's public API. Exit 1 when that start()'s handle resolves with another
input's reply, 0 when it resolves with its own.
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
os.environ.setdefault("AGENTSERVER_STATE_ROOT", tempfile.mkdtemp(prefix="repro-bound-by-position-"))
os.environ["FOUNDRY_AGENT_NAME"] = "repro-agent"
os.environ["FOUNDRY_AGENT_SESSION_ID"] = "repro-session"
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import TaskContext, multi_turn_task, set_resilient_tasks_enabled  # noqa: E402

CRASHING = "--crash" in sys.argv
release_recovered_turn: asyncio.Event | None = None


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    if CRASHING:
        await asyncio.sleep(3600)  # the first turn runs until the process dies
    if ctx.entry_mode == "recovered" and release_recovered_turn is not None:
        await release_recovered_turn.wait()
    return {"reply": (ctx.input or {}).get("msg")}


async def crash() -> None:
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        await conversation.start(task_id="c1", input={"msg": "m0"}, input_id="m0")
        for k in (1, 2):
            handle = await conversation.start(task_id="c1", input={"msg": f"m{k}"}, input_id=f"m{k}")
            print(f"child: start(input_id='m{k}') while m0 runs: is_queued={handle.is_queued}", flush=True)
        print("child: the process dies with m0 running and m1, m2 queued", flush=True)
        os._exit(0)


async def recover() -> int:
    global release_recovered_turn
    release_recovered_turn = asyncio.Event()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        late = await conversation.start(task_id="c1", input={"msg": "m3"}, input_id="m3")
        print(f"next process: start(input_id='m3') while the recovered m0 runs: is_queued={late.is_queued}")
        release_recovered_turn.set()
        reply = await asyncio.wait_for(late.result(), timeout=10)
    print(f"next process: m3's TaskRun.result() returned {reply!r}")
    return 0 if reply == {"reply": "m3"} else 1


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
