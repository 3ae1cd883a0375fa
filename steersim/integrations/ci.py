"""The check matrix: what a project expects of its models, kept in `pyproject.toml` and run by `steersim ci`.

Each `[[tool.steersim.check]]` entry names a model, a parameter grid (every combination is checked), the
verdict the correct model must get, and the bug variants the check must catch, each with the property
that must catch it:

    [[tool.steersim.check]]
    model = "teaching"
    grid = { K = [1, 3], P = [1, 3] }      # lists are grid axes; a single value is fixed
    expect = "ok"                          # check the correct model: ok | violation | incomplete
    bugs = "all"                           # check bug variants: "all" or ["name", ...] (caught by the
                                           # properties the spec's bug_catchers name),
                                           # or { name = "property", ... }
    max_states = 50000                     # optional limits: max_states, max_depth, timeout

A point the correct model is expected to fail, because the real system behaves so, says which
properties fail and why: `expect = "violation"` with `violated = ["property", ...]` (the case passes
only when exactly these are violated or unreached) and `reason = "..."` (the documented behaviour and
the build it comes from), so the point keeps judging every other property.

Every case runs `steersim.checking.engines.check` with `keep_going`, so the catching property is judged even when
another one is violated first. A case passes when the correct model's status is `expect`, or when the
bug variant's catching property is `violated`. A malformed table is refused before anything runs, with
one line naming the bad key, so that a typo never passes as an empty matrix.
"""

from __future__ import annotations

import itertools
import math
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions, CheckResult
from steersim.core.registry import ModelSpec, get_model_spec
from steersim.errors import UsageError, read_toml
from steersim.interrupts import INTERRUPTED
from steersim.report.formats import junit_xml
from steersim.report.steptable import failure_text

STATUSES = ("ok", "violation", "incomplete")
ENTRY_KEYS = ("model", "grid", "expect", "violated", "reason", "bugs", "max_states", "max_depth", "timeout")
LIMIT_KEYS = {"max_states": int, "max_depth": int, "timeout": (int, float)}


@dataclass(frozen=True)
class Case:
    """One check to run: a model at one grid point, correct (`bug` None, judged by `expect`) or a bug
    variant (judged by whether `catcher` is violated)."""

    model: str
    params: dict[str, Any]
    point: dict[str, Any]
    bug: str | None
    expect: str | None
    catcher: str | None
    limits: dict[str, Any]
    violated: tuple[str, ...] = ()  # with expect "violation": exactly the properties that fail

    @property
    def name(self) -> str:
        """The model and the grid point, as the entry set it (defaults go unsaid), and the bug."""
        point = " ".join(f"{k}={v}" for k, v in self.point.items())
        return self.model + (f"[{point}]" if point else "") + (f" bug={self.bug}" if self.bug else "")

    def expectation(self) -> str:
        if self.bug:
            return f"{self.catcher} violated"
        return f"{self.expect} ({', '.join(self.violated)})" if self.violated else str(self.expect)

    def command(self) -> str:
        """The `steersim check` command line that reproduces this case."""
        parts = ["steersim", "check", shlex.quote(self.model)]
        parts += [f"-p {shlex.quote(f'{k}={_toml_value(v)}')}" for k, v in self.point.items()]
        if self.bug:
            parts.append(f"--bug {shlex.quote(self.bug)}")
        parts.append("--keep-going")
        parts += [f"--{key.replace('_', '-')} {value}" for key, value in self.limits.items()]
        return " ".join(parts)


