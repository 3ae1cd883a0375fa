"""`steersim conform foundry`: check the real `azure-ai-agentserver-core` against the Foundry model.

The real package runs in-process on the virtual-time loop of `steersim.harness.vloop`, driven by scripted scenarios
(its tasks API, and its Responses host over in-process HTTP); a remote store's calls take the virtual
latency of `--latency`. Every interleaving the scheduler picks is recorded as native events and judged
by the core monitors and by trace validation against the model; the findings are printed grouped by
root cause (`steersim.models.foundry.harness.rootcause`). Exit 0 when nothing was found, 1 with findings,
2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from steersim.argtypes import non_negative_int, output_file, output_folder, positive_float, refuse_path_clashes
from steersim.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION, ArgumentParser, UsageError
from steersim.models.foundry.harness.explore import (
    Exploration,
    Explorer,
    Found,
    RunSpec,
    exhaustive_plan,
    mixed_plan,
    sampled_plan,
)
from steersim.models.foundry.harness.latency import DEFAULT_PROFILE, PROFILES, latency_profile
from steersim.models.foundry.harness.report import document, lines, write_reports
from steersim.models.foundry.harness.rootcause import group
from steersim.models.foundry.harness.runner import ChainSystem
from steersim.models.foundry.harness.scenarios import NAMED, scenario_named

STRATEGIES = ("mix", "random", "pct", "exhaustive")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="steersim conform foundry", description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000, help="interleavings to run (default 1000)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="first seed of the sampled runs")
    p.add_argument("--strategy", choices=STRATEGIES, default="mix",
                   help="mix: bounded exhaustive, then random and PCT seeds (default)")
    p.add_argument("--scenario", action="append", default=[],
                   help=f"scenario to run (repeatable; default all): {', '.join(NAMED)}, or random-<seed>")
    p.add_argument("--schedule", default=None,
                   help="replay one run of one --scenario with these comma-separated choices, and show it")
    p.add_argument("--per-scenario", type=non_negative_int, default=40, help="exhaustive runs per scenario in the mix")
    p.add_argument("--latency", default=DEFAULT_PROFILE,
                   help=f"virtual time each remote store call takes: {', '.join(PROFILES)} or a .toml timing "
                        f"file over store.get, store.update, ... (default {DEFAULT_PROFILE})")
    p.add_argument("--max-seconds", type=positive_float, default=None, help="stop exploring after this long")
    p.add_argument("--shrink-budget", type=non_negative_int, default=40, help="replays spent shrinking each finding")
    p.add_argument("--json", dest="json_file", type=output_file, default=None, help="write the findings document here")
    p.add_argument("--report", type=output_folder, default=None,
                   help="write one Markdown page and trace per finding here")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    refuse_path_clashes("conform foundry", [("--latency", args.latency)], [("--json", args.json_file)],
                        [("--report", args.report)])
    if args.runs < 1:
        raise UsageError("--runs takes a positive number of interleavings, for example --runs 1000")
    from steersim.models.foundry.harness.real import FoundryPackage

    return conform(FoundryPackage(), args)


def conform(system: ChainSystem, args: argparse.Namespace) -> int:
    """Explore, shrink, print and write the findings for `system`; the exit code."""
    scenarios = args.scenario or list(NAMED)
    for name in scenarios:
        scenario_named(name)
    latency_profile(args.latency)
    if args.schedule is not None:
        return replay_one(system, scenarios, args.schedule, args.seed, args.latency)
    explorer = Explorer(system, report=None if args.quiet else _announce, latency=args.latency)
    exploration = explorer.explore(plan(args, scenarios), args.runs, args.max_seconds)
    if not exploration.interrupted:  # after Ctrl-C the user wants the findings as found, now
        for found in exploration.found.values():
            explorer.shrink(found, args.shrink_budget)
            found.story = explorer.story(found)
    target = system.target()  # the documents first: a reader who closes the summary early loses nothing
    if args.json_file:
        doc = document(exploration, target, args.latency)
        Path(args.json_file).write_text(json.dumps(doc, indent=2, default=str) + "\n")
    if args.report:
        write_reports(Path(args.report), exploration, target, args.latency)
    summarise(exploration, args.latency)
    if exploration.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_VIOLATION if exploration.found else EXIT_OK


def plan(args: argparse.Namespace, scenarios: list[str]):
    if args.strategy == "exhaustive":
        return exhaustive_plan(scenarios)
    if args.strategy in ("random", "pct"):
        return sampled_plan(scenarios, args.seed, (args.strategy,), fresh=False)
    return mixed_plan(scenarios, args.seed, args.per_scenario, fresh=not args.scenario)


def replay_one(system: ChainSystem, scenarios: list[str], text: str, seed: int, latency: str) -> int:
    if len(scenarios) != 1:
        raise UsageError("--schedule replays one run: give exactly one --scenario")
    try:
        schedule = tuple(int(c) for c in text.split(",") if c.strip())
    except ValueError:
        raise UsageError(f"--schedule takes comma-separated whole numbers, not {text!r}") from None
    explorer = Explorer(system, latency=latency)
    rec, findings = explorer.run(RunSpec(scenarios[0], "replay", seed, schedule))
    for i, o in enumerate(rec.observations):
        print(f"{i:3d} t={o.t:<7g} {o.event.name:30s} {dict(o.event.data)}")
    print(f"end: {rec.end}; {len(rec.choices)} decisions")
    for line in explorer.describe_schedule(scenarios[0], seed, schedule):
        print(f"    {line}")
    for finding in findings:
        print(f"[{finding.kind}] {finding.property}: {finding.summary}")
    return 1 if findings else 0


def _announce(found: Found) -> None:
    """A finding as it is first seen, by what stays true of it after shrinking: its signature."""
    print(f"found: {found.finding.kind} {found.finding.signature} (run {found.run_index}, scenario "
          f"{found.spec.scenario})", file=sys.stderr)


def summarise(exploration: Exploration, latency: str) -> None:
    ends = ", ".join(f"{k} {v}" for k, v in sorted(exploration.ends.items()))
    groups = group(exploration)
    print(f"foundry conformance{' (interrupted)' if exploration.interrupted else ''}: "
          f"{exploration.runs} interleavings in {exploration.seconds:.1f} s ({ends}; "
          f"store latency {latency}); {len(exploration.found)} distinct findings, {len(groups)} root causes")
    for g in groups:
        print("\n".join(lines(g, latency)))
