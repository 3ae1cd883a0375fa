"""Run a scripted scenario against a steerable-chain implementation on the virtual loop, and record
what it does as the model's native events.

The runner knows the package's public API shape (start() returning a handle with `is_queued`,
`input_id`, `cancel()`; a handler context with `cancel`, `pending_input_count`, `entry_mode`, ...) but
not the package: a `ChainSystem` adapter boots a process lifetime, starts inputs, and forgets the
process on a crash. The real package's adapter is `steersim.models.foundry.harness.real`; the test suite has a faulty
stand-in.

Observation is exact: after every step of the loop, and before every event the environment records,
the runner polls the handles' futures, so an outcome is recorded between the same two atomic steps in
which the implementation set it. A crash is the loop no longer being driven: its tasks are kept, frozen,
and a new loop (its clock carried over) runs the next lifetime over the same store. A graceful shutdown
is the system's own shutdown, after which the next lifetime starts the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from steersim.core.model import Event
from steersim.harness.vloop import LoopLimit, LoopStalled, ReplayScheduler, Scheduler, VirtualLoop
from steersim.interrupts import interrupts_deferred
from steersim.models.foundry.harness.latency import DEFAULT_PROFILE, StoreDelay, latency_profile, store_delay
from steersim.models.foundry.harness.scenarios import LATEST, STALE, CallerPlan, HandlerPlan, Scenario
from steersim.simulate.timing import TimingProfile

SETTLE = 10.0  # virtual seconds without a running handler after which a run with no caller left is over
MAX_STEPS = 200_000
UNWIND_STEPS = 100

GENERATED_ID = re.compile(r"input-[0-9a-f]{32}")  # the package's uuid4-based input ids


class HandlerFailure(RuntimeError):
    """What a scripted handler raises when its plan ends in a raise."""


class ChainSystem(Protocol):
    """One implementation of a steerable chain, driven by the runner. A system may also offer
    `record_state() -> dict | None`, the chain's persisted record read between two steps, which the
    runner then stores with every observation."""

    name: str

    def target(self) -> dict[str, str]: ...

    def install(self, store: Path, steerable: bool, handler: Callable[[Any], Any], delay: StoreDelay | None) -> None:
        """Set up a process lifetime over `store` whose chain runs `handler(ctx)` for each turn; with a
        `delay`, every store call first waits the virtual time it gives (a remote store)."""

    async def startup(self) -> None:
        """The lifetime's startup, including its recovery scan."""

    async def start(self, input_id: str | None, value: Any, if_last_input_id: str | None) -> Any:
        """start() on the chain; `input_id` None omits it (the package generates one)."""

    def future(self, handle: Any) -> asyncio.Future: ...

    def abandon(self) -> None:
        """The process is gone: forget it without running any of its code."""

    async def close(self) -> None:
        """The end of a run: stop the lifetime."""


@dataclass
class Observation:
    """An event at virtual time `t` after `step` steps; `record`: the chain's persisted record then,
    when the system can read it between steps (`ChainSystem.record_state`)."""

    event: Event
    t: float
    step: int
    record: dict[str, Any] | None = None


@dataclass
class Recording:
    """A run: the observed events, the scheduler's decisions (`choices` among `widths` ready
    callbacks) and how it ended: `quiescent` (nothing left to do), `horizon` (callers still waiting at
    the horizon), or the loop's complaint (`stalled`, `limit`). `decisions`, when asked for, say at each
    decision what every ready callback would have done (`steersim.harness.vloop.describe`)."""

    scenario: Scenario
    observations: list[Observation] = field(default_factory=list)
    choices: list[int] = field(default_factory=list)
    widths: list[int] = field(default_factory=list)
    end: str = ""
    unresolved: list[str] = field(default_factory=list)
    inputs: int = 0
    decisions: list[tuple[float, tuple[str, ...]]] = field(default_factory=list)

    @property
    def events(self) -> list[Event]:
        return [o.event for o in self.observations]


@dataclass
class _Handle:
    input_id: str
    handle: Any
    future: asyncio.Future
    queued: bool
    lifetime: int
    recorded: bool = False


