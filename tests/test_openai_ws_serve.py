"""The model-driven server against real clients: the seed page's Python and JavaScript examples, unchanged,
a careful client of our own that follows the docs (never flagged), and that client broken on purpose,
once per client obligation (caught by name in every seed that reaches the obligation)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from steersim.errors import UsageError
from steersim.models.openai_ws.harness.example_runs import run_example, run_examples, write_example_report
from steersim.models.openai_ws.harness.serve import ReplayedChoices, main
from steersim.models.openai_ws.harness.session import SERVE_DEFAULTS
from steersim.traces.trace import read_trace, replay

# the shared folder beside the checkout (`../shared`), wherever the checkout sits
SEED_FILE = Path("shared", "spec", "openai-seed-example.py")
SEED_EXAMPLE = next((folder / SEED_FILE for folder in Path(__file__).resolve().parents
                     if (folder / SEED_FILE).exists()), SEED_FILE)
JS_EXAMPLE = (Path(__file__).resolve().parent.parent / "steersim" / "models" / "openai_ws" / "harness" / "node"
              / "seed-example.mjs")
CAREFUL_CLIENT = Path(__file__).resolve().parent / "openai_ws_clients" / "careful_client.py"

# How the seed example fares in each outcome class: it only succeeds when its steer reaches a successor.
EXPECTED_RESULT = {
    "interrupted-then-successor": "succeeded",
    "completed-first-then-successor": "succeeded",
    "steer-refused:response_already_completed": "raised",
    "failed-after-acceptance:successor_creation_failed": "raised",
    "connection-dropped": "raised",
}

def check_report(report: dict, runs: int, expected: dict[str, str] | None = None) -> None:
    """Every run ended as its outcome class predicts (the careful client: always succeeded), none hung,
    and nothing was found against the client."""
    assert report["runs"] == runs
    assert sum(row["runs"] for row in report["outcomes"].values()) == runs
    assert len(report["outcomes"]) >= 2, report["outcomes"]
    for outcome, row in report["outcomes"].items():
        assert row["hung"] == 0, outcome
        want = "succeeded" if expected is None else expected[outcome]
        assert row[want] == row["runs"], (outcome, row)
    assert report["findings"] == []


@pytest.fixture(scope="module")
def seed_example() -> Path:
    if not SEED_EXAMPLE.exists():
        pytest.skip(f"seed example not found at {SEED_EXAMPLE}")
    return SEED_EXAMPLE


@pytest.fixture(scope="module")
def js_example() -> Path:
    if not (JS_EXAMPLE.parent / "node_modules" / ".bin" / "node").exists():
        pytest.skip("npm ci --prefix steersim/models/openai_ws/harness/node has not been run")
    return JS_EXAMPLE


def test_seed_example_over_4_seeds(seed_example, tmp_path):
    runs = run_examples(seed_example, range(4))
    report = write_example_report(tmp_path / "report.json", seed_example, runs)
    assert json.loads((tmp_path / "report.json").read_text()) == report
    check_report(report, 4, EXPECTED_RESULT)
    assert {run.exit_code_of_session for run in runs} == {0}


def test_javascript_seed_example_over_4_seeds(js_example, tmp_path):
    """The seed page's JavaScript example, unchanged, on npm openai 7.59.0 and Node 22 of the lock file."""
    runs = run_examples(js_example, range(4))
    check_report(write_example_report(tmp_path / "report.json", js_example, runs), 4, EXPECTED_RESULT)


def test_careful_client_over_6_seeds(tmp_path):
    """A client that follows the docs, with its tool declared, is never flagged and always finishes. Seed 4
    fails both its steers after acceptance while a refusal is in flight: the client sends its second new
    request before the first one's response.created, and the lane queues it."""
    runs = run_examples(CAREFUL_CLIENT, range(6))
    check_report(write_example_report(tmp_path / "report.json", CAREFUL_CLIENT, runs), 6)
    assert {run.exit_code_of_session for run in runs} == {0}
    assert sum(run.events.count("response.create") for run in runs if run.seed == 4) == 3


# With `-p client_tools=1` a served client still decides whether its create declares a function tool.
TOOLS_ON = {**SERVE_DEFAULTS, "client_tools": 1}


def test_clients_with_client_tools_on(seed_example, tmp_path):
    """The seed example declares no function tool and the careful client declares one: both are served."""
    seed_runs = run_examples(seed_example, range(4), TOOLS_ON)
    check_report(write_example_report(tmp_path / "seed.json", seed_example, seed_runs), 4, EXPECTED_RESULT)
    careful_runs = run_examples(CAREFUL_CLIENT, range(3), TOOLS_ON)
    check_report(write_example_report(tmp_path / "careful.json", CAREFUL_CLIENT, careful_runs), 3)


