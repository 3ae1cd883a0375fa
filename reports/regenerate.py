"""Regenerate the design-review artefacts in this folder:

    python reports/regenerate.py            # every installed model
    python reports/regenerate.py teaching   # only the named models

For each model registered with steersim it writes an HTML report at the default parameters
(`<model>/index.html`) and one for an instructive bug variant (`<model>--<bug>/index.html`), and for
each canonical scenario of the specs the shortest model run that shows it, as a timed trace
(`canonical/<model>--<scenario>.jsonl`, replayable with `steersim replay`) and its timing diagram
(`.svg`). Canonical runs are found by searching the model, not written by hand, so they follow the
models as they change. A model that is missing or broken is skipped with a note; the others still
regenerate. Output is byte-identical from run to run (times come from seed 0 of each model's timing
profile), so a diff of this folder shows only what the models changed. `index.md` lists what was made.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from steersim.core.registry import ENTRY_POINT_GROUP, ModelSpec, get_model_spec
from steersim.draw.diagram import save_diagram, timed_trace
from steersim.report.html import REPORT_FILE, write_report
from steersim.traces.canonical import shortest_run_with
from steersim.traces.trace import write_trace

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class BugChoice:
    """The bug variant whose report teaches most, with parameters beyond the model's own `bug_params`
    that make its report clearer."""

    bug: str
    params: Mapping[str, Any] = field(default_factory=dict)


INSTRUCTIVE_BUGS: Mapping[str, BugChoice] = {
    "teaching": BugChoice("lost-at-boundary"),
    "openai-ws": BugChoice("drop-on-normal-completion"),
    "foundry": BugChoice("lifo-promotion"),
    "openclaw": BugChoice("skip-without-result", {"tool_execution": "sequential"}),
}


@dataclass(frozen=True)
class Scenario:
    """A canonical trace of a spec: native event name patterns that must occur in this order."""

    model: str
    name: str
    events: tuple[str, ...]
    doc: str
    params: Mapping[str, Any] = field(default_factory=dict)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("teaching", "steer-skips-calls",
             ("model.request", "tool.start", "steer.queued", "tool.skipped", "steer.delivered", "model.request"),
             "a steer arrives while a call runs; the next launch checkpoint skips the rest of the batch with "
             "synthetic results, and the steer reaches the next model call"),
    Scenario("openai-ws", "steered-interrupt",
             ("response.create", "response.created", "response.steer", "response.steer.accepted",
              "response.incomplete", "response.created"),
             "spec section 4.5 (1): a steer interrupts the response, which ends incomplete; the successor "
             "commits the steer"),
    Scenario("openai-ws", "normal-completion-first",
             ("response.create", "response.created", "response.steer", "response.steer.accepted",
              "response.completed", "response.created"),
             "spec section 4.5 (2): the response completes normally first, then the successor commits the steer"),
    Scenario("openai-ws", "client-tool-pending",
             ("response.create", "response.created", "response.steer", "response.steer.accepted",
              "response.completed", "response.steer.pending", "response.create", "response.created"),
             "spec section 4.5 (3): the response ends with a client tool call, the steer waits "
             "(response.steer.pending) until the client returns the tool output"),
    Scenario("foundry", "seed-example",
             ("start", "handler.enter", "start", "handler.check", "handler.exit", "TaskRun.result",
              "handler.enter", "handler.exit", "TaskRun.result"),
             "spec section 1: a second start() on a busy steerable chain queues, the running handler sees the "
             "cancel signal at a safe point and winds down, and each caller gets its own turn's outcome"),
    Scenario("openclaw", "sequential-skipped-tail",
             ("tool_execute", "steer", "tool_execution_end", "tool_execution_start", "tool_execution_end",
              "turn_end", "turn_start", "model_request"),
             "spec section 5: a sequential batch whose first call runs while a steer arrives; the checkpoint "
             "before the second call drains it, the second call is skipped with a synthetic result, and the "
             "steer reaches the next model call",
             {"tool_execution": "sequential"}),
    Scenario("codex", "steer-during-command",
             ("turn/start", "response.tool_call", "turn/steer", "tool.finished", "request"),
             "a turn/steer while exec_command runs is acknowledged at once and written (its userMessage item) "
             "when the command ends; the next model request carries the command's output and the steer",
             {"turns": 1, "steers": 1}),
    Scenario("codex", "steer-preempts-stream",
             ("turn/start", "response.text_delta", "turn/steer", "request"),
             "a turn/steer while the agent message streams: Codex abandons that model request, writes the steer "
             "and samples again with it",
             {"turns": 1, "steers": 1}),
)


def _note(message: str) -> None:
    print(f"note: {message}", file=sys.stderr)


def report_model(spec: ModelSpec, out: Path) -> list[str]:
    """The model's two reports; the lines of the index that describe them."""
    lines = []
    result = write_report(spec, spec.resolve({}), None, out / spec.name)
    lines.append(f"- [`{spec.name}/{REPORT_FILE}`]({spec.name}/{REPORT_FILE}): {spec.name} at its default "
                 f"parameters: {result.status}, {result.states:,} states.")
    choice = INSTRUCTIVE_BUGS.get(spec.name) or (BugChoice(next(iter(spec.bugs))) if spec.bugs else None)
    if choice is None or choice.bug not in spec.bugs:
        _note(f"{spec.name}: no bug variant to report")
        return lines
    folder = f"{spec.name}--{choice.bug}"
    params = spec.resolve(dict(choice.params), choice.bug)
    result = write_report(spec, params, choice.bug, out / folder)
    violated = [p for p in result.properties if p.status == "violated" and p.counterexample is not None]
    lines.append(f"- [`{folder}/{REPORT_FILE}`]({folder}/{REPORT_FILE}): bug `{choice.bug}` "
                 f"({spec.bugs[choice.bug]}); violated: {', '.join(p.name for p in violated) or 'nothing'}.")
    if violated:
        first = violated[0]
        save_diagram(first.counterexample, out / folder / "counterexample.svg", spec.build(params, choice.bug),
                     params=params, bug=choice.bug, title=f"{spec.name} bug {choice.bug}: {first.name}")
        lines.append(f"- [`{folder}/counterexample.svg`]({folder}/counterexample.svg): the counterexample of "
                     f"`{first.name}` as a timing diagram, the violating step banded in red.")
    return lines


