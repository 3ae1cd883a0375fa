"""Run scenarios against the real Pydantic AI, in-process, on steersim's virtual-time loop.

Each scenario builds an agent whose model is a `FunctionModel` (a function for plain requests and a stream
function for streamed ones) and one async tool, runs it the scenario's way, and records what the run does
as the model's native events: the harness's own code sees each model request (the messages the model is
sent, so which enqueued messages it carries), each response, each tool call's start and return, every
`enqueue`, `dequeue` and `cancel` it makes and its answer. A driver task waits for each point of the
scenario (`scenarios.py`) and acts there; it runs at the run's next await, which is in the harness's model
function or tool. After a cancellation a second run continues the cancelled run's history.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from steersim.core.model import Event
from steersim.errors import UsageError

try:
    from pydantic_ai import Agent, RunContext
    from pydantic_ai.capabilities import Hooks
    from pydantic_ai.exceptions import RunCancelled, UserError
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel
except ImportError as missing:  # the extra is optional
    raise UsageError(f"Pydantic AI is not installed ({missing}); "
                     "run pip install -e '.[pydantic-ai]' -c constraints/test.txt") from None
from steersim.harness.vloop import RandomScheduler, ReplayScheduler, VirtualLoop
from steersim.models.pydantic_ai.harness.scenarios import POINTS, Scenario
from steersim.models.pydantic_ai.state import CHAIN, call_name, message_name, run_name, turn_name

HORIZON_S = 60.0
MODEL_S = 1.0  # how long the model takes to answer (a streamed answer: two chunks, half of it each)
TOOL_S = 1.0  # how long the first tool call runs; each next one half a second longer
PROMPTS = ("hello", "go on")


@dataclass
class Observation:
    """An event at virtual time `t`."""

    event: Event
    t: float


@dataclass
class Recording:
    scenario: Scenario
    seed: int | None = None
    observations: list[Observation] = field(default_factory=list)
    end: str = ""
    version: str = ""
    notes: list[str] = field(default_factory=list)  # what the harness saw that is no event: errors, outputs
    lost_results: list[str] = field(default_factory=list)  # calls that returned, missing from the continued history
    messages: list[Any] = field(default_factory=list)  # the conversation's message history when the last run stopped

    @property
    def events(self) -> list[Event]:
        return [o.event for o in self.observations]

    @property
    def name(self) -> str:
        """The scenario's name, and the seed of its schedule if it has one (`--seed` replays it)."""
        return self.scenario.name if self.seed is None else f"{self.scenario.name} --seed {self.seed}"


def marker(k: int) -> str:
    """The text of message k: its name, so a request shows which messages it carries."""
    return f"steer {message_name(k)}"


