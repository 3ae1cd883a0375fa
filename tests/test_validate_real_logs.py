"""The committed logs of real systems in tests/fixtures/validate/: each recorded from a pinned build
(`tests/fixtures/validate/record.py`) is explained, and each copy edited by hand to hold one defect is
flagged at the defect's line, in the system's own words (the record as the system wrote it, and the
model's events it could have written there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.errors import EXIT_OK, EXIT_VIOLATION

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "validate"

CLEAN = {  # file: (model, format)
    "codex-appserver-steer-x2-tool.jsonl": ("codex", "codex-appserver"),
    "codex-appserver-interrupt-tool-sent.jsonl": ("codex", "codex-appserver"),
    "codex-appserver-start-while-active-tool.jsonl": ("codex", "codex-appserver"),
    "codex-rollout-steer-x2-tool.jsonl": ("codex", "codex-rollout"),
    "codex-rollout-interrupt-tool-sent.jsonl": ("codex", "codex-rollout"),
    "codex-rollout-start-while-active-tool.jsonl": ("codex", "codex-rollout"),
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
}


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_each_recorded_log_is_explained(name: str) -> None:
    model, fmt = CLEAN[name]
    assert main(["validate", model, str(FIXTURES / name), "--format", fmt]) == EXIT_OK


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_each_edited_log_is_flagged_at_its_defect(tmp_path: Path, name: str) -> None:
    model, fmt, line, offered = DEFECTS[name]
    path = FIXTURES / name
    out = tmp_path / "report.json"
    assert main(["validate", model, str(path), "--format", fmt, "--json", str(out)]) == EXIT_VIOLATION
    finding = json.loads(out.read_text())["logs"][0]["finding"]
    assert (finding["file"], finding["line"]) == (str(path), line)
    assert finding["record"] == path.read_text().splitlines()[line - 1]
    assert any(offer.startswith(offered) or offered in offer for offer in finding["offered"]), finding["offered"]