def _toml_value(value: Any) -> str:
    """A parameter value as `-p` reads it (booleans lower case, as in TOML)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class Outcome:
    case: Case
    passed: bool
    got: str
    seconds: float
    details: str = ""  # the failing properties with their counterexamples' step tables (steersim.report.steptable)

    def line(self) -> str:
        if self.got == INTERRUPTED:
            return f"STOP  {self.case.name}: interrupted (Ctrl-C) ({self.seconds:.2f} s)"
        verdict = "PASS" if self.passed else "FAIL"
        detail = f"{self.got}" if self.passed else f"expected {self.case.expectation()}, got {self.got}"
        return f"{verdict}  {self.case.name}: {detail} ({self.seconds:.2f} s)"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.case.name, "model": self.case.model, "params": self.case.params, "bug": self.case.bug,
                "expected": self.case.expectation(), "got": self.got, "passed": self.passed,
                "seconds": round(self.seconds, 3)}


def load_matrix(path: str | Path) -> list[Case]:
    """The cases of the `[tool.steersim]` table in `path`, validated; UsageError names the bad key."""
    data = read_toml(path, "config", "a check matrix", "; give --config FILE")
    tool = data.get("tool", {})
    if not isinstance(tool, Mapping):
        raise UsageError(f"config {str(path)!r}: tool: expected a table holding [tool.steersim]")
    table = tool.get("steersim")
    if table is None:
        raise UsageError(f"config {str(path)!r} has no [tool.steersim] table; add [[tool.steersim.check]] entries")
    if not isinstance(table, Mapping):
        raise UsageError("tool.steersim: expected a table")
    for key in table:
        if key != "check":
            raise UsageError(f"tool.steersim.{key}: unknown key; [tool.steersim] takes only check = [...]")
    entries = table.get("check")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, Mapping) for e in entries):
        raise UsageError("tool.steersim.check: expected one or more [[tool.steersim.check]] tables")
    cases: list[Case] = []
    for index, entry in enumerate(entries):
        cases.extend(_entry_cases(f"tool.steersim.check[{index}]", entry))
    return cases


def _entry_cases(where: str, entry: Mapping[str, Any]) -> list[Case]:
    for key in entry:
        if key not in ENTRY_KEYS:
            raise UsageError(f"{where}.{key}: unknown key; known keys: {', '.join(ENTRY_KEYS)}")
    name = entry.get("model")
    if not isinstance(name, str):
        raise UsageError(f"{where}.model: expected a model name (see `steersim models`) or path/to/file.py:SPEC")
    try:
        spec = get_model_spec(name)
    except UsageError as bad:
        raise UsageError(f"{where}.model: {bad}") from None
    if "expect" not in entry and "bugs" not in entry:
        raise UsageError(f"{where}: needs expect = \"ok\" (check the correct model), bugs = [...], or both")
    expect = entry.get("expect")
    if expect is not None and expect not in STATUSES:
        raise UsageError(f"{where}.expect: expected one of {', '.join(STATUSES)}, not {expect!r}")
    violated = _violated(where, entry)
    limits = {}
    for key, kind in LIMIT_KEYS.items():
        if key in entry:
            value = entry[key]
            if isinstance(value, bool) or not isinstance(value, kind) or not value > 0 or value == math.inf:
                raise UsageError(f"{where}.{key}: expected a positive number, not {value!r}")
            limits[key] = value
    bugs = _bugs(f"{where}.bugs", spec, entry.get("bugs", {}))
    cases = []
    for point in _grid(f"{where}.grid", spec, entry.get("grid", {})):
        if expect is not None:
            cases.append(Case(name, spec.resolve(point), point, None, expect, None, limits, violated))
        cases.extend(Case(name, spec.resolve(point, bug), point, bug, None, catcher, limits)
                     for bug, catcher in bugs.items())
    return cases


def _violated(where: str, entry: Mapping[str, Any]) -> tuple[str, ...]:
    """The properties an expected violation names, with the reason it is the real system's behaviour."""
    if "violated" not in entry and "reason" not in entry:
        return ()
    if entry.get("expect") != "violation":
        raise UsageError(f"{where}: violated and reason go with expect = \"violation\"")
    names = entry.get("violated")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise UsageError(f"{where}.violated: expected a list of the property names that fail")
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError(f"{where}.reason: say why the real system fails these (its documented behaviour, "
                         "the build)")
    return tuple(names)


def _grid(where: str, spec: ModelSpec, grid: Any) -> list[dict[str, Any]]:
    """Every combination of the grid's axes, each checked against the spec's parameters. A bug variant
    is checked with the parameters it needs to show (the spec's `bug_params`) beneath the point."""
    if not isinstance(grid, Mapping):
        raise UsageError(f"{where}: expected a table of parameter = value or [values]")
    axes = []
    for key, values in grid.items():
        values = values if isinstance(values, list) else [values]
        if not values:
            raise UsageError(f"{where}.{key}: expected at least one value")
        axes.append([(key, v) for v in values])
    points = []
    for combination in itertools.product(*axes):
        try:
            spec.resolve(dict(combination))
            points.append(dict(combination))
        except UsageError as bad:
            bad_key = next((k for k, _ in combination if k in str(bad)), "")
            raise UsageError(f"{where}{'.' + bad_key if bad_key else ''}: {bad}") from None
    return points


def _bugs(where: str, spec: ModelSpec, bugs: Any) -> dict[str, str]:
    """Bug variant -> catching property, from "all", a list (the spec's catchers) or a table."""
    if bugs == "all":
        bugs = list(spec.bugs)
    if isinstance(bugs, list):
        named = next((b for b in bugs if not isinstance(b, str)), None)
        if named is not None:
            raise UsageError(f"{where}: expected bug variant names, not {named!r}")
        missing = [b for b in bugs if b in spec.bugs and b not in spec.bug_catchers]
        if missing:
            raise UsageError(f"{where}: model {spec.name!r} names no catching property for {missing[0]!r}; "
                             f"use bugs = {{ {missing[0]} = \"property\" }}")
        bugs = {b: spec.bug_catchers.get(b) for b in bugs}
    if not isinstance(bugs, Mapping):
        raise UsageError(f"{where}: expected \"all\", a list of bug names, or a table of bug = \"property\"")
    for bug, catcher in bugs.items():
        if not isinstance(bug, str) or bug not in spec.bugs:
            raise UsageError(f"{where}.{bug}: model {spec.name!r} has no bug variant {bug!r}; "
                             f"its bug variants are: {', '.join(spec.bugs)}")
        if not isinstance(catcher, str):
            raise UsageError(f"{where}.{bug}: expected the name of the property that catches it")
    return dict(bugs)


