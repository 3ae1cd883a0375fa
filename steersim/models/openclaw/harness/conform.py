"""`steersim conform openclaw`: check an installed OpenClaw build against the model.

Scenarios are generated from the model (`scenarios.py`), run against the real build by the Node
driver (`driver.py`) at the layer users meet (the session: the embedded runner's AgentSession around
the Agent) or at the bare `Agent`, and each recorded run is judged (`judge.py`) against the model with
the preset of the build under test (`versions.py`): core monitors, trace validation, and the model's
properties along the explaining path. Findings are grouped by root cause (`causes.py`), each reproduced
by its shortest scenario; by-design behaviour and the findings of a `--known` baseline are listed but
do not fail the run. A full run (no `--scenario`) also checks the gateway queue against the build's
own queue code (`gateway_conform.py`: settings resolution, enqueue, drop policies, the drain with
collect and overflow summaries); each divergence fails the run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from steersim.argtypes import output_file, output_folder, refuse_path_clashes
from steersim.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION, ArgumentParser, UsageError
from steersim.harness.finding import Finding
from steersim.interrupts import INTERRUPTED, collect, worker_pool
from steersim.models.openclaw.harness import driver, gateway_conform, scenarios
from steersim.models.openclaw.harness.causes import CAUSES, REPRO_DIR
from steersim.models.openclaw.harness.judge import judge
from steersim.models.openclaw.versions import VERSIONS, preset_for

DEFAULT_KNOBS = scenarios.Knobs()
LAYERS = ("session", "agent")
PASSING_KINDS = ("by-design",)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = ArgumentParser(prog="steersim conform openclaw", description=__doc__.splitlines()[0])
    parser.add_argument("--package-dir", help="installed openclaw package to check (default: the pinned "
                        "reference build, node/node_modules/openclaw-beta)")
    parser.add_argument("--layer", choices=LAYERS, default="session",
                        help="session (default): the embedded runner's AgentSession around the Agent, with "
                        "its steering admission gate and post-run continue loop; agent: the bare Agent")
    parser.add_argument("--preset", choices=tuple(VERSIONS), metavar="VERSION",
                        help="model preset to judge with (default: the build's own version; "
                        f"known: {', '.join(VERSIONS)})")
    parser.add_argument("--known", metavar="FILE", help="baseline of finding ids (one per line, # comments) "
                        "that are listed as known and do not fail the run")
    parser.add_argument("--steers", type=int, default=2, help="most steers per scenario (default 2)")
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME",
                        help="run only the named scenario (repeatable), as printed in a finding")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="worker processes, each with its own driver (default: one per CPU)")
    parser.add_argument("--json", type=output_file, metavar="FILE", help="write the findings as JSON")
    parser.add_argument("--report", type=output_folder, metavar="DIR",
                        help="write a readable summary (summary.md, findings.json) "
                        "and the standalone Node reproductions of the defects found (repro/)")
    args = parser.parse_args(list(argv))
    refuse_path_clashes("conform openclaw", [("--known", args.known)], [("--json", args.json)],
                        [("--report", args.report)])
    if not 1 <= args.steers <= 3:
        raise UsageError(f"--steers {args.steers} is out of range; use 1..3")
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs} must be at least 1")
    return args


def read_known(path: str | None) -> frozenset[str]:
    """The finding ids of a baseline file: one per line; blank lines and `#` comments are skipped."""
    if path is None:
        return frozenset()
    try:
        text = Path(path).read_text()
    except OSError as broken:
        raise UsageError(f"cannot read the --known baseline {path}: {broken.strerror}") from None
    return frozenset(line.split("#", 1)[0].strip() for line in text.splitlines()) - {""}


def run_part(target: driver.Target, max_steers: int, labels: frozenset[str], names: frozenset[str],
             layer: str = "session", version: str = scenarios.REFERENCE_VERSION) -> tuple[int, list[Finding]]:
    """Generate the scenarios of some knob settings (or only the named ones), run them in one driver
    process and judge what it recorded. Returns how many ran and the findings."""
    chosen = [s for s in scenarios.generate(max_steers, labels, layer, version) if not names or s.name in names]
    if not chosen:
        return 0, []
    results = driver.run(target, chosen)
    return len(chosen), [f for scenario, result in zip(chosen, results, strict=True) for f in judge(scenario, result)]


def run_all(target: driver.Target, max_steers: int, names: Sequence[str], jobs: int, layer: str = "session",
            version: str = scenarios.REFERENCE_VERSION) -> tuple[int, list[Finding], bool]:
    """Split the knob settings over `jobs` worker processes, each generating, driving and judging its share.
    Returns how many ran, the findings, and whether Ctrl-C cut it short (`steersim.interrupts`: the parts
    finished are kept, the workers and their drivers are stopped)."""
    labels = sorted({k.label() for k in scenarios.knob_grid()})
    wanted = frozenset(names)
    if wanted:
        unknown = sorted(n for n in wanted if n.split("/", 1)[0] not in labels)
        if unknown:
            raise UsageError(f"unknown scenario {unknown[0]!r}; copy a name from a finding's reproduce.scenario")
        labels = sorted({n.split("/", 1)[0] for n in wanted})
    parts = [frozenset(labels[k::jobs]) for k in range(min(jobs, len(labels)))]
    part = partial(run_part, target, max_steers, names=wanted, layer=layer, version=version)
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
    """One finding per root cause (or signature), reproduced by its shortest scenario, listing every
    scenario that shows it."""
    groups: dict[tuple[str, str], Finding] = {}
    for finding in findings:
        key = (finding.kind, finding.signature)
        kept = groups.get(key)
        if kept is None or _size(finding) < _size(kept):
            finding.scenarios = kept.scenarios if kept else []
            groups[key] = finding
            kept = finding
        kept.scenarios.append(finding.scenario.name)
    order = {"defect": 0, "violation": 1, "divergence": 2, "by-design": 3}
    return sorted(groups.values(), key=lambda f: (order[f.kind], f.property, f.signature))


def _size(finding: Finding) -> tuple[int, int, int, str]:
    """Simplest first: fewest injected actions, fewest knobs away from the defaults, shortest run."""
    knobs = finding.scenario.knobs
    changed = sum(getattr(knobs, name) != getattr(DEFAULT_KNOBS, name) for name in DEFAULT_KNOBS.__dataclass_fields__)
    return (len(finding.scenario.plan), changed, len(finding.steps), finding.scenario.name)


def finding_id(finding: Finding) -> str:
    """Stable across runs and machines: the cause's id, or the check with a digest of the signature."""
    if finding.cause:
        return finding.cause
    return f"{finding.property}-{hashlib.sha256(finding.signature.encode()).hexdigest()[:10]}"


