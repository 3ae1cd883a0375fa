"""`steersim conform openclaw`: check an installed OpenClaw build against the model.

Scenarios are generated from the model (`scenarios.py`), run against the real Agent Core by the Node
driver (`driver.py`), and each recorded run is judged (`judge.py`): core monitors, trace validation
against the model, and the model's properties along the explaining path. Runs that show the same
problem are reported as one finding, reproduced by its shortest scenario.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from models.openclaw import driver, scenarios
from models.openclaw.judge import Finding, judge
from sim.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION, ArgumentParser, UsageError
from sim.interrupts import INTERRUPTED, collect, worker_pool

DEFAULT_KNOBS = scenarios.Knobs()


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = ArgumentParser(prog="steersim conform openclaw", description=__doc__.splitlines()[0])
    parser.add_argument("--package-dir", help="installed openclaw package to check (default: the pinned "
                        "reference build, node/node_modules/openclaw-beta)")
    parser.add_argument("--steers", type=int, default=2, help="most steers per scenario (default 2)")
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME",
                        help="run only the named scenario (repeatable), as printed in a finding")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="worker processes, each with its own driver (default: one per CPU)")
    parser.add_argument("--json", metavar="FILE", help="write the findings as JSON")
    parser.add_argument("--report", metavar="DIR", help="write a readable summary (summary.md, findings.json)")
    args = parser.parse_args(list(argv))
    if not 1 <= args.steers <= 3:
        raise UsageError(f"--steers {args.steers} is out of range; use 1..3")
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs} must be at least 1")
    return args


def run_part(target: driver.Target, max_steers: int, labels: frozenset[str],
             names: frozenset[str]) -> tuple[int, list[Finding]]:
    """Generate the scenarios of some knob settings (or only the named ones), run them in one driver
    process and judge what it recorded. Returns how many ran and the findings."""
    chosen = [s for s in scenarios.generate(max_steers, labels) if not names or s.name in names]
    if not chosen:
        return 0, []
    results = driver.run(target, chosen)
    return len(chosen), [f for scenario, result in zip(chosen, results, strict=True) for f in judge(scenario, result)]


def run_all(target: driver.Target, max_steers: int, names: Sequence[str],
            jobs: int) -> tuple[int, list[Finding], bool]:
    """Split the knob settings over `jobs` worker processes, each generating, driving and judging its share.
    Returns how many ran, the findings, and whether Ctrl-C cut it short (`sim.interrupts`: the parts
    finished are kept, the workers and their drivers are stopped)."""
    labels = sorted({k.label() for k in scenarios.knob_grid()})
    wanted = frozenset(names)
    if wanted:
        unknown = sorted(n for n in wanted if n.split("/", 1)[0] not in labels)
        if unknown:
            raise UsageError(f"unknown scenario {unknown[0]!r}; copy a name from a finding's reproduce.scenario")
        labels = sorted({n.split("/", 1)[0] for n in wanted})
    parts = [frozenset(labels[k::jobs]) for k in range(min(jobs, len(labels)))]
    part = partial(run_part, target, max_steers, names=wanted)
    if len(parts) == 1:
        outcomes, interrupted = collect(map(part, parts))
    else:
        with worker_pool(len(parts)) as pool:
            outcomes, interrupted = collect(pool.imap(part, parts))
    runs = sum(count for count, _ in outcomes)
    if wanted and runs < len(wanted) and not interrupted:
        raise UsageError("unknown scenario among --scenario names; copy a name from a finding's reproduce.scenario")
    return runs, [f for _, found in outcomes for f in found], interrupted


def group(findings: list[Finding]) -> list[Finding]:
    """One finding per signature, reproduced by its shortest scenario, listing every scenario that shows it."""
    groups: dict[tuple[str, str], Finding] = {}
    for finding in findings:
        key = (finding.kind, finding.signature)
        kept = groups.get(key)
        if kept is None or _size(finding) < _size(kept):
            finding.scenarios = kept.scenarios if kept else []
            groups[key] = finding
            kept = finding
        kept.scenarios.append(finding.scenario.name)
    return sorted(groups.values(), key=lambda f: (f.kind != "divergence", f.property, f.signature))


def _size(finding: Finding) -> tuple[int, int, int, str]:
    """Simplest first: fewest injected actions, fewest knobs away from the defaults, shortest run."""
    knobs = finding.scenario.knobs
    changed = sum(getattr(knobs, name) != getattr(DEFAULT_KNOBS, name) for name in DEFAULT_KNOBS.__dataclass_fields__)
    return (len(finding.scenario.plan), changed, len(finding.steps), finding.scenario.name)


def finding_json(finding: Finding, target: driver.Target) -> dict[str, Any]:
    scenario = finding.scenario
    return {
        "property": finding.property,
        "kind": finding.kind,
        "summary": finding.summary,
        "reproduce": {
            "command": f"steersim conform openclaw --package-dir {target.directory} --scenario '{scenario.name}'",
            "scenario": scenario.name,
            "driver_input": scenario.to_json(),
            "model_params": scenario.model_params(),
        },
        "occurrences": len(finding.scenarios),
        "scenarios": sorted(finding.scenarios)[:50],
        "steps": finding.steps,
    }


def write_report(directory: Path, report: dict[str, Any]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "findings.json").write_text(json.dumps(report, indent=2))
    target = report["target"]
    lines = [f"# OpenClaw conformance: {target['package']}@{target['version']}", "",
             f"{report['runs']} generated scenarios in {report['seconds']:.1f} s; "
             f"{len(report['findings'])} distinct findings.", ""]
    if report["findings"]:
        lines += ["| kind | property | runs | summary |", "|---|---|---|---|"]
        for f in report["findings"]:
            summary = f["summary"].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {f['kind']} | {f['property']} | {f['occurrences']} | {summary} |")
        lines.append("")
        for number, f in enumerate(report["findings"], 1):
            lines += [f"## {number}. {f['property']} ({f['kind']})", "", f["summary"], "",
                      f"Reproduce: `{f['reproduce']['command']}`", ""]
    (directory / "summary.md").write_text("\n".join(lines))


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    target = driver.find_target(args.package_dir)
    runs, found, interrupted = run_all(target, args.steers, args.scenario, args.jobs)
    findings = group(found)
    report = {
        "system": "openclaw",
        "target": target.to_json(),
        "status": INTERRUPTED if interrupted else "violation" if findings else "ok",
        "runs": runs,
        "seconds": round(time.monotonic() - started, 2),
        "findings": [finding_json(f, target) for f in findings],
    }
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    if args.report:
        write_report(Path(args.report), report)
    print(f"{target.package}@{target.version}: {report['runs']} scenarios, {len(findings)} distinct findings "
          f"in {report['seconds']:.1f} s")
    for f in findings:
        print(f"  [{f.kind}] {f.property} x{len(f.scenarios)}: {f.summary[:160]}")
        print(f"      reproduce: --scenario '{f.scenario.name}'")
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_VIOLATION if findings else EXIT_OK
