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
import json
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from steersim.argtypes import output_file, output_folder, refuse_path_clashes
from steersim.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION, ArgumentParser, UsageError
from steersim.harness.finding import Finding
from steersim.models.claude_code.harness import normalise
from steersim.models.claude_code.harness.binary import Build, find_build
from steersim.models.claude_code.harness.causes import CAUSES, REPRO_DIR
from steersim.models.claude_code.harness.judge import judge
from steersim.models.claude_code.harness.runner import run
from steersim.models.claude_code.harness.scenarios import NAMED, SCENARIOS, Scenario
from steersim.traces.trace import write_trace

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


def group(findings: list[Finding]) -> list[Finding]:
    """One finding per root cause, shown by its simplest scenario (one of the fast subset, which races
    nothing, before the others; then the shortest), listing every scenario that shows it."""
    rank = {s.name: (not s.fast, len(s.steps), s.name) for s in SCENARIOS}
    groups: dict[tuple[str, str], Finding] = {}
    for finding in findings:
        key = (finding.kind, finding.cause)
        kept = groups.get(key)
        names = (kept.scenarios if kept else []) + [finding.scenario]
        if kept is None or rank[finding.scenario] < rank[kept.scenario]:
            groups[key] = finding
        groups[key].scenarios = names
    order = {"defect": 0, "monitor": 1, "record": 2, "divergence": 3, "stalled": 4}
    return sorted(groups.values(), key=lambda f: (order[f.kind], f.cause))


def finding_json(finding: Finding) -> dict[str, Any]:
    out = {**finding.to_json(), "cause": finding.cause, "scenario": finding.scenario, "position": finding.position,
           "scenarios": sorted(finding.scenarios), "events": finding.steps}
    out["reproduce"] = {"command": f"steersim conform claude-code --scenario '{finding.scenario}'"}
    cause = CAUSES.get(finding.cause)
    out["id"] = cause.id if cause else finding.cause
    if cause is not None:
        out.update(title=cause.title, explanation=cause.explanation, contract=cause.contract)
        out["reproduce"]["standalone"] = f"python3 {REPRO_DIR / cause.repro}"
    return out


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def file_name(scenario: str) -> str:
    return scenario.replace("/", "-")


def write_report(directory: Path, report: dict[str, Any], runs: dict[str, Any], sessions: dict[str, Any]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "findings.json").write_text(json.dumps(report, indent=2) + "\n")
    for sub, table in (("runs", runs), ("sessions", sessions)):
        (directory / sub).mkdir(exist_ok=True)
        for name, item in table.items():
            target = directory / sub / f"{file_name(name)}.jsonl"
            normalise.write(item, target) if sub == "runs" else write_trace(target, item)
    lines = [f"# Claude Code conformance: {report['target']['package']} {report['target']['version']}", "",
             f"{plural(report['runs'], 'scenario')} in {report['seconds']:.1f} s; "
             f"{plural(len(report['findings']), 'root cause')}.", ""]
    if report["findings"]:
        lines += ["| id | kind | property | scenarios | reproduction |", "|---|---|---|---|---|"]
        for f in report["findings"]:
            standalone = f["reproduce"].get("standalone")
            how = f"repro/{Path(standalone.split()[-1]).name}" if standalone else f"`{f['reproduce']['command']}`"
            lines.append(f"| {f['id']} | {f['kind']} | {f['property']} | {len(f['scenarios'])} | {how} |")
        lines.append("")
    for number, f in enumerate(report["findings"], 1):
        lines += [f"## {number}. {f['id']} ({f['kind']}, {f['property']})", "", f.get("title", f["summary"]), ""]
        if "explanation" in f:
            lines += [f["explanation"], "", f"Contract: {f['contract']}", ""]
        lines += [f"Shown by: {', '.join(f['scenarios'])}.", "", f"Judge: {f['summary']}", "",
                  f"Reproduce: `{f['reproduce']['command']}`", ""]
        if "standalone" in f["reproduce"]:
            script = Path(f["reproduce"]["standalone"].split()[-1]).name
            lines += [f"Standalone (public protocol only, exits 1 while it reproduces), from this folder: "
                      f"`python3 repro/{script} --claude {report['target']['binary']}` (without `--claude` it "
                      f"runs the pinned build of the installed steersim)", ""]
    lines += ["## Seams", "", *(f"- {seam}" for seam in report["target"]["seams"]), ""]
    (directory / "summary.md").write_text("\n".join(lines))
    repros = sorted({CAUSES[f["cause"]].repro for f in report["findings"] if f["cause"] in CAUSES})
    if repros:
        (directory / "repro").mkdir(exist_ok=True)
        for name in repros:
            shutil.copyfile(REPRO_DIR / name, directory / "repro" / name)


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
    findings = group(found)
    status = "interrupted" if interrupted else "violation" if findings else "ok"
    report = {"system": "claude-code", "target": {**build.to_json(), "seams": list(SEAMS)}, "status": status,
              "runs": len(runs), "seconds": round(time.monotonic() - started, 2),
              "findings": [finding_json(f) for f in findings]}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    if args.report:
        write_report(Path(args.report), report, runs, sessions)
    print(f"{report['target']['package']} {build.version}: {plural(len(runs), 'scenario')} in "
          f"{report['seconds']:.1f} s, {plural(len(findings), 'root cause')}{' (interrupted)' if interrupted else ''}")
    for f in report["findings"]:
        print(f"  [{f['kind']}] {f['id']} ({f['property']}) x{len(f['scenarios'])}: {f.get('title', f['summary'])}")
        print(f"      scenarios: {', '.join(f['scenarios'])}")
        print(f"      reproduce: {f['reproduce']['command']}")
        if "standalone" in f["reproduce"]:
            print(f"      standalone: {f['reproduce']['standalone']}")
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_VIOLATION if findings else EXIT_OK
