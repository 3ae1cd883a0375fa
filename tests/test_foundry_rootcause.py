"""Root causes of the real package's findings: each known cause's standalone reproduction still
reproduces on plain asyncio (and stops reproducing once the package's mistake is patched out), the
grouping names the cause on the stand-in chain's planted race and on nothing in the faithful one, and
`conform foundry` reaches the causes through its scenarios."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from steersim.models.foundry.harness.explore import Explorer, sampled_plan
from steersim.models.foundry.harness.rootcause import CAUSES, REPRO_DIR, cause_of, group
from tests.test_foundry_conform import StandIn

SCRIPT_TIMEOUT_S = 120
SCRIPT_ENV = {"FOUNDRY_HOSTING_ENVIRONMENT": "", "AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING": "true"}

# The package's mistake patched out, for the causes whose fix is a few lines: the reproduction must
# then exit 0, which shows that its check can pass.
FIXES = {
    "orphan-future-after-queue-full": """
from azure.ai.agentserver.core.tasks._decorator import Task
_append = Task._append_steering_input
async def _append_or_forget(self, manager, *, task_id, **kwargs):
    try:
        return await _append(self, manager, task_id=task_id, **kwargs)
    except BaseException:
        manager._pending_steering_futures.get(task_id, [None]).pop()
        raise
Task._append_steering_input = _append_or_forget
""",
    "queued-cancel-keeps-pending-count": """
from azure.ai.agentserver.core.tasks._manager import TaskManager
_cancel = TaskManager._cancel_queued_steering_input
async def _cancel_and_recount(self, *, task_id, **kwargs):
    await _cancel(self, task_id=task_id, **kwargs)
    active, info = self._active_tasks.get(task_id), await self.provider.get(task_id)
    if active is not None and info is not None:
        active._pending_input_count = len(((info.payload or {}).get("steering") or {}).get("pending_inputs") or [])
TaskManager._cancel_queued_steering_input = _cancel_and_recount
""",
    "active-cancel-leaves-cause-unset": """
from azure.ai.agentserver.core.tasks import _manager
from azure.ai.agentserver.core.tasks._run import TaskRun
_cancel = TaskRun.cancel
async def _cancel_with_cause(self):
    active = _manager.get_task_manager()._active_tasks.get(self.task_id)
    if self._queued_cancel_callback is None and active is not None and active.context is not None:
        active.context.cancel_requested = True
    await _cancel(self)
TaskRun.cancel = _cancel_with_cause
""",
    "responses-pending-count-is-entry-snapshot": """
from azure.ai.agentserver.responses._response_context import ResponseContext
def _live(self):
    task = getattr(self, "_task_context", None)
    return task.pending_input_count if task is not None else self.__dict__.get("_entry_count", 0)
def _entry(self, value):
    self.__dict__["_entry_count"] = value
ResponseContext.pending_input_count = property(_live, _entry)
""",
    "resumed-run-input-id-is-task-id": """
from azure.ai.agentserver.core.tasks._decorator import Task
_start = Task._lifecycle_start_inner
async def _start_with_input_id(self, *, input_id=None, **kwargs):
    run = await _start(self, input_id=input_id, **kwargs)
    if input_id is not None:
        run.input_id = input_id
    return run
