"""`steersim conform codex`: check the pinned Codex build's app-server against the Codex model.

Each generated scenario (`scenarios.py`) runs against a fresh `codex app-server` whose model provider is a
fake Responses endpoint the harness drives (`backend.py`, `runner.py`); the recorded JSON-RPC exchange and
model requests are validated against the model and judged (`judge.py`). Findings are grouped by root cause
(`causes.py`), each with its shortest scenario and, for a known cause, a standalone reproduction; every
message is also checked against the JSON Schema the build prints (`schema.py`).
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
from steersim.models.codex.harness import normalise
from steersim.models.codex.harness.binary import Build, find_build
from steersim.models.codex.harness.causes import CAUSES, REPRO_DIR
from steersim.models.codex.harness.judge import judge, schema_findings
from steersim.models.codex.harness.runner import run
from steersim.models.codex.harness.scenarios import NAMED, SCENARIOS, Scenario
from steersim.models.codex.harness.schema import ProtocolSchema

SEAMS = (
    "model requests travel over HTTP and notifications over stdout, so a request's place among the "
    "notifications is inferred from what caused it (the userMessage items of the messages it is first to carry, "
    "the command output it carries, the turn/start reply of its turn); Codex sending a request before writing "
    "the items it carries would not be seen",
    "a request or reply stands where Codex answered it (its reply), not where the harness wrote it",
    "only user messages the harness wrote (their text starts with their id) and command outputs are read from "
    "a model request; instructions, the environment context and assistant messages Codex adds are not judged",
    "exec_command is `cat` of a named pipe: the harness ends a command by writing the pipe once `cat` opened it",
)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = ArgumentParser(prog="steersim conform codex", description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME",
                        help=f"run only this scenario (repeatable): {', '.join(NAMED)}")
    parser.add_argument("--fast", action="store_true", help="run only the fast subset (one scenario per kind of place)")
    parser.add_argument("--codex", metavar="PATH", help="a codex binary to check (default: the pinned build under "
                        "steersim/models/codex/harness/node)")
    parser.add_argument("--json", type=output_file, metavar="FILE", help="write the findings as JSON")
    parser.add_argument("--report", type=output_folder, metavar="DIR",
                        help="write summary.md, findings.json, each run's normalised exchange (runs/), its model "
                        "trace for `steersim diagram` (sessions/) and the reproductions of the causes found (repro/)")
    args = parser.parse_args(list(argv))
    refuse_path_clashes("conform codex", [("--codex", args.codex)], [("--json", args.json)],
                        [("--report", args.report)])
    unknown = [name for name in args.scenario if name not in NAMED]
    if unknown:
        raise UsageError(f"unknown scenario {unknown[0]!r}; the scenarios are: {', '.join(NAMED)}")
    return args


def chosen(args: argparse.Namespace) -> list[Scenario]:
    if args.scenario:
        return [NAMED[name] for name in args.scenario]
    return [s for s in SCENARIOS if s.fast or not args.fast]


def build_of(path: str | None) -> Build:
    if path is None:
        return find_build()
    binary = Path(path).resolve()  # the app-server runs in its own folder
    if not binary.is_file():
        raise UsageError(f"--codex {path}: no such file; give the path of a codex binary")
    try:
        said = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as broken:
        raise UsageError(f"--codex {path} does not run ({broken}); give the path of a codex binary") from None
    if not said.startswith("codex-cli "):
        first = said.strip().splitlines()[0][:60] if said.strip() else "nothing"
        raise UsageError(f"--codex {path} is not a codex binary (`--version` said {first!r})")
    return Build(binary, said.split()[-1])


HARNESS = CliHarness(system="codex", title="Codex", flag="--codex",
                     scenarios=SCENARIOS, causes=CAUSES, repro_dir=REPRO_DIR,
                     kind_order={"defect": 0, "divergence": 1, "schema": 2, "stalled": 3},
                     write_run=normalise.write)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    build = build_of(args.codex)
    started = time.monotonic()
    found: list[Finding] = []
    runs: dict[str, Any] = {}
    sessions: dict[str, Any] = {}
    interrupted = False
    scenarios = chosen(args)
    try:
        schema = ProtocolSchema.of(build.binary)
        for scenario in scenarios:
            recording = run(scenario, build.binary, build.version)
            findings, session = judge(scenario, recording)
            runs[scenario.name], sessions[scenario.name] = recording, session
            found += findings + schema_findings(scenario, schema.problems(recording))
    except KeyboardInterrupt:
        interrupted = True
    findings = HARNESS.group(found)
    status = "interrupted" if interrupted else "violation" if findings else "ok"
    report = {"system": "codex", "target": {**build.to_json(), "seams": list(SEAMS)}, "status": status,
              "runs": len(runs), "seconds": round(time.monotonic() - started, 2),
              "findings": [HARNESS.finding_json(f) for f in findings]}
    return HARNESS.conclude(report, args.json, args.report, runs, sessions, interrupted)
