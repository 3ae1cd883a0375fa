"""Action coverage of a check: per action kind, how many of the explored transitions it made.

A check that passes says nothing about behaviour it never reached. The model names its action kinds
(`action_kinds`, declared on `steersim.ModelBase`; empty means "the kinds the run meets"), so that a kind
that never fires at these parameters is named, as TLC's `-coverage` and Spin's "unreached" report do,
and `check --require-coverage` can fail on it. Counts are of transitions taken (a step that turned out
to be a no-op is not one), over the part of the graph the run explored, so both engines, which
explore the same transitions, give the same counts. A kind the model says these parameters cannot fire
(`kinds_not_enabled`: another mode, a feature left off) is reported as not enabled, with the parameters
that enable it, instead of as unfired; one of those that fires anyway is a wrong declaration and is
reported as such, so the declaration never hides a kind the run can reach.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Coverage:
    """`fired` lists every declared kind, in declaration order, then any undeclared kind that fired, by
    name; `declared` are the kinds the model names (none: nothing can be seen unfired); `not_enabled`
    pairs each declared kind these parameters cannot fire with the parameters that enable it."""

    fired: tuple[tuple[str, int], ...]
    declared: tuple[str, ...]
    not_enabled: tuple[tuple[str, str], ...] = ()

    @property
    def unfired(self) -> tuple[str, ...]:
        """Kinds that never fired although these parameters enable them."""
        off = dict(self.not_enabled)
        return tuple(kind for kind, count in self.fired if count == 0 and kind not in off)

    @property
    def wrongly_not_enabled(self) -> tuple[str, ...]:
        """Kinds declared not enabled by these parameters that fired all the same."""
        counts = dict(self.fired)
        return tuple(kind for kind, _ in self.not_enabled if counts.get(kind, 0) > 0)

    @property
    def complete(self) -> bool:
        """Every kind these parameters enable fired, and the model's declaration of the others held."""
        return not self.unfired and not self.wrongly_not_enabled

    @property
    def undeclared(self) -> tuple[str, ...]:
        """Kinds that fired but that the model does not declare (only when it declares any)."""
        if not self.declared:
            return ()
        return tuple(kind for kind, _ in self.fired if kind not in self.declared)

    def to_json(self) -> dict[str, Any]:
        return {"actions": dict(self.fired), "unfired": list(self.unfired), "undeclared": list(self.undeclared),
                "declared": bool(self.declared), "not_enabled": dict(self.not_enabled),
                "wrongly_not_enabled": list(self.wrongly_not_enabled)}

    def lines(self, stopped_early: str = "") -> list[str]:
        """The text form: one line per kind, then what never fired. `stopped_early` says why the search
        did not explore every state (empty: it did): then a kind that never fired may fire in the states
        left unexplored, and the line says so instead of blaming the parameters."""
        width = max((len(f"{count:,}") for _, count in self.fired), default=1)
        out = [f"coverage: {count:>{width},}  {kind}" for kind, count in self.fired]
        by_setting: dict[str, list[str]] = {}
        for kind, enabled_by in self.not_enabled:
            by_setting.setdefault(enabled_by, []).append(kind)
        out += [f"coverage: not enabled by these parameters: {', '.join(kinds)} (enabled by {enabled_by})"
                for enabled_by, kinds in by_setting.items()]
        if self.wrongly_not_enabled:
            out.append("coverage: fired although the model declares it not enabled by these parameters: "
                       f"{', '.join(self.wrongly_not_enabled)} (its kinds_not_enabled is wrong)")
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


def not_enabled_kinds(model: Any) -> dict[str, str]:
    """The kinds a model says its parameters cannot fire, each with what enables it (`kinds_not_enabled`)."""
    hook = getattr(model, "kinds_not_enabled", None)
    return dict(hook()) if hook is not None else {}


def coverage_of(declared: Sequence[str], counts: Mapping[str, int],
                not_enabled: Mapping[str, str] | None = None) -> Coverage:
    """The coverage of a run that made `counts` transitions per kind; `not_enabled` names the declared
    kinds its parameters cannot fire (a kind it names that the model does not declare is the model's bug)."""
    not_enabled = dict(not_enabled or {})
    unknown = sorted(kind for kind in not_enabled if kind not in declared)
    if unknown:
        raise ValueError(f"kinds_not_enabled names kinds the model does not declare in action_kinds: "
                         f"{', '.join(unknown)}")
    extra = sorted(kind for kind in counts if kind not in declared)
    fired = tuple((kind, int(counts.get(kind, 0))) for kind in (*declared, *extra))
    off = tuple((kind, not_enabled[kind]) for kind in declared if kind in not_enabled)
    return Coverage(fired, tuple(declared), off)