Task._lifecycle_start_inner = _start_with_input_id
""",
}


def run_script(script: Path, prelude: str = "") -> subprocess.CompletedProcess:
    code = f"{prelude}\nimport runpy\nrunpy.run_path({str(script)!r}, run_name='__main__')"
    env = {**os.environ, **SCRIPT_ENV}
    env.pop("FOUNDRY_HOSTING_ENVIRONMENT")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=SCRIPT_TIMEOUT_S,
                          env=env, cwd=script.parent)


real = pytest.importorskip("steersim.models.foundry.harness.real")


def test_every_cause_has_its_reproduction():
    assert sorted(p.name for p in REPRO_DIR.glob("*.py")) == sorted(c.script.name for c in CAUSES)


# reproductions that crash a child process and recover in a second one take several seconds each
CRASHING = {"recovered-steered-turn-loses-input", "futures-bound-by-position", "recovered-turn-pending-count-is-zero"}


@pytest.mark.parametrize("cause", [pytest.param(c, id=c.key, marks=[pytest.mark.slow] if c.key in CRASHING else [])
                                   for c in CAUSES])
def test_the_reproduction_still_reproduces_on_plain_asyncio(cause):
    done = run_script(cause.script)
    assert done.returncode == 1, f"{cause.script.name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert "steersim" not in cause.script.read_text().replace("steersim-", "")


@pytest.mark.parametrize("key", sorted(FIXES))
def test_the_reproduction_passes_once_the_mistake_is_patched_out(key):
    cause = next(c for c in CAUSES if c.key == key)
    done = run_script(cause.script, FIXES[key])
    assert done.returncode == 0, f"{cause.script.name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


# ---------------------------------------------------------------------- grouping, on the stand-in
def test_the_planted_race_is_one_root_cause_the_two_turns_one():
    exploration = Explorer(StandIn(racy=True)).explore(sampled_plan(["remote-store"], seed=0, fresh=False), 60)
    groups = group(exploration)
    named = [g for g in groups if g.cause is not None]
    assert [g.cause.key for g in named] == ["second-turn-after-failed-turn"]
    assert any(f.finding.property == "one-active-turn" for f in named[0].members)
    assert sum(len(g.members) for g in groups) == len(exploration.found)


def test_a_faithful_chain_shows_no_cause():
    exploration = Explorer(StandIn()).explore(sampled_plan(["remote-store", "raise-then-follow-up"], seed=0,
                                                           fresh=False), 30)
    assert not exploration.found and not group(exploration)


# ---------------------------------------------------------------------- the real package
def test_conform_reaches_both_causes_and_writes_their_scripts_next_to_the_report(tmp_path):
    from steersim.models.foundry.harness.conform import main

    out, reports = tmp_path / "found.json", tmp_path / "reports"
    code = main(["--scenario", "refusal-then-steer", "--scenario", "raise-then-follow-up", "--runs", "4",
                 "--per-scenario", "2", "--shrink-budget", "2", "--json", str(out), "--report", str(reports),
                 "--quiet"])
    assert code == 1
    doc = json.loads(out.read_text())
    causes = {c["cause"] for c in doc["root_causes"]}
    assert {"orphan-future-after-queue-full", "second-turn-after-failed-turn"} <= causes
    for cause in doc["root_causes"]:
        if cause["cause"] is not None:
            name = cause["reproduction_script"]
            assert (reports / name).read_text() == (REPRO_DIR / name).read_text()
            assert list(reports.glob(f"*-{cause['cause']}.md"))
    assert all(isinstance(f["root_cause"], int) for f in doc["findings"])


@pytest.mark.slow
def test_conform_at_its_defaults_reports_both_causes(tmp_path):
    from steersim.models.foundry.harness.conform import main

    out = tmp_path / "found.json"
    assert main(["--json", str(out), "--quiet"]) == 1
    causes = {c["cause"] for c in json.loads(out.read_text())["root_causes"]}
    assert {"orphan-future-after-queue-full", "second-turn-after-failed-turn"} <= causes


def test_the_responses_host_answers_as_the_model_but_for_the_full_queue_and_the_live_count(tmp_path):
    from steersim.models.foundry.harness.conform import main

    out = tmp_path / "responses.json"
    code = main(["--scenario", "responses-steer", "--scenario", "responses-fork", "--scenario", "responses-full-queue",
                 "--runs", "6", "--per-scenario", "2", "--shrink-budget", "2", "--json", str(out), "--quiet"])
    doc = json.loads(out.read_text())
    assert code == 1
    assert sorted(c["cause"] for c in doc["root_causes"]) == ["responses-pending-count-is-entry-snapshot",
                                                               "steering-queue-full-answers-500"]
    replies = [s["event"] for f in doc["findings"] for s in f["steps"] if s["event"]["name"] == "http.response"]
    assert {r["data"]["status"] for r in replies} >= {200, 500}


@pytest.mark.parametrize(("scenario", "cause"), [
    ("queued-cancel", "queued-cancel-keeps-pending-count"),
    ("cancel-running", "active-cancel-leaves-cause-unset"),
    ("responses-pending-count", "responses-pending-count-is-entry-snapshot"),
    ("cancel-after-promotion", "cancel-after-promotion-drops-outcome"),
    ("crash-in-steered-turn", "recovered-steered-turn-loses-input"),
    ("crash-recovery", "futures-bound-by-position"),
    ("crash-recovery", "recovered-turn-pending-count-is-zero"),
    ("non-steerable", "resumed-run-input-id-is-task-id"),
    ("no-input-id", "resumed-run-input-id-is-task-id"),
    ("steer-honoured", "ctx-input-id-is-last-input-id"),
])
def test_each_named_cause_is_reached_by_its_scenario(scenario, cause):
    exploration = Explorer(real.FoundryPackage()).explore(sampled_plan([scenario], seed=0, fresh=False), 3)
    named = {g.cause.key for g in group(exploration) if g.cause is not None}
    assert cause in named, f"{scenario} showed {sorted(named)} and {sorted(exploration.found)}"


def test_a_run_reports_every_known_cause_it_shows_not_only_its_first_divergence():
    """This forced shutdown first stops the process in a way the model cannot produce; validation
    passes over that observation, and the two mistakes the run shows afterwards are both named."""
    from steersim.models.foundry.harness.explore import Found, RunSpec

    spec = RunSpec("forced-shutdown", "random", 16)
    rec, findings = Explorer(real.FoundryPackage()).run(spec)
    first = next(f for f in findings if f.kind == "divergence")
    assert first.signature == "divergence:handles-resolve:process.stop:{}"
    later = [f for f in findings if f.detail.get("after") == first.signature]
    assert all(f.position > first.position and first.position in f.detail["passed_over"] for f in later)
    causes = {cause.key for cause in (cause_of(Found(f, spec, rec, 0)) for f in later) if cause is not None}
    assert causes == {"resumed-run-input-id-is-task-id", "recovered-steered-turn-loses-input"}


def test_a_divergence_found_after_passing_over_one_joins_its_group_unless_a_cause_claims_it():
    exploration = Explorer(real.FoundryPackage()).explore(sampled_plan(["cancel-after-promotion"], seed=0,
                                                                       fresh=False), 3)
    echoes = [f for f in exploration.found.values() if f.finding.detail.get("after")]
    assert echoes, sorted(exploration.found)
    groups = group(exploration)
    assert [g.cause.key for g in groups if g.cause is not None] == ["cancel-after-promotion-drops-outcome"]
    assert len(groups) == 1 and all(f in groups[0].members for f in echoes)


def test_inputs_whose_start_omits_input_id_are_named_as_the_model_names_them():
    """The package generates a random id for such an input: the recording names it m<k>, so that a run
    stays reproducible and the model can judge it; only the known resumed-run cause diverges."""
    from steersim.models.foundry.harness.explore import RunSpec
    from steersim.models.foundry.harness.runner import GENERATED_ID

    rec, findings = Explorer(real.FoundryPackage()).run(RunSpec("no-input-id", "replay"))
    values = [str(v) for e in rec.events for v in e.data.values()]
    assert not any(GENERATED_ID.fullmatch(v) for v in values)
    assert next(e.data for e in rec.events if e.name == "start") == {"caller": "m0", "if_last_input_id": None}
    assert {e.data["input"]: e.data["input_id"] for e in rec.events if e.name == "handler.enter"} == {
        "m0": "m0", "m1": "m1", "m2": "m2"}
    assert [f.signature for f in findings] == ["divergence:turn-identity:TaskRun.input_id:'m#'->'c1'"]


def test_the_docs_ordering_example_without_input_id_is_refused_as_the_package_documents():
    """The Foundry page's `conv.start(task_id=..., input=..., if_last_input_id=prev)` passes no input_id;
    the package's docstring says that raises TypeError, and it does: the page's example is what is wrong."""
    import asyncio

    with pytest.raises(TypeError, match="if_last_input_id requires input_id"):
        asyncio.run(real.steerable_chain.start(task_id="c1", input={"msg": "m1"}, if_last_input_id="m0"))
