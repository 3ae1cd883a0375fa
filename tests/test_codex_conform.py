"""The Codex conformance harness: the fake backend's events, the normaliser, the judge's root-cause
hypotheses, and runs against the pinned build (`npm ci --prefix steersim/models/codex/harness/node`): the fast subset
by default, every scenario in the slow set, and the standalone reproductions of the causes found."""

from __future__ import annotations

import json
import subprocess
import sys
import typing

import pytest
from openai.types.responses.responses_server_event import ResponsesServerEvent
from pydantic import TypeAdapter

from steersim.cli import main
from steersim.harness.validate import validate
from steersim.models.codex import SPEC
from steersim.models.codex import protocol as P
from steersim.models.codex.harness import binary, conform, normalise
from steersim.models.codex.harness.appserver import Message
from steersim.models.codex.harness.causes import CAUSES, REPRO_DIR
from steersim.models.codex.harness.judge import judge_events
from steersim.models.codex.harness.observe import observe
from steersim.models.codex.harness.responses import ResponseStream
from steersim.models.codex.harness.runner import Move, Recording, Request
from steersim.models.codex.harness.scenarios import NAMED, SCENARIOS
from steersim.models.codex.harness.schema import ProtocolSchema
from steersim.models.codex.model import CodexModel
from steersim.models.codex.state import CodexState

needs_codex = pytest.mark.skipif(not binary.installed(), reason=f"the pinned Codex build is absent; "
                                 f"{binary.INSTALL_HINT}")
FAST_CAUSES = {"steer-leaves-streaming-item-open": {"steer@text"},
               "interrupt-drops-acknowledged-steer": {"interrupt@tool/accepted"}}


def test_every_backend_event_parses_strictly_into_its_sdk_class():
    members = typing.get_args(typing.get_args(ResponsesServerEvent)[0])
    classes = {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in members}
    adapter = TypeAdapter(ResponsesServerEvent)
    text, tool = ResponseStream(1), ResponseStream(2)
    events = (text.created() + text.text_start() + text.text_delta("Here are ") + text.text_done("Here are the files.")
              + text.completed([]) + tool.created() + tool.tool_call("cat gate") + tool.completed([]))
    for event in events:
        assert type(adapter.validate_python(event, strict=True)) is classes[event["type"]]
    assert [e["sequence_number"] for e in events[:5]] == list(range(5))
    with pytest.raises(ValueError):  # guards the loop above: strict parsing refuses a delta without logprobs
        adapter.validate_python({k: v for k, v in events[2].items() if k != "logprobs"}, strict=True)


def test_the_normaliser_removes_ids_dates_chunk_ids_wall_times_and_the_run_folder():
    turn = "01a23150-b2bd-7421-babd-c9fea76aaded"
    body = {"input": [{"role": "user", "content": [{"type": "input_text", "text": (
        "<environment_context>\n  <cwd>/tmp/steersim-codex-q8tq/work</cwd>\n  <current_date>2026-12-01"
        "</current_date>\n  <timezone>Etc/UTC</timezone>")}]},
        {"type": "function_call_output", "call_id": "call_0001",
         "output": "Chunk ID: a0686e\nWall time: 0.2103 seconds"}],
        "client_metadata": {"turn_id": turn, "x-codex-turn-metadata": '{"turn_started_at_unix_ms":1796125771789}'}}
    rec = Recording("x", [Message(True, {"id": 1, "method": "turn/steer", "params": {"expectedTurnId": turn}}),
                          Message(False, {"method": "item/started", "params": {"startedAtMs": 1796123516313,
                                                                               "processId": "89808"}}),
                          Message(False, {"id": 2, "result": {"thread": {"path": (
                              "/tmp/steersim-codex-q8tq/codex-home/sessions/2026/12/01/rollout-2026-12-01T11-49-26-"
                              f"{turn}.jsonl")}}})],
                    [Request(1, body, 1)], [Move(P.TEXT_DELTA, 1, 1)])
    text = json.dumps(list(normalise.lines(rec)))
    for gone in (turn, "2026-12-01", "2026/12/01", "Etc/UTC", "a0686e", "0.2103", "steersim-codex-q8tq",
                 "1796123516313", "1796125771789", "89808", "11-49-26"):
        assert gone not in text
    assert text.count("uuid-1") == 3 and "Chunk ID: CHUNK" in text and "Wall time: WALL seconds" in text


