"""The real `azure-ai-agentserver-core` package as a `ChainSystem`: in-process, local file store, no
cloud service (spec section 9).

The environment is fixed before the package is imported (no hosted provider, no experimental-warning
noise, a fixed agent and session so that a restarted lifetime owns the same records), and the package's
loggers are silenced: the harness records behaviour, not log lines. Two chains are registered once, at
import, as the package requires: a steerable one and a plain one. Both delegate each turn to the
handler of the current lifetime.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from steersim.errors import UsageError
from steersim.models.foundry.harness.latency import StoreDelay

CORE = "azure-ai-agentserver-core"
TASK_ID = "c1"
SHUTDOWN_GRACE_S = 25.0

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AGENTSERVER_TASKS_BACKEND"] = "local"
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ["FOUNDRY_AGENT_NAME"] = "steersim"
os.environ["FOUNDRY_AGENT_SESSION_ID"] = "conformance"
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

try:
    from azure.ai.agentserver.core import AgentConfig
    from azure.ai.agentserver.core.tasks import TaskContext, multi_turn_task
    from azure.ai.agentserver.core.tasks._local_provider import LocalFileTaskProvider
    from azure.ai.agentserver.core.tasks._manager import TaskManager, set_task_manager
except ImportError as missing:  # the extra is optional
    raise UsageError(f"the Foundry packages are not installed ({missing}); run pip install -e '.[foundry]'") from None

_current_handler: Callable[[Any], Any] | None = None


async def _delegate(ctx: Any) -> Any:
    if _current_handler is None:
        raise RuntimeError("no harness lifetime is installed")
    return await _current_handler(ctx)


@multi_turn_task(name="steersim_steerable", steerable=True)
async def steerable_chain(ctx: TaskContext[dict]) -> dict:
    return await _delegate(ctx)


@multi_turn_task(name="steersim_plain")
async def plain_chain(ctx: TaskContext[dict]) -> dict:
    return await _delegate(ctx)


class LatentProvider:
    """A store whose every call first waits the virtual time `delay` gives for it, as a remote store's
    request would (zero: a bare suspension); the delegate's results and exceptions pass through
    unchanged (the manager retries etag conflicts by exception type)."""

    def __init__(self, inner: Any, delay: StoreDelay) -> None:
        self.inner = inner
        self.delay = delay

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(self.delay("create"))
        return await self.inner.create(*args, **kwargs)

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(self.delay("get"))
        return await self.inner.get(*args, **kwargs)

    async def update(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(self.delay("update"))
        return await self.inner.update(*args, **kwargs)

    async def delete(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(self.delay("delete"))
        return await self.inner.delete(*args, **kwargs)

    async def list(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(self.delay("list"))
        return await self.inner.list(*args, **kwargs)


class FoundryPackage:
    """One process lifetime of the package per `install`: a fresh `TaskManager` over the run's store."""

    name = "foundry"

    def __init__(self) -> None:
        self.manager: Any = None
        self.chain: Any = steerable_chain

    def target(self) -> dict[str, str]:
        try:
            return {"package": CORE, "version": version(CORE)}
        except PackageNotFoundError:
            return {"package": CORE, "version": "unknown"}

    def install(self, store: Path, steerable: bool, handler: Callable[[Any], Any], delay: StoreDelay | None) -> None:
        global _current_handler
        _current_handler = handler
        provider: Any = LocalFileTaskProvider(base_dir=store)
        self.local = provider
        if delay is not None:
            provider = LatentProvider(provider, delay)
        self.manager = TaskManager(AgentConfig.from_env(), provider=provider, shutdown_grace_seconds=SHUTDOWN_GRACE_S)
        set_task_manager(self.manager)
        self.chain = steerable_chain if steerable else plain_chain

    async def startup(self) -> None:
        await self.manager.startup()

    async def start(self, input_id: str | None, value: Any, if_last_input_id: str | None) -> Any:
        return await self.chain.start(task_id=TASK_ID, input=value, input_id=input_id,
                                      if_last_input_id=if_last_input_id)

    def record_state(self) -> dict[str, Any] | None:
        """The chain's persisted record as the package's public read path (`provider.get`) would return
        it, read between two steps of the loop: the local store's `get` does not suspend, so it is run
        to completion here, outside the loop and without its latency."""
        reading = self.local.get(TASK_ID)
        try:
            reading.send(None)
        except StopIteration as done:
            info = done.value
        else:  # a store that suspends cannot be read between steps
            reading.close()
            return None
        if info is None:
            return None
        payload = info.payload or {}
        steering = payload.get("steering") or {}

        def name(entry: Any) -> Any:
            return entry.get("msg", entry) if isinstance(entry, dict) else entry

        return {"status": info.status, "last_input_id": payload.get("last_input_id"),
                "pending_inputs": [name(e) for e in steering.get("pending_inputs") or []],
                "active_input": name(steering.get("active_input"))}

    def future(self, handle: Any) -> asyncio.Future:
        return handle._result_future

    def abandon(self) -> None:
        set_task_manager(None)

    async def close(self) -> None:
        await self.manager.shutdown()
