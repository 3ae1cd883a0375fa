"""Run scenarios against the real server, in-process, on one virtual-time loop.

A `Session` starts the server's lifespan once, with the harness's dispatcher as its queue, and runs
each scenario on a thread of its own: the drivers post the creations at their points, the stream
clients join, and the recorder turns what the server does into events after every step of the loop.
A scenario ends when nothing is in flight on its thread and every client has its answer (`quiescent`),
or at `HORIZON_S` virtual seconds (`horizon`); its thread is then deleted. Each scenario starts at a
multiple of `ALIGN_S` virtual seconds, in phase with the dispatcher's polls, so that a scenario does
the same whatever ran before it.
"""

from __future__ import annotations

import asyncio
import math
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from steersim.core.model import Event
from steersim.harness.vloop import ReplayScheduler, Scheduler
from steersim.models.langgraph.harness import server
from steersim.models.langgraph.harness.graph import CONTROL
from steersim.models.langgraph.harness.recorder import Observation, Recorder
from steersim.models.langgraph.harness.scenarios import Arrival, Scenario

HORIZON_S = 120.0
ALIGN_S = 1000.0
SETTLE_S = 2.0


@dataclass
class Recording:
    scenario: Scenario
    observations: list[Observation] = field(default_factory=list)
    end: str = ""
    steps: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)  # with Session(keep_records=True)

    @property
    def events(self) -> list[Event]:
        return [o.event for o in self.observations]


class Session:
    """The server, its dispatcher and one HTTP client over ASGI, on one `InlineExecutorLoop`."""

    def __init__(self, scheduler: Callable[[Scenario], Scheduler] | None = None, keep_records: bool = False) -> None:
        self.scheduler = scheduler or (lambda _: ReplayScheduler(()))
        self.keep_records = keep_records  # each recording keeps the thread's records as they changed
        self.loop = server.InlineExecutorLoop(ReplayScheduler(()))  # each scenario is bounded by HORIZON_S
        self.recorder: Recorder | None = None
        self.loop.after_step.append(self._observe)
        server.ops.datetime = server.virtual_clock(self.loop)
        self.dispatcher = server.Dispatcher(self._ended)

    def run(self, scenarios: Iterable[Scenario], each: Callable[[Recording], None]) -> None:
        """Run `scenarios` in order, handing each recording to `each` as it ends. The runtime keeps its
        files in `.langgraph_api/` of the current folder (it loads them at start and writes them at the
        end), so the session runs in a folder of its own, removed afterwards."""
        asyncio.set_event_loop(self.loop)
        here = os.getcwd()
        with tempfile.TemporaryDirectory(prefix="steersim-langgraph-") as private:
            os.chdir(private)
            try:
                self.loop.run_until_complete(self._main(scenarios, each))
            finally:
                os.chdir(here)
                asyncio.set_event_loop(None)

    async def _main(self, scenarios: Iterable[Scenario], each: Callable[[Recording], None]) -> None:
        app = server.app
        async with app.router.lifespan_context(app):
            dispatching = asyncio.create_task(self.dispatcher.run(), name="dispatcher")
            transport = server.httpx.ASGITransport(app)
            async with server.httpx.AsyncClient(transport=transport, base_url="http://langgraph") as client:
                for scenario in scenarios:
                    each(await self._scenario(client, scenario))
            dispatching.cancel()
            await asyncio.gather(dispatching, return_exceptions=True)

    def _observe(self) -> None:
        if self.recorder is not None:
            self.recorder.observe()

    def _ended(self, run: dict, task: asyncio.Task) -> None:
        if self.recorder is not None:
            self.recorder.task_ended(str(run["run_id"]))

    async def _scenario(self, client: Any, scenario: Scenario) -> Recording:
        await asyncio.sleep(math.floor(self.loop.time() / ALIGN_S + 1) * ALIGN_S - self.loop.time())
        CONTROL.cleanup, CONTROL.fail = scenario.cleanup, dict(scenario.fail)
        thread_id = (await client.post("/threads", json={})).json()["thread_id"]
        recorder = Recorder(self.loop, thread_id)
        recorder.start()
        if self.keep_records:
            recorder.log = []
        self.loop.scheduler = self.scheduler(scenario)
        self.recorder = recorder
        steps = self.loop.steps
        drivers = [asyncio.create_task(self._arrive(client, recorder, thread_id, k, arrival))
                   for k, arrival in enumerate(scenario.arrivals)]
        end = "quiescent"
        try:
            await asyncio.wait_for(self._until_quiet(recorder, drivers), HORIZON_S)
        except TimeoutError:
            end = "horizon"
        self.recorder = None
        for driver in drivers:
            driver.cancel()
        await asyncio.gather(*drivers, return_exceptions=True)
        self.loop.scheduler = ReplayScheduler(())
        await client.delete(f"/threads/{thread_id}")
        return Recording(scenario, recorder.observations, end, self.loop.steps - steps, recorder.log or [])

    async def _until_quiet(self, recorder: Recorder, drivers: list[asyncio.Task]) -> None:
        await asyncio.gather(*drivers)
        while True:
            await asyncio.sleep(SETTLE_S)
            runs = recorder.before.runs
            alive = [t for t in self.dispatcher.tasks if not t.done()]
            if not alive and not any(status in ("pending", "running") for status in runs.values()):
                return

    async def _arrive(self, client: Any, recorder: Recorder, thread_id: str, k: int, arrival: Arrival) -> None:
        name = f"r{k + 1}"
        previous = f"r{k}"
        await self._wait(recorder, lambda: len(recorder.observations) >= arrival.after and (
            k == 0 or any(e.data.get("run") == previous and e.name in ("run.created", "run.rejected")
                          for e in recorder.events)))
        body = {"assistant_id": "agent", "input": {"items": [name]}, "multitask_strategy": arrival.strategy,
                "config": {"configurable": {"run_name": name}}}
        reply = await client.post(f"/threads/{thread_id}/runs", json=body)
        if reply.status_code == 409:
            recorder.note("run.rejected", run=name, code=409)
            return
        recorder.note("run.response", run=name, code=reply.status_code)
        if arrival.join and reply.status_code == 200:
            await client.get(f"/threads/{thread_id}/runs/{reply.json()['run_id']}/stream")

    @staticmethod
    async def _wait(recorder: Recorder, ready: Callable[[], bool]) -> None:
        if ready():
            return
        woken = asyncio.get_running_loop().create_future()

        def check() -> None:
            if ready() and not woken.done():
                woken.set_result(None)

        recorder.listeners.append(check)
        try:
            await woken
        finally:
            recorder.listeners.remove(check)
