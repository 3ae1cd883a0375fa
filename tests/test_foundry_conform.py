"""The conformance harness, first against a small stand-in chain (faithful, and with a planted race)
so that what it finds and how it shrinks is proven independently of the real package, then against
the real package: reproducible seed by seed, and the command line's exit codes and documents."""

from __future__ import annotations

import asyncio
import collections.abc
import json
import signal
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from steersim.errors import UsageError
from steersim.harness.vloop import PCTScheduler, RandomScheduler, ReplayScheduler
from steersim.models.foundry.harness.conform import conform, main, parser
from steersim.models.foundry.harness.explore import Explorer, RunSpec, sampled_plan
from steersim.models.foundry.harness.scenarios import NAMED, scenario_named
from steersim.models.foundry.harness.surfaces import run_scenario

CAP = 9
STANDIN_SCENARIOS = ["steer-honoured", "raise-with-queue", "queued-cancel", "stale-precondition", "back-to-back"]


# ---------------------------------------------------------------------- the stand-in chain
class SteeringQueueFull(RuntimeError):
    pass


class LastInputIdPreconditionFailed(RuntimeError):
    def __init__(self, actual: str | None) -> None:
        super().__init__(actual)
        self.actual_last_input_id = actual


class TaskConflictError(RuntimeError):
    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.current_status = status


class TaskFailed(Exception):
    pass


class TaskCancelled(Exception):
    pass


@dataclass
class Context:
    input: Any
    input_id: str
    entry_mode: str
    is_steered_turn: bool
    chain: StandIn
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    shutdown: asyncio.Event = field(default_factory=asyncio.Event)
    cancel_requested: bool = False

    @property
    def pending_input_count(self) -> int:
        return len(self.chain.queue)


@dataclass
class Handle:
    input_id: str
    is_queued: bool
    future: asyncio.Future
    chain: StandIn

    async def cancel(self) -> None:
        for entry in self.chain.queue:
            if entry[0] == self.input_id:
                self.chain.queue.remove(entry)
                self.future.set_exception(TaskCancelled())
                return


class StandIn:
    """The documented semantics of one steerable chain, in memory. `racy` plants a fault: at the end of
    a turn the chain marks itself idle and yields before promoting the queue head, so a start() that
    lands in that window starts a second turn beside the promoted one."""

    name = "stand-in"

    def __init__(self, racy: bool = False) -> None:
        self.racy = racy

    def target(self) -> dict[str, str]:
        return {"package": "stand-in", "version": "racy" if self.racy else "faithful"}

    def install(self, store: Path, steerable: bool, handler: Callable[[Any], Any], delay: Any) -> None:
        self.handler, self.steerable = handler, steerable
        self.busy = self.started = False
        self.last: str | None = None
        self.queue: list[tuple[str, Any, asyncio.Future]] = []
        self.ctx: Context | None = None
        self.turns: set[asyncio.Future] = set()

    async def startup(self) -> None:
        return None

    async def start(self, input_id: str, value: Any, if_last_input_id: str | None) -> Handle:
        if if_last_input_id is not None and self.last is not None and if_last_input_id != self.last:
            raise LastInputIdPreconditionFailed(self.last)
        future = asyncio.get_running_loop().create_future()
        if self.busy:
            if not self.steerable:
                raise TaskConflictError("in_progress")
            if len(self.queue) >= CAP:
                raise SteeringQueueFull()
            self.queue.append((input_id, value, future))
            self.last = input_id
            if self.ctx is not None:
                self.ctx.cancel.set()
            return Handle(input_id, True, future, self)
        self.busy, self.last = True, input_id
        mode = "resumed" if self.started else "fresh"
        self.started = True
        self.ctx = Context(value, input_id, mode, False, self)
        turns = asyncio.ensure_future(self._turns(self.ctx, future))
        self.turns.add(turns)
        turns.add_done_callback(self.turns.discard)
        return Handle(input_id, False, future, self)

    async def _turns(self, ctx: Context, future: asyncio.Future) -> None:
        while True:
            self.ctx = ctx
            try:
                future.set_result(await self.handler(ctx))
            except Exception:
                future.set_exception(TaskFailed())
            if self.racy:
                self.busy = False
                await asyncio.sleep(0)
            if not self.queue:
                self.busy, self.ctx = False, None
                return
            self.busy = True
            input_id, value, future = self.queue.pop(0)
            ctx = Context(value, input_id, "resumed", True, self)
            if self.queue:
                ctx.cancel.set()

    def future(self, handle: Handle) -> asyncio.Future:
        return handle.future

    def abandon(self) -> None:
        return None

    async def close(self) -> None:
        return None


def standin_args(*extra: str) -> Any:
    scenarios = [arg for name in STANDIN_SCENARIOS for arg in ("--scenario", name)]
    return parser().parse_args([*scenarios, "--quiet", *extra])


# ---------------------------------------------------------------------- the harness on the stand-in
def test_a_faithful_chain_has_no_findings(capsys):
    assert conform(StandIn(), standin_args("--runs", "60", "--per-scenario", "4")) == 0
    assert "0 distinct findings" in capsys.readouterr().out


def test_the_planted_race_is_found_as_two_turns_at_once_and_its_schedule_shrinks():
    explorer = Explorer(StandIn(racy=True))
    exploration = explorer.explore(sampled_plan(["remote-store-fixed-times"], seed=0, fresh=False), max_runs=60)
    two_turns = [f for f in exploration.found.values() if f.finding.property == "one-active-turn"]
    assert two_turns, f"found only {[f.finding.signature for f in exploration.found.values()]}"
    found = two_turns[0]
    original = found.schedule
    explorer.shrink(found, budget=40)
    assert len(found.schedule) <= len(original)
    assert sum(1 for c in found.schedule if c) <= sum(1 for c in original if c)
    again = explorer.reproduces("remote-store-fixed-times", found.finding.signature, found.schedule)
    assert again is not None, "the shrunk schedule no longer shows the race"
    assert found.schedule, "the race needs a choice the default schedule does not make"


