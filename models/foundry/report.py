"""Findings as the `conform --json` document, as printed lines, and as one Markdown page (plus the
model's explaining path as a steersim trace) per finding."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from models.foundry import events as E
from models.foundry.explore import Exploration, Found
from models.foundry.judge import Finding, model_params
from models.foundry.runner import Recording
from models.foundry.scenarios import scenario_named
from models.foundry.spec import SPEC
from sim.interrupts import INTERRUPTED
from sim.monitors import CORE_MONITORS
from sim.trace import make_trace, write_trace


def command(found: Found) -> str:
    return (f"steersim conform foundry --scenario {found.spec.scenario} "
            f"--schedule={','.join(str(c) for c in found.schedule)}")


def promise(prop: str) -> str:
    """What the documentation promises, as the property that encodes it says."""
    docs = {m.name: m.doc for m in CORE_MONITORS}
    docs.update({p.name: p.doc for p in SPEC.build().properties()})
    docs["conformance"] = "every observed event is a behaviour of the documented semantics"
    docs["start-outcome"] = ("start() returns a fresh or resumed turn, queues (steerable, busy), or raises "
                             "TaskConflictError (not steerable), LastInputIdPreconditionFailed (stale "
                             "if_last_input_id) or SteeringQueueFull (9 waiting), as spec section 4.1 tabulates")
    return docs.get(prop, prop)


def steps_json(rec: Recording) -> list[dict[str, Any]]:
    return [{"i": i, "t": o.t, "step": o.step, "event": o.event.to_json(),
             "facts": [f.to_json() for f in E.facts(o.event)]} for i, o in enumerate(rec.observations)]


def finding_of(found: Found) -> tuple[Finding, Recording]:
    if found.shrunk is not None and found.shrunk_finding is not None:
        return found.shrunk_finding, found.shrunk
    return found.finding, found.recording


def finding_json(found: Found) -> dict[str, Any]:
    finding, rec = finding_of(found)
    return {
        "property": finding.property,
        "kind": finding.kind,
        "summary": finding.summary,
        "promise": promise(finding.property),
        "reproduce": {"scenario": found.spec.scenario, "strategy": found.spec.strategy, "seed": found.spec.seed,
                      "schedule": list(found.schedule), "original_schedule_length": len(found.recording.choices),
                      "command": command(found)},
        "occurrences": found.occurrences,
        "first_run": found.run_index,
        "observation": finding.position,
        "detail": finding.detail,
        "steps": steps_json(rec),
    }


def document(exploration: Exploration, target: dict[str, str]) -> dict[str, Any]:
    status = INTERRUPTED if exploration.interrupted else "violation" if exploration.found else "ok"
    return {"system": "foundry", "target": target, "status": status, "runs": exploration.runs,
            "seconds": round(exploration.seconds, 3), "ends": exploration.ends,
            "findings": [finding_json(found) for found in exploration.found.values()]}


def how_found(found: Found) -> str:
    if found.spec.seed is not None:
        return f"{found.spec.strategy} seed {found.spec.seed}"
    return "exhaustive enumeration"


def lines(found: Found) -> list[str]:
    finding, _ = finding_of(found)
    return [f"[{finding.kind}] {finding.property}: {finding.summary}",
            f"    promise: {promise(finding.property)}",
            f"    found in run {found.run_index} ({how_found(found)}, scenario {found.spec.scenario}), "
            f"seen {found.occurrences}x; shrunk schedule {list(found.schedule)} "
            f"(from {len(found.recording.choices)} decisions)",
            f"    reproduce: {command(found)}"]


def write_reports(directory: Path, exploration: Exploration, target: dict[str, str]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for n, found in enumerate(exploration.found.values(), 1):
        finding, rec = finding_of(found)
        stem = f"{n:02d}-{re.sub(r'[^a-z0-9-]+', '-', finding.property)}"
        page = directory / f"{stem}.md"
        page.write_text(markdown(found, target, f"{stem}.trace.jsonl"))
        written.append(page)
        if finding.explained:
            params = model_params(rec)
            trace = make_trace(SPEC.name, SPEC.resolve(params), None, 0, finding.explained,
                               times=_times(rec, finding), end="divergence")
            write_trace(directory / f"{stem}.trace.jsonl", trace)
    return written


def _times(rec: Recording, finding: Finding) -> list[float | None]:
    """Each explaining model step at the virtual time of the observation it produced (silent steps at
    the time of the observation before them)."""
    out: list[float | None] = []
    consumed, last = 0, 0.0
    for transition in finding.explained:
        if transition.events and consumed < len(rec.observations):
            last = rec.observations[consumed].t
        consumed += len(transition.events)
        out.append(last)
    return out


def markdown(found: Found, target: dict[str, str], trace_name: str) -> str:
    finding, rec = finding_of(found)
    scenario = scenario_named(found.spec.scenario)
    rows = []
    for i, o in enumerate(rec.observations):
        mark = " **<-**" if i == finding.position else ""
        data = ", ".join(f"{k}={v!r}" for k, v in o.event.data.items())
        rows.append(f"| {i} | {o.t:g} | `{o.event.name}` | {data}{mark} |")
    trace = (f"The model's path up to the divergence is in `{trace_name}` (`steersim replay`, diagram)."
             if finding.explained else "")
    return "\n".join([
        f"# {finding.property} ({finding.kind})",
        "",
        f"Target: {target['package']} {target['version']}. Scenario `{scenario.name}`: {scenario.notes}",
        "",
        f"**Documented promise.** {promise(finding.property)}.",
        "",
        f"**What the package did.** {finding.summary}",
        "",
        f"**Reproduce.** `{command(found)}` (first seen in run {found.run_index}, {how_found(found)}; "
        f"seen in {found.occurrences} runs). {trace}",
        "",
        "| # | t | event | data |",
        "|---|---|---|---|",
        *rows,
        "",
    ])
