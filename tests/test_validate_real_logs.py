"""The committed logs of real systems in tests/fixtures/validate/: each recorded from a pinned build
(`tests/fixtures/validate/record.py`) is explained, and each copy edited by hand to hold one defect is
flagged at the defect's line, in the system's own words (the record as the system wrote it, and the
model's events it could have written there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.errors import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION
from steersim.models.codex.harness.binary import INSTALL_HINT
from steersim.models.codex.harness.binary import installed as codex_installed

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "validate"

# the client of these scenarios sends no malformed steer, which the model's defaults let a client send; a
# rollout does not record the client's requests, so the setting must say what the client may do
CODEX_RUN = ("-p", "bad_steers=false")
OPENCLAW = ("openclaw", "openclaw-transcript")
# the conform scenarios' model setting (`Scenario.model_params`) where it differs from the defaults
OPENCLAW_RUN = ("-p", "end_listener_window=true")
LANGGRAPH = ("langgraph", "langgraph-records")
LANGGRAPH_RUN = ("-p", "runs=2", "-p", "nodes=2")
PYDANTIC = ("pydantic-ai", "pydantic-ai-messages")
ONE_CALL = ("-p", "tool_calls=1")  # the model's default response calls two tools

CLEAN = {  # file: (model, format, options)
    "codex-appserver-steer-x2-tool.jsonl": ("codex", "codex-appserver", CODEX_RUN),
    "codex-appserver-interrupt-tool-sent.jsonl": ("codex", "codex-appserver", CODEX_RUN),
    "codex-appserver-start-while-active-tool.jsonl": ("codex", "codex-appserver", CODEX_RUN),
    "codex-rollout-steer-x2-tool.jsonl": ("codex", "codex-rollout", CODEX_RUN),
    "codex-rollout-interrupt-tool-sent.jsonl": ("codex", "codex-rollout", CODEX_RUN),
    "codex-rollout-start-while-active-tool.jsonl": ("codex", "codex-rollout", CODEX_RUN),
    # par-one-k2/m1@model_request#2, par-one-k2/m1@message_end:c1#1 and
    # par-one-k2/m1@message_end:assistant#1,abort@tool_execution_start:c1#1 of `conform openclaw`
    "openclaw-transcript-steer-while-streaming.jsonl": (*OPENCLAW, OPENCLAW_RUN),
    "openclaw-transcript-steer-while-tools.jsonl": (*OPENCLAW, OPENCLAW_RUN),
    "openclaw-transcript-steer-and-abort.jsonl": (*OPENCLAW, (*OPENCLAW_RUN, "-p", "abort=true")),
    # enqueue@0,enqueue@3, enqueue@0,rollback@6 and enqueue@0,reject@3 of `conform langgraph`
    "langgraph-records-enqueue.jsonl": (*LANGGRAPH, LANGGRAPH_RUN),
    "langgraph-records-rollback.jsonl": (*LANGGRAPH, LANGGRAPH_RUN),
    "langgraph-records-reject.jsonl": (*LANGGRAPH, LANGGRAPH_RUN),
    # run,calls=2,when_idle@model,asap@tool; run,calls=1,asap@tool+tool,asap@tool;
    # iter,calls=2,when_idle@model,asap@tools,cancel@returned and run_stream,calls=1,when_idle@model,asap@model,
    # cancel@model of `conform pydantic-ai`
    "pydantic-ai-messages-enqueue.jsonl": (*PYDANTIC, ()),
    "pydantic-ai-messages-tool-enqueue.jsonl": (*PYDANTIC, ONE_CALL),
    "pydantic-ai-messages-cancel-tools.jsonl": (*PYDANTIC, ()),
    "pydantic-ai-messages-cancel-model.jsonl": (*PYDANTIC, ONE_CALL),
}

DEFECTS = {  # file: (model, format, the line the finding names, a word of the system the finding offers)
    # from codex-appserver-steer-x2-tool: s2's userMessage items deleted; the model request carrying s2 is flagged
    "codex-appserver-lost-steer.jsonl": ("codex", "codex-appserver", 32, "item/started(type='userMessage'"),
    # a second turn/started (another turn id) inserted while t1 runs its command
    "codex-appserver-two-active-turns.jsonl": ("codex", "codex-appserver", 21, "turn/steer("),
    # the command's call (the backend's tool_call, item/started, the tool's end) deleted: its item/completed stays
    "codex-appserver-result-without-call.jsonl": ("codex", "codex-appserver", 24,
                                                  "item/started(type='commandExecution', item='c1'"),
    # s1's and s2's userMessage items swapped
    "codex-appserver-reordered-history.jsonl": ("codex", "codex-appserver", 29, "item='s1'"),
    # from codex-rollout-steer-x2-tool: s1's item_completed deleted; s2 cannot be written before it
    "codex-rollout-lost-steer.jsonl": ("codex", "codex-rollout", 21, "item/completed(type='userMessage', item='s1'"),
    # a second task_started (another turn id) inserted while t1's command runs
    "codex-rollout-two-active-turns.jsonl": ("codex", "codex-rollout", 17, "turn/completed(turn='t1'"),
    # the command's item_completed names a call (call_0009) the model never asked for
    "codex-rollout-result-without-call.jsonl": ("codex", "codex-rollout", 16, "item='c1'"),
    # s1's and s2's item_completed swapped (s2's response_item moved with it)
    "codex-rollout-reordered-history.jsonl": ("codex", "codex-rollout", 21, "item='s1'"),
    # from openclaw-transcript-steer-while-streaming: the user message m1 deleted; answer 3 answers nothing
    "openclaw-transcript-lost-steer.jsonl": (*OPENCLAW, 9, "message_end(role='user', id='m1')"),
    # the assistant's tool-call message appended again while its calls are unanswered: a second turn
    "openclaw-transcript-two-active-turns.jsonl": (*OPENCLAW, 6, "message_end(role='toolResult', id='c0'"),
    # c1's result renamed c2: a result for a call the assistant never made
    "openclaw-transcript-result-without-call.jsonl": (*OPENCLAW, 7, "message_end(role='toolResult'"),
    # the two tool results swapped: c1's before c0's
    "openclaw-transcript-reordered-history.jsonl": (*OPENCLAW, 6, "id='c0', text='c0 result'"),
    # from langgraph-records-enqueue: the enqueued r2 gone from the records before it ran, the thread idle
    "langgraph-records-lost-steer.jsonl": (*LANGGRAPH, 9, "run.status(run='r2', status='running'"),
    # r2 running beside r1
    "langgraph-records-two-active-turns.jsonl": (*LANGGRAPH, 3, "checkpoint(run='r1', name='r1.0'"),
    # a checkpoint written for r2, which has not started
    "langgraph-records-result-without-call.jsonl": (*LANGGRAPH, 4, "checkpoint(run='r1', name='r1.1'"),
    # the thread's final values with r2's first write before r1's last
    "langgraph-records-reordered-history.jsonl": (*LANGGRAPH, 14, "run.status(run='r2', status='success'"),
    # from pydantic-ai-messages-enqueue: the when_idle m1 gone from the request the end's redirect made for it
    "pydantic-ai-messages-lost-message.jsonl": (*PYDANTIC, 6, "steer.applied(id='m1', turn='r1.3')"),
    # the second tool return names a call (call_9) no response asked for
    "pydantic-ai-messages-result-without-call.jsonl": (*PYDANTIC, 3, "tool.result(call='r1.1.t2'"),
    # from pydantic-ai-messages-tool-enqueue: m1 and m2 swapped; m1 cannot follow m2 into the same request
    "pydantic-ai-messages-reordered-history.jsonl": (*PYDANTIC, 4, "steer.applied(id='m1', turn='r1.2')"),
    # an output retry (RetryFeedbackPart) and a second answer after the final one: a request with nothing queued
    "pydantic-ai-messages-request-after-end.jsonl": (*PYDANTIC, 8, "turn.started(turn='r2.1'"),
}
OPTIONS = {"codex": CODEX_RUN, "openclaw": OPENCLAW_RUN, "langgraph": LANGGRAPH_RUN,
           "pydantic-ai-messages-reordered-history.jsonl": ONE_CALL}  # by model, or by file


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_each_recorded_log_is_explained(name: str) -> None:
    model, fmt, options = CLEAN[name]
    assert main(["validate", model, str(FIXTURES / name), "--format", fmt, *options]) == EXIT_OK


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_each_edited_log_is_flagged_at_its_defect(tmp_path: Path, name: str) -> None:
    model, fmt, line, offered = DEFECTS[name]
    path = FIXTURES / name
    out = tmp_path / "report.json"
    options = OPTIONS.get(name, OPTIONS.get(model, ()))
    assert main(["validate", model, str(path), "--format", fmt, *options, "--json", str(out)]) == EXIT_VIOLATION
    finding = json.loads(out.read_text())["logs"][0]["finding"]
    assert (finding["file"], finding["line"]) == (str(path), line)
    assert finding["record"] == path.read_text().splitlines()[line - 1]
    assert any(offer.startswith(offered) or offered in offer for offer in finding["offered"]), finding["offered"]


def test_a_records_log_reads_as_the_conform_recorder_sees_the_server() -> None:
    """One mechanism: the records a run wrote, read back, are the recorder's events of the kinds records
    show (the client's answers and the tasks' ends are the harness's own sightings)."""
    from steersim.harness.logs import Line, log_format
    from steersim.models.langgraph.harness.conform import parse_scenario
    from steersim.models.langgraph.harness.runner import Session

    kept: list = []
    Session(keep_records=True).run([parse_scenario("enqueue@0,rollback@4")], kept.append)
    (recording,) = kept
    lines: list[Line] = [(n, row, json.dumps(row)) for n, row in enumerate(recording.records, 1)]
    read = [r.event for r in log_format("langgraph-records").records("records.jsonl", lines)]
    sightings = ("run.response", "run.rejected", "task.ended", "stream.joined", "stream.left")
    assert read == [e for e in recording.events if e.name not in sightings]
    assert read


@pytest.mark.skipif(not codex_installed(), reason=f"the pinned Codex build is not installed; {INSTALL_HINT}")
def test_an_appserver_transcript_reads_as_the_conform_run_it_records(tmp_path: Path) -> None:
    """One mechanism: a conform run's transcript, written as `conform --report` writes it and read back,
    gives the events the conform judge validated."""
    from steersim.harness.logs import read_log
    from steersim.models.codex.harness import normalise
    from steersim.models.codex.harness.binary import find_build
    from steersim.models.codex.harness.observe import observe
    from steersim.models.codex.harness.runner import run
    from steersim.models.codex.harness.scenarios import NAMED
    from steersim.models.codex.harness.transcript import APPSERVER_LOG

    build = find_build()
    recording = run(NAMED["steer-x2@tool"], build.binary, build.version)
    normalise.write(recording, tmp_path / "run.jsonl")
    read = [r.event for r in read_log(str(tmp_path / "run.jsonl"), APPSERVER_LOG)]
    assert read == observe(recording)
    assert any(event.name == "turn/steer" for event in read)


@pytest.mark.parametrize("scenario", ["run,calls=2,when_idle@model,asap@tool",
                                      "iter,calls=2,when_idle@model,asap@tools,cancel@returned",
                                      "run_stream,calls=1,when_idle@model,asap@model,cancel@model"])
def test_a_message_history_reads_as_the_facts_of_the_conform_run(tmp_path: Path, scenario: str) -> None:
    """One mechanism: the history a conform run ends with, written as the docs say, reads back as the common
    facts of the events the conform judge validated, of the kinds a history shows (no enqueue, no tool start)."""
    messages = pytest.importorskip("pydantic_ai.messages")
    from steersim.harness.logs import read_log
    from steersim.models.pydantic_ai import facts
    from steersim.models.pydantic_ai.harness.history import MESSAGES_LOG
    from steersim.models.pydantic_ai.harness.runner import run_one
    from steersim.models.pydantic_ai.harness.scenarios import parse

    recording = run_one(parse(scenario))
    with (tmp_path / "history.jsonl").open("wb") as f:
        for message in recording.messages:
            f.write(messages.ModelMessagesTypeAdapter.dump_json([message])[1:-1] + b"\n")
    read = [(r.event.name, dict(r.event.data)) for r in read_log(str(tmp_path / "history.jsonl"), MESSAGES_LOG)]
    kinds = {name for name, _ in read}
    shown = [(f.name, dict(f.fields)) for e in recording.events for f in facts.facts(e) if f.name in kinds]
    assert read == shown
    assert {"turn.started", "turn.ended"} <= kinds


def test_each_history_line_is_one_pydantic_ai_message() -> None:
    """The recorded and the edited histories are Pydantic AI's own: each line loads as one message."""
    messages = pytest.importorskip("pydantic_ai.messages")
    for path in sorted(FIXTURES.glob("pydantic-ai-messages-*.jsonl")):
        for line in path.read_bytes().splitlines():
            (message,) = messages.ModelMessagesTypeAdapter.validate_json(b"[" + line + b"]")
            assert message.kind in ("request", "response"), path


BAD_LINES = {  # format: (model, a line the reader cannot read, what the one-line error says)
    "codex-appserver": ("codex", {"note": "hello"}, "an app-server transcript line is"),
    "codex-rollout": ("codex", {"type": "event_msg"}, "a rollout line is"),
    "openclaw-transcript": ("openclaw", {"type": "message", "message": {"role": "system"}},
                            "a message of role 'system'"),
    "langgraph-records": ("langgraph", {"runs": [{"run_id": "x"}]}, "a records line is"),
    "pydantic-ai-messages": ("pydantic-ai", {"role": "user", "content": "hi"}, "a message history line is"),
}


@pytest.mark.parametrize("fmt", sorted(BAD_LINES))
def test_a_line_the_reader_cannot_read_is_bad_input_at_its_line(tmp_path: Path, fmt: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    model, line, said = BAD_LINES[fmt]
    log = tmp_path / "bad.jsonl"
    log.write_text("\n" + json.dumps(line) + "\n")
    assert main(["validate", model, str(log), "--format", fmt]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"{log}:2: {said}" in err and len(err.strip().splitlines()) == 1