def test_the_race_needs_its_interleaving():
    """In this scenario the default schedule misses the window: the finding comes from the scheduler's
    choices, so a shrunk schedule that still shows it cannot be empty."""
    explorer = Explorer(StandIn(racy=True))
    _, findings = explorer.run(RunSpec("remote-store-fixed-times", "replay"))
    assert not [f for f in findings if f.property == "one-active-turn"]


def test_the_command_exits_1_with_findings_and_writes_its_documents(tmp_path, capsys):
    out, reports = tmp_path / "found.json", tmp_path / "reports"
    code = conform(StandIn(racy=True), standin_args("--runs", "80", "--per-scenario", "0", "--json", str(out),
                                                   "--report", str(reports), "--shrink-budget", "10"))
    assert code == 1
    doc = json.loads(out.read_text())
    assert set(doc) >= {"system", "target", "runs", "seconds", "findings"}
    assert doc["runs"] == 80 and doc["target"] == {"package": "stand-in", "version": "racy"}
    finding = doc["findings"][0]
    assert set(finding) >= {"property", "kind", "summary", "reproduce", "steps"}
    assert finding["kind"] in ("monitor", "divergence") and finding["steps"]
    assert "--schedule=" in finding["reproduce"]["command"]
    assert list(reports.glob("*.md"))
    assert "reproduce: steersim conform foundry --scenario" in capsys.readouterr().out


# ---------------------------------------------------------------------- the real package
real = pytest.importorskip("steersim.models.foundry.harness.real")


@pytest.mark.parametrize("make", [lambda: RandomScheduler(7), lambda: PCTScheduler(7)])
def test_one_seed_is_one_reproducible_interleaving_of_the_real_package(make):
    first = run_scenario(real.FoundryPackage(), NAMED["crash-then-steer"], make())
    second = run_scenario(real.FoundryPackage(), NAMED["crash-then-steer"], make())
    assert [(o.event, o.t) for o in first.observations] == [(o.event, o.t) for o in second.observations]
    assert first.choices == second.choices and first.choices
    replayed = run_scenario(real.FoundryPackage(), NAMED["crash-then-steer"], ReplayScheduler(first.choices))
    assert [o.event for o in replayed.observations] == [o.event for o in first.observations]


def test_a_crash_and_a_new_lifetime_over_the_same_store_recover_the_chain():
    rec = run_scenario(real.FoundryPackage(), NAMED["crash-recovery"], ReplayScheduler(()))
    names = [e.name for e in rec.events]
    assert names.index("process.crash") < names.index("process.restart")
    recovered = [e for e in rec.events if e.name == "handler.enter" and e.data["entry_mode"] == "recovered"]
    assert recovered and recovered[0].data["input"] == "m0"


class PressesCtrlCWhenCancelled(collections.abc.Coroutine):
    """A task's coroutine that is pending until it is cancelled, and gets a Ctrl-C as it unwinds."""

    def send(self, value: Any) -> None:
        return None  # yields to the loop: still pending

    def throw(self, *exc: Any) -> None:
        signal.raise_signal(signal.SIGINT)
        raise asyncio.CancelledError

    def __await__(self) -> Any:
        return self


@pytest.mark.parametrize("scenario", ["steer-honoured", "responses-steer"])
def test_a_ctrl_c_while_a_run_reaps_its_tasks_is_raised_after_its_clean_up(scenario, monkeypatch, tmp_path):
    """A run's clean-up cancels the tasks still pending; a Ctrl-C that comes meanwhile is neither lost
    among the errors of the tasks unwinding nor cuts the clean-up short (its folder stays behind)."""
    from steersim.models.foundry.harness.runner import ScenarioRun

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    reap = ScenarioRun._reap

    def reap_with_a_ctrl_c(self: ScenarioRun) -> None:
        self.frozen[-1].create_task(PressesCtrlCWhenCancelled())
        reap(self)

    monkeypatch.setattr(ScenarioRun, "_reap", reap_with_a_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        run_scenario(real.FoundryPackage(), NAMED[scenario], ReplayScheduler(()))
    assert list(tmp_path.iterdir()) == []


def test_the_real_package_runs_and_exits_with_its_findings(tmp_path):
    out = tmp_path / "real.json"
    code = main(["--runs", "12", "--per-scenario", "2", "--scenario", "steer-honoured", "--scenario",
                 "crash-then-steer", "--shrink-budget", "4", "--json", str(out), "--quiet"])
    doc = json.loads(out.read_text())
    assert doc["target"]["package"] == "azure-ai-agentserver-core"
    assert code == (1 if doc["findings"] else 0)


def test_bad_usage_names_the_fix():
    with pytest.raises(UsageError, match="random-<seed>"):
        main(["--scenario", "nonsense"])
    with pytest.raises(UsageError, match="exactly one --scenario"):
        main(["--scenario", "steer-honoured", "--scenario", "back-to-back", "--schedule", "0,1"])
    with pytest.raises(UsageError, match="positive"):
        main(["--runs", "0"])


def test_random_scenarios_are_reproducible_by_name():
    assert scenario_named("random-12") == scenario_named("random-12")
    assert scenario_named("random-12") != scenario_named("random-13")
