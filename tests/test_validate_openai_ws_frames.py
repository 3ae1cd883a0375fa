"""`steersim validate openai-ws LOG --format openai-ws-frames`: a client's Responses WebSocket frame log,
here the frames of a simulated run of the model (the client's side), whole and edited by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.core.registry import get_model_spec
from steersim.errors import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION
from steersim.models.openai_ws.model import CLIENT, SERVER
from steersim.simulate.simulator import simulate


def frame_lines(seed: int) -> list[dict]:
    """The frames of one simulated run, as a client would log them (no bookkeeping, no socket open/close)."""
    run = simulate(get_model_spec("openai-ws").build(), seed=seed)
    lines = []
    for step in run.steps:
        for event in step.transition.events:
            if (event.source, event.target) in ((CLIENT, SERVER), (SERVER, CLIENT)) and "type" in event.data:
                lines.append({"direction": "sent" if event.source == CLIENT else "received",
                              "frame": dict(event.data)})
    return lines


def write(path: Path, lines: list[dict]) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def validate(tmp_path: Path, lines: list[dict]) -> tuple[int, dict]:
    out = tmp_path / "report.json"
    code = main(["validate", "openai-ws", write(tmp_path / "frames.log", lines), "--format", "openai-ws-frames",
                 "--json", str(out)])
    return code, json.loads(out.read_text())["logs"][0]


def test_a_clients_frame_log_is_explained_with_its_own_steer_text(tmp_path: Path) -> None:
    lines = frame_lines(1)
    for line in lines:
        if line["frame"]["type"] == "response.steer":
            line["frame"]["input"] = "a steer in the client's own words"  # free text is the client's
    code, log = validate(tmp_path, lines)
    assert (code, log["verdict"], log["records"]) == (EXIT_OK, "explained", len(lines))


def test_a_steer_accepted_that_the_client_never_sent_is_flagged_at_its_line(tmp_path: Path) -> None:
    lines = frame_lines(1)
    steer = next(i for i, line in enumerate(lines) if line["frame"]["type"] == "response.steer")
    accepted = next(i for i, line in enumerate(lines) if line["frame"]["type"] == "response.steer.accepted")
    code, log = validate(tmp_path, lines[:steer] + lines[steer + 1:])
    assert code == EXIT_VIOLATION
    assert log["finding"]["line"] == accepted  # one line earlier: the steer's line is gone


def test_two_server_frames_swapped_are_flagged_at_the_first(tmp_path: Path) -> None:
    lines = frame_lines(1)
    first = next(i for i, line in enumerate(lines) if line["frame"]["type"] == "response.in_progress")
    lines[first], lines[first + 1] = lines[first + 1], lines[first]
    code, log = validate(tmp_path, lines)
    assert code == EXIT_VIOLATION
    assert log["finding"]["line"] == first + 1


def test_a_line_without_a_direction_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "frames.log").write_text(json.dumps({"type": "response.create"}) + "\n")
    assert main(["validate", "openai-ws", str(tmp_path / "frames.log"), "--format", "openai-ws-frames"]) == EXIT_USAGE
    assert "frames.log:1: a frame log line needs \"direction\"" in capsys.readouterr().err
