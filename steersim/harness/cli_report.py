"""What `conform` reports for a harness that drives a pinned native CLI (Codex's app-server, Claude Code):
findings grouped by root cause, their JSON, the `--report` folder and the lines printed. One mechanism for
every such harness, so that their reports read alike and a fix to one is a fix to all; each harness names
itself, its causes and how it writes a run (`CliHarness`)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steersim.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION
from steersim.harness.finding import Finding
from steersim.traces.trace import write_trace


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def file_name(scenario: str) -> str:
    return scenario.replace("/", "-")


@dataclass(frozen=True)
class CliHarness:
    """A harness's own words: `system` as the command names it (`codex`), `title` as people do (`Codex`),
    `flag` the option that gives another binary (`--codex`), its scenarios (each with `name`, `fast` and
    `steps`), its known causes (each with `id`, `title`, `explanation`, `contract` and `repro`, a script in
    `repro_dir`), the order its kinds of finding are listed in, and how it writes a run's exchange."""

    system: str
    title: str
    flag: str
    scenarios: Sequence[Any]
    causes: Mapping[str, Any]
    repro_dir: Path
    kind_order: Mapping[str, int]
    write_run: Callable[[Any, Path], None]

    def group(self, findings: list[Finding]) -> list[Finding]:
        """One finding per root cause, shown by its simplest scenario (one of the fast subset, which races
        nothing, before the others; then the shortest), listing every scenario that shows it."""
        rank = {s.name: (not s.fast, len(s.steps), s.name) for s in self.scenarios}
        groups: dict[tuple[str, str], Finding] = {}
        for finding in findings:
            key = (finding.kind, finding.cause)
            kept = groups.get(key)
            names = (kept.scenarios if kept else []) + [finding.scenario]
            if kept is None or rank[finding.scenario] < rank[kept.scenario]:
                groups[key] = finding
            groups[key].scenarios = names
        return sorted(groups.values(), key=lambda f: (self.kind_order[f.kind], f.cause))

    def finding_json(self, finding: Finding) -> dict[str, Any]:
        out = {**finding.to_json(), "cause": finding.cause, "scenario": finding.scenario,
               "position": finding.position, "scenarios": sorted(finding.scenarios), "events": finding.steps}
        out["reproduce"] = {"command": f"steersim conform {self.system} --scenario '{finding.scenario}'"}
        cause = self.causes.get(finding.cause)
        out["id"] = cause.id if cause else finding.cause
        if cause is not None:
            out.update(title=cause.title, explanation=cause.explanation, contract=cause.contract)
            out["reproduce"]["standalone"] = f"python3 {self.repro_dir / cause.repro}"
        return out

    def write_report(self, directory: Path, report: dict[str, Any], runs: Mapping[str, Any],
                     sessions: Mapping[str, Any]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "findings.json").write_text(json.dumps(report, indent=2) + "\n")
        for sub, table in (("runs", runs), ("sessions", sessions)):
            (directory / sub).mkdir(exist_ok=True)
            for name, item in table.items():
                target = directory / sub / f"{file_name(name)}.jsonl"
                self.write_run(item, target) if sub == "runs" else write_trace(target, item)
        lines = [f"# {self.title} conformance: {report['target']['package']} {report['target']['version']}", "",
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
                          f"`python3 repro/{script} {self.flag} {report['target']['binary']}` (without "
                          f"`{self.flag}` it runs the pinned build of the installed steersim)", ""]
        lines += ["## Seams", "", *(f"- {seam}" for seam in report["target"]["seams"]), ""]
        (directory / "summary.md").write_text("\n".join(lines))
        repros = sorted({self.causes[f["cause"]].repro for f in report["findings"] if f["cause"] in self.causes})
        if repros:
            (directory / "repro").mkdir(exist_ok=True)
            for name in repros:
                shutil.copyfile(self.repro_dir / name, directory / "repro" / name)

    def conclude(self, report: dict[str, Any], json_file: str | None, report_dir: str | None,
                 runs: Mapping[str, Any], sessions: Mapping[str, Any], interrupted: bool) -> int:
        """Write the JSON document and the report folder asked for, print the summary and each root cause,
        and give the exit code: 0 nothing found, 1 findings, 130 interrupted."""
        if json_file:
            Path(json_file).write_text(json.dumps(report, indent=2) + "\n")
        if report_dir:
            self.write_report(Path(report_dir), report, runs, sessions)
        target, found = report["target"], report["findings"]
        print(f"{target['package']} {target['version']}: {plural(report['runs'], 'scenario')} in "
              f"{report['seconds']:.1f} s, {plural(len(found), 'root cause')}{' (interrupted)' if interrupted else ''}")
        for f in found:
            print(f"  [{f['kind']}] {f['id']} ({f['property']}) x{len(f['scenarios'])}: {f.get('title', f['summary'])}")
            print(f"      scenarios: {', '.join(f['scenarios'])}")
            print(f"      reproduce: {f['reproduce']['command']}")
            if "standalone" in f["reproduce"]:
                print(f"      standalone: {f['reproduce']['standalone']}")
        if interrupted:
            return EXIT_INTERRUPTED
        return EXIT_VIOLATION if found else EXIT_OK
