"""The OpenClaw conformance harness: scenario generation, translation, judging, and runs against the
real pinned build (those need the Node side: `npm ci --prefix steersim/models/openclaw/harness/node`)."""

from __future__ import annotations

import json
import subprocess

import pytest

from steersim.errors import UsageError
from steersim.models.openclaw import events as E
from steersim.models.openclaw.harness import conform, driver, scenarios
from steersim.models.openclaw.harness.causes import CAUSES, REPRO_DIR
from steersim.models.openclaw.harness.judge import judge
from steersim.models.openclaw.harness.scenarios import Knobs, PlanStep, Scenario
from steersim.models.openclaw.versions import preset_for

LATEST = driver.NODE_MODULES / "openclaw-latest"
needs_node = pytest.mark.skipif(
    not (driver.NODE_MODULES / ".bin" / "node").exists() or not (driver.DEFAULT_PACKAGE / "package.json").exists()
    or not (LATEST / "package.json").exists(),
    reason=f"the OpenClaw driver's node_modules is absent; {driver.INSTALL_HINT}",
)
ABORT_AFTER_DRAIN = "seq-one-k2/m1@tool_execute:c0#1,abort@turn_end:#1"
PARALLEL_STOP = "par-one-k2-stop/m1@tool_execute:c1#1"
AFTER_CHECKPOINT_C = "seq-one-k2-stop/m1@turn_end:#1"
AGENT_END = "par-one-k2/m1@agent_end:#1"
KEPT_AT_ABORT = "par-one-k2/m1@model_request#1,abort@model_request#1"
ABORT_BETWEEN_LAUNCHES = "par-one-k2/m1@start#1,abort@tool_execute:c0#1"
SKIPPING = "par-one-k2/m1@message_end:assistant#1"
FOLLOW_UP_AT_ABORT = "par-one-k2-followups1/m1@follow_up_poll#1,abort@follow_up_poll#1"
DRAINED_AFTER_TURN_AT_ABORT = "par-one-k2/m1@message_end:c1#1,abort@steering_poll#3"

SEQUENTIAL = Knobs(tool_execution="sequential")
# Spec section 5: S1 and S2 arrive while the first of two sequential calls runs.
CANONICAL = Scenario(SEQUENTIAL, (PlanStep("steer", ("tool_execute:c0", 1), "m1"),
                                  PlanStep("steer", ("tool_execute:c0", 1), "m2")))


def records_of_canonical_run() -> list[dict]:
    """What the reference build records for CANONICAL (as the driver writes it)."""
    skip = {"text": E.SKIP_TEXT, "details": E.SKIP_DETAILS}

    def agent(kind, **data):
        return {"ev": "agent", "type": kind, **data}

    def message(role, text, **data):
        return [agent(kind, role=role, text=text, **data) for kind in ("message_start", "message_end")]

    def assistant(k, calls):
        stop = "toolUse" if calls else "stop"
        return message("assistant", "", stopReason=stop, toolCalls=calls)

    return [
        {"ev": "start"}, agent("agent_start"), agent("turn_start"), *message("user", "p0"),
        {"ev": "steering_poll", "drained": []}, {"ev": "model_request", "llmCall": 1, "users": ["p0"]},
        *assistant(1, ["c0", "c1"]), {"ev": "steering_poll", "drained": []},
        agent("tool_execution_start", toolCallId="c0"), {"ev": "steering_poll", "drained": []},
        {"ev": "tool_execute", "toolCallId": "c0"}, {"ev": "steer", "id": "m1"}, {"ev": "steer", "id": "m2"},
        agent("tool_execution_end", toolCallId="c0", text="c0 result", details={}, isError=False,
              executionStarted=True),
        *message("toolResult", "c0 result", toolCallId="c0", details={}, isError=False),
        {"ev": "steering_poll", "drained": ["m1"]}, agent("tool_execution_start", toolCallId="c1"),
        agent("tool_execution_end", toolCallId="c1", isError=True, executionStarted=False, **skip),
        *message("toolResult", E.SKIP_TEXT, toolCallId="c1", details=E.SKIP_DETAILS, isError=True),
        agent("turn_end", toolResults=["c0", "c1"]), agent("turn_start"), *message("user", "m1"),
        {"ev": "model_request", "llmCall": 2, "users": ["p0", "m1"]}, *assistant(2, []),
        agent("turn_end", toolResults=[]), {"ev": "steering_poll", "drained": ["m2"]}, agent("turn_start"),
        *message("user", "m2"), {"ev": "model_request", "llmCall": 3, "users": ["p0", "m1", "m2"]},
        *assistant(3, []), agent("turn_end", toolResults=[]), {"ev": "steering_poll", "drained": []},
        {"ev": "follow_up_poll", "drained": []}, {"ev": "steering_poll", "drained": []}, agent("agent_end"),
        {"ev": "settled", "queued": [], "followUps": []},
    ]


