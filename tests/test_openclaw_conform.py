"""The OpenClaw conformance harness: scenario generation, translation, judging, and runs against the
real pinned build (those need the Node side: `npm ci --prefix models/openclaw/node`)."""

from __future__ import annotations

import json

import pytest

from models.openclaw import conform, driver, scenarios
from models.openclaw import events as E
from models.openclaw.judge import judge
from models.openclaw.scenarios import Knobs, PlanStep, Scenario
from sim.errors import UsageError

needs_node = pytest.mark.skipif(
    not (driver.NODE_MODULES / ".bin" / "node").exists() or not (driver.DEFAULT_PACKAGE / "package.json").exists(),
    reason=f"the OpenClaw driver's node_modules is absent; {driver.INSTALL_HINT}",
)

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


def test_a_steer_left_in_the_queue_is_a_monitor_finding():
    scenario = Scenario(Knobs(), (PlanStep("steer", ("agent_end:", 1), "m1"),))
    records = [r for r in records_of_canonical_run() if r["ev"] != "steer"]
    records = [{**r, "drained": []} if r["ev"] == "steering_poll" else r for r in records]
    records.insert(-1, {"ev": "steer", "id": "m1"})
    records[-1] = {"ev": "settled", "queued": ["m1"], "followUps": []}
    findings = judge(scenario, {"name": scenario.name, "records": records, "error": None})
    assert any(f.property == "no-lost-steers" and f.kind == "monitor" for f in findings)


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


@needs_node
def test_conform_writes_findings_and_exits_1(tmp_path):
    names = ["par-one-k2/m1@agent_end:#1", "seq-one-k2/m1@tool_execute:c0#1"]
    out = tmp_path / "findings.json"
    selection = [arg for name in names for arg in ("--scenario", name)]
    code = conform.main(["--steers", "1", "--jobs", "1", *selection, "--json", str(out),
                         "--report", str(tmp_path / "report")])
    report = json.loads(out.read_text())
    assert code == 1
    assert report["system"] == "openclaw" and report["runs"] == 2
    assert report["target"]["version"] == "2026.8.1-beta.3"
    [finding] = report["findings"]
    assert finding["property"] == "no-lost-steers" and finding["kind"] == "monitor"
    assert finding["reproduce"]["scenario"] == names[0]
    assert (tmp_path / "report" / "summary.md").exists()