def run_case(case: Case) -> Outcome:
    """Check one case. Ctrl-C, in the check or before it, gives an outcome `interrupted`."""
    started = time.monotonic()
    try:
        model = get_model_spec(case.model).build(case.params, case.bug)
        result = check(model, CheckOptions(keep_going=True, **case.limits))
    except KeyboardInterrupt:
        return Outcome(case, False, INTERRUPTED, time.monotonic() - started)
    seconds = time.monotonic() - started
    if result.status == INTERRUPTED:
        return Outcome(case, False, INTERRUPTED, seconds)
    details = failure_text(case.name, result, model)
    if case.bug is None:
        broken = {p.name for p in result.properties if p.status in ("violated", "unreached")}
        passed = result.status == case.expect and (not case.violated or broken == set(case.violated))
        return Outcome(case, passed, _status_text(result), seconds, details)
    statuses = {p.name: p.status for p in result.properties}
    got = statuses.get(case.catcher or "")
    if got is None:
        return Outcome(case, False, f"no property {case.catcher!r} (the model has: {', '.join(statuses)})", seconds,
                       details)
    return Outcome(case, got == "violated", f"{case.catcher} {_said(got)}", seconds, details)


def _said(status: str) -> str:
    """A property's status as a sentence reads it: an unreached `sometimes` was never reached."""
    return "never reached" if status == "unreached" else status


def _status_text(result: CheckResult) -> str:
    broken = [f"{p.name} {_said(p.status)}" for p in result.properties if p.status in ("violated", "unreached")]
    return result.status + (f" ({', '.join(broken)})" if broken else "")


def run_matrix(cases: Sequence[Case], echo: Any = print) -> list[Outcome]:
    """The outcomes of `cases` in order; after an interrupted one (Ctrl-C), no more cases run."""
    outcomes = []
    for case in cases:
        outcome = run_case(case)
        echo(outcome.line())
        outcomes.append(outcome)
        if outcome.got == INTERRUPTED:
            break
    return outcomes


def failures(outcomes: Sequence[Outcome]) -> int:
    """Cases that did not get their expected verdict (a case cut short by Ctrl-C got none)."""
    return sum(1 for o in outcomes if not o.passed and o.got != INTERRUPTED)


def matrix_status(outcomes: Sequence[Outcome]) -> str:
    """pass, fail, or interrupted when Ctrl-C cut the matrix short."""
    if any(o.got == INTERRUPTED for o in outcomes):
        return INTERRUPTED
    return "fail" if failures(outcomes) else "pass"


def matrix_json(config: str | Path, outcomes: Sequence[Outcome]) -> dict[str, Any]:
    failed = failures(outcomes)
    return {"config": str(config), "status": matrix_status(outcomes), "cases": len(outcomes),
            "passed": sum(o.passed for o in outcomes), "failed": failed,
            "seconds": round(sum(o.seconds for o in outcomes), 3), "results": [o.to_json() for o in outcomes]}


def matrix_junit(outcomes: Sequence[Outcome]) -> str:
    """One test case per check, named uniquely (a repeated name gets ` #2`, ` #3`, ... in matrix order),
    each with its time; a failure says what was expected and got, the command that reproduces it, and
    the failing properties with their counterexamples' step tables."""
    names = unique_names([o.case.name for o in outcomes])
    def status(o: Outcome) -> str:
        return "passed" if o.passed else "unknown" if o.got == INTERRUPTED else "failed"

    cases = [(name, f"steersim.ci.{o.case.model}", status(o), "" if o.passed else _failure(o))
             for name, o in zip(names, outcomes, strict=True)]
    return junit_xml("steersim.ci", cases, sum(o.seconds for o in outcomes), times=[o.seconds for o in outcomes],
                     interrupted=matrix_status(outcomes) == INTERRUPTED)


def _failure(outcome: Outcome) -> str:
    lines = [f"expected {outcome.case.expectation()}, got {outcome.got}", f"reproduce: {outcome.case.command()}"]
    return "\n".join(lines + ([outcome.details] if outcome.details else []))


def unique_names(names: Sequence[str]) -> list[str]:
    """`names` with each repeat suffixed ` #k` (its k-th occurrence), so that no two cases share one."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return out
