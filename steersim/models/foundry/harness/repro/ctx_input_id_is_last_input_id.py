"""Reproduce: a turn promoted from the steering queue sees the chain's last accepted input id as its
`ctx.input_id`, not its own input's id.

azure-ai-agentserver-core, `TaskManager._try_drain_steering` (and, for a turn re-entered by recovery,
`TaskManager._start_existing_task`) builds the turn's `TaskContext` with
`input_id=payload["last_input_id"]`, the id of the most recently *accepted* input, so with two inputs
queued the first promoted turn is told the id of the second. This script shows the promoted turn. The
docstring of `TaskContext` says `input_id` is this turn's input's id (spec section 2, invariant 10).

Plain asyncio and the package's public API inside `AgentServerHost`'s lifespan (after `startup()`).
Exit 1 when a turn's `ctx.input_id` differs from the `input_id` its `ctx.input` was started with,
0 when none does.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ["AGENTSERVER_STATE_ROOT"] = tempfile.mkdtemp(prefix="repro-input-id-")
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.core import AgentServerHost  # noqa: E402
from azure.ai.agentserver.core.tasks import TaskContext, multi_turn_task, set_resilient_tasks_enabled  # noqa: E402

seen: list[tuple[str, str | None]] = []
release_first_turn: asyncio.Event | None = None


@multi_turn_task(name="conversation", steerable=True)
async def conversation(ctx: TaskContext[dict]) -> dict:
    seen.append((ctx.input["msg"], ctx.input_id))
    if ctx.input["msg"] == "m0" and release_first_turn is not None:
        await release_first_turn.wait()
    return {"reply": ctx.input["msg"]}


async def main() -> int:
    global release_first_turn
    release_first_turn = asyncio.Event()
    set_resilient_tasks_enabled(True)
    host = AgentServerHost(configure_observability=None)
    async with host.router.lifespan_context(host):
        handles = [await conversation.start(task_id="c1", input={"msg": f"m{k}"}, input_id=f"m{k}") for k in range(3)]
        release_first_turn.set()
        await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), timeout=10)
    wrong = [(msg, got) for msg, got in seen if got != msg]
    for msg, got in wrong:
        print(f"the turn started with input_id={msg!r} saw ctx.input_id={got!r}")
    if not wrong:
        print("every turn saw its own input id: no divergence")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
