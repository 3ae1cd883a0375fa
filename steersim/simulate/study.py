"""Estimates of one model configuration, or of a grid of them, run on the sweep executors.

A `Setting` is what a run needs besides its seed: the model's reference, its parameters, the bug variant
and the timing profile. `estimate_setting` builds the sweep recipe of a setting (with the facts the
query reads to be kept) and runs `steersim.simulate.estimate` on the executor `--workers`/`--dask` choose. A grid axis
varies one model parameter (`Q=1,2,3,4`) or one field of timing entries
(`timing:tool.*.median=0.5,1,2`: the entries before the last dot, a pattern over the profile's entry
names, or a kind of its own), and every point runs the same seeds: common random numbers.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from itertools import pairwise
from typing import Any

from steersim.core.product import Product
from steersim.core.registry import get_model_spec
from steersim.errors import UsageError
from steersim.simulate.estimate import Decision, Estimate, Plan, decide, estimate
from steersim.simulate.executors import SweepRecipe, built_model, make_executor
from steersim.simulate.intervals import Sprt, level_text
from steersim.simulate.queries import Event, Measure, Query
from steersim.simulate.timing import TimingProfile


@dataclass(frozen=True)
class Setting:
    """A model configuration: reference, resolved parameters, bug variant, timing profile (a mapping, as
    in a TOML profile)."""

    model: str
    params: Mapping[str, Any]
    bug: str | None
    timing: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "params": dict(self.params), "bug": self.bug, "timing": dict(self.timing)}


def setting(model: str, params: Mapping[str, Any] | None = None, bug: str | None = None,
            timing_file: str | None = None) -> Setting:
    """The setting of a model reference with `params` (resolved with the defaults) and its own timing
    profile, or the one in `timing_file`."""
    resolved = get_model_spec(model).resolve(params or {}, bug)
    profile = TimingProfile.for_model(built_model(model, tuple(resolved.items()), bug), timing_file)
    return Setting(model, resolved, bug, profile.to_mapping())


def estimate_setting(where: Setting, query: Query, plan: Plan, sprt: Sprt | None = None, workers: int = 1,
                     dask: str | None = None, max_steps: int = 10_000,
                     max_time: float | None = None) -> Estimate | Decision:
    """The query's estimate in one setting (or, with `sprt`, the test's decision), on the chosen executor."""
    recipe = SweepRecipe.create(where.model, where.params, where.bug, TimingProfile.from_mapping(where.timing),
                                max_steps, max_time, watch=query.watch)
    query.check(Product(recipe.build_model()).property_infos())
    executor = make_executor(recipe, workers, dask)
    try:
        if sprt is not None:
            if not isinstance(query, Event):
                raise UsageError(f"an assertion needs an event query, not the measure {query.text!r}")
            return decide(executor, query, sprt, plan)
        return estimate(executor, query, plan)
    finally:
        executor.close()


@dataclass(frozen=True)
class Axis:
    """One grid axis: a model parameter, or `timing:ENTRY.FIELD`, and its values."""

    name: str
    values: tuple[Any, ...]

    @property
    def timing_field(self) -> tuple[str, str] | None:
        """(entry, field) of a timing axis, None for a parameter axis."""
        if not self.name.startswith("timing:"):
            return None
        entry, _, fieldname = self.name.removeprefix("timing:").rpartition(".")
        return entry, fieldname

    def at(self, base: Setting, value: Any) -> Setting:
        """`base` with this axis set to `value`."""
        timing = self.timing_field
        if timing is None:
            spec = get_model_spec(base.model)
            return replace(base, params=spec.resolve({**base.params, self.name: value}, base.bug))
        entry, fieldname = timing
        return replace(base, timing=_set_timing_field(base.timing, entry, fieldname, value))


def _set_timing_field(timing: Mapping[str, Any], entry: str, fieldname: str, value: float) -> dict[str, Any]:
    """`timing` with `fieldname` set to `value` in every entry whose name `entry` matches as a pattern
    (`tool.*` sets each tool entry, `default` the default). When none does, a new entry `entry` comes
    first, a copy of the delay the profile gives a kind of that name, so that it wins over the patterns
    after it. Refuses, in one line, a field the entry's distribution does not take or a value it cannot."""
    profile = TimingProfile.from_mapping(timing)
    names = [name for name in timing if fnmatchcase(name, entry)]
    if names:
        changed = dict(timing)
    else:
        names = [entry]
        changed = {entry: profile.delay_for(entry).to_mapping(), **timing}
    for name in names:
        if fieldname == "dist" or fieldname not in changed[name]:
            fields = [f for f in changed[name] if f != "dist"]
            raise UsageError(f"timing entry {name!r} ({changed[name]['dist']}) has no field {fieldname!r}; "
                             f"its fields are: {', '.join(fields) or 'none'}")
        changed[name] = {**changed[name], fieldname: value}
    TimingProfile.from_mapping(changed)
    return changed


