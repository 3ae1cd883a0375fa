"""The real LangGraph server (`langgraph-api` over `langgraph-runtime-inmem`) in this process, on the
virtual-time loop of `steersim.harness.vloop`.

The environment is fixed before the server is imported: the in-memory runtime, no file persistence,
the harness's graph, no outbound connection (analytics, version check, tracing), and no background
queue (`N_JOBS_PER_WORKER=0`): `Dispatcher` is the queue's loop without its stats and sweeps, so the
harness sees every run it starts. What the loop cannot do is made virtual: the executor runs its
function inline (stream events are serialised there), and the runtime's wall clock (`created_at <
now` decides which pending runs a poll sees) reads the loop's virtual time.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from steersim.errors import UsageError
from steersim.harness.vloop import VirtualLoop

PACKAGES = ("langgraph-api", "langgraph-runtime-inmem", "langgraph")
ENVIRONMENT = {
    "LANGGRAPH_RUNTIME_EDITION": "inmem",
    "REDIS_URI": "fake",
    "DATABASE_URI": ":memory:",
    "MIGRATIONS_PATH": "__inmem",
    "LANGSERVE_GRAPHS": json.dumps({"agent": "steersim.models.langgraph.harness.graph:graph"}),
    "LANGGRAPH_DISABLE_FILE_PERSISTENCE": "true",
    "LANGGRAPH_ALLOW_BLOCKING": "true",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "N_JOBS_PER_WORKER": "0",
    "LOG_LEVEL": "CRITICAL",
}
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)

os.environ.update(ENVIRONMENT)
_here = os.getcwd()
with tempfile.TemporaryDirectory(prefix="steersim-langgraph-") as _scratch:
    os.chdir(_scratch)  # importing the runtime makes its `.langgraph_api/` folder in the current one
    try:
        import httpx
        from langgraph_api import worker
        from langgraph_api.server import app
        from langgraph_runtime_inmem import database, ops
        from langgraph_runtime_inmem.checkpoint import Checkpointer
        from langgraph_runtime_inmem.inmem_stream import get_stream_manager
    except ImportError as missing:  # the extra is optional
        raise UsageError(f"the LangGraph packages are not installed ({missing}); "
                         "run pip install -e '.[langgraph]' -c constraints/test.txt") from None
    finally:
        os.chdir(_here)
logging.getLogger().setLevel(logging.CRITICAL)

__all__ = ["EPOCH", "Checkpointer", "Dispatcher", "InlineExecutorLoop", "app", "database", "get_stream_manager",
           "httpx", "ops", "target", "virtual_clock"]


def target() -> dict[str, str]:
    """The packages under test and their versions."""
    out = {}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "unknown"
    return out


class InlineExecutorLoop(VirtualLoop):
    """A virtual loop whose executor runs the function at once: the loop polls no threads, and the
    server only hands it pure work (serialising stream events, logging)."""

    def run_in_executor(self, executor: Any, func: Callable[..., Any], *args: Any) -> asyncio.Future:
        future = self.create_future()
        try:
            future.set_result(func(*args))
        except Exception as failure:  # the caller sees what the function raised (a Ctrl-C goes on)
            future.set_exception(failure)
        return future


def virtual_clock(loop: asyncio.AbstractEventLoop) -> type[datetime]:
    """A `datetime` whose `now()` is the loop's virtual time after EPOCH, for the runtime's module."""

    class VirtualDatetime(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> datetime:  # type: ignore[override]
            return EPOCH + timedelta(seconds=loop.time())

    return VirtualDatetime


class Dispatcher:
    """The background queue's loop: poll for pending runs (`Runs.next`), start each in a worker task;
    a poll after one that found nothing waits first (`Runs.next(wait=True)` sleeps 0.5 s), as the
    queue's does. `on_end(run, task)` tells the recorder that a worker task has stopped."""

    def __init__(self, on_end: Callable[[dict, asyncio.Task], None]) -> None:
        self.on_end = on_end
        self.tasks: set[asyncio.Task] = set()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        found = True
        while True:
            picked = False
            async for run, attempt in ops.Runs.next(wait=not found, limit=1):
                picked = True
                task = loop.create_task(worker.worker(run, attempt, loop), name=f"run-{run['run_id']}")
                self.tasks.add(task)
                task.add_done_callback(lambda t, run=run: self._ended(run, t))
            found = picked

    def _ended(self, run: dict, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        self.on_end(run, task)