class Driven:
    """One scenario's run(s) and what they record."""

    def __init__(self, scenario: Scenario, loop: asyncio.AbstractEventLoop) -> None:
        self.scenario = scenario
        self.loop = loop
        self.rec = Recording(scenario)
        self.run = 0
        self.requests = 0
        self.final_seen = False  # the run's latest response was final: the next request is the end's redirect
        self.in_model: str | None = None  # the turn the model is answering
        self.delivered: dict[str, int] = {}  # marker -> times seen in the conversation
        self.open_calls: set[str] = set()
        self.closed_out: set[str] = set()
        self.ids: dict[int, str] = {}  # message -> enqueue_id
        self.priorities: dict[int, str] = {}
        self.handle: Any = None  # what the driver enqueues into: the AgentRun (iter) or the run's RunContext
        self.points: dict[str, asyncio.Future[None]] = {}
        self.started_tools = 0
        self.cancelled = False  # the scenario's cancel has been made
        self.tool_ctx: Any = None  # the first tool call's own RunContext
        self.returned: set[str] = set()  # calls that returned in a run that was then cancelled
        self.ended = False  # the current run's end has been noted

    # ------------------------------------------------------------------ recording
    def note(self, name: str, **data: Any) -> int:
        self.rec.observations.append(Observation(Event("agent", "client", name, data), self.loop.time()))
        return len(self.rec.observations) - 1

    def point(self, name: str) -> asyncio.Future[None]:
        if name not in self.points:
            self.points[name] = self.loop.create_future()
        return self.points[name]

    def reached(self, name: str) -> None:
        future = self.point(name)
        if not future.done():
            future.set_result(None)

    def request(self, messages: list[Any]) -> str:
        """A model request: the messages it carries that the conversation did not before, and the calls a
        cancelled run left open that it closes out."""
        counts: dict[str, int] = {}
        order: list[str] = []
        closed: list[str] = []
        kept: set[str] = set()
        for message in messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str) and part.content.startswith(
                        "steer "):
                    name = part.content.removeprefix("steer ")
                    counts[name] = counts.get(name, 0) + 1
                    if counts[name] > self.delivered.get(name, 0):
                        order.append(name)
                elif isinstance(part, ToolReturnPart) and part.outcome == "interrupted":
                    if part.tool_call_id not in self.closed_out:
                        closed.append(part.tool_call_id)
                elif isinstance(part, ToolReturnPart):
                    kept.add(part.tool_call_id)
        for name in order:
            self.delivered[name] = self.delivered.get(name, 0) + 1
        self.closed_out |= set(closed)
        self.requests += 1
        turn = turn_name(self.run, self.requests)
        if self.run and self.requests == 1 and self.returned - kept:
            self.rec.lost_results.extend(sorted(self.returned - kept))
        if self.final_seen and order:
            self.note("redirect", run=run_name(self.run), turn=turn, delivered=tuple(order))
            order = []
        self.final_seen = False
        self.note("request", run=run_name(self.run), turn=turn, closed_out=tuple(closed), delivered=tuple(order))
        self.in_model = turn
        if self.requests == 1 and self.run == 0:
            self.reached("model")
        return turn

    def respond(self, turn: str, calls: tuple[str, ...]) -> None:
        self.note("response", turn=turn, calls=calls)
        self.in_model = None
        if not calls:
            self.final_seen = True
            if self.run == 0:
                self.reached("final")

    def calls_for(self, messages: list[Any]) -> int:
        first = self.run == 0 and not any(isinstance(m, ModelResponse) for m in messages)
        return self.scenario.calls if first else 0

    # ------------------------------------------------------------------ the agent
    def agent(self) -> Any:
        async def answer(messages: list[Any], info: Any) -> Any:
            turn = self.request(messages)
            n = self.calls_for(messages)
            await asyncio.sleep(MODEL_S)
            calls = tuple(call_name(self.run, self.requests, i) for i in range(n))
            self.respond(turn, calls)
            if calls:
                return ModelResponse(parts=[ToolCallPart("work", {"i": i}, tool_call_id=c)
                                            for i, c in enumerate(calls)])
            return ModelResponse(parts=[TextPart("done")])

        async def stream(messages: list[Any], info: Any) -> Any:
            turn = self.request(messages)
            n = self.calls_for(messages)
            await asyncio.sleep(MODEL_S / 2)
            calls = tuple(call_name(self.run, self.requests, i) for i in range(n))
            if calls:
                await asyncio.sleep(MODEL_S / 2)
                for i, c in enumerate(calls):
                    yield {i: DeltaToolCall("work", f'{{"i": {i}}}', tool_call_id=c)}
            else:
                yield "do"
                if self.run == 0:
                    self.reached("stream")
                await asyncio.sleep(MODEL_S / 2)
                yield "ne"
            self.respond(turn, calls)

        agent = Agent(FunctionModel(answer, stream_function=stream))

        @agent.tool
        async def work(ctx: RunContext[None], i: int) -> str:
            call = str(ctx.tool_call_id)
            self.note("tool.started", call=call)
            self.started_tools += 1
            if self.tool_ctx is None:
                self.tool_ctx = ctx
            if self.run == 0:
                self.reached("tool")
                if self.started_tools == self.scenario.calls:
                    self.reached("tools")
            self.open_calls.add(call)
            await asyncio.sleep(TOOL_S + i / 2)
            self.open_calls.discard(call)
            self.returned.add(call)
            self.note("tool.returned", call=call)
            if self.run == 0 and self.scenario.calls > 1:
                self.reached("returned")
            return f"worked {i}"

        return agent

    # ------------------------------------------------------------------ the client
    def target(self, k: int, priority: str) -> str:
        """As the model orders steers: on their priority's queue, or each alone when priorities change."""
        return f"{CHAIN}.{message_name(k)}" if self.scenario.promote else f"{CHAIN}.{priority}"

    def enqueue(self, k: int, priority: str, via: str) -> None:
        answer: list[Any] = []
        handle = self.tool_ctx if via == "tool" else self.handle

        def call() -> None:
            try:
                answer.append(handle.enqueue(marker(k), priority=priority))
            except UserError as refused:
                answer.append(refused)

        if via == "thread":
            thread = threading.Thread(target=call)
            thread.start()
            thread.join()
        else:
            call()
        accepted = isinstance(answer[0], str)
        if accepted:
            self.ids[k] = answer[0]
        elif not self.cancelled or self.run:  # refused by a run that ended, not by a cancelled one
            self.end_run()
        self.priorities[k] = priority
        self.note("enqueue", msg=message_name(k), priority=priority, target=self.target(k, priority),
                  accepted=accepted)

    def promote(self, k: int) -> None:
        if k not in self.ids:
            return
        other = "asap" if self.priorities[k] == "when_idle" else "when_idle"
        changed = bool(self.handle.set_enqueue_priority(self.ids[k], other))
        name = message_name(k)
        if changed or not self.delivered.get(name):
            self.priorities[k] = other
            self.note("priority", msg=name, priority=other)

    def dequeue(self, k: int) -> None:
        if k not in self.ids:
            return
        removed = bool(self.handle.dequeue(self.ids[k]))
        name = message_name(k)
        if removed or not self.delivered.get(name):
            self.note("dequeue", msg=name, removed=removed)

    def cancel(self) -> None:
        self.cancelled = True
        self.note("cancel", run=run_name(self.run))
        self.handle.cancel()

    async def drive(self) -> None:
        """Act at each point in the scenario's order: a dequeue before the second arrival, the cancel once
        the arrivals at its point are made."""
        s = self.scenario
        for k, arrival in enumerate(s.arrivals):
            if s.cancel and arrival.point != s.cancel and _later(arrival.point, s.cancel):
                await self.point(s.cancel)
                if "cancelled" not in self.points:
                    self.cancel()
            await self.point(arrival.point)
            if s.dequeue and k == 1:
                self.dequeue(0)
            if s.promote and k == 1:
                self.promote(0)
            self.enqueue(k, arrival.priority, arrival.via)
        if s.cancel and "cancelled" not in self.points:
            await self.point(s.cancel)
            self.cancel()

    async def main(self) -> None:
        agent = self.agent()

        async def capture(ctx: Any, request_context: Any) -> Any:
            if self.scenario.mode != "iter":
                self.handle = ctx
            return request_context

        hooks = [Hooks(before_model_request=capture)]
        driver = asyncio.get_running_loop().create_task(self.drive())
        history: list[Any] | None = None
        for run in range(self.scenario.runs):
            self.run, self.requests, self.final_seen, self.started_tools = run, 0, False, 0
            if run:
                self.note("run.started", run=run_name(run))
            self.ended = False
            try:
                output, self.rec.messages = await self._one(agent, PROMPTS[run], history, hooks)
                self.rec.notes.append(f"{run_name(run)} output {output!r}")
                self.end_run()
                history = None
            except RunCancelled as cancelled:
                history = self.rec.messages = cancelled.all_messages()
                self._stopped()
            self.reached("after")
            self.reached("cancelled" if history is not None else "ended")
        for point in POINTS:  # an arrival at a point a cancelled run never passed comes after the runs
            self.reached(point)
        await asyncio.sleep(0)
        if not driver.done():
            await asyncio.wait_for(driver, 1.0)

    def end_run(self) -> None:
        """The run has ended and closed its queue: noted once, when the run returns or when an `enqueue`
        raising `UserError` first shows the queue closed, whichever comes first."""
        if not self.ended:
            self.ended = True
            self.note("run.ended", run=run_name(self.run))

    def _stopped(self) -> None:
        """The cancelled run has stopped: the request the model was answering, if any, and the messages
        still queued, which stay on its `pending_messages`."""
        pending = {p.enqueue_id for p in self.handle.pending_messages} if self.handle is not None else set()
        stranded = tuple(message_name(k) for k, i in sorted(self.ids.items()) if i in pending)
        self.note("stopped", run=run_name(self.run), turn=self.in_model, stranded=stranded)
        self.in_model = None
        self.open_calls.clear()

    async def _one(self, agent: Any, prompt: str, history: list[Any] | None,
                   hooks: list[Any]) -> tuple[Any, list[Any]]:
        """Run once the scenario's way: the run's output and the conversation's messages when it ended."""
        mode = self.scenario.mode
        if mode == "iter":
            async with agent.iter(prompt, message_history=history, capabilities=hooks) as run:
                self.handle = run
                async for _ in run:
                    pass
            return (run.result.output, run.result.all_messages()) if run.result else (None, run.all_messages())
        if mode == "run":
            result = await agent.run(prompt, message_history=history, capabilities=hooks)
            return result.output, result.all_messages()
        if mode == "run_stream":
            async with agent.run_stream(prompt, message_history=history, capabilities=hooks) as streamed:
                output = await streamed.get_output()
            return output, streamed.all_messages()
        output, messages = None, []
        async with agent.run_stream_events(prompt, message_history=history, capabilities=hooks) as events:
            async for event in events:
                result = getattr(event, "result", None)
                if result is not None:
                    output, messages = result.output, result.all_messages()
        return output, messages


