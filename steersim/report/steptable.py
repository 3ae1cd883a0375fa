"""A check's failures as text: each failing property with its counterexample's step table and its
cause. The pytest plugin's failure message and `steersim ci --junit` print the same table."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from steersim.checking.explorer import CheckResult
    from steersim.core.model import Model
    from steersim.core.paths import Path

FAILING = ("violated", "unreached")


def failure_text(title: str, result: CheckResult, model: Model | None = None) -> str:
    """Every failing property with its counterexample's step table (with the state's changes when the
    model is given) and the cause of the violation in one sentence."""
    lines = [f"{title}: {result.status} after {result.states:,} states"]
    for prop in result.properties:
        if prop.status not in FAILING:
            continue
        status = "never reached" if prop.status == "unreached" else prop.status
        lines.append(f"{status}: {prop.kind} {prop.name}" + (f" ({prop.doc})" if prop.doc else ""))
        if prop.counterexample is not None:
            lines.extend(step_table(prop.counterexample, model))
        if prop.cause is not None:
            lines.append(f"    cause: {prop.cause['summary']}")
    return "\n".join(lines)


def step_table(path: Path, model: Model | None = None) -> list[str]:
    """A counterexample as a table: step (numbered as in traces and diagrams), actor, action, the facts
    it produced, and what it changed in the state (`steersim.core.stateview`) when the model is given."""
    from steersim.core.stateview import changes_text, path_views, view_changes

    views = path_views(model, path) if model is not None else None
    rows = [("#", "actor", "action", "facts", "state changes" if views else "")]
    for i, step in enumerate(path.steps):
        action = step.action
        args = ", ".join(repr(a) for a in action.args)
        loop = " <- loop" if path.loop_start is not None and i == path.loop_start else ""
        facts = "; ".join(str(f) for f in step.facts)
        changed = changes_text(view_changes(views[i], views[i + 1])) if views else ""
        rows.append((str(i), action.actor, f"{action.kind}({args}){loop}", facts, changed))
    widths = [max(len(row[c]) for row in rows) for c in range(4)]
    table = [f"  shortest counterexample, {len(path.steps)} steps:"]
    if views:
        table.append(f"    initial state: {changes_text(views[0])}")
    table += [("    " + "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + "  " + row[4])
              .rstrip() for row in rows]
    if path.violation is not None:
        table.append(f"    violated: {path.violation.message}")
    return table