@pytest.mark.slow
@pytest.mark.parametrize("tools", ["defaults", "client_tools=1"])
@pytest.mark.parametrize("client", ["seed", "js", "careful"])
def test_clients_over_100_seeds(client, tools, request, tmp_path):
    script = {"seed": SEED_EXAMPLE, "js": JS_EXAMPLE, "careful": CAREFUL_CLIENT}[client]
    if client != "careful":
        request.getfixturevalue("seed_example" if client == "seed" else "js_example")
    runs = run_examples(script, range(100), SERVE_DEFAULTS if tools == "defaults" else TOOLS_ON)
    check_report(write_example_report(tmp_path / "report.json", script, runs), 100,
                 None if client == "careful" else EXPECTED_RESULT)


def successor_follows_interruption(events: list[str]) -> bool:
    """The first interrupted response's steers continued automatically: its successor was created before any
    steer failed (when the successor fails instead, nothing continues automatically to break the rule on)."""
    if "response.incomplete" not in events:
        return False
    after = events[events.index("response.incomplete") + 1 :]
    return next((e for e in after if e in ("response.created", "response.steer.failed")), None) == "response.created"


# One broken client per obligation: the parameters that reach it, and when a seed's session reached it
# (from the events the server sent before the broken frame arrived).
ONCE_ACCEPTED = {"interruption": "finish", "reconnects": 0}
BROKEN = {
    "resend-accepted": ("client-no-resend-accepted", ONCE_ACCEPTED,
                        lambda events: "response.steer.pending" in events),
    "stream-id-on-steer": ("client-no-stream-id-on-steer", {"reconnects": 0}, lambda events: True),
    "automatic-continuation": ("client-no-automatic-continuation",
                               {"interruption": "eager", "hosted_tools": 2, "reconnects": 0},
                               lambda events: successor_follows_interruption(events)),
    "second-continuation": ("client-one-continuation-per-parent", ONCE_ACCEPTED,
                            lambda events: "response.steer.accepted" in events),
    "continuation-on-other-lane": ("client-continuation-on-parent-lane", ONCE_ACCEPTED,
                                   lambda events: "response.steer.accepted" in events),
    "steer-stale-parent": ("client-steer-newest-response", {"reconnects": 0},
                           lambda events: events.count("response.created") >= 2),
    "never-return-tool-output": ("client-returns-required-input", ONCE_ACCEPTED,
                                 lambda events: "response.steer.pending" in events),
}


def check_broken_client(defect: str, seeds: range) -> None:
    rule, params, reached = BROKEN[defect]
    runs = run_examples(CAREFUL_CLIENT, seeds, {**SERVE_DEFAULTS, **params},
                        extra_env={"CAREFUL_CLIENT_BREAK": defect}, tool_seconds=1.0, timeout=20.0)
    summary = [(run.seed, run.outcome, run.findings, run.events) for run in runs]
    assert any(reached(run.events) for run in runs), summary
    for run in runs:
        names = {f["property"] for f in run.findings}
        if reached(run.events):
            assert rule in names, summary
            assert run.exit_code_of_session == 1
        assert names <= {rule}, summary


@pytest.mark.parametrize("defect", sorted(BROKEN))
def test_a_broken_client_is_caught_by_its_obligation(defect):
    check_broken_client(defect, range(1, 2))


@pytest.mark.slow
@pytest.mark.parametrize("defect", sorted(BROKEN))
def test_a_broken_client_is_caught_by_its_obligation_over_12_seeds(defect):
    check_broken_client(defect, range(12))


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
    assert result.violations == []


@pytest.mark.parametrize("defect", ["steer-stale-parent"])
def test_replay_of_a_recorded_session_reproduces_its_finding(defect, tmp_path):
    """The finding and the frame that ended the session are in the trace; replay judges them again."""
    trace = tmp_path / "session.jsonl"
    rule, params, _ = BROKEN[defect]
    run = asyncio.run(run_example(CAREFUL_CLIENT, 2, {**SERVE_DEFAULTS, **params}, record=trace,
                                  extra_env={"CAREFUL_CLIENT_BREAK": defect}))
    recorded = read_trace(trace)
    assert [v["property"] for v in recorded.violations] == [f["property"] for f in run.findings] == [rule]
    result = replay(recorded)
    assert result.ok, result.message
    assert [v.property for v in result.violations] == [rule]


def test_serve_help_exits_0(capsys):
    from steersim.cli import main as steersim

    with pytest.raises(SystemExit) as exited:
        steersim(["serve", "--help"])
    assert exited.value.code == 0
    assert "SYSTEM --help" in capsys.readouterr().out


def test_usage_errors():
    with pytest.raises(UsageError, match="one of the arguments --seed --trace is required"):
        main(["--port", "0"])
    with pytest.raises(UsageError):
        main(["--port", "0", "--trace", "/nonexistent/trace.jsonl"])


def test_cli_without_a_client_is_incomplete(tmp_path):
    """No client in the time allowed: nothing was judged, so the session is incomplete (exit 3), not ok."""
    report = tmp_path / "findings.json"
    trace = tmp_path / "session.jsonl"
    assert main(["--port", "0", "--seed", "1", "--timeout", "0.5", "--json", str(report), "--record", str(trace)]) == 3
    assert json.loads(report.read_text()) == {"system": "openai-ws", "steps": 0, "findings": [],
                                              "verdict": "incomplete: no client connected"}
    assert read_trace(trace).steps == []
