"""The model-driven server against real clients: the seed page's Python example, unchanged, over many
seeds (with a per-outcome report), and a deliberately wrong client that the client obligations catch."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from models.openai_ws.example_runs import run_example, run_examples, write_example_report
from models.openai_ws.serve import ReplayedChoices, main
from models.openai_ws.session import SERVE_DEFAULTS
from sim.errors import UsageError
from sim.traces.trace import read_trace, replay

SEED_EXAMPLE = Path(__file__).resolve().parent.parent.parent / "shared" / "spec" / "openai-seed-example.py"

# How the seed example fares in each outcome class: it only succeeds when its steer reaches a successor.
EXPECTED_RESULT = {
    "interrupted-then-successor": "succeeded",
    "completed-first-then-successor": "succeeded",
    "steer-refused:response_already_completed": "raised",
    "failed-after-acceptance:successor_creation_failed": "raised",
    "connection-dropped": "raised",
}

WRONG_CLIENT = '''
import asyncio

from openai import AsyncOpenAI

STEER = "Keep the scope small enough for one developer to finish in two weeks."


async def main():
    client = AsyncOpenAI()
    first = None
    async with client.responses.connect() as connection:
        await connection.response.create(model="gpt-6-astra", input="Draft a project plan.")
        async for event in connection:
            if event.type == "response.created" and first is None:
                first = event.response.id
                await connection.response.steer(previous_response_id=first, input=STEER)
            elif event.type == "response.steer.pending":
                # Wrong: the steer was accepted and is still queued, yet the client sends it again.
                await connection.response.steer(previous_response_id=first, input=STEER)
                await send_output(connection, first, event.required_input[0].call_id)
            elif event.type == "response.steer.failed" and event.error.code != "response_already_completed":
                return
            elif event.type == "response.completed" and event.response.id == first:
                calls = [item for item in event.response.output if item.type == "function_call"]
                if calls and not accepted:
                    await send_output(connection, first, calls[0].call_id)
            elif event.type == "response.steer.accepted":
                accepted.append(event.steer.id)
            elif event.type == "response.completed":
                return


async def send_output(connection, parent, call_id):
    await connection.send({"type": "response.create", "model": "gpt-6-astra", "previous_response_id": parent,
                           "input": [{"type": "function_call_output", "call_id": call_id, "output": "done"}]})


accepted = []
asyncio.run(main())
'''


def check_report(report: dict, runs: int) -> None:
    assert report["runs"] == runs
    assert sum(row["runs"] for row in report["outcomes"].values()) == runs
    assert len(report["outcomes"]) >= 2, report["outcomes"]
    for outcome, row in report["outcomes"].items():
        assert row["hung"] == 0, outcome
        assert row[EXPECTED_RESULT[outcome]] == row["runs"], (outcome, row)
    assert report["findings"] == []


@pytest.fixture(scope="module")
def seed_example() -> Path:
    if not SEED_EXAMPLE.exists():
        pytest.skip(f"seed example not found at {SEED_EXAMPLE}")
    return SEED_EXAMPLE


def test_seed_example_over_20_seeds(seed_example, tmp_path):
    runs = run_examples(seed_example, range(20))
    report = write_example_report(tmp_path / "report.json", seed_example, runs)
    assert json.loads((tmp_path / "report.json").read_text()) == report
    check_report(report, 20)


@pytest.mark.slow
def test_seed_example_over_100_seeds(seed_example, tmp_path):
    runs = run_examples(seed_example, range(100))
    check_report(write_example_report(tmp_path / "report.json", seed_example, runs), 100)


def test_a_client_that_resends_after_pending_is_caught(tmp_path):
    script = tmp_path / "wrong_client.py"
    script.write_text(WRONG_CLIENT)
    params = {**SERVE_DEFAULTS, "client_tools": 1, "hosted_tools": 0, "interruption": "finish", "reconnects": 0}
    runs = run_examples(script, range(6), params)
    caught = [run for run in runs if any(f["property"] == "client-no-resend-accepted" for f in run.findings)]
    assert caught, [(run.seed, run.outcome, run.findings) for run in runs]
    for run in runs:
        assert {f["kind"] for f in run.findings} <= {"obligation"}, run.findings


def test_a_recorded_session_replays_against_the_same_client(seed_example, tmp_path):
    trace = tmp_path / "session.jsonl"
    recorded = asyncio.run(run_example(seed_example, 2, record=trace))
    steps = [step.action for step in read_trace(trace).steps]
    replayed = asyncio.run(run_example(seed_example, 2, choices=ReplayedChoices(steps)))
    assert replayed.actions == recorded.actions
    assert (replayed.outcome, replayed.result) == (recorded.outcome, recorded.result)
    # the recorded frames carry the client's own text; `steersim replay` matches them as the model does
    result = replay(read_trace(trace))
    assert result.ok, result.message


def test_usage_errors():
    with pytest.raises(UsageError, match="one of the arguments --seed --trace is required"):
        main(["--port", "0"])
    with pytest.raises(UsageError):
        main(["--port", "0", "--trace", "/nonexistent/trace.jsonl"])


def test_cli_serves_a_session_and_writes_its_findings(tmp_path):
    """With no client in the time allowed, the session is empty: nothing to find, exit 0."""
    report = tmp_path / "findings.json"
    trace = tmp_path / "session.jsonl"
    assert main(["--port", "0", "--seed", "1", "--timeout", "0.5", "--json", str(report), "--record", str(trace)]) == 0
    assert json.loads(report.read_text()) == {"system": "openai-ws", "steps": 0, "findings": []}
    assert read_trace(trace).steps == []