def _steered_turn(replies_first: bool) -> Recording:
    """A turn steered after its message is said, as Codex records it; with `replies_first` false,
    each reply comes after the first notification its request caused, as Codex's two tasks allow."""
    turn = "0193a1b2-0000-7000-8000-000000000001"

    def note(method: str, **params: object) -> Message:
        return Message(False, {"method": method, "params": params})

    def user(phase: str, ident: str) -> Message:
        return note(f"item/{phase}", turnId=turn, item={"type": P.USER_MESSAGE, "id": f"u-{ident}", "clientId": ident})

    def agent(phase: str) -> Message:
        return note(f"item/{phase}", turnId=turn, item={"type": P.AGENT_MESSAGE, "id": "msg_0001"})

    def request(ident: str, method: str, **params: object) -> tuple[Message, ...]:
        rid = len(rec.sent_kinds) + 1
        rec.sent_kinds[rid] = (ident, P.ACTIVE, False)
        return (Message(True, {"id": rid, "method": method, "params": params}),)

    def ordered(reply: Message, caused: list[Message]) -> list[Message]:
        return [reply, *caused] if replies_first else [*caused, reply]

    def carrying(*idents: str) -> dict[str, object]:
        return {"input": [{"role": "user", "content": [{"text": f"{i}: x"}]} for i in idents],
                "client_metadata": {"turn_id": turn}}

    rec = Recording("steer@said")
    rec.messages += request("p1", "turn/start", clientUserMessageId="p1")
    rec.messages += ordered(Message(False, {"id": 1, "result": {"turn": {"id": turn}}}),
                            [note("turn/started", turn={"id": turn}), user("started", "p1"), user("completed", "p1")])
    rec.requests.append(Request(1, carrying("p1"), len(rec.messages)))
    for move, phase in ((P.TEXT_DELTA, "started"), (P.TEXT_DONE, "completed")):
        rec.moves.append(Move(move, 1, len(rec.messages)))
        rec.messages.append(agent(phase))
    rec.messages += request("s1", "turn/steer", expectedTurnId=turn)
    rec.messages += ordered(Message(False, {"id": 2, "result": {"turnId": turn}}),
                            [user("started", "s1"), user("completed", "s1")])
    rec.requests.append(Request(2, carrying("p1", "s1"), len(rec.messages)))
    return rec


def test_a_reply_after_the_notifications_its_request_caused_is_observed_before_them():
    """Codex answers a request on one task and reports the turn it started on another: `turn/started` and the
    user message's items can come before the `turn/start` reply, and a steer's `userMessage` before its
    reply. Either order is the same run of the model."""
    events = observe(_steered_turn(replies_first=True))
    assert observe(_steered_turn(replies_first=False)) == events
    assert [e.name for e in events[:2]] == ["turn/start", "turn/started"]
    assert validate(SPEC.build(NAMED["steer@said"].model_params()), events).ok


def _path_events(bug: str | None, kinds: list[str]) -> list:
    """The events of the model path that takes these action kinds (the first enabled of each)."""
    model = SPEC.build(NAMED["interrupt@tool/accepted"].model_params(), bug)
    state, out = CodexState(), []
    for kind in kinds:
        state, events = model.step(state, next(a for a in model.actions(state) if a.kind == kind))
        out += events
    return out


INTERRUPT_AT_TOOL = ["client.turn_start", "codex.request", "model.tool_call", "client.steer", "client.interrupt",
                     "tool.finish", "client.turn_start", "codex.request", "model.text_delta", "model.text_done",
                     "model.complete", "codex.end_turn", "client.read"]