def draw_scenario(spec: ModelSpec, scenario: Scenario, out: Path) -> list[str]:
    params = spec.resolve(dict(scenario.params))
    model = spec.build(params)
    path = shortest_run_with(model, scenario.events)
    if path is None:
        _note(f"{spec.name}: no run shows {scenario.name} ({' → '.join(scenario.events)}); not drawn")
        return []
    folder = out / "canonical"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{spec.name}--{scenario.name}"
    trace, _ = timed_trace(path, model, params)
    write_trace(folder / f"{stem}.jsonl", trace)
    save_diagram(path, folder / f"{stem}.svg", model, params=params, title=f"{spec.name}: {scenario.name}")
    return [f"- [`canonical/{stem}.svg`](canonical/{stem}.svg) ({len(path.steps)} steps): {scenario.doc}."]


def regenerate(out: Path = HERE, names: Sequence[str] = ()) -> int:
    """Write every artefact under `out`; return how many models were skipped."""
    known = available_models_tolerant()
    wanted = list(names) or sorted({*known, *(s.model for s in SCENARIOS), *INSTRUCTIVE_BUGS})
    lines = ["# Design-review artefacts", "",
             "Generated by `python reports/regenerate.py`; do not edit by hand.", ""]
    skipped = 0
    for name in wanted:
        spec = known.get(name)
        if spec is None:
            _note(f"model {name!r} is not installed (yet); its artefacts are left out")
            skipped += 1
            continue
        try:
            section = report_model(spec, out)
            for scenario in (s for s in SCENARIOS if s.model == name):
                section += draw_scenario(spec, scenario, out)
        except Exception as broken:  # a model under construction must not stop the others' artefacts
            _note(f"model {name!r} failed ({type(broken).__name__}: {broken}); its artefacts are left out")
            skipped += 1
            continue
        lines += [f"## {name}", "", *section, ""]
    if not names:
        (out / "index.md").write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return skipped


def available_models_tolerant() -> dict[str, ModelSpec]:
    """Every registered model that loads; one whose package is broken is left out with a note."""
    found = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            found[ep.name] = get_model_spec(ep.name)
        except Exception as broken:  # a broken model package must not hide the models that load
            _note(f"model {ep.name!r} does not load: {broken}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python reports/regenerate.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", help="models to regenerate (default: every model)")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: this folder)")
    args = parser.parse_args(argv)
    skipped = regenerate(args.out, args.models)
    print(f"regenerated {args.out} ({skipped} model(s) skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
