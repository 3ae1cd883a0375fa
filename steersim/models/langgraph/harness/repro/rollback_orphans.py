"""Rollback deletes a running run, whose task then writes checkpoints that are never deleted.

Standalone: plain asyncio with langgraph-api 0.16.7 and langgraph-runtime-inmem 0.36.7, their own
background queue, in-process over ASGI, no model and no network. A second run with
multitask_strategy=rollback arrives just after the queue has started the first run, before its task
has written its first checkpoints, and no stream client watches the first run: Runs.cancel deletes
the first run's record and checkpoints at once; its task still writes its input checkpoints before the
cancellation reaches it, and nothing deletes those (the worker's own delete finds no run and ignores the
404). The second run starts from them. The docs: rollback deletes the first run completely.
Exit 1 when the thread's final values or history still hold the rolled-back input, 0 otherwise (the
race is tried on up to ATTEMPTS fresh threads).
"""

import asyncio
import json
import operator
import os
import sys
import tempfile
import time
from typing import Annotated, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

NODE_S = 0.05
ATTEMPTS = 30


class Items(TypedDict):
    items: Annotated[list[str], operator.add]


async def work(state: Items, config: RunnableConfig) -> dict:
    await asyncio.sleep(NODE_S)
    return {"items": [f"{config['configurable']['run_name']}.done"]}


builder = StateGraph(Items)
builder.add_node("work", work)
builder.add_edge(START, "work")
builder.add_edge("work", END)
graph = builder.compile()


async def wait_status(client, thread_id, run_id, wanted, timeout=60.0, pause=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = (await client.get(f"/threads/{thread_id}/runs/{run_id}")).json()
        if run["status"] in wanted:
            return run["status"]
        await asyncio.sleep(pause)
    raise TimeoutError(f"run {run_id} never reached {wanted}")


def body(name, strategy):
    return {"assistant_id": "agent", "input": {"items": [name]}, "multitask_strategy": strategy,
            "config": {"configurable": {"run_name": name}}}


async def attempt(client) -> bool:
    thread_id = (await client.post("/threads", json={})).json()["thread_id"]
    first = (await client.post(f"/threads/{thread_id}/runs", json=body("r1", "enqueue"))).json()
    await wait_status(client, thread_id, first["run_id"], ("running",), pause=0)
    second = (await client.post(f"/threads/{thread_id}/runs", json=body("r2", "rollback"))).json()
    await wait_status(client, thread_id, second["run_id"], ("success", "error"))
    values = (await client.get(f"/threads/{thread_id}/state")).json()["values"]
    history = (await client.post(f"/threads/{thread_id}/history", json={"limit": 50})).json()
    runs = {state["metadata"].get("run_id") for state in history}
    if "r1" in (values or {}).get("items", []) or first["run_id"] in runs:
        print(f"reproduced: after rolling back r1, the thread's values are {values} and its history holds "
              f"{sum(1 for s in history if s['metadata'].get('run_id') == first['run_id'])} checkpoints of r1")
        return True
    return False


async def main() -> int:
    import httpx
    from langgraph_api.server import app

    transport = httpx.ASGITransport(app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://x") as client:
        for n in range(ATTEMPTS):
            if await attempt(client):
                print(f"(attempt {n + 1})")
                return 1
    print(f"not reproduced in {ATTEMPTS} attempts")
    return 0


if __name__ == "__main__":
    os.environ.update({
        "LANGGRAPH_RUNTIME_EDITION": "inmem", "REDIS_URI": "fake", "DATABASE_URI": ":memory:",
        "MIGRATIONS_PATH": "__inmem", "LANGSERVE_GRAPHS": json.dumps({"agent": f"{os.path.abspath(__file__)}:graph"}),
        "LANGGRAPH_DISABLE_FILE_PERSISTENCE": "true", "LANGGRAPH_ALLOW_BLOCKING": "true",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true", "LANGSMITH_TRACING": "false",
        "LOG_LEVEL": "CRITICAL", "N_JOBS_PER_WORKER": "10",  # the server's own background queue, as deployed
    })
    os.chdir(tempfile.mkdtemp(prefix="langgraph-repro-"))  # the runtime keeps its files in ./.langgraph_api
    try:
        code = asyncio.run(main())
    except Exception as failure:  # a run that could not be driven reproduces nothing: not exit 1
        print(f"could not run the scenario: {type(failure).__name__}: {failure}")
        code = 2
    sys.exit(code)
