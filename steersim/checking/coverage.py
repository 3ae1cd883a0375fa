"""Action coverage of a check: per action kind, how many of the explored transitions it made.

A check that passes says nothing about behaviour it never reached. The model names its action kinds
(`action_kinds`, declared on `steersim.ModelBase`; empty means "the kinds the run meets"), so that a kind
that never fires at these parameters is named, as TLC's `-coverage` and Spin's "unreached" report do,
and `check --require-coverage` can fail on it. Counts are of transitions taken (a step that turned out
to be a no-op is not one), over the part of the graph the run explored, so both engines, which
explore the same transitions, give the same counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Coverage:
    """`fired` lists every declared kind, in declaration order, then any undeclared kind that fired, by
    name; `declared` are the kinds the model names (none: nothing can be seen unfired)."""

    fired: tuple[tuple[str, int], ...]
    declared: tuple[str, ...]

    @property
    def unfired(self) -> tuple[str, ...]:
        return tuple(kind for kind, count in self.fired if count == 0)

    @property
    def undeclared(self) -> tuple[str, ...]:
        """Kinds that fired but that the model does not declare (only when it declares any)."""
        if not self.declared:
            return ()
        return tuple(kind for kind, _ in self.fired if kind not in self.declared)

    def to_json(self) -> dict[str, Any]:
        return {"actions": dict(self.fired), "unfired": list(self.unfired), "undeclared": list(self.undeclared),
                "declared": bool(self.declared)}

    def lines(self, stopped_early: str = "") -> list[str]:
        """The text form: one line per kind, then what never fired. `stopped_early` says why the search
        did not explore every state (empty: it did): then a kind that never fired may fire in the states
        left unexplored, and the line says so instead of blaming the parameters."""
        width = max((len(f"{count:,}") for _, count in self.fired), default=1)
        out = [f"coverage: {count:>{width},}  {kind}" for kind, count in self.fired]
        if self.unfired:
            out.append(f"coverage: never fired before the search stopped early ({stopped_early}): "
                       f"{', '.join(self.unfired)}" if stopped_early else
                       f"coverage: never fired at these parameters: {', '.join(self.unfired)}")
        if self.undeclared:
            out.append(f"coverage: fired but not in the model's action_kinds: {', '.join(self.undeclared)}")
        elif not self.declared:
            out.append("coverage: the model declares no action_kinds, so no kind can be seen unfired")
        return out


def declared_kinds(model: Any) -> tuple[str, ...]:
    """The action kinds a model declares (`action_kinds`), or () when it declares none."""
    return tuple(getattr(model, "action_kinds", None) or ())


def coverage_of(declared: Sequence[str], counts: Mapping[str, int]) -> Coverage:
    """The coverage of a run that made `counts` transitions per kind."""
    extra = sorted(kind for kind in counts if kind not in declared)
    fired = tuple((kind, int(counts.get(kind, 0))) for kind in (*declared, *extra))
    return Coverage(fired, tuple(declared))
