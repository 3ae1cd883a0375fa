"""A rollback deletes a run after a later interrupt let that run write the thread: the thread keeps the
deleted run's values, though none of its checkpoints is left.

Standalone: plain asyncio with langgraph-api 0.16.7 and langgraph-runtime-inmem 0.36.7, their own
background queue, in-process over ASGI, no model and no network. Runs.cancel under rollback marks
nothing on a running run nobody streams: it logs "Eagerly deleting ..." with `await logger.ainfo`, a
hop to the default thread pool, and only then gathers the control message and Runs.delete. The log
sink here is slow once, for that line (1 s: a busy pipe or a remote collector, say); meanwhile a
run created with multitask_strategy=interrupt cancels the running run, whose task stops and writes
the thread's status and values from its last checkpoint (its record is still there); then the
rollback deletes that run's record and checkpoints. The client cancels the interrupting run while
it is pending, so nothing is left in flight. The API reference says a thread's `values` are "the
current state of the thread"; GET /threads/{id}/state is empty. Exit 1 when, with nothing in flight,
the thread's values are not its current state's, 0 otherwise (with SINK_DELAY=0 the rollback deletes
first, the run's own write finds no record, 404, and the thread keeps no values: exit 0).
"""

import asyncio
import json
import logging
import operator
import os
import sys
import tempfile
import threading
import time
from typing import Annotated, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph


class Items(TypedDict):
    items: Annotated[list[str], operator.add]


async def work(state: Items, config: RunnableConfig) -> dict:
    await asyncio.sleep(1.0)
    return {"items": [f"{config['configurable']['run_name']}.done"]}


builder = StateGraph(Items)
builder.add_node("work", work)
builder.add_edge(START, "work")
builder.add_edge("work", END)
graph = builder.compile()

SLOW = threading.Event()


class SlowSink(logging.Filter):
    """A log sink that is slow once, for the rollback's line (it runs on the thread pool's thread)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "Eagerly deleting" in str(record.msg) and not SLOW.is_set():
            SLOW.set()
            time.sleep(float(os.environ.get("SINK_DELAY", "1.0")))
        return True


async def wait_status(client, thread_id, run_id, wanted, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = (await client.get(f"/threads/{thread_id}/runs/{run_id}")).json()
        if run["status"] in wanted:
            return run["status"]
        await asyncio.sleep(0.01)
    raise TimeoutError(f"run {run_id} never reached {wanted}")


async def main() -> int:
    import httpx
    from langgraph_api.server import app

    transport = httpx.ASGITransport(app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://x") as client:
        logging.getLogger("langgraph_runtime_inmem.ops").addFilter(SlowSink())
        thread_id = (await client.post("/threads", json={})).json()["thread_id"]

        def body(name, strategy):
            return {"assistant_id": "agent", "input": {"items": [name]}, "multitask_strategy": strategy,
                    "config": {"configurable": {"run_name": name}}}

        first = (await client.post(f"/threads/{thread_id}/runs", json=body("r1", "reject"))).json()
        await wait_status(client, thread_id, first["run_id"], ("running",))
        await asyncio.sleep(0.3)  # r1 has written its input checkpoints
        second = asyncio.create_task(client.post(f"/threads/{thread_id}/runs", json=body("r2", "rollback")))
        deadline = time.monotonic() + 10.0
        while not SLOW.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        third = (await client.post(f"/threads/{thread_id}/runs", json=body("r3", "interrupt"))).json()
        await client.post(f"/threads/{thread_id}/runs/{third['run_id']}/cancel")
        await asyncio.sleep(0.5)
        before = (await client.get(f"/threads/{thread_id}")).json()
        print(f"before the rollback deletes r1: thread {before['status']}, values {before['values']}")
        await second
        await asyncio.sleep(3.0)
        runs = (await client.get(f"/threads/{thread_id}/runs")).json()
        thread = (await client.get(f"/threads/{thread_id}")).json()
        state = (await client.get(f"/threads/{thread_id}/state")).json()
    names = {first["run_id"]: "r1", third["run_id"]: "r3"}
    print("runs: " + ", ".join(f"{names.get(r['run_id'], 'r2')} {r['status']}" for r in runs))
    print(f"thread {thread['status']}, values {thread['values']}; its current state {state['values']}")
    in_flight = any(r["status"] in ("pending", "running") for r in runs)
    if not in_flight and (thread["values"] or {}) != (state["values"] or {}):
        print("reproduced: the rolled-back run wrote the thread, then its record and checkpoints were deleted")
        return 1
    print("not reproduced: the thread shows its current state")
    return 0


if __name__ == "__main__":
    os.environ.update({
        "LANGGRAPH_RUNTIME_EDITION": "inmem", "REDIS_URI": "fake", "DATABASE_URI": ":memory:",
        "MIGRATIONS_PATH": "__inmem", "LANGSERVE_GRAPHS": json.dumps({"agent": f"{os.path.abspath(__file__)}:graph"}),
        "LANGGRAPH_DISABLE_FILE_PERSISTENCE": "true", "LANGGRAPH_ALLOW_BLOCKING": "true",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true", "LANGSMITH_TRACING": "false",
        "LOG_LEVEL": "INFO", "N_JOBS_PER_WORKER": "10",  # INFO: the rollback's line reaches the sink
    })
    os.chdir(tempfile.mkdtemp(prefix="langgraph-repro-"))  # the runtime keeps its files in ./.langgraph_api
    try:
        code = asyncio.run(main())
    except Exception as failure:  # a run that could not be driven reproduces nothing: not exit 1
        print(f"could not run the scenario: {type(failure).__name__}: {failure}")
        code = 2
    sys.exit(code)