def reproduce_command(target: driver.Target, scenario_name: str, layer: str, preset: str | None) -> str:
    """A command that re-runs exactly this check: the build, the layer and the preset are all named."""
    parts = [f"steersim conform openclaw --package-dir {target.directory}"]
    if layer != "session":
        parts.append(f"--layer {layer}")
    if preset is not None:
        parts.append(f"--preset {preset}")
    parts.append(f"--scenario '{scenario_name}'")
    return " ".join(parts)


def finding_json(finding: Finding, target: driver.Target, layer: str, preset: str | None,
                 known: frozenset[str]) -> dict[str, Any]:
    scenario = finding.scenario
    ident = finding_id(finding)
    reproduce: dict[str, Any] = {
        "command": reproduce_command(target, scenario.name, layer, preset),
        "scenario": scenario.name,
        "driver_input": scenario.to_json(),
        "model_params": scenario.model_params(),
    }
    out: dict[str, Any] = {"id": ident, **finding.to_json(), "known": ident in known}
    cause = CAUSES.get(finding.cause)
    if cause is not None:
        out["cause"] = {"title": cause.title, "explanation": cause.explanation}
        if cause.repro:
            reproduce["node"] = f"{driver.node_binary()} repro/{cause.repro} --package-dir {target.directory}"
    out.update({"reproduce": reproduce, "occurrences": len(finding.scenarios),
                "scenarios": sorted(finding.scenarios)[:50], "steps": finding.steps})
    return out


