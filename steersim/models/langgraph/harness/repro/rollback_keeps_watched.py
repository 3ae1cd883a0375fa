"""Rollback keeps a pending run that a stream client watches, as `interrupted`.

Standalone: plain asyncio with langgraph-api 0.16.7 and langgraph-runtime-inmem 0.36.7, their own
background queue, in-process over ASGI, no model and no network. r0 runs, r1 waits behind it
(enqueue) and a client joins r1's stream; r2 arrives with multitask_strategy=rollback. Runs.cancel
deletes a pending run under rollback only when nobody is subscribed to it, so r1 stays, marked
`interrupted`. The docs: rollback deletes the runs it cancels completely.
Exit 1 when r1's record is still there after r2 has finished, 0 when it is gone.
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

NODE_S = 1.0


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


async def main() -> int:
    import httpx
    from langgraph_api.server import app

    transport = httpx.ASGITransport(app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://x") as client:
        thread_id = (await client.post("/threads", json={})).json()["thread_id"]
        r0 = (await client.post(f"/threads/{thread_id}/runs", json=body("r0", "enqueue"))).json()
        await wait_status(client, thread_id, r0["run_id"], ("running",))
        r1 = (await client.post(f"/threads/{thread_id}/runs", json=body("r1", "enqueue"))).json()
        watcher = asyncio.create_task(client.get(f"/threads/{thread_id}/runs/{r1['run_id']}/stream"))
        await asyncio.sleep(0.2)  # the stream client subscribes
        r2 = (await client.post(f"/threads/{thread_id}/runs", json=body("r2", "rollback"))).json()
        await wait_status(client, thread_id, r2["run_id"], ("success", "error"), timeout=60.0)
        await asyncio.wait_for(watcher, 5.0)
        kept = await client.get(f"/threads/{thread_id}/runs/{r1['run_id']}")
    if kept.status_code == 200:
        print(f"reproduced: r1, rolled back while pending, is still there with status {kept.json()['status']!r}")
        return 1
    print(f"not reproduced: r1 is gone ({kept.status_code})")
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