def test_the_judge_names_the_variant_that_explains_a_run_the_model_does_not():
    """A run shaped as Codex behaves (the steer dropped at the interrupt) fails validation against the model
    and is explained by the variant drop-pending-on-interrupt; the model's own run is explained as it is."""
    scenario = NAMED["interrupt@tool/accepted"]
    dropped = _path_events("drop-pending-on-interrupt", INTERRUPT_AT_TOOL)
    assert not validate(SPEC.build(scenario.model_params()), dropped).ok
    findings, trace = judge_events(scenario, "ok", dropped)
    assert [(f.kind, f.cause, f.property) for f in findings] == [
        ("defect", "drop-pending-on-interrupt", "acknowledged-steer-persisted")]
    assert trace.bug == "drop-pending-on-interrupt" and trace.end == "finding"
    assert judge_events(scenario, "ok", _path_events(None, INTERRUPT_AT_TOOL))[0] == []


def test_a_run_with_two_defects_is_explained_by_two_variants():
    scenario = NAMED["interrupt@text/accepted"]
    kinds = ["client.turn_start", "codex.request", "model.text_delta", "client.steer", "client.interrupt",
             "client.turn_start", "codex.request", "model.text_delta", "model.text_done", "model.complete",
             "codex.end_turn", "client.read"]
    model = CodexModel(SPEC.resolve(scenario.model_params()), "drop-pending-on-interrupt+abandon-streaming-item")
    state, events = CodexState(), []
    for kind in kinds:
        state, emitted = model.step(state, next(a for a in model.actions(state) if a.kind == kind))
        events += emitted
    findings, _ = judge_events(scenario, "ok", events)
    assert sorted(f.cause for f in findings) == ["abandon-streaming-item", "drop-pending-on-interrupt"]


def test_every_scenario_fits_the_model_configuration_it_declares():
    assert len(NAMED) == len(SCENARIOS)
    for scenario in SCENARIOS:
        SPEC.build(scenario.model_params())
    assert {s.name for s in SCENARIOS if s.fast} == {"steer@text", "steer@tool", "malformed-steers",
                                                     "interrupt@tool/accepted"}