class ScenarioRun:
    """One run of `scenario` on `system` under `scheduler`."""

    def __init__(self, system: ChainSystem, scenario: Scenario, scheduler: Scheduler,
                 latency: TimingProfile | None = None, latency_seed: int = 0, describe: bool = False) -> None:
        self.describe = describe
        self.lifetime_installed = False
        self.system = system
        self.scenario = scenario
        self.scheduler = scheduler
        self.latency = latency if latency is not None else latency_profile(DEFAULT_PROFILE)
        self.latency_seed = latency_seed
        self.rec = Recording(scenario)
        self.loop: VirtualLoop | None = None
        self.frozen: list[VirtualLoop] = []
        self.lifetime = 0
        self.steps_before = 0
        self.recording = True
        self.next_input = 0
        self.called: set[int] = set()
        self.accepted: list[str] = []
        self.generated: dict[str, str] = {}  # an input id the package generated -> the input (m<k>) it names
        self.handles: list[_Handle] = []
        self.entered: set[str] = set()
        self.queued: set[str] = set()
        self.running: list[str] = []
        self.crashed = asyncio.Event()
        self.last_activity = 0.0
        self.tasks: list[asyncio.Future] = []

    # ------------------------------------------------------------------ recording
    def record(self, source: str, target: str, name: str, data: dict[str, Any]) -> None:
        if not self.recording:
            return
        self.poll()
        self._append(Event(source, target, name, data))

    def _append(self, event: Event) -> None:
        loop = self.loop
        t = loop.time() if loop is not None else 0.0
        step = self.steps_before + (loop.steps if loop is not None else 0)
        read = getattr(self.system, "record_state", None) if self.lifetime_installed else None
        self.rec.observations.append(Observation(event, t, step, read() if read is not None else None))
        self.last_activity = t

    def poll(self) -> None:
        """Record every handle outcome set since the last poll, in registration order."""
        if not self.recording:
            return
        for h in self.handles:
            if h.recorded or not h.future.done() or h.lifetime != self.lifetime:
                continue
            h.recorded = True
            self._append(Event("chain", f"caller:{h.input_id}", "TaskRun.result", outcome_data(h, self.entered)))

    # ------------------------------------------------------------------ the environment
    async def caller(self, index: int, plan: CallerPlan) -> None:
        """One caller's start() and its handle; then, in the same task, the callers that send their
        message as soon as this one's outcome arrived (`CallerPlan.after`)."""
        await self._call(index, plan)
        for k, follower in enumerate(self.scenario.callers):
            if follower.after == index and k not in self.called:
                await self.caller(k, follower)

    async def _call(self, index: int, plan: CallerPlan) -> None:
        await sleep_until(plan.at)
        self.called.add(index)
        mid = f"m{self.next_input}"
        self.next_input += 1
        if_last = self._precondition(plan.precondition)
        value = {"msg": mid}
        sent = start_data(mid, if_last, plan.names_input)
        try:
            handle = await self.system.start(mid if plan.names_input else None, value, if_last)
        except Exception as refused:  # the package's refusals are exceptions; record which
            self.record(f"caller:{mid}", "chain", "start", sent)
            self.record("chain", f"caller:{mid}", type(refused).__name__, refusal_data(mid, refused))
            return
        queued = bool(handle.is_queued)
        if not plan.names_input and GENERATED_ID.fullmatch(handle.input_id):
            self.generated.setdefault(handle.input_id, mid)
        self.record(f"caller:{mid}", "chain", "start", sent)
        self.record("chain", f"caller:{mid}", "TaskRun",
                    {"caller": mid, "input_id": self.input_name(handle.input_id), "is_queued": queued})
        self.accepted.append(mid)
        if queued:
            self.queued.add(mid)
        tracked = _Handle(mid, handle, self.system.future(handle), queued, self.lifetime)
        self.handles.append(tracked)
        if plan.cancel_at is not None:
            await sleep_until(plan.cancel_at)
            if not tracked.future.done():
                self.record(f"caller:{mid}", "chain", "TaskRun.cancel", {"caller": mid})
                await handle.cancel()
        # awaited directly, as a caller awaits TaskRun.result(); a Ctrl-C goes on (`steersim.interrupts`)
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await tracked.future

    def input_name(self, input_id: str, turn: str | None = None) -> str:
        """An input id as the model names it: an id the package generated for an input whose start()
        omitted it becomes that input's `m<k>`; one no handle showed, first seen as the id of `turn`,
        is taken to be that turn's own (the package gives each input one id); ids the callers chose
        stay as they are. Generated ids are random, so no recording may carry one."""
        if not GENERATED_ID.fullmatch(input_id):
            return input_id
        if input_id not in self.generated and turn is not None and turn not in self.generated.values():
            self.generated[input_id] = turn
        return self.generated.get(input_id, "generated")

    def _precondition(self, policy: str) -> str | None:
        if policy == LATEST and self.accepted:
            return self.accepted[-1]
        if policy == STALE and len(self.accepted) > 1:
            return self.accepted[0]
        return None

    async def handler(self, ctx: Any) -> dict[str, Any]:
        mid = ctx.input.get("msg") if isinstance(ctx.input, dict) else None
        plan = self.scenario.handler(int(mid[1:])) if mid else HandlerPlan(steps=())
        entry = {"input": mid, "input_id": self.input_name(ctx.input_id, mid), "entry_mode": ctx.entry_mode,
                 "is_steered_turn": ctx.is_steered_turn, **context_view(ctx), "first": mid not in self.entered,
                 "queued": mid in self.queued}
        self.record("chain", "handler", "handler.enter", entry)
        self.entered.add(mid)
        self.running.append(mid)  # an input the package lost shows as None
        try:
            for point, delay in enumerate(plan.steps):
                await asyncio.sleep(delay)
                if plan.crash_at == point and self.lifetime == 0 and not self.crashed.is_set():
                    self.crashed.set()
                    await asyncio.Event().wait()  # the process dies here: this await never returns
                self.record("handler", "handler", "handler.check", {"input": mid, **context_view(ctx)})
                if plan.exits_for_recovery and ctx.shutdown.is_set():
                    self.record("handler", "chain", "handler.exit", {"input": mid, "how": "exit_for_recovery"})
                    return await ctx.exit_for_recovery()
                if plan.honours and ctx.cancel.is_set() and ctx.pending_input_count > 0:
                    self.record("handler", "chain", "handler.exit", {"input": mid, "how": "return"})
                    return {"out": mid, "partial": True}
            if plan.ending == "raise":
                self.record("handler", "chain", "handler.exit", {"input": mid, "how": "raise"})
                raise HandlerFailure(mid)
            self.record("handler", "chain", "handler.exit", {"input": mid, "how": "return"})
            return {"out": mid}
        except asyncio.CancelledError:
            self.record("handler", "chain", "handler.exit", {"input": mid, "how": "cancelled"})
            raise
        finally:
            self.running.remove(mid)

    # ------------------------------------------------------------------ lifetimes
    async def lifetime_main(self, store: Path) -> str:
        delay = (store_delay(self.latency, self.latency_seed, self.lifetime)
                 if self.scenario.provider_yields else None)
        self.system.install(store, self.scenario.steerable, self.handler, delay)
        self.lifetime_installed = True
        startup = asyncio.ensure_future(self.system.startup())
        if not self.scenario.early_start:  # AgentServerHost serves only once its lifespan's startup() returned
            await startup
        plans = [(k, p) for k, p in enumerate(self.scenario.callers) if k not in self.called and p.after is None]
        callers = [asyncio.create_task(self.caller(k, p), name=f"caller {k}") for k, p in plans]
        crash = asyncio.ensure_future(self.crashed.wait())
        stop = asyncio.ensure_future(self.shutdown(self.scenario.shutdown_at if self.lifetime == 0 else None))
        self.tasks += [startup, *callers, crash, stop]  # held until the run is reaped
        while True:
            if crash.done():
                return "crash"
            if stop.done():
                return "stop"
            settled = asyncio.get_running_loop().time() - self.last_activity >= SETTLE
            if startup.done() and all(c.done() for c in callers) and not self.running and settled:
                return "quiescent"
            if asyncio.get_running_loop().time() > self.scenario.horizon:
                return "horizon"
            await asyncio.wait({crash, stop, *(c for c in callers if not c.done())}, timeout=1.0,
                               return_when=asyncio.FIRST_COMPLETED)

    async def shutdown(self, at: float | None) -> None:
        """A graceful shutdown at virtual time `at`: the system's own shutdown, grace period included."""
        if at is None:
            await asyncio.Event().wait()
        await sleep_until(at)
        self.record("process", "chain", "process.shutdown", {})
        await self.system.close()
        for _ in range(UNWIND_STEPS):  # handlers cancelled at the end of the grace period unwind first
            if not self.running:
                break
            await asyncio.sleep(0)
        self.record("process", "chain", "process.stop", {})

    def run(self) -> Recording:
        tmp = tempfile.mkdtemp(prefix="steersim-foundry-")
        try:
            self._run_lifetimes(Path(tmp) / "tasks")
        finally:
            self._clean_up(lambda: shutil.rmtree(tmp, ignore_errors=True))
        self.rec.inputs = self.next_input
        return self.rec

    def _run_lifetimes(self, store: Path) -> None:
        start_time = 0.0
        while True:
            loop = VirtualLoop(self.scheduler, start_time=start_time, max_steps=MAX_STEPS,
                               max_time=self.scenario.horizon + 60.0, describe_decisions=self.describe)
            loop.after_step.append(self.poll)
            self.loop = loop
            self.crashed = asyncio.Event()
            try:
                how = loop.run_until_complete(self.lifetime_main(store))
            except LoopStalled:
                how = "stalled"
            except LoopLimit:
                how = "limit"
            self.rec.choices.extend(loop.choices)
            self.rec.widths.extend(loop.widths)
            self.rec.decisions.extend(loop.decisions or ())
            if how not in ("crash", "stop"):
                self.rec.end = how
                self.rec.unresolved = [h.input_id for h in self.handles
                                       if h.lifetime == self.lifetime and not h.future.done()]
                self.recording = False
                self._close(loop)
                return
            if how == "crash" or self.running:  # a stop with a handler still running kills it with the process
                self.record("fault", "process", "process.crash", {"turn": self.running[0] if self.running else None})
            self.system.abandon()
            self.frozen.append(loop)
            self.steps_before += loop.steps
            start_time = loop.time() + self.scenario.restart_after
            self.lifetime += 1
            self.running.clear()
            self.loop = None
            self._append_at(Event("process", "chain", "process.restart", {}), start_time)

    def _append_at(self, event: Event, t: float) -> None:
        self.rec.observations.append(Observation(event, t, self.steps_before))

    def _close(self, loop: VirtualLoop) -> None:
        """Stop the final lifetime: the system's own shutdown, then every task still pending."""
        loop.scheduler = ReplayScheduler(())
        loop.max_time = None
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.wait_for(self.system.close(), timeout=120.0))
        self.frozen.append(loop)

    def _clean_up(self, remove_folder: Callable[[], object]) -> None:
        """The end of every run: its tasks reaped, then its temporary folder removed, whole. A Ctrl-C
        that comes meanwhile is held and raised after it, so it is neither lost among what the tasks
        raise as they unwind nor leaves the folder behind."""
        with interrupts_deferred():
            self._reap()
            remove_folder()

    def _reap(self) -> None:
        """Cancel and finish the tasks of every loop of this run (a crashed lifetime's tasks were only
        frozen), so that nothing of this run executes later, when the garbage collector finds it. Run by
        `_clean_up`, with Ctrl-C held: whatever the tasks raise here (a KeyboardInterrupt among them, met
        again by a task that awaited the one that got it) is theirs, and dropped."""
        self.recording = False
        for loop in self.frozen:
            loop.scheduler = ReplayScheduler(())
            loop.max_time = None
            loop.set_exception_handler(lambda _loop, _context: None)
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                with contextlib.suppress(BaseException):
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()