def test_the_documented_canonical_run_conforms():
    result = {"name": CANONICAL.name, "records": records_of_canonical_run(), "error": None}
    assert judge(CANONICAL, result) == []


def test_a_changed_skip_text_is_a_divergence_naming_the_field():
    records = records_of_canonical_run()
    for record in records:
        if record.get("text") == E.SKIP_TEXT:
            record["text"] = "Skipped to process an incoming message."
    findings = judge(CANONICAL, {"name": CANONICAL.name, "records": records, "error": None})
    assert [f.kind for f in findings] == ["divergence"]
    assert "text: real 'Skipped to process an incoming message.'" in findings[0].summary


TEXT_ONLY = Knobs(calls=0)
LEFT_AFTER_AGENT_END = (PlanStep("steer", ("agent_end:", 1), "m1"),)


def records_with_a_steer_left_after_agent_end() -> list[dict]:
    """A text-only run with one steer that arrives in agent_end listeners and stays queued."""
    def agent(kind, **data):
        return {"ev": "agent", "type": kind, **data}

    def message(role, text, **data):
        return [agent(kind, role=role, text=text, **data) for kind in ("message_start", "message_end")]

    return [
        {"ev": "start"}, agent("agent_start"), agent("turn_start"), *message("user", "p0"),
        {"ev": "steering_poll", "drained": []}, {"ev": "model_request", "llmCall": 1, "users": ["p0"]},
        *message("assistant", "answer 1", stopReason="stop", toolCalls=[]), agent("turn_end", toolResults=[]),
        {"ev": "steering_poll", "drained": []}, {"ev": "follow_up_poll", "drained": []},
        {"ev": "steering_poll", "drained": []}, agent("agent_end"), {"ev": "steer", "id": "m1"},
        {"ev": "settled", "queued": ["m1"], "followUps": []},
    ]


def test_a_steer_left_after_the_bare_agents_run_is_for_its_caller():
    scenario = Scenario(TEXT_ONLY, LEFT_AFTER_AGENT_END, layer="agent")
    findings = judge(scenario, {"name": scenario.name, "records": records_with_a_steer_left_after_agent_end()})
    assert [(f.kind, f.cause) for f in findings] == [("by-design", "left-for-the-caller")]


def test_at_the_session_layer_a_steer_left_after_agent_end_is_a_divergence():
    """AgentSession continues while hasQueuedMessages(): a session that stopped there is not OpenClaw's."""
    scenario = Scenario(TEXT_ONLY, LEFT_AFTER_AGENT_END)
    findings = judge(scenario, {"name": scenario.name, "records": records_with_a_steer_left_after_agent_end()})
    kinds = {f.kind for f in findings}
    assert "divergence" in kinds and "by-design" not in kinds
    assert any("session_continue" in f.summary for f in findings)


def test_the_known_baseline_skips_comments_and_blank_lines(tmp_path):
    baseline = tmp_path / "known.txt"
    baseline.write_text("# accepted upstream\nabort-drops-drained-steer  # fixed in 2026.8.1\n\n")
    assert conform.read_known(str(baseline)) == {"abort-drops-drained-steer"}
    with pytest.raises(UsageError, match="--known"):
        conform.read_known(str(tmp_path / "missing.txt"))


def test_a_build_without_a_preset_is_refused_with_the_known_ones():
    with pytest.raises(UsageError, match=r"2026\.8\.1-beta\.3, 2026\.9\.6"):
        preset_for("2026.9.5")


def test_every_defect_has_a_standalone_reproduction():
    for cause in CAUSES.values():
        assert cause.by_design or (REPRO_DIR / cause.repro).exists(), cause.id


