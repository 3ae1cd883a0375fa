"""Findings as the `conform --json` document, as printed lines, and as one Markdown page per root cause
(plus the model's explaining path as a steersim trace, and the cause's standalone reproduction script
when it has one) in a report directory."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from steersim.core.monitors import CORE_MONITORS
from steersim.harness.finding import Finding
from steersim.interrupts import INTERRUPTED
from steersim.models.foundry import SPEC
from steersim.models.foundry.facts import facts
from steersim.models.foundry.harness.explore import Exploration, Found
from steersim.models.foundry.harness.judge import model_params
from steersim.models.foundry.harness.rootcause import Group, group
from steersim.models.foundry.harness.runner import Recording
from steersim.models.foundry.harness.scenarios import scenario_named
from steersim.traces.trace import make_trace, write_trace


def command(found: Found, latency: str) -> str:
    seed = f" --seed {found.spec.seed}" if found.spec.seed else ""
    remote = scenario_named(found.spec.scenario).provider_yields
    return (f"steersim conform foundry --scenario {found.spec.scenario}{seed}"
            f"{f' --latency {latency}' if remote else ''} --schedule={','.join(str(c) for c in found.schedule)}")


def promise(prop: str) -> str:
    """What the documentation promises, as the property that encodes it says."""
    docs = {m.name: m.doc for m in CORE_MONITORS}
    docs.update({p.name: p.doc for p in SPEC.build().properties()})
    docs["conformance"] = "every observed event is a behaviour of the documented semantics"
    docs["responses"] = ("a queued POST /responses answers 200 status queued, a fork 409 "
                         "conversation_fork_not_supported, a busy non-steerable conversation 409 conversation_locked, "
                         "a full queue a clear busy answer (spec section 6.19)")
    docs["start-outcome"] = ("start() returns a fresh or resumed turn, queues (steerable, busy), or raises "
                             "TaskConflictError (not steerable), LastInputIdPreconditionFailed (stale "
                             "if_last_input_id) or SteeringQueueFull (9 waiting), as spec section 4.1 tabulates")
    return docs.get(prop, prop)


def steps_json(rec: Recording) -> list[dict[str, Any]]:
    return [{"i": i, "t": o.t, "step": o.step, "event": o.event.to_json(), "record": o.record,
             "facts": [f.to_json() for f in facts(o.event)]} for i, o in enumerate(rec.observations)]


def finding_of(found: Found) -> tuple[Finding, Recording]:
    if found.shrunk is not None and found.shrunk_finding is not None:
        return found.shrunk_finding, found.shrunk
    return found.finding, found.recording


def finding_json(found: Found, latency: str) -> dict[str, Any]:
    finding, rec = finding_of(found)
    return {
        **finding.to_json(),
        "promise": promise(finding.property),
        "reproduce": {"scenario": found.spec.scenario, "strategy": found.spec.strategy, "seed": found.spec.seed,
                      "schedule": list(found.schedule), "original_schedule_length": len(found.recording.choices),
                      "command": command(found, latency), "schedule_story": found.story},
        "occurrences": found.occurrences,
        "first_run": found.run_index,
        "observation": finding.position,
        "detail": finding.detail,
        "steps": steps_json(rec),
    }


def document(exploration: Exploration, target: dict[str, str], latency: str) -> dict[str, Any]:
    groups = group(exploration)
    signatures = {found.finding.signature: n for n, g in enumerate(groups) for found in g.members}
    status = INTERRUPTED if exploration.interrupted else "violation" if exploration.found else "ok"
    return {"system": "foundry", "target": target, "status": status, "runs": exploration.runs, "latency": latency,
            "seconds": round(exploration.seconds, 3), "ends": exploration.ends,
            "root_causes": [group_json(g, n) for n, g in enumerate(groups)],
            "findings": [{**finding_json(found, latency), "root_cause": signatures[found.finding.signature]}
                         for found in exploration.found.values()]}


def group_json(g: Group, index: int) -> dict[str, Any]:
    cause = g.cause
    head, _ = finding_of(g.head)
    return {"index": index, "cause": cause.key if cause else None,
            "title": cause.title if cause else f"{head.property}: {head.summary}",
            "where": cause.where if cause else None,
            "promise": cause.promise if cause else promise(head.property),
            "reproduction_script": cause.script.name if cause else None,
            "findings": [found.finding.signature for found in g.members], "occurrences": g.occurrences}


def how_found(found: Found) -> str:
    if found.spec.seed is not None:
        return f"{found.spec.strategy} seed {found.spec.seed}"
    return "exhaustive enumeration"


def lines(g: Group, latency: str) -> list[str]:
    """A root cause as printed lines: what the package did, the promise, the findings that show it,
    and how to reproduce it."""
    head, _ = finding_of(g.head)
    cause = g.cause
    out = ([f"[root cause] {cause.title}", f"    in the package: {cause.where}", f"    promise broken: {cause.promise}"]
           if cause else [f"[{head.kind}] {head.property}: {head.summary}",
                          f"    promise broken: {promise(head.property)}"])
    out.append(f"    shown by {len(g.members)} finding(s), seen in up to {g.occurrences} runs:")
    for found in g.members:
        finding, _ = finding_of(found)
        out.append(f"      - [{finding.kind}] {finding.property}: {finding.summary[:200]}")
    found = g.head
    out.append(f"    found in run {found.run_index} ({how_found(found)}, scenario {found.spec.scenario}); shrunk "
               f"schedule {list(found.schedule)} (from {len(found.recording.choices)} decisions)")
    out.extend(f"      {line}" for line in found.story)
    out.append(f"    reproduce: {command(found, latency)}")
    out.append(f"    reproduce on plain asyncio: python {cause.script.name} (exit 1 when it reproduces)" if cause
               else "    no standalone reproduction: a cause not yet named")
    return out


def write_reports(directory: Path, exploration: Exploration, target: dict[str, str], latency: str) -> list[Path]:
    """One page per root cause, its head finding's model trace, and the cause's reproduction script."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for n, g in enumerate(group(exploration), 1):
        found = g.head
        finding, rec = finding_of(found)
        stem = f"{n:02d}-{g.cause.key if g.cause else re.sub(r'[^a-z0-9-]+', '-', finding.property)}"
        page = directory / f"{stem}.md"
        page.write_text(markdown(g, target, f"{stem}.trace.jsonl", latency))
        written.append(page)
        if g.cause is not None:
            written.append(Path(shutil.copyfile(g.cause.script, directory / g.cause.script.name)))
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


