"""`steersim conform pydantic-ai`: check the real Pydantic AI pending-message queue against the model.

The installed `pydantic-ai-slim` runs in this process on the virtual-time loop (`runner.py`), with a
`FunctionModel` and one async tool. Each scenario (`scenarios.py`) runs an agent one of the four ways a
user does (`run`, `iter`, `run_stream`, `run_stream_events`) and enqueues messages of each priority while
the model answers or streams, while one or several tools run, after the final response and after the run,
from the run's loop or another thread, back to back, with a dequeue, and cancels runs at the awaits the
harness controls, after which a second run continues the cancelled one's history. Every recording is
judged (`judge.py`): the core monitors over its facts, Pydantic AI's own promises, and trace validation
against the model; findings are grouped by root cause (`causes.py`), each with its standalone
reproduction. Exit 0 when nothing was found, 1 with findings, 2 on bad usage, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steersim.argtypes import output_file, output_folder, refuse_path_clashes
from steersim.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION, ArgumentParser, UsageError
from steersim.models.pydantic_ai.harness import scenarios as sc

PLANS = ("fast", "full")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="steersim conform pydantic-ai", description=__doc__.splitlines()[0])
    p.add_argument("--plan", choices=PLANS, default="full",
                   help="full (default): every point with zero to three tool calls, from a thread too, and every "
                        "pair of points; fast: each priority at each point with one and two calls")
    p.add_argument("--scenario", action="append", default=[], metavar="NAME",
                   help="run only this scenario (repeatable), as a finding names it, and print its events")
    p.add_argument("--seeds", type=int, default=0, metavar="N",
                   help="also run each scenario under N seeded random orders of the callbacks ready at once "
                        "(default 0: only in the order they became ready)")
    p.add_argument("--seed", type=int, default=None, metavar="K",
                   help="run the scenarios under this one seeded order (as a finding names it)")
    p.add_argument("--json", dest="json_file", type=output_file, default=None, help="write the findings here")
    p.add_argument("--report", type=output_folder, default=None,
                   help="write summary.md, findings.json, each cause's example trace and the reproductions here")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    return p


@dataclass
class Group:
    """The recordings one cause explains: how many, which properties they break, the shortest one."""

    cause: str
    scenarios: list[str] = field(default_factory=list)
    properties: set[str] = field(default_factory=set)
    example: Any = None
    findings: list[Any] = field(default_factory=list)


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    if args.seeds < 0 or (args.seed is not None and args.seed < 0):
        raise UsageError("--seeds and --seed take a number from 0")
    if args.seed is not None and args.seeds:
        raise UsageError("--seed replays one order; --seeds adds N orders: give one of them")
    refuse_path_clashes("conform pydantic-ai", [], [("--json", args.json_file)], [("--report", args.report)])
    named = []
    for name in args.scenario:
        try:
            named.append(sc.parse(name))
        except ValueError as bad:
            raise UsageError(f"--scenario {name!r}: {bad}; for example 'iter,calls=2,asap@tool,when_idle@model'") \
                from None
    from steersim.models.pydantic_ai.harness.causes import attribute
    from steersim.models.pydantic_ai.harness.judge import judge
    from steersim.models.pydantic_ai.harness.runner import Session, version

    groups: dict[str, Group] = {}
    table: list[tuple[str, str]] = []
    counts = {"scenarios": 0, "clean": 0}
    started = time.monotonic()

    def each(rec: Any) -> None:
        counts["scenarios"] += 1
        findings = judge(rec)
        if named and not args.quiet:
            show(rec, findings)
        if not findings:
            counts["clean"] += 1
        causes = attribute(rec, findings)
        table.append((rec.name, ", ".join(sorted(causes)) or "ok"))
        for cause, found in causes.items():
            group = groups.setdefault(cause, Group(cause))
            group.scenarios.append(rec.name)
            group.properties |= {f.property for f in found}
            if group.example is None or len(rec.events) < len(group.example.events):
                group.example, group.findings = rec, found

    interrupted = False
    try:
        seeds = (args.seed,) if args.seed is not None else (None, *range(args.seeds))
        Session(seeds).run(named or sc.plan(args.plan), each)
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.monotonic() - started
    doc = document(groups, counts, table, version(), "named" if named else args.plan, seconds, interrupted)
    if args.json_file:
        Path(args.json_file).write_text(json.dumps(doc, indent=2) + "\n")
    if args.report:
        write_report(Path(args.report), doc, groups)
    for line in summary(doc):
        print(line)
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_VIOLATION if groups else EXIT_OK


def show(rec: Any, findings: list[Any]) -> None:
    print(f"== {rec.name} ({rec.end})")
    for i, o in enumerate(rec.observations):
        print(f"  {i:3d} t={o.t:<6g} {o.event.name:14s} {dict(o.event.data)}")
    for f in findings:
        print(f"  [{f.kind}] {f.property}: {f.summary}")


def document(groups: dict[str, Group], counts: dict[str, int], table: list[tuple[str, str]], target: str,
             plan: str, seconds: float, interrupted: bool) -> dict[str, Any]:
    from steersim.models.pydantic_ai.harness.causes import BY_NAME

    causes = []
    for name, g in groups.items():
        cause = BY_NAME.get(name)
        causes.append({
            "cause": name,
            "title": cause.title if cause else "findings no known cause explains",
            "documented_contract_broken": cause.documented if cause else None,
            "contract": cause.contract if cause else "",
            "mechanism": cause.mechanism if cause else "",
            "reproduction": f"repro/{cause.script}" if cause else None,
            "scenarios": len(g.scenarios),
            "properties": sorted(g.properties),
            "example": g.example.scenario.name,
            "example_seed": g.example.seed,
            "every_scenario": g.scenarios,
            "example_findings": [f"{f.property}: {f.summary}" for f in g.findings],
        })
    return {"target": {"pydantic-ai-slim": target}, "plan": plan,
            "status": "interrupted" if interrupted else "complete", "scenarios": counts["scenarios"],
            "clean": counts["clean"], "seconds": round(seconds, 1), "causes": causes,
            "results": [{"scenario": name, "result": result} for name, result in table]}


def summary(doc: dict[str, Any]) -> list[str]:
    packages = ", ".join(f"{k} {v}" for k, v in doc["target"].items())
    lines = [f"pydantic-ai conformance ({packages}){' (interrupted)' if doc['status'] == 'interrupted' else ''}: "
             f"{doc['scenarios']} scenarios, {doc['clean']} clean; {len(doc['causes'])} root causes"]
    for c in doc["causes"]:
        verdict = {True: "contradicts the docs", False: "not in the docs", None: "unexplained"}[
            c["documented_contract_broken"]]
        lines.append(f"- {c['cause']} ({verdict}): {c['title']}; {c['scenarios']} scenarios; "
                     f"breaks {', '.join(c['properties'])}; e.g. {replay(c)}"
                     + (f"; reproduction {c['reproduction']}" if c["reproduction"] else ""))
    return lines


def replay(cause: dict[str, Any]) -> str:
    """The options that run a cause's example again."""
    seed = cause["example_seed"]
    return f"--scenario '{cause['example']}'" + ("" if seed is None else f" --seed {seed}")