def _later(point: str, other: str) -> bool:
    return POINTS.index(point) > POINTS.index(other)


def version() -> str:
    from importlib.metadata import version as installed

    return installed("pydantic-ai-slim")


class Session:
    """Runs scenarios one after another, each on a fresh virtual-time loop, once per seed (None: the ready
    callbacks in the order they became ready)."""

    def __init__(self, seeds: Sequence[int | None] = (None,)) -> None:
        self.seeds = tuple(seeds)

    def run(self, scenarios: Iterable[Scenario], each: Callable[[Recording], None]) -> None:
        for scenario in scenarios:
            for seed in self.seeds:
                each(run_one(scenario, seed))


def run_one(scenario: Scenario, seed: int | None = None) -> Recording:
    """Run `scenario` once: ready callbacks in the order they became ready, or, with `seed`, in an order a
    seeded random scheduler picks (the same seed, the same run)."""
    loop = VirtualLoop(ReplayScheduler(()) if seed is None else RandomScheduler(seed))
    asyncio.set_event_loop(loop)
    driven = Driven(scenario, loop)
    driven.rec.seed = seed
    try:
        loop.run_until_complete(asyncio.wait_for(driven.main(), HORIZON_S))
        driven.rec.end = "quiescent"
    except TimeoutError:
        driven.rec.end = "horizon"
    except Exception as error:  # the run failed in a way no scenario asks for: the recording says how
        driven.rec.end = "error"
        driven.rec.notes.append(f"{type(error).__name__}: {error}")
    finally:
        _close(loop)
    driven.rec.version = version()
    return driven.rec


def _close(loop: asyncio.AbstractEventLoop) -> None:
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    asyncio.set_event_loop(None)
    loop.close()
