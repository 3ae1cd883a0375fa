"""`steersim report`: one self-contained HTML page per model configuration for design reviews.

The page holds the verdict table, the parameters, the state counts and, for each violated property, its
counterexample as a timing diagram and as a step table (action, events, facts), plus a picture of the
state space. Everything is inline (CSS, SVG; no scripts, no fonts or images fetched), so the page opens
anywhere, offline, and can be attached to a review. Nothing in it depends on the wall clock or the
machine: regenerating a report gives the same bytes, so a diff of committed reports shows only what
the models changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from pathlib import Path as FilePath
from typing import Any

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions, CheckResult, PropertyResult
from steersim.core.model import Model
from steersim.core.registry import ModelSpec
from steersim.draw.diagram import draw_trace, timed_trace
from steersim.draw.graphview import (
    GRAPH_LIMIT,
    GraphTooLarge,
    explore_graph,
    graph_figure,
    path_nodes,
    state_summary,
    summary_figure,
)
from steersim.draw.layout import event_detail
from steersim.draw.style import inline_svg
from steersim.interrupts import INTERRUPTED
from steersim.traces.trace import Trace

STATUS_CLASS = {"holds": "good", "reached": "good", "violated": "bad", "unreached": "bad", "unknown": "unsure",
                "ok": "good", "violation": "bad", "incomplete": "unsure"}

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1a1a1a; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; } td, th { border: 1px solid #ddd; padding: 0.3em 0.6em;
  text-align: left; vertical-align: top; } th { background: #f4f4f4; }
code, .mono { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 0.9em; }
.badge { display: inline-block; padding: 0.05em 0.6em; border-radius: 0.8em; font-weight: 600; }
.good { background: #dff3e0; color: #1d6b22; } .bad { background: #fbe0e0; color: #a11b1b; }
.unsure { background: #fff1cc; color: #7a5a00; }
.figure { overflow-x: auto; border: 1px solid #e4e4e4; margin: 1em 0; }
.figure svg { display: block; max-width: none; height: auto; }
.muted { color: #666; } .violation { color: #a11b1b; font-weight: 600; }
.steps td:nth-child(1), .steps td:nth-child(2) { text-align: right; white-space: nowrap; }
.steps tr.broken { background: #fdeeee; } .steps tr.cause { background: #fdf1de; }
.cause { color: #8a5200; font-weight: 600; }
ul.plain { list-style: none; padding-left: 0; margin: 0; }
details summary { cursor: pointer; } details pre { margin: 0.2em 0 0.4em 1em; white-space: pre-wrap;
  max-height: 20em; overflow: auto; background: #fafafa; }
"""


def run_report_check(model: Model) -> CheckResult:
    result = check(model, CheckOptions(keep_going=True, progress=None))
    if result.status == INTERRUPTED:
        raise KeyboardInterrupt  # a report of half a search would mislead: Ctrl-C goes on to the caller
    return result


REPORT_FILE = "index.html"


def report_html(spec: ModelSpec, params: Mapping[str, Any], bug: str | None, seed: int = 0,
                reference: str | None = None) -> tuple[str, CheckResult]:
    """Check the configuration and render its page; also return the verdicts. `reference` is how the
    page's command line names the model (default: the spec's name)."""
    model = spec.build(params, bug)
    result = run_report_check(model)
    return render_page(spec, model, dict(params), bug, result, seed, reference), result