def test_bad_usage_is_one_line_and_exit_2(capsys, tmp_path):
    assert main(["conform", "codex", "--scenario", "nope"]) == 2
    assert "unknown scenario 'nope'" in capsys.readouterr().err
    assert main(["conform", "codex", "--codex", str(tmp_path / "none")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_an_absent_build_is_refused_with_the_install_command(tmp_path):
    with pytest.raises(Exception, match="npm ci --prefix steersim/models/codex/harness/node"):
        binary.find_build(tmp_path)


@needs_codex
def test_the_builds_own_schema_refuses_a_malformed_reply_and_an_unknown_notification():
    schema = ProtocolSchema.of(binary.find_build().binary)
    steer = {"threadId": "t", "expectedTurnId": "u", "input": [{"type": "text", "text": "s1: x"}]}
    rec = Recording("x", [Message(True, {"id": 1, "method": "turn/steer", "params": steer}),
                          Message(False, {"id": 1, "result": {}}),
                          Message(False, {"method": "turn/nonsense", "params": {}}),
                          Message(True, {"id": 2, "method": "turn/steer", "params": {"threadId": "t"}})])
    assert list(schema.problems(rec)) == [
        ("reply turn/steer at (top)", "'turnId' is a required property"),
        ("notification turn/nonsense", "the schema has no such method"),
        ("request turn/steer at params", "'expectedTurnId' is a required property")]


@needs_codex
def test_the_fast_subset_finds_both_causes_in_the_pinned_build(tmp_path, capsys):
    report = tmp_path / "report"
    code = main(["conform", "codex", "--fast", "--json", str(tmp_path / "f.json"), "--report", str(report)])
    assert code == 1
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["target"]["version"] == "0.171.0" and doc["runs"] == 4 and doc["status"] == "violation"
    assert {f["id"]: set(f["scenarios"]) for f in doc["findings"]} == FAST_CAUSES
    assert all(f["kind"] == "defect" for f in doc["findings"])
    assert sorted(p.name for p in (report / "repro").iterdir()) == sorted(c.repro for c in CAUSES.values())
    assert (report / "runs" / "steer@tool.jsonl").exists() and (report / "sessions" / "malformed-steers.jsonl").exists()
    svg = tmp_path / "session.svg"
    assert main(["diagram", str(report / "sessions" / "steer@tool.jsonl"), "-o", str(svg)]) == 0
    assert svg.read_text().startswith("<?xml")


@needs_codex
@pytest.mark.parametrize("cause", sorted(CAUSES))
def test_each_standalone_reproduction_reproduces_on_the_pinned_build(cause):
    done = subprocess.run([sys.executable, str(REPRO_DIR / CAUSES[cause].repro)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "REPRODUCED" in done.stdout


@needs_codex
@pytest.mark.slow
def test_every_scenario_against_the_pinned_build(tmp_path):
    """The whole generated set: the two causes and no other finding (no divergence the model cannot
    explain, no stalled run)."""
    out = tmp_path / "f.json"
    assert conform.main(["--json", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["runs"] == len(SCENARIOS)
    assert {f["id"] for f in doc["findings"]} == set(FAST_CAUSES)
    shown = {f["id"]: set(f["scenarios"]) for f in doc["findings"]}
    assert {"interrupt@tool/accepted", "interrupt@said/accepted"} <= shown["interrupt-drops-acknowledged-steer"]
    assert {"steer@text", "interrupt@text/no-steer"} <= shown["steer-leaves-streaming-item-open"]


def test_the_recording_puts_notifications_codex_sends_from_other_tasks_at_one_place():
    """thread/started and an app-server notification land anywhere around the harness's requests; on disk
    they sit at one place (before ids are numbered), and a prefixed id loses its UUID."""
    thread = "01a2476e-4056-7a43-97b5-da47ed034d45"
    init = [Message(True, {"id": 1, "method": "initialize"}), Message(False, {"id": 1, "result": {}})]
    remote = Message(False, {"method": "remoteControl/status/changed", "params": {"installationId": thread[::-1]}})
    start = [Message(True, {"id": 2, "method": "thread/start"}),
             Message(False, {"id": 2, "result": {"thread": {"id": thread}}})]
    started = Message(False, {"method": "thread/started", "params": {"thread": {"id": thread}}})
    turn = Message(True, {"id": 3, "method": "turn/start", "params": {"threadId": thread, "id": f"at_{thread}"}})
    one = Recording("x", [*init, remote, *start, started, turn])
    other = Recording("x", [*init, *start, turn, remote, started])
    assert list(normalise.lines(one)) == list(normalise.lines(other))
    text = json.dumps(list(normalise.lines(other)))
    assert thread not in text and '"at_uuid-' in text


# In steer@tool the command's end and the queued steer are handled by two of Codex's tasks once the command is
# released, so their items come in either order (the thread keeps that order): two runs need not behave alike.
RACING_INSIDE_CODEX = frozenset({"steer@tool.jsonl"})


@needs_codex
def test_two_runs_of_the_fast_scenarios_write_the_same_bytes(tmp_path):
    for run in ("one", "two"):
        assert main(["conform", "codex", "--fast", "--report", str(tmp_path / run)]) == 1
    names = sorted(p.name for p in (tmp_path / "one" / "runs").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "two" / "runs").iterdir()) and len(names) == 4
    for name in sorted(set(names) - RACING_INSIDE_CODEX):
        assert (tmp_path / "one" / "runs" / name).read_bytes() == (tmp_path / "two" / "runs" / name).read_bytes()


@needs_codex
def test_a_reproduction_copied_into_a_report_runs_as_its_summary_says(tmp_path):
    report = tmp_path / "report"
    assert main(["conform", "codex", "--scenario", "steer@text", "--report", str(report)]) == 1
    command = next(line.split("`")[1] for line in (report / "summary.md").read_text().splitlines()
                   if line.startswith("Standalone"))
    assert command.startswith("python3 repro/steer_leaves_streaming_item_open.py --codex /")
    for argv in (command.split()[1:], command.split()[1:2]):  # as summary.md says, and without --codex
        done = subprocess.run([sys.executable, *argv], cwd=report, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "REPRODUCED" in done.stdout, done.stdout + done.stderr


def test_a_copied_reproduction_without_a_build_names_what_to_pass(tmp_path):
    script = tmp_path / "repro" / CAUSES["abandon-streaming-item"].repro
    script.parent.mkdir()
    script.write_bytes((REPRO_DIR / script.name).read_bytes())
    done = subprocess.run([sys.executable, "-S", str(script)], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    assert "npm ci" not in done.stderr and "pass --codex PATH" in done.stderr
