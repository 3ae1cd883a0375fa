"""`steersim conform langgraph`: check the real LangGraph server's double texting against the model.

The real `langgraph-api` with `langgraph-runtime-inmem` runs in this process on the virtual-time loop
(`server.py`), serving a graph of no-LLM nodes (`graph.py`). The first run's life alone gives the
points at which the next runs are created (`scenarios.py`): each strategy, with and without a stream
client, with and without a clean-up that awaits, and one that outlasts the next run. Every recording is
judged (`judge.py`): the core monitors over its facts, LangGraph's own promises over the records, and
trace validation against the model; findings are grouped by root cause (`causes.py`), each with its
standalone reproduction. Exit 0 when nothing was found, 1 with findings, 2 on bad usage, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steersim.argtypes import output_file, output_folder, refuse_path_clashes
from steersim.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION, ArgumentParser, UsageError
from steersim.models.langgraph.harness import scenarios as sc
from steersim.models.langgraph.harness.progress import Progress
from steersim.models.langgraph.harness.runner import HORIZON_S

PLANS = ("fast", "full")
FAST_POINTS = (0, 4, 7)


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="steersim conform langgraph", description=__doc__.splitlines()[0])
    p.add_argument("--plan", choices=PLANS, default="full",
                   help="full (default): every point of the first run's life, third runs and failing nodes; "
                        "fast: a few points per strategy")
    p.add_argument("--scenario", action="append", default=[], metavar="NAME",
                   help="run only this scenario (repeatable), as a finding names it, and print its events")
    p.add_argument("--json", dest="json_file", type=output_file, default=None, help="write the findings here")
    p.add_argument("--report", type=output_folder, default=None,
                   help="write summary.md, findings.json, each cause's example trace and the reproductions here")
    p.add_argument("--quiet", action="store_true", help="print only the summary (no progress lines on stderr)")
    return p


@dataclass
class Group:
    """The recordings one cause explains: how many, which properties they break, the shortest one."""

    cause: str
    scenarios: list[str] = field(default_factory=list)
    properties: set[str] = field(default_factory=set)
    example: Any = None
    findings: list[Any] = field(default_factory=list)  # the example's findings this cause explains
    judged: list[Any] = field(default_factory=list)  # all of the example's findings


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    refuse_path_clashes("conform langgraph", [], [("--json", args.json_file)], [("--report", args.report)])
    named = [parse_scenario(name) for name in args.scenario]
    from steersim.models.langgraph.harness.causes import attribute
    from steersim.models.langgraph.harness.judge import judge
    from steersim.models.langgraph.harness.runner import Session
    from steersim.models.langgraph.harness.server import target

    groups: dict[str, Group] = {}
    counts = {"scenarios": 0, "clean": 0}
    solo_length: list[int] = []
    started = time.monotonic()
    progress = None if args.quiet or named else Progress()

    def each(rec: Any) -> None:
        if not solo_length:
            solo_length.append(len(rec.events))
        counts["scenarios"] += 1
        findings = judge(rec)
        if named and not args.quiet:
            show(rec, findings)
        if not findings:
            counts["clean"] += 1
        for cause, found in attribute(rec, findings).items():
            group = groups.setdefault(cause, Group(cause))
            group.scenarios.append(rec.scenario.name)
            group.properties |= {f.property for f in found}
            if group.example is None or len(rec.events) < len(group.example.events):
                group.example, group.findings, group.judged = rec, found, findings
        if progress is not None:
            progress.judged(len(groups))

    plan = iter(named) if named else scenarios(args.plan, solo_length, progress)
    interrupted = False
    try:
        Session().run(plan, each)
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.monotonic() - started
    doc = document(groups, counts, target(), args.plan if not named else "named", seconds, interrupted)
    if args.json_file:
        Path(args.json_file).write_text(json.dumps(doc, indent=2) + "\n")
    if args.report:
        write_report(Path(args.report), doc, groups)
    for line in summary(doc):
        print(line)
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_VIOLATION if groups else EXIT_OK


def scenarios(plan: str, solo_length: list[int], progress: Progress | None = None) -> Iterator[sc.Scenario]:
    """The solo run first (its length places the others), then the plan's scenarios; `progress` learns
    how many there are once the solo run has placed them."""
    yield sc.solo(join=True)
    rest = after_solo(plan, solo_length[0])
    if progress is not None:
        progress.planned(1 + len(rest))
    yield from rest


def after_solo(plan: str, length: int) -> list[sc.Scenario]:
    """The plan's scenarios placed on a solo run of `length` events."""
    if plan == "fast":
        return [*sc.placements(length, cleanups=(sc.CLEANUP_S,), points=(*FAST_POINTS, length)),
                *sc.third_runs(length, strategies=("interrupt",), joins=(False,), points=(4,), offsets=(0,)),
                *sc.outlasting(length, strategies=("interrupt",), joins=(False,), points=(FAST_POINTS[-1],))]
    return [*sc.placements(length), *sc.third_runs(length), *sc.outlasting(length), *sc.failing(length)]