def record_cell(record: dict[str, Any] | None) -> str:
    if record is None:
        return ""
    return f"{record['status']}, {record['last_input_id']}, [{', '.join(map(str, record['pending_inputs']))}]"


def markdown(g: Group, target: dict[str, str], trace_name: str, latency: str) -> str:
    found = g.head
    finding, rec = finding_of(found)
    scenario = scenario_named(found.spec.scenario)
    rows = []
    for i, o in enumerate(rec.observations):
        mark = " **<-**" if i == finding.position else ""
        data = ", ".join(f"{k}={v!r}" for k, v in o.event.data.items())
        rows.append(f"| {i} | {o.t:g} | `{o.event.name}` | {data}{mark} | {record_cell(o.record)} |")
    trace = (f"The model's path up to the divergence is in `{trace_name}` (`steersim replay`, diagram)."
             if finding.explained else "")
    cause = g.cause
    heading = ([f"# {cause.title}", "", f"**In the package.** {cause.where}.", "",
                f"**Documented promise.** {cause.promise}.", "",
                f"**Reproduce on plain asyncio.** `python {cause.script.name}` (next to this page; the package's "
                "public API only, exit 1 when the divergence reproduces, 0 when it does not)."]
               if cause else [f"# {finding.property} ({finding.kind})", "",
                              f"**Documented promise.** {promise(finding.property)}.", "",
                              "**Reproduce on plain asyncio.** No standalone reproduction: a cause not yet named."])
    members = [f"- [{f.kind}] `{f.property}`: {f.summary}" for f in (finding_of(m)[0] for m in g.members)]
    return "\n".join([
        *heading,
        "",
        f"Target: {target['package']} {target['version']}. Scenario `{scenario.name}`: {scenario.notes}",
        "",
        f"**What the harness saw** ({len(g.members)} finding(s)):",
        *members,
        "",
        f"**Reproduce in steersim.** `{command(found, latency)}` (first seen in run {found.run_index}, "
        f"{how_found(found)}; seen in {g.occurrences} runs). {trace}",
        "",
        *(["**The schedule, await by await** (where it departs from running the first ready callback):", "",
            *[f"- {line}" for line in found.story], ""] if found.story else
          ["The default schedule shows it: no ordering of awaits is needed.", ""]),
        "| # | t | event | data | task record after it (status, last_input_id, pending_inputs) |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ])