def write_report(spec: ModelSpec, params: Mapping[str, Any], bug: str | None, out_dir: str | FilePath,
                 seed: int = 0, reference: str | None = None) -> CheckResult:
    """Write the page as `out_dir/index.html`; return the verdicts it shows."""
    folder = FilePath(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    page, result = report_html(spec, params, bug, seed, reference)
    (folder / REPORT_FILE).write_text(page, encoding="utf-8")
    return result


def command_line(name: str, params: Mapping[str, Any], bug: str | None, defaults: Mapping[str, Any]) -> str:
    parts = ["steersim report", name]
    parts += [f"-p {k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in params.items()
              if defaults.get(k) != v]
    if bug:
        parts.append(f"--bug {bug}")
    return " ".join(parts) + " -o DIR"


def render_page(spec: ModelSpec, model: Model, params: dict[str, Any], bug: str | None, result: CheckResult,
                seed: int, reference: str | None = None) -> str:
    title = spec.name + (f" with bug {bug}" if bug else "")
    defaults = {p.name: p.default for p in spec.params}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>steersim report: {escape(title)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">{escape(spec.doc)}</p>',
    ]
    if bug:
        parts.append(f'<p><b>Bug variant</b> <code>{escape(bug)}</code>: {escape(spec.bugs[bug])} '
                     f'(expected to break <code>{escape(spec.bug_catchers.get(bug, "?"))}</code>).</p>')
    parts += _summary(result)
    parts += _params(spec, params)
    parts += _verdicts(result)
    parts += _coverage(result)
    parts += _counterexamples(spec.name, model, params, bug, result, seed)
    parts += _state_space(spec.name, model, bug, result)
    command = command_line(reference or spec.name, params, bug, defaults)
    parts.append(f'<p class="muted">Regenerate with <code>{escape(command)}</code>.</p></body></html>')
    return "\n".join(parts) + "\n"


def _summary(result: CheckResult) -> list[str]:
    out = ["<h2>Verdict</h2>",
           f'<p><span class="badge {STATUS_CLASS[result.status]}">{escape(result.status)}</span> '
           f"{result.states:,} distinct states, {result.transitions:,} transitions, greatest depth "
           f"{result.max_depth}.</p>"]
    if result.notes:
        out.append('<ul class="muted">' + "".join(f"<li>{escape(n)}</li>" for n in result.notes) + "</ul>")
    return out


def _params(spec: ModelSpec, params: Mapping[str, Any]) -> list[str]:
    rows = "".join(f"<tr><td><code>{escape(p.name)}</code></td><td>{escape(str(params[p.name]))}</td>"
                   f"<td>{escape(str(p.default))}</td><td>{escape(p.doc)}</td></tr>" for p in spec.params)
    return ["<h2>Parameters</h2>", f"<table><tr><th>name</th><th>value</th><th>default</th><th>meaning</th></tr>"
            f"{rows}</table>"]


def _anchor(name: str) -> str:
    return "cx-" + "".join(ch if ch.isalnum() else "-" for ch in name)


def _verdicts(result: CheckResult) -> list[str]:
    rows = []
    for prop in result.properties:
        link = ""
        if prop.counterexample is not None and prop.status == "violated":
            link = f'<a href="#{_anchor(prop.name)}">counterexample, {len(prop.counterexample.steps)} steps</a>'
        elif prop.counterexample is not None:
            link = f'<span class="muted">witness: {len(prop.counterexample.steps)} steps</span>'
        rows.append(f"<tr><td><code>{escape(prop.name)}</code></td><td>{escape(prop.kind)}</td>"
                    f'<td><span class="badge {STATUS_CLASS[prop.status]}">{escape(prop.status)}</span></td>'
                    f"<td>{escape(prop.doc)}{'<br><i>' + escape(prop.note) + '</i>' if prop.note else ''}</td>"
                    f"<td>{link}</td></tr>")
    return ["<h2>Properties</h2>",
            "<table><tr><th>property</th><th>kind</th><th>status</th><th>meaning</th><th></th></tr>"
            + "".join(rows) + "</table>"]


def _coverage(result: CheckResult) -> list[str]:
    """Transitions per action kind, so a reader sees what the check exercised and what it never reached."""
    coverage = result.coverage
    never = '<span class="badge bad">never fired</span>'
    off = dict(coverage.not_enabled)

    def note(kind: str, count: int) -> str:
        if kind in off:
            return f'<span class="muted">not enabled by these parameters (enabled by {escape(off[kind])})</span>'
        return "" if count else never

    rows = "".join(f"<tr><td><code>{escape(kind)}</code></td><td>{count:,}</td><td>{note(kind, count)}</td></tr>"
                   for kind, count in coverage.fired)
    out = ["<h2>Coverage</h2>",
           '<p class="muted">Transitions explored per action kind (with --keep-going, so the whole graph).</p>',
           f"<table><tr><th>action kind</th><th>transitions</th><th></th></tr>{rows}</table>"]
    if not coverage.declared:
        out.append('<p class="muted">The model declares no action_kinds, so no kind can be seen unfired.</p>')
    if coverage.wrongly_not_enabled:
        out.append(f'<p class="violation">Fired although the model declares it not enabled by these parameters: '
                   f"{escape(', '.join(coverage.wrongly_not_enabled))}.</p>")
    if coverage.undeclared:
        out.append(f'<p class="violation">Fired but not declared in action_kinds: '
                   f"{escape(', '.join(coverage.undeclared))}.</p>")
    return out


def _counterexamples(name: str, model: Model, params: dict[str, Any], bug: str | None, result: CheckResult,
                     seed: int) -> list[str]:
    out: list[str] = []
    drawn: dict[tuple, str] = {}
    for prop in result.properties:
        path = prop.counterexample
        if path is None or prop.status != "violated":
            continue
        out.append(f'<h2 id="{_anchor(prop.name)}">Counterexample: <code>{escape(prop.name)}</code></h2>')
        if path.violation is not None:
            out.append(f'<p class="violation">{escape(path.violation.message)}</p>')
        if prop.cause is not None:
            out.append(f'<p class="cause">Cause: {escape(prop.cause["summary"])}</p>')
        key = (path.init_index, path.actions, path.loop_start)
        if key in drawn:
            out.append(f'<p>The same run as the counterexample of <a href="#{_anchor(drawn[key])}">'
                       f"<code>{escape(drawn[key])}</code></a>.</p>")
            continue
        drawn[key] = prop.name
        trace, provenance = timed_trace(path, model, params, bug, seed=seed)
        if path.loop_start is not None:
            out.append(f"<p>Steps from {path.loop_start} on repeat forever: a fair run that never meets the "
                       "obligation.</p>")
        figure = draw_trace(trace, f"{name}: {prop.name}", provenance, path.loop_start, model,
                            state_panel=False)  # the step table below shows the state's changes
        out.append(f'<p class="muted">Timing diagram ({escape(provenance)}; the explorer finds orderings, the '
                   "times only spread them out for reading).</p>")
        out.append(f'<div class="figure">{inline_svg(figure, f"{name}-{bug}-{prop.name}")}</div>')
        out.append(_step_table(trace, prop))
    return out


def _step_table(trace: Trace, prop: PropertyResult) -> str:
    """One row per step: its events, its facts and violations, and what it changed in the state (the
    first row holds the initial state)."""
    rows = []
    if trace.view is not None:
        rows.append(f"<tr><td></td><td></td><td colspan='4' class='muted'>initial state</td>"
                    f"<td>{_changes_cell(trace.view)}</td></tr>")
    cause = prop.cause or {}
    cause_at, detected = cause.get("cause_step"), cause.get("detect_step")
    for step in trace.steps:
        events = "".join(_event_item(e) for e in step.events)
        facts = "".join(f"<li><code>{escape(_fact_text(f))}</code></li>" for f in step.facts)
        broken = "".join(f"<li class='violation'>✗ {escape(v['property'])}: {escape(v['message'])}</li>"
                         for v in step.violations)
        action = step.action
        args = ", ".join(json.dumps(a) for a in action["args"])
        css = ' class="broken"' if step.violations else ""
        if step.i == cause_at and cause_at != detected:
            css = ' class="cause"'
            broken += f"<li class='cause'>◆ cause: {escape(cause['summary'])}</li>"
        rows.append(f"<tr{css}><td>{step.i}</td><td>{'' if step.t is None else f'{step.t:.3f}'}</td>"
                    f"<td><code>{escape(action['actor'])}</code></td><td><code>{escape(action['kind'])}({escape(args)})"
                    f'</code></td><td><ul class="plain">{events}</ul></td><td><ul class="plain">{facts}{broken}</ul>'
                    f"</td><td>{_changes_cell(step.changes)}</td></tr>")
    end = ""
    if trace.violations:
        end = "".join(f"<tr class='broken'><td></td><td></td><td colspan='5' class='violation'>at the end: ✗ "
                      f"{escape(v['property'])}: {escape(v['message'])}</td></tr>" for v in trace.violations)
    return ('<table class="steps"><tr><th>step</th><th>t</th><th>actor</th><th>action</th><th>events</th>'
            f"<th>facts</th><th>state changes</th></tr>{''.join(rows)}{end}</table>")


def _changes_cell(changes: Mapping[str, Any] | None) -> str:
    """The entries of the state's view a step changed, one per line."""
    if not changes:
        return ""
    items = "".join(f"<li><code>{escape(key)}={escape(json.dumps(value, separators=(',', ':')))}</code></li>"
                    for key, value in changes.items())
    return f'<ul class="plain">{items}</ul>'


def _event_item(event: Mapping[str, Any]) -> str:
    """One event: who to whom, its name and its scalar fields; the whole payload folds out on a click
    (a `<details>` element, so no script is needed)."""
    head = (f"<code>{escape(event['source'])} → {escape(event['target'])}</code> <b>{escape(event['name'])}</b> "
            f"<span class='mono muted'>{escape(event_detail(event['data'], 90))}</span>")
    payload = escape(json.dumps(event["data"], indent=1))
    return f"<li><details><summary>{head}</summary><pre class='mono'>{payload}</pre></details></li>"


def _fact_text(fact: Mapping[str, Any]) -> str:
    fields = ", ".join(f"{k}={v!r}" for k, v in fact.items() if k != "fact")
    return f"{fact['fact']}({fields})"


def _state_space(name: str, model: Model, bug: str | None, result: CheckResult) -> list[str]:
    first = next((p for p in result.properties if p.status == "violated" and p.counterexample is not None), None)
    heading = "<h2>State space</h2>"
    try:
        graph = explore_graph(model, GRAPH_LIMIT)
    except GraphTooLarge:
        summary = state_summary(model)
        figure = summary_figure(summary, f"{name}: states per depth and transitions by kind")
        note = f"More than {GRAPH_LIMIT} states: a summary instead of the graph."
        return [heading, f'<p class="muted">{note}</p>',
                f'<div class="figure">{inline_svg(figure, f"{name}-{bug}-summary")}</div>']
    path = path_nodes(first.counterexample) if first is not None else []
    what = f"the counterexample of <code>{escape(first.name)}</code> in red" if first else "no counterexample"
    figure = graph_figure(graph, path, f"{name}: explored graph" + (f", {first.name} path" if first else ""))
    return [heading, f'<p class="muted">Every reachable state, depth left to right; {what}.</p>',
            f'<div class="figure">{inline_svg(figure, f"{name}-{bug}-graph")}</div>']
