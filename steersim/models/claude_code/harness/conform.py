"""`steersim conform claude-code`: check the pinned Claude Code build's message queue against the model.

Each generated scenario (`scenarios.py`) runs against a fresh `claude -p` in stream-json mode whose
`ANTHROPIC_BASE_URL` is a fake Messages API the harness drives (`backend.py`, `runner.py`); the recorded
lines, model requests and transcript are judged by the core monitors, by the transcript's queue records and
by trace validation against the model (`judge.py`). Findings are grouped by root cause (`causes.py`), each
with its shortest scenario and, for a known cause, a standalone reproduction.
Exit 0 when nothing was found, 1 with findings, 2 on bad usage (or no installed build), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from steersim.argtypes import output_file, output_folder, refuse_path_clashes
from steersim.errors import ArgumentParser, UsageError
from steersim.harness.cli_report import CliHarness
from steersim.harness.finding import Finding
from steersim.models.claude_code.harness import normalise
from steersim.models.claude_code.harness.binary import Build, find_build
from steersim.models.claude_code.harness.causes import CAUSES, REPRO_DIR
from steersim.models.claude_code.harness.judge import judge
from steersim.models.claude_code.harness.runner import run
from steersim.models.claude_code.harness.scenarios import NAMED, SCENARIOS, Scenario

SEAMS = (
    "model requests travel over HTTP and lines over stdout, so a request stands at the first `system/status "
    "requesting` line (printed with --include-partial-messages) after the previous request's that names the last "
    "message it is the first to carry; an announcement whose request never went out (its turn was stopped first) "
    "is passed over",
    "a `result` says how its turn ended by its messages' last lifecycle state: `completed`, the model ended it; "
    "`cancelled`, an interrupt when one was answered during the turn, else a `now` message",
    "a harness move on a response whose turn had already ended is left out: Claude Code no longer read it",
    "only user messages the harness wrote (their text starts with their id) are read from a model request; "
    "system reminders, tool results and assistant messages are not judged",
    "the Bash command is `cat` of a named pipe: the harness ends it by writing the pipe once `cat` opened it",
    "the transcript's queue-operations are judged by their count only (a `dequeue` names no message)",
)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = ArgumentParser(prog="steersim conform claude-code", description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME",
                        help=f"run only this scenario (repeatable): {', '.join(NAMED)}")
    parser.add_argument("--plan", choices=("fast", "full"), default="full",
                        help="`fast`: one scenario per kind of place; `full` (the default): every scenario")
    parser.add_argument("--claude", metavar="PATH", help="a claude binary to check (default: the pinned build "
                        "under steersim/models/claude_code/harness/node)")
    parser.add_argument("--json", type=output_file, metavar="FILE", help="write the findings as JSON")
    parser.add_argument("--report", type=output_folder, metavar="DIR",
                        help="write summary.md, findings.json, each run's normalised exchange (runs/), its model "
                        "trace for `steersim diagram` (sessions/) and the reproductions of the causes found (repro/)")
    args = parser.parse_args(list(argv))
    refuse_path_clashes("conform claude-code", [("--claude", args.claude)], [("--json", args.json)],
                        [("--report", args.report)])
    unknown = [name for name in args.scenario if name not in NAMED]
    if unknown:
        raise UsageError(f"unknown scenario {unknown[0]!r}; the scenarios are: {', '.join(NAMED)}")
    return args


def chosen(args: argparse.Namespace) -> list[Scenario]:
    if args.scenario:
        return [NAMED[name] for name in args.scenario]
    return [s for s in SCENARIOS if s.fast or args.plan == "full"]


def build_of(path: str | None) -> Build:
    if path is None:
        return find_build()
    binary = Path(path).resolve()  # the app-server runs in its own folder
    if not binary.is_file():
        raise UsageError(f"--claude {path}: no such file; give the path of a claude binary")
    try:
        said = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as broken:
        raise UsageError(f"--claude {path} does not run ({broken}); give the path of a claude binary") from None
    if not said.strip().endswith("(Claude Code)"):
        first = said.strip().splitlines()[0][:60] if said.strip() else "nothing"
        raise UsageError(f"--claude {path} is not a claude binary (`--version` said {first!r})")
    return Build(binary, said.split()[0])


HARNESS = CliHarness(system="claude-code", title="Claude Code", flag="--claude",
                     scenarios=SCENARIOS, causes=CAUSES, repro_dir=REPRO_DIR,
                     kind_order={"defect": 0, "monitor": 1, "record": 2, "divergence": 3, "stalled": 4},
                     write_run=normalise.write)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    build = build_of(args.claude)
    started = time.monotonic()
    found: list[Finding] = []
    runs: dict[str, Any] = {}
    sessions: dict[str, Any] = {}
    interrupted = False
    scenarios = chosen(args)
    try:
        for scenario in scenarios:
            recording = run(scenario, build.binary, build.version)
            findings, session = judge(scenario, recording)
            runs[scenario.name], sessions[scenario.name] = recording, session
            found += findings
    except KeyboardInterrupt:
        interrupted = True
    findings = HARNESS.group(found)
    status = "interrupted" if interrupted else "violation" if findings else "ok"
    report = {"system": "claude-code", "target": {**build.to_json(), "seams": list(SEAMS)}, "status": status,
              "runs": len(runs), "seconds": round(time.monotonic() - started, 2),
              "findings": [HARNESS.finding_json(f) for f in findings]}
    return HARNESS.conclude(report, args.json, args.report, runs, sessions, interrupted)
