"""The next run starts while the run it interrupted is still running (its clean-up awaits).

Standalone: plain asyncio with langgraph-api 0.16.7 and langgraph-runtime-inmem 0.36.7, their own
background queue, in-process over ASGI, no model and no network. A node that is cancelled runs a
clean-up that takes 2.5 s (closing a connection, say). A second run with multitask_strategy=interrupt
cancels the first: the first run's record says `interrupted` at once, and the queue, which only waits
for a run whose status is `running`, starts the second run while the first one's clean-up still runs.
Exit 1 when the second run's node starts before the first run's clean-up has finished, 0 otherwise.
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


class Items(TypedDict):
    items: Annotated[list[str], operator.add]


async def work(state: Items, config: RunnableConfig) -> dict:
    import __main__

    run = config["configurable"]["run_name"]
    __main__.LOG.append((time.monotonic(), f"{run} node starts"))
    try:
        await asyncio.sleep(6.0)
    except asyncio.CancelledError:
        await asyncio.sleep(2.5)  # the clean-up
        __main__.LOG.append((time.monotonic(), f"{run} clean-up ends"))
        raise
    return {"items": [f"{run}.done"]}


builder = StateGraph(Items)
builder.add_node("work", work)
builder.add_edge(START, "work")
builder.add_edge("work", END)
graph = builder.compile()

LOG: list = []


async def wait_status(client, thread_id, run_id, wanted, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = (await client.get(f"/threads/{thread_id}/runs/{run_id}")).json()
        if run["status"] in wanted:
            return run["status"]
        await asyncio.sleep(0.02)
    raise TimeoutError(f"run {run_id} never reached {wanted}")


async def main() -> int:
    import httpx
    from langgraph_api.server import app

    transport = httpx.ASGITransport(app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://x") as client:
        thread_id = (await client.post("/threads", json={})).json()["thread_id"]

        def body(name, strategy):
            return {"assistant_id": "agent", "input": {"items": [name]}, "multitask_strategy": strategy,
                    "config": {"configurable": {"run_name": name}}}

        first = (await client.post(f"/threads/{thread_id}/runs", json=body("r1", "enqueue"))).json()
        await wait_status(client, thread_id, first["run_id"], ("running",))
        await asyncio.sleep(0.3)
        second = (await client.post(f"/threads/{thread_id}/runs", json=body("r2", "interrupt"))).json()
        await wait_status(client, thread_id, second["run_id"], ("success", "error"), timeout=60.0)
    events = [what for _, what in sorted(LOG)]
    print("\n".join(events))
    if "r2 node starts" in events and "r1 clean-up ends" in events and (
            events.index("r2 node starts") < events.index("r1 clean-up ends")):
        print("reproduced: r2 ran its node while r1, which it interrupted, was still running")
        return 1
    print("not reproduced: r2 started after r1 had stopped")
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