def failing(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings that fail a run: not by design and not in the baseline."""
    return [f for f in report["findings"] if f["kind"] not in PASSING_KINDS and not f["known"]]


def fails(report: dict[str, Any]) -> bool:
    """A failing finding, or a case where the build's gateway queue code and the model differ."""
    return bool(failing(report)) or report.get("gateway", {}).get("divergences", 0) > 0


def write_report(directory: Path, report: dict[str, Any]) -> None:
    """summary.md and findings.json, and next to them (repro/) the standalone Node reproduction of every
    catalogued defect found: `node repro/<id>.mjs --package-dir DIR` exits 1 where it reproduces."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "findings.json").write_text(json.dumps(report, indent=2))
    target = report["target"]
    findings = report["findings"]
    lines = [f"# OpenClaw conformance: {target['package']}@{target['version']} ({target['layer']} layer, "
             f"model preset {target['preset']})", "",
             f"{report['runs']} generated scenarios in {report['seconds']:.1f} s; {len(findings)} distinct "
             f"findings, {len(failing(report))} failing (by-design and known findings do not fail).", ""]
    if findings:
        lines += ["| id | kind | runs | known | summary |", "|---|---|---|---|---|"]
        for f in findings:
            summary = f["summary"].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {f['id']} | {f['kind']} | {f['occurrences']} | {'yes' if f['known'] else ''} "
                         f"| {summary} |")
        lines.append("")
    for number, f in enumerate(findings, 1):
        lines += [f"## {number}. {f['id']} ({f['kind']})", "", f["summary"], ""]
        if "cause" in f:
            lines += [f["cause"]["explanation"], ""]
        lines += [f"Reproduce: `{f['reproduce']['command']}`", ""]
        if "node" in f["reproduce"]:
            lines += [f"Standalone (public exports only, exits 1 when it reproduces): `{f['reproduce']['node']}`", ""]
    if "gateway" in report:
        gate = report["gateway"]
        lines += ["## Gateway queue", "", f"{gate['settings_cases']} settings cases and {gate['queue_cases']} queue "
                  f"cases against the build's own queue code: {gate['divergences']} divergences.", "",
                  *(f"- {json.dumps(example)}" for example in gate["examples"]), ""]
    lines += ["## Seams", "", *(f"- {seam}" for seam in target["seams"]), ""]
    (directory / "summary.md").write_text("\n".join(lines))
    repros = sorted({CAUSES[f["id"]].repro for f in findings if f["id"] in CAUSES and CAUSES[f["id"]].repro})
    if repros:
        (directory / "repro").mkdir(exist_ok=True)
        for name in repros:
            shutil.copyfile(REPRO_DIR / name, directory / "repro" / name)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    known = read_known(args.known)
    started = time.monotonic()
    target = driver.find_target(args.package_dir)
    version = args.preset or target.version
    preset_for(version)
    runs, found, interrupted = run_all(target, args.steers, args.scenario, args.jobs, args.layer, version)
    findings = group(found)
    gateway = None if args.scenario or interrupted else gateway_conform.summary(
        gateway_conform.compare(gateway_conform.probe(target)))
    report = {
        "system": "openclaw",
        "target": {**target.to_json(), "layer": args.layer, "preset": version, "seams": driver.seams(args.layer)},
        "status": INTERRUPTED if interrupted else "ok",
        "runs": runs,
        "seconds": round(time.monotonic() - started, 2),
        "findings": [finding_json(f, target, args.layer, args.preset, known) for f in findings],
        **({"gateway": gateway} if gateway is not None else {}),
    }
    if not interrupted and fails(report):
        report["status"] = "violation"  # by-design and known findings are listed but do not fail the run
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    if args.report:
        write_report(Path(args.report), report)
    bad = failing(report)
    print(f"{target.package}@{target.version} ({args.layer} layer, preset {version}): {report['runs']} scenarios, "
          f"{len(findings)} distinct findings ({len(bad)} failing) in {report['seconds']:.1f} s")
    if gateway is not None:
        print(f"  gateway queue: {gateway['settings_cases']} settings and {gateway['queue_cases']} queue cases "
              f"against the build's queue code, {gateway['divergences']} divergences")
    for f in report["findings"]:
        label = f["kind"] + (", known" if f["known"] else "")
        print(f"  [{label}] {f['id']} x{f['occurrences']}: {f['summary'][:160]}")
        print(f"      reproduce: {f['reproduce']['command']}")
        if "node" in f["reproduce"]:
            print(f"      standalone: {f['reproduce']['node']}")
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_VIOLATION if fails(report) else EXIT_OK