def test_generated_plans_cover_every_checkpoint():
    sequential = {step.after[0] for plan in scenarios.plans(SEQUENTIAL, 1, False) for step in plan}
    assert {"start", "model_request", "message_end:assistant", "tool_execution_start:c0", "tool_execute:c0",
            "message_end:c0", "tool_execute:c1", "turn_end:", "steering_poll", "agent_end:"} <= sequential
    parallel = {step.after[0] for plan in scenarios.plans(Knobs(), 1, False) for step in plan}
    assert {"tool_execution_start:c1", "tool_execute:c1", "tool_execution_end:c1"} <= parallel


def test_scenarios_span_every_knob():
    grid = scenarios.knob_grid()
    for field in ("tool_execution", "steering_mode", "blocked_call", "agent_follow_ups", "stop_after_turn"):
        assert len({getattr(knobs, field) for knobs in grid}) == 2, field


def test_a_missing_build_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no OpenClaw build"):
        driver.find_target(str(tmp_path))


def test_an_unknown_scenario_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown scenario"):
        conform.run_all(driver.Target(driver.DEFAULT_PACKAGE, "openclaw", "?"), 1, ["nowhere/m9@x#1"], 1)


@needs_node
def test_the_reference_build_runs_the_canonical_scenario_as_documented():
    target = driver.find_target(None)
    assert target.version == "2026.8.1-beta.3"
    [result] = driver.run(target, [CANONICAL])
    assert judge(CANONICAL, result) == []


def conform_report(tmp_path, names, *options):
    out = tmp_path / "findings.json"
    selection = [arg for name in names for arg in ("--scenario", name)]
    code = conform.main(["--steers", "1", "--jobs", "1", *selection, "--json", str(out), *options])
    return code, json.loads(out.read_text())


def by_id(report):
    return {f["id"]: f for f in report["findings"]}


@needs_node
def test_beta3_at_the_session_layer_reports_the_two_defects_and_no_false_losses(tmp_path):
    names = [ABORT_AFTER_DRAIN, PARALLEL_STOP, AFTER_CHECKPOINT_C, AGENT_END, KEPT_AT_ABORT]
    code, report = conform_report(tmp_path, names, "--report", str(tmp_path / "report"))
    assert code == 1
    assert report["target"]["version"] == "2026.8.1-beta.3" and report["target"]["layer"] == "session"
    found = by_id(report)
    assert {key: f["kind"] for key, f in found.items()} == {
        "abort-drops-drained-steer": "defect", "parallel-steer-does-not-outrank-stop": "defect",
        "kept-for-next-prompt": "by-design"}
    assert found["abort-drops-drained-steer"]["scenarios"] == [ABORT_AFTER_DRAIN]
    command = found["parallel-steer-does-not-outrank-stop"]["reproduce"]["command"]
    assert f"--package-dir {driver.DEFAULT_PACKAGE}" in command and PARALLEL_STOP in command
    for ident in ("abort-drops-drained-steer", "parallel-steer-does-not-outrank-stop"):
        assert (tmp_path / "report" / "repro" / CAUSES[ident].repro).exists()
    assert "Seams" in (tmp_path / "report" / "summary.md").read_text()


@needs_node
def test_the_bare_agent_layer_splits_the_stop_hook_and_leaves_agent_end_to_its_caller(tmp_path):
    """The parallel defect fails the session-layer run above; listed in a --known baseline it does not."""
    baseline = tmp_path / "known.txt"
    baseline.write_text("parallel-steer-does-not-outrank-stop  # reported upstream\n")
    code, report = conform_report(tmp_path, [PARALLEL_STOP, AFTER_CHECKPOINT_C, AGENT_END], "--layer", "agent",
                                  "--known", str(baseline))
    assert code == 0
    found = by_id(report)
    assert {key: (f["kind"], f["known"]) for key, f in found.items()} == {
        "parallel-steer-does-not-outrank-stop": ("defect", True), "stop-hook-first": ("by-design", False),
        "left-for-the-caller": ("by-design", False)}
    assert found["stop-hook-first"]["scenarios"] == [AFTER_CHECKPOINT_C]
    assert "--layer agent" in found["stop-hook-first"]["reproduce"]["command"]