def parse_axis(text: str, base: Setting) -> Axis:
    """`NAME=V1,V2,...` for a model parameter, `timing:ENTRY.FIELD=V1,V2,...` for a timing field."""
    name, sep, listed = text.partition("=")
    name = name.strip()
    values = [v.strip() for v in listed.split(",")] if sep else []
    if not name or not values or not all(values):
        raise UsageError(f"--grid {text!r}: write NAME=V1,V2,... (a model parameter) or "
                         "timing:ENTRY.FIELD=V1,V2,... (e.g. --grid 'timing:tool.*.median=0.5,1,2')")
    if name.startswith("timing:"):
        entry, _, fieldname = name.removeprefix("timing:").rpartition(".")
        if not entry or not fieldname:
            raise UsageError(f"--grid {text!r}: a timing axis is timing:ENTRY.FIELD, e.g. timing:tool.*.median")
        try:
            parsed: list[Any] = [float(v) for v in values]
        except ValueError:
            raise UsageError(f"--grid {text!r}: timing values are numbers") from None
    else:
        spec = get_model_spec(base.model)
        parsed = [spec.parse_assignments([f"{name}={v}"])[name] for v in values]
    axis = Axis(name, tuple(parsed))
    for value in axis.values:
        try:
            axis.at(base, value)
        except UsageError as bad:
            raise UsageError(f"--grid {text!r}: {bad}") from None
    return axis


@dataclass(frozen=True)
class GridResult:
    """A query estimated at every point of an axis, with the same seeds at each."""

    axis: Axis
    points: tuple[Estimate, ...]

    def lines(self) -> list[str]:
        width = max(len(self.axis.name), *(len(f"{v}") for v in self.axis.values))
        header = f"{self.axis.name:>{width}}  {'estimate':>10}  {'low':>10}  {'high':>10}  {'runs':>9}"
        rows = [header]
        for value, point in zip(self.axis.values, self.points, strict=True):
            rows.append(f"{value!s:>{width}}  {_number(point.estimate):>10}  {_number(point.low):>10}  "
                        f"{_number(point.high):>10}  {point.runs:>9,}" + ("" if point.complete else "  (budget)"))
        return rows

    def to_json(self) -> dict[str, Any]:
        return {"grid": {"axis": self.axis.name, "values": list(self.axis.values)},
                "points": [{"value": v, **p.to_json()} for v, p in zip(self.axis.values, self.points, strict=True)]}

    def plot(self, ax: Any) -> Any:
        """Draw the estimates against the axis on matplotlib axes `ax`, the intervals as a band."""
        values = list(self.axis.values)
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        xs = values if numeric else list(range(len(values)))
        mid = [p.estimate for p in self.points]
        low = [p.low for p in self.points]
        high = [p.high for p in self.points]
        first = self.points[0]
        name = f"{first.query.text} ({first.query.unit})" if isinstance(first.query, Measure) else \
            f"P({first.query.text})"
        line = ax.plot(xs, mid, marker="o", label=f"{name}, {level_text(first.confidence)} band")[0]
        ax.fill_between(xs, low, high, alpha=0.25, color=line.get_color(), linewidth=0)
        if not numeric:
            ax.set_xticks(xs, [str(v) for v in values])
        elif all(isinstance(v, int) for v in values):
            ax.set_xticks(xs)
        if numeric and is_geometric(values):
            ax.set_xscale("log")  # points a constant ratio apart sit evenly spaced, not crowded at the left
            ax.set_xticks(xs, [str(v) for v in values])
            ax.minorticks_off()
        ax.set_xlabel(self.axis.name)
        ax.set_ylabel(name)
        ax.legend()
        return ax

    def title(self, base: Setting) -> str:
        """What the plot shows, for a slide that stands alone: the model, its parameters (the swept one
        aside), the bug variant, the query and the runs at each point."""
        params = ", ".join(f"{k}={v}" for k, v in base.params.items() if k != self.axis.name)
        runs = sorted({p.runs for p in self.points})
        run_text = f"{runs[0]:,}" if len(runs) == 1 else f"{runs[0]:,}-{runs[-1]:,}"
        head = f"{base.model}{' --bug ' + base.bug if base.bug else ''}: {self.points[0].query.text}, " \
               f"{run_text} runs per point"
        return "\n".join([head, *textwrap.wrap(params, 90)])


def is_geometric(values: Sequence[float]) -> bool:
    """Three or more positive values with one ratio between neighbours (0.05, 0.2, 0.8, 3.2): a sweep over
    orders of magnitude, drawn on a log axis. Two values say nothing about the spacing."""
    if len(values) < 3 or any(v <= 0 for v in values):
        return False
    ratios = [b / a for a, b in pairwise(values)]
    return ratios[0] != 1 and all(math.isclose(r, ratios[0], rel_tol=1e-6) for r in ratios)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def estimate_grid(base: Setting, axis: Axis, query: Query, plan: Plan, workers: int = 1, dask: str | None = None,
                  max_steps: int = 10_000, max_time: float | None = None) -> GridResult:
    """The query at every value of `axis`, each from the same seeds (`plan.first_seed` on)."""
    points: Sequence[Any] = [estimate_setting(axis.at(base, value), query, plan, None, workers, dask, max_steps,
                                              max_time) for value in axis.values]
    return GridResult(axis, tuple(points))