def write_report(folder: Path, doc: dict[str, Any], groups: dict[str, Group]) -> None:
    from steersim.models.pydantic_ai import SPEC
    from steersim.models.pydantic_ai.harness.causes import BY_NAME
    from steersim.models.pydantic_ai.harness.judge import model_params
    from steersim.traces.trace import make_trace, write_trace

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "findings.json").write_text(json.dumps(doc, indent=2) + "\n")
    lines = ["# Pydantic AI pending-message queue: conformance findings", "", *summary(doc), "",
             "| scenario | result |", "| --- | --- |",
             *(f"| {r['scenario']} | {r['result']} |" for r in doc["results"]), ""]
    for c in doc["causes"]:
        lines += [f"## {c['cause']}", "", c["title"], "", c["mechanism"], "", f"Contract: {c['contract']}", "",
                  f"Example: `steersim conform pydantic-ai {replay(c)}`", "",
                  *(f"- {s}" for s in c["example_findings"]), ""]
        cause = BY_NAME.get(c["cause"])
        if cause is not None:
            (folder / "repro").mkdir(exist_ok=True)
            shutil.copy(cause.repro, folder / "repro" / cause.script)
        group = groups[c["cause"]]
        divergence = next((f for f in group.findings if f.explained), None)
        if divergence is not None:  # the model's path up to where the run left it: replay and diagram read it
            params = SPEC.resolve(model_params(group.example))
            trace = make_trace(SPEC.name, params, None, 0, divergence.explained, end="divergence")
            write_trace(folder / f"{c['cause']}.trace.jsonl", trace)
    (folder / "summary.md").write_text("\n".join(lines) + "\n")