@needs_node
def test_2026_9_6_with_its_preset_shows_no_skip_text_or_restore_divergence(tmp_path):
    names = [SKIPPING, KEPT_AT_ABORT, ABORT_AFTER_DRAIN, FOLLOW_UP_AT_ABORT, DRAINED_AFTER_TURN_AT_ABORT]
    code, report = conform_report(tmp_path, names, "--package-dir", str(LATEST))
    assert report["target"]["preset"] == "2026.9.6"
    assert code == 0 and {f["kind"] for f in report["findings"]} == {"by-design"}
    # judged with the beta.3 preset, the same runs diverge exactly there
    code, report = conform_report(tmp_path, names, "--package-dir", str(LATEST), "--preset", "2026.8.1-beta.3")
    assert code == 1
    summaries = " ".join(f["summary"] for f in report["findings"] if f["kind"] == "divergence")
    assert "Skipped to process an incoming message." in summaries and "steeringQueue: real ['m1']" in summaries
    assert "followUpQueue: real ['f1']" in summaries
    assert "--preset 2026.8.1-beta.3" in report["findings"][0]["reproduce"]["command"]


@needs_node
def test_an_abort_between_two_parallel_launches_runs_as_the_model_says():
    [scenario] = [s for s in scenarios.generate(1, frozenset({"par-one-k2"})) if s.name == ABORT_BETWEEN_LAUNCHES]
    [result] = driver.run(driver.find_target(None), [scenario])
    ends = {r["toolCallId"]: r for r in result["records"] if r.get("type") == "tool_execution_end"}
    assert [r["toolCallId"] for r in result["records"] if r["ev"] == "tool_execute"] == ["c0"]
    assert (ends["c1"]["text"], ends["c1"]["executionStarted"]) == (E.ABORT_TEXT, False)
    assert judge(scenario, result) == []


@needs_node
@pytest.mark.parametrize(("script", "expected"), [
    ("abort-drops-drained-steer.mjs", {"openclaw-beta": 1, "openclaw-latest": 0}),
    ("parallel-steer-does-not-outrank-stop.mjs", {"openclaw-beta": 1, "openclaw-latest": 1}),
])
def test_the_standalone_reproductions_exit_1_exactly_on_the_affected_builds(script, expected):
    for package, code in expected.items():
        ran = subprocess.run([str(driver.node_binary()), str(REPRO_DIR / script), "--package-dir",
                              str(driver.NODE_MODULES / package)], capture_output=True, text=True, timeout=120)
        assert ran.returncode == code, (package, ran.stdout, ran.stderr)


@needs_node
def test_parallel_tools_that_finish_in_reverse_order_end_so_and_commit_in_source_order():
    name = "par-one-k3-rev/m1@tool_execute:c2#1"
    [scenario] = [s for s in scenarios.generate(1, frozenset({"par-one-k3-rev"})) if s.name == name]
    [result] = driver.run(driver.find_target(None), [scenario])
    order = [(r["type"], r["toolCallId"]) for r in result["records"]
             if r.get("type") == "tool_execution_end" or (r.get("type") == "message_end" and r["role"] == "toolResult")]
    assert order == [("tool_execution_end", "c2"), ("tool_execution_end", "c1"), ("tool_execution_end", "c0"),
                     ("message_end", "c0"), ("message_end", "c1"), ("message_end", "c2")]
    assert judge(scenario, result) == []


@needs_node
def test_a_steer_while_a_held_tool_runs_in_the_second_turn_of_three_calls_lands_while_it_runs():
    """Two tool turns of three calls; the steer lands while c1 of the second turn runs (tools are held across
    macrotasks), so c2 is skipped at its launch checkpoint and the steer reaches the third model call."""
    name = "seq-one-k3-turns2/m1@tool_execute:c1#2"
    [scenario] = [s for s in scenarios.generate(1, frozenset({"seq-one-k3-turns2"})) if s.name == name]
    [result] = driver.run(driver.find_target(None), [scenario])
    records = result["records"]
    steer = records.index({"ev": "steer", "id": "m1"})
    assert records[steer - 1] == {"ev": "tool_execute", "toolCallId": "c1"}
    ends = [r for r in records[steer:] if r.get("type") == "tool_execution_end"]
    assert [(r["toolCallId"], r["executionStarted"]) for r in ends] == [("c1", True), ("c2", False)]
    assert [r["users"][-1] for r in records if r["ev"] == "model_request"] == ["p0", "p0", "m1"]
    assert judge(scenario, result) == []


def test_the_knob_grid_has_two_turns_of_three_calls():
    labels = {knobs.label() for knobs in scenarios.knob_grid()}
    assert {"par-one-k3-turns2", "seq-one-k3-turns2"} <= labels