async def sleep_until(t: float) -> None:
    delay = t - asyncio.get_running_loop().time()
    if delay > 0:
        await asyncio.sleep(delay)


def context_view(ctx: Any) -> dict[str, Any]:
    return {"cancel": ctx.cancel.is_set(), "cancel_requested": bool(ctx.cancel_requested),
            "pending_input_count": ctx.pending_input_count}


def start_data(mid: str, if_last: str | None, names_input: bool = True) -> dict[str, Any]:
    """A start() call as the model sees it; one that omits input_id shows no input_id."""
    if names_input:
        return {"caller": mid, "input_id": mid, "if_last_input_id": if_last}
    return {"caller": mid, "if_last_input_id": if_last}


def refusal_data(mid: str, refused: Exception) -> dict[str, Any]:
    data: dict[str, Any] = {"caller": mid}
    if hasattr(refused, "actual_last_input_id"):
        data["actual_last_input_id"] = refused.actual_last_input_id
    if hasattr(refused, "current_status"):
        data["current_status"] = refused.current_status
    return data


def outcome_data(h: _Handle, entered: set[str]) -> dict[str, Any]:
    future = h.future
    value = None
    if future.cancelled():
        outcome = "CancelledError"
    elif future.exception() is not None:
        outcome = type(future.exception()).__name__
    else:
        outcome = "returned"
        result = future.result()
        value = result.get("out") if isinstance(result, dict) else repr(result)
    return {"caller": h.input_id, "outcome": outcome, "value": value, "queued": h.queued,
            "entered": h.input_id in entered}
