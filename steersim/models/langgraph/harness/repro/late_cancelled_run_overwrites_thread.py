"""A run cancelled by an interrupt, whose clean-up outlasts the run that interrupted it, writes the thread
last: the thread ends `interrupted`, its `values` the cancelled run's, though the next run succeeded.

Standalone: plain asyncio with langgraph-api 0.16.7 and langgraph-runtime-inmem 0.36.7, their own
background queue, in-process over ASGI, no model and no network. A node that is cancelled runs a
clean-up that takes 4 s (closing a connection, say). A second run with multitask_strategy=interrupt
cancels the first, starts at once (the first run's record already says `interrupted`) and succeeds in
about 1 s; when the first run's task finally stops, the worker sets the thread's status and values from
the first run's last checkpoint. The API reference says a thread's `values` are "the current state of
the thread", and GET /threads/{id}/state still gives the second run's. Exit 1 when, once both runs have
stopped, the thread's values are not its current state's or its status is not `idle`, 0 otherwise.
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
        await asyncio.sleep(1.0)
    except asyncio.CancelledError:
        await asyncio.sleep(4.0)  # the clean-up
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
        done = (await client.get(f"/threads/{thread_id}")).json()
        print(f"r2 succeeded: thread {done['status']}, values {done['values']}")
        deadline = time.monotonic() + 30.0
        while not any(what == "r1 clean-up ends" for _, what in LOG) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # the cancelled run's worker finishes after its node's clean-up
        thread = (await client.get(f"/threads/{thread_id}")).json()
        state = (await client.get(f"/threads/{thread_id}/state")).json()
    print(f"r1's clean-up ended: thread {thread['status']}, values {thread['values']}; "
          f"its current state {state['values']}")
    if thread["values"] != state["values"] or thread["status"] != "idle":
        print("reproduced: the interrupted run, stopping after the run that interrupted it, wrote the thread last")
        return 1
    print("not reproduced: the thread shows the last run's state")
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
