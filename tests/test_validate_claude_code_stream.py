"""`steersim validate claude-code LOG --format claude-code-stream`: the stdout of `claude -p --output-format
stream-json`, as a host sees it, here the lines of the documented case (a message joining the running turn
at a tool result) as the pinned build prints them, whole and edited by hand."""

from __future__ import annotations

import json
from pathlib import Path

from steersim.cli import main
from steersim.errors import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION

MODEL = "steersim.models.claude_code:SPEC"


def lifecycle(message: str, state: str) -> dict:
    return {"type": "command_lifecycle", "command_uuid": message, "state": state, "session_id": "s"}


JOINED = [
    {"type": "system", "subtype": "init", "session_id": "s"},
    lifecycle("u1", "queued"), lifecycle("u1", "started"),
    {"type": "system", "subtype": "status", "status": "requesting", "user_message_uuids": ["u1"]},
    {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash"}]}},
    lifecycle("u2", "queued"),
    {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}},
    lifecycle("u2", "started"),
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "Here are the files."}]}},
    lifecycle("u2", "completed"),
    {"type": "result", "subtype": "success", "stop_reason": "end_turn"},
    lifecycle("u1", "completed"),
]


def validate(tmp_path: Path, lines: list[dict], *extra: str) -> tuple[int, dict]:
    log = tmp_path / "stdout.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "report.json"
    code = main(["validate", MODEL, str(log), "--format", "claude-code-stream", "--json", str(out), *extra])
    return code, json.loads(out.read_text())["logs"][0] if out.exists() else {}


def test_a_joined_message_is_explained_and_the_lines_the_model_does_not_speak_of_are_passed_over(tmp_path):
    code, log = validate(tmp_path, JOINED)
    assert (code, log["verdict"], log["records"]) == (EXIT_OK, "explained", 9)


def test_a_message_that_never_starts_is_flagged(tmp_path):
    lines = [line for line in JOINED if line != lifecycle("u2", "started")]
    code, log = validate(tmp_path, lines)
    assert (code, log["verdict"], log["finding"]["line"]) == (EXIT_VIOLATION, "finding", 9)  # u2 completes


def test_a_turn_that_ends_twice_is_flagged(tmp_path):
    code, _ = validate(tmp_path, [*JOINED, {"type": "result", "subtype": "success", "stop_reason": "end_turn"}])
    assert code == EXIT_VIOLATION


def test_a_line_without_a_type_is_bad_input(tmp_path, capsys):
    code, _ = validate(tmp_path, [*JOINED[:2], {"state": "queued"}])
    assert code == EXIT_USAGE
    assert "a stream-json line is a JSON object with a string \"type\"" in capsys.readouterr().err
