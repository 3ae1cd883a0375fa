"""`steersim validate`: recorded logs judged against a model under partial observation, in the core
facts (a user's own model file) and in a model's own events (a simulated run of a built-in model)."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.errors import EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION

ROOT = Path(__file__).resolve().parents[1]
CHAT = "chat"


def howto_model() -> str:
    """The complete model file of the own-model how-to."""
    return (ROOT / "docs" / "howto" / "drop_oldest.py").read_text()


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A team's own model file, outside any package, as the current directory."""
    (tmp_path / "drop_oldest.py").write_text(howto_model())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_log(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def submitted(sid: str) -> dict:
    return {"fact": "steer.submitted", "id": sid, "target": CHAT}


def started(turn: str) -> dict:
    return {"fact": "turn.started", "turn": turn, "chain": CHAT}


def applied(sid: str, turn: str) -> dict:
    return {"fact": "steer.applied", "id": sid, "turn": turn}


def validate_json(tmp_path: Path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "validate.json"
    code = main(["validate", *args, "--json", str(out)])
    return code, json.loads(out.read_text())


def test_a_partial_facts_log_that_stops_mid_turn_is_explained(user_dir: Path) -> None:
    # no steer.accepted, tool.* or history facts are recorded: those steps are unobserved, and free
    log = write_log(user_dir / "app.log", [submitted("s1"), started("t1"), applied("s1", "t1"), submitted("s2"),
                                           applied("s2", "t1")])
    code, report = validate_json(user_dir, "drop_oldest.py:SPEC", log, "--format", "facts")
    assert code == EXIT_OK
    assert report["logs"] == [{"file": log, "verdict": "explained", "records": 5,
                               "configurations": report["logs"][0]["configurations"], "finding": None, "message": ""}]


def test_two_active_turns_are_flagged_at_their_record_with_the_state_and_the_offer(
        user_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_log(user_dir / "app.log", [submitted("s1"), started("t1"), started("t2")])
    code, report = validate_json(user_dir, "drop_oldest.py:SPEC", log)
    assert code == EXIT_VIOLATION
    finding = report["logs"][0]["finding"]
    assert (finding["file"], finding["line"], finding["explained"]) == (log, 3, 2)
    assert "phase='calling'" in finding["state"]["state"]  # the last state that explained the log
    assert finding["offered"] == ["steer.submitted(id='s2', target='chat')"]
    assert capsys.readouterr().out.startswith(f"{log}:3: {json.dumps(started('t2'))} is not a behaviour")


def test_a_steer_applied_but_never_submitted_is_flagged_counting_blank_lines(user_dir: Path) -> None:
    log = user_dir / "app.log"
    log.write_text(json.dumps(submitted("s1")) + "\n\n" + json.dumps(applied("s2", "t1")) + "\n")
    code, report = validate_json(user_dir, "drop_oldest.py:SPEC", str(log))
    assert code == EXIT_VIOLATION
    assert report["logs"][0]["finding"]["line"] == 3


def test_one_report_for_many_logs_and_the_worst_exit_wins(user_dir: Path) -> None:
    good = write_log(user_dir / "good.log", [submitted("s1")])
    bad = write_log(user_dir / "bad.log", [applied("s9", "t1")])  # N=3: the user never sends a ninth steer
    code, report = validate_json(user_dir, "drop_oldest.py:SPEC", good, bad)
    assert code == EXIT_VIOLATION
    assert [entry["verdict"] for entry in report["logs"]] == ["explained", "finding"]


def test_a_search_cut_by_max_states_is_undecided(user_dir: Path) -> None:
    log = write_log(user_dir / "app.log", [submitted("s1"), started("t1"), applied("s1", "t1")])
    code, report = validate_json(user_dir, "drop_oldest.py:SPEC", log, "--max-states", "2")
    assert code == EXIT_INCOMPLETE
    assert report["logs"][0]["verdict"] == "cut"


@pytest.mark.parametrize(("text", "message"), [
    ('{"fact": "steer.sent", "id": "s1"}\n', "app.log:1: unknown fact 'steer.sent'"),
    ('{"fact": "steer.submitted", "id": "s1"}\nnot json\n', "app.log:2: not JSON"),
    ('[1, 2]\n', "app.log:1: a facts log has one JSON object per line, not list"),
    ('{"fact": "steer.accepted", "id": "s1", "when": 3}\n', "app.log:1: steer.accepted has no field when"),
])
def test_a_record_the_reader_cannot_parse_is_bad_input_with_file_and_line(
        user_dir: Path, capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    (user_dir / "app.log").write_text(text)
    assert main(["validate", "drop_oldest.py:SPEC", "app.log"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_missing_log_and_an_unknown_format_are_bad_input(user_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_log(user_dir / "app.log", [submitted("s1")])
    assert main(["validate", "drop_oldest.py:SPEC", "missing.log"]) == EXIT_USAGE
    assert "missing.log: cannot read the log" in capsys.readouterr().err
    assert main(["validate", "drop_oldest.py:SPEC", "app.log", "--format", "syslog"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--format syslog: unknown log format; known formats: " in err
    assert "claude-code-stream, codex-appserver, codex-rollout, events, facts" in err
    assert "openclaw-transcript, pydantic-ai-messages" in err


def simulated_trace(tmp_path: Path) -> list[dict]:
    """The steps of one simulated run of the built-in teaching model, as its trace file records them."""
    assert main(["simulate", "teaching", "--seeds", "0", "--traces", str(tmp_path / "traces"), "--quiet"]) in (
        EXIT_OK, EXIT_VIOLATION)
    lines = (tmp_path / "traces" / "teaching-seed0.jsonl").read_text().splitlines()
    return [step for step in map(json.loads, lines[1:]) if "action" in step]


def test_a_simulated_run_of_a_built_in_model_is_explained_in_facts_and_in_its_own_events(tmp_path: Path) -> None:
    steps = simulated_trace(tmp_path)
    facts = write_log(tmp_path / "facts.log", [fact for step in steps for fact in step["facts"]])
    events = write_log(tmp_path / "events.log", [{"name": e["name"], "data": e["data"]}
                                                 for step in steps for e in step["events"]])
    assert main(["validate", "teaching", facts]) == EXIT_OK
    assert main(["validate", "teaching", events, "--format", "events"]) == EXIT_OK


def test_a_reordered_history_in_a_simulated_run_is_flagged_at_the_first_moved_record(tmp_path: Path) -> None:
    facts = [fact for step in simulated_trace(tmp_path) for fact in step["facts"]]
    appended = [i for i, fact in enumerate(facts) if fact["fact"] == "history.appended"]
    differing = next((a, b) for a, b in pairwise(appended) if facts[a] != facts[b])
    first, second = differing
    facts[first], facts[second] = facts[second], facts[first]
    code, report = validate_json(tmp_path, "teaching", write_log(tmp_path / "facts.log", facts))
    assert code == EXIT_VIOLATION
    # the moved record is named, though the model step that writes it also writes the record before it
    assert report["logs"][0]["finding"]["line"] == first + 1
    assert report["logs"][0]["finding"]["record"] == json.dumps(facts[first])


def test_a_log_cut_off_inside_a_step_that_writes_two_records_is_explained(user_dir: Path) -> None:
    # the model's user.steer writes steer.submitted and steer.accepted together; the log stops between them
    accepted = {"fact": "steer.accepted", "id": "s1"}
    log = write_log(user_dir / "app.log", [submitted("s1"), accepted, submitted("s2")])
    assert main(["validate", "drop_oldest.py:SPEC", log]) == EXIT_OK
    wrong = write_log(user_dir / "wrong.log", [submitted("s1"), accepted, submitted("s3")])
    assert main(["validate", "drop_oldest.py:SPEC", wrong]) == EXIT_VIOLATION


def test_many_logs_on_workers_give_the_report_of_one_process(user_dir: Path) -> None:
    logs = [write_log(user_dir / "a.log", [submitted("s1"), started("t1")]),
            write_log(user_dir / "b.log", [submitted("s1"), started("t1"), started("t2")]),
            write_log(user_dir / "c.log", [submitted("s1"), submitted("s2")])]
    one = validate_json(user_dir, "drop_oldest.py:SPEC", *logs)
    two = validate_json(user_dir, "drop_oldest.py:SPEC", *logs, "--workers", "2")
    assert one == two and one[0] == EXIT_VIOLATION
    assert [entry["verdict"] for entry in one[1]["logs"]] == ["explained", "finding", "explained"]


@pytest.mark.slow
def test_many_logs_on_a_local_dask_cluster_give_the_report_of_one_process(user_dir: Path) -> None:
    pytest.importorskip("dask.distributed")
    logs = [write_log(user_dir / "a.log", [submitted("s1"), started("t1")]),
            write_log(user_dir / "b.log", [submitted("s1"), started("t1"), started("t2")])]
    one = validate_json(user_dir, "drop_oldest.py:SPEC", *logs)
    assert validate_json(user_dir, "drop_oldest.py:SPEC", *logs, "--dask", "local") == one


def test_a_bad_log_on_workers_is_one_line_of_bad_input(user_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_log(user_dir / "good.log", [submitted("s1")])
    (user_dir / "bad.log").write_text("not json\n")
    assert main(["validate", "drop_oldest.py:SPEC", good, "bad.log", "--workers", "2"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("steersim: error: bad.log:1: not JSON") and err.count("\n") == 1
