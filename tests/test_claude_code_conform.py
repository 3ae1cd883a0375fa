"""The Claude Code conformance harness: the observer and the judge on recordings built here, and runs
against the pinned build (`npm ci --prefix steersim/models/claude_code/harness/node`): the fast plan by
default, the full plan in the slow set."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from steersim.errors import UsageError
from steersim.models.claude_code import protocol as P
from steersim.models.claude_code.harness import binary, conform
from steersim.models.claude_code.harness.causes import REPRO_DIR
from steersim.models.claude_code.harness.cli import Line, message_uuid
from steersim.models.claude_code.harness.judge import judge
from steersim.models.claude_code.harness.observe import observe
from steersim.models.claude_code.harness.runner import Move, Recording, Request, message_text
from steersim.models.claude_code.harness.scenarios import NAMED, SCENARIOS

needs_claude = pytest.mark.skipif(not binary.installed(), reason=f"the pinned Claude Code build is absent; "
                                  f"{binary.INSTALL_HINT}")


def _out(line: dict) -> Line:
    return Line(False, line)


def _user(ident: str, priority: str | None) -> Line:
    body = {"type": "user", "message": {"role": "user", "content": message_text(ident)}, "uuid": message_uuid(ident)}
    return Line(True, {**body, **({"priority": priority} if priority else {})})


def _life(ident: str, state: str) -> Line:
    return _out({"type": "command_lifecycle", "command_uuid": message_uuid(ident), "state": state})


def _requesting(*idents: str) -> Line:
    return _out({"type": "system", "subtype": "status", "status": "requesting",
                 "user_message_uuids": [message_uuid(i) for i in idents]})


def _body(*turns: list) -> dict:
    return {"messages": [{"role": role, "content": content} for role, content in turns]}


def joined_recording(lose_m2: bool = False) -> Recording:
    """next@tool as the pinned build runs it: m2 (next) arrives while Bash runs and joins the turn at the
    tool result. With `lose_m2`, the build would never take m2 in: the turn ends without it."""
    lines = [_user("m1", None), _life("m1", "queued"), _life("m1", "started"), _requesting("m1"),
             _out({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "toolu_0001"}]}}),
             _user("m2", "next"), _life("m2", "queued"),
             _out({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_0001"}]}})]
    if not lose_m2:
        lines += [_life("m2", "started")]
    lines += [_requesting("m1", *(() if lose_m2 else ("m2",))), *(() if lose_m2 else (_life("m2", "completed"),)),
              _out({"type": "result", "subtype": "success"}), _life("m1", "completed")]
    first = _body(("user", message_text("m1")))
    tool_turn = [("user", message_text("m1")), ("assistant", [{"type": "tool_use"}]),
                 ("user", [{"type": "tool_result"}] + ([] if lose_m2 else [
                     {"type": "text", "text": f"The user sent a new message while you were working:\n"
                                             f"{message_text('m2')}"}]))]
    second_at = 9 if lose_m2 else 10
    moves = [Move(P.TOOL_USE_START, 1, 4), Move(P.TOOL_USE_DONE, 1, 4), Move(P.TOOL_FINISHED, 1, 7),
             Move(P.TEXT_DELTA, 2, second_at), Move(P.END_TURN, 2, second_at)]
    ops = ["enqueue", "dequeue", "enqueue", "remove"]
    return Recording("next@tool", lines, [Request(1, first, 4), Request(2, _body(*tool_turn), second_at)], moves,
                     {"m1": "default", "m2": "next"}, [{"type": "queue-operation", "operation": op} for op in ops])


def test_a_joined_message_is_a_behaviour_of_the_model():
    rec = joined_recording()
    events = observe(rec)
    request = [e for e in events if e.name == P.REQUEST][1]
    assert (request.data["turn"], request.data["carries"], request.data["reached"]) == ("t1", ("m1", "m2"), ("m2",))
    findings, _ = judge(NAMED["next@tool"], rec)
    assert findings == []


def test_a_lost_message_is_named_by_the_core_monitor_and_by_trace_validation():
    findings, _ = judge(NAMED["next@tool"], joined_recording(lose_m2=True))
    by_kind = {(f.kind, f.property) for f in findings}
    assert ("monitor", "no-lost-steers") in by_kind
    assert ("record", "queue-operations-balance") not in by_kind  # the queue records still balance
    assert any(f.kind in ("divergence", "defect") for f in findings)


def test_unbalanced_queue_records_are_a_record_finding():
    rec = joined_recording()
    rec.transcript = rec.transcript[:-1]
    findings, _ = judge(NAMED["next@tool"], rec)
    assert [(f.kind, f.property) for f in findings] == [("record", "queue-operations-balance")]


def test_every_scenario_needs_a_model_that_can_take_it():
    for scenario in SCENARIOS:
        params = scenario.model_params()
        assert params["messages"] == 1 + sum(step.kind == "send" for step in scenario.steps)
    assert {s.name for s in SCENARIOS if s.fast} == {"now@text", "next@tool", "later@tool",
                                                      "interrupt@tool/after-next+later"}


def test_an_unknown_scenario_is_refused_with_the_known_ones():
    with pytest.raises(UsageError, match="unknown scenario 'nowhere'; the scenarios are: now@text"):
        conform.main(["--scenario", "nowhere"])


def _run(tmp_path, plan: str) -> dict:
    out = tmp_path / "report.json"
    code = conform.main(["--plan", plan, "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["target"]["version"] == "2.1.332"
    return {"code": code, **report}


@needs_claude
def test_the_fast_plan_conforms(tmp_path):
    report = _run(tmp_path, "fast")
    assert report["runs"] == 4
    assert (report["code"], report["findings"]) == (0, [])


@pytest.mark.slow
@needs_claude
def test_the_full_plan_conforms(tmp_path):
    report = _run(tmp_path, "full")
    assert report["runs"] == len(SCENARIOS)
    assert (report["code"], report["findings"]) == (0, [])


@pytest.mark.slow
@needs_claude
def test_a_now_message_waits_for_the_running_command_on_the_pinned_build():
    """The model's `now_during_tool=waits` reading, as its standalone script shows it (exit 1: the build waits)."""
    script = REPRO_DIR / "now_waits_for_running_command.py"
    ran = subprocess.run([sys.executable, str(script), "--seconds", "3"], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1, ran.stdout + ran.stderr