def parse_scenario(name: str) -> sc.Scenario:
    """A scenario from its name (`enqueue@0+join,rollback@4+join,cleanup,fail:r1@2`); `cleanup=SECONDS`
    sets how long a cancelled node's clean-up awaits (`cleanup` alone: `scenarios.CLEANUP_S`)."""
    arrivals, cleanup, fail = [], 0.0, []
    for part in name.split(","):
        try:
            if part == "cleanup":
                cleanup = sc.CLEANUP_S
            elif part.startswith("cleanup="):
                cleanup = float(part.removeprefix("cleanup="))
                if not 0 < cleanup < HORIZON_S / 4:
                    raise ValueError(part)
            elif part.startswith("fail:"):
                run, node = part.removeprefix("fail:").split("@")
                fail.append((run, int(node)))
            else:
                join = part.endswith("+join")
                strategy, after = part.removesuffix("+join").split("@")
                if strategy not in ("reject", "enqueue", "interrupt", "rollback"):
                    raise ValueError(strategy)
                arrivals.append(sc.Arrival(strategy, int(after), join))
        except ValueError:
            raise UsageError(f"--scenario {name!r}: {part!r} is not STRATEGY@EVENTS[+join], cleanup[=SECONDS] "
                             "or fail:RUN@NODE; for example enqueue@0,rollback@4+join,cleanup=3") from None
    if not arrivals:
        raise UsageError(f"--scenario {name!r} creates no run; for example enqueue@0,interrupt@4")
    return sc.Scenario(tuple(arrivals), cleanup, tuple(fail))


def show(rec: Any, findings: list[Any]) -> None:
    print(f"== {rec.scenario.name} ({rec.end})")
    for i, o in enumerate(rec.observations):
        print(f"  {i:3d} t={o.t % 1000:<7g} {o.event.name:20s} {dict(o.event.data)}")
    for f in findings:
        print(f"  [{f.kind}] {f.property}: {f.summary}")


def document(groups: dict[str, Group], counts: dict[str, int], packages: dict[str, str], plan: str,
             seconds: float, interrupted: bool) -> dict[str, Any]:
    from steersim.models.langgraph.harness.causes import BY_NAME

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
            "every_scenario": g.scenarios,
            "example_findings": [f"{f.property}: {f.summary}" for f in g.findings],
        })
    return {"target": packages, "plan": plan, "status": "interrupted" if interrupted else "complete",
            "scenarios": counts["scenarios"], "clean": counts["clean"], "seconds": round(seconds, 1),
            "causes": causes}


def summary(doc: dict[str, Any]) -> list[str]:
    packages = ", ".join(f"{k} {v}" for k, v in doc["target"].items())
    lines = [f"langgraph conformance ({packages}){' (interrupted)' if doc['status'] == 'interrupted' else ''}: "
             f"{doc['scenarios']} scenarios, {doc['clean']} clean; {len(doc['causes'])} root causes"]
    for c in doc["causes"]:
        verdict = {True: "contradicts the docs", False: "not in the docs", None: "unexplained"}[
            c["documented_contract_broken"]]
        lines.append(f"- {c['cause']} ({verdict}): {c['title']}; {c['scenarios']} scenarios; "
                     f"breaks {', '.join(c['properties'])}; e.g. --scenario '{c['example']}'"
                     + (f"; reproduction {c['reproduction']}" if c["reproduction"] else ""))
    return lines


def write_report(folder: Path, doc: dict[str, Any], groups: dict[str, Group]) -> None:
    from steersim.models.langgraph import SPEC
    from steersim.models.langgraph.harness.causes import BY_NAME
    from steersim.models.langgraph.harness.judge import model_params
    from steersim.traces.trace import make_trace, write_trace

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "findings.json").write_text(json.dumps(doc, indent=2) + "\n")
    lines = ["# LangGraph double texting: conformance findings", "", *summary(doc), ""]
    for c in doc["causes"]:
        lines += [f"## {c['cause']}", "", c["title"], "", c["mechanism"], "", f"Contract: {c['contract']}", "",
                  f"Example: `steersim conform langgraph --scenario '{c['example']}'`", "",
                  *(f"- {s}" for s in c["example_findings"]), ""]
        cause = BY_NAME.get(c["cause"])
        if cause is not None:
            (folder / "repro").mkdir(exist_ok=True)
            shutil.copy(cause.repro, folder / "repro" / cause.script)
        group = groups[c["cause"]]
        divergence = next((f for f in group.judged if f.explained), None)
        if divergence is not None:  # the model's path up to where the server left it: replay and diagram read it
            params = SPEC.resolve(model_params(group.example))
            trace = make_trace(SPEC.name, params, None, 0, divergence.explained, end="divergence")
            write_trace(folder / f"{c['cause']}.trace.jsonl", trace)
    (folder / "summary.md").write_text("\n".join(lines) + "\n")
