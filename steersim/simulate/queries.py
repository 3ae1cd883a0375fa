"""What `steersim estimate` asks of each simulated run.

A query is one of:

    violation                    some property is violated in the run (the default)
    violation:PROPERTY           that property is violated in the run
    reached:PROPERTY             the run reaches that `sometimes` property's state
    fact:NAME                    the run emits fact NAME (e.g. fact:steer.rejected)
    fact:NAME within T           ... at virtual time T or earlier
    measure:steer-latency        virtual time from each steer.accepted to its steer.applied
    measure:steers-per-turn      steer.applied facts per turn started
    measure:turns-per-run        turn.started facts per run

The first three are events: each run shows it or not, and the estimate is a proportion. Measures give
samples (several per run, or none), summed up by their mean, quantiles and histogram. A query says which
facts it reads (`watch`), so the simulator keeps just those, with their times, on its fast path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from steersim.core.facts import FACT_NAMES
from steersim.core.product import PropertyInfo
from steersim.errors import UsageError
from steersim.simulate.sweep import RunVerdict

SYNTAX = ("violation, violation:PROPERTY, reached:PROPERTY, fact:NAME, fact:NAME within T, measure:steer-latency, "
          "measure:steers-per-turn or measure:turns-per-run")
_FACT = re.compile(r"fact:(?P<name>\S+)(?:\s+within\s+(?P<deadline>\S+))?")


@dataclass(frozen=True)
class Query:
    """A parsed query: `text` as the user wrote it (normalised), `watch` the facts it reads."""

    text: str
    watch: tuple[str, ...] = ()

    def check(self, properties: Sequence[PropertyInfo]) -> None:
        """Refuse a query that names something the model does not have (a property)."""


@dataclass(frozen=True)
class Event(Query):
    """A query each run answers yes or no."""

    def occurs(self, verdict: RunVerdict) -> bool:
        raise NotImplementedError


@dataclass(frozen=True)
class Violated(Event):
    """Some property (or the one named) is violated in the run."""

    prop: str | None = None

    def occurs(self, verdict: RunVerdict) -> bool:
        if self.prop is None:
            return bool(verdict.violations)
        return any(p == self.prop for p, _ in verdict.violations)

    def check(self, properties: Sequence[PropertyInfo]) -> None:
        names = [p.name for p in properties]
        if self.prop is not None and self.prop not in names:
            raise UsageError(f"query {self.text!r}: the model has no property {self.prop!r}; "
                             f"its properties are: {', '.join(names)}")


@dataclass(frozen=True)
class Reached(Event):
    """The run reaches a state where the named `sometimes` property holds."""

    prop: str = ""

    def occurs(self, verdict: RunVerdict) -> bool:
        return self.prop in verdict.reached

    def check(self, properties: Sequence[PropertyInfo]) -> None:
        names = [p.name for p in properties if p.kind == "sometimes"]
        if self.prop not in names:
            raise UsageError(f"query {self.text!r}: the model has no sometimes-property {self.prop!r}; "
                             f"its sometimes-properties are: {', '.join(names) or 'none'}")


@dataclass(frozen=True)
class Occurs(Event):
    """The run emits the fact, at virtual time `deadline` or earlier when one is given."""

    name: str = ""
    deadline: float = math.inf

    def occurs(self, verdict: RunVerdict) -> bool:
        return any(fact.name == self.name and t <= self.deadline for t, fact in verdict.observed)


@dataclass(frozen=True)
class Measure(Query):
    """A query whose runs give numbers: `samples` gives them for one run, and how many of the run's
    starts found no end (a steer accepted and never applied), which the samples leave out."""

    unit: str = ""

    def samples(self, verdict: RunVerdict) -> tuple[list[float], int]:
        raise NotImplementedError


@dataclass(frozen=True)
class SteerLatency(Measure):
    def samples(self, verdict: RunVerdict) -> tuple[list[float], int]:
        accepted: dict[object, float] = {}
        out: list[float] = []
        for t, fact in verdict.observed:
            if fact.name == "steer.accepted":
                accepted.setdefault(fact.get("id"), t)
            elif fact.name == "steer.applied" and fact.get("id") in accepted:
                out.append(t - accepted.pop(fact.get("id")))
        return out, len(accepted)


@dataclass(frozen=True)
class SteersPerTurn(Measure):
    """Each turn started, with the steers applied to it: a steer counts for the latest turn started
    with its turn id, as a model may reuse a turn's id for the next turn."""

    def samples(self, verdict: RunVerdict) -> tuple[list[float], int]:
        counts: list[float] = []
        latest: dict[object, int] = {}
        for _, fact in verdict.observed:
            if fact.name == "turn.started":
                latest[fact.get("turn")] = len(counts)
                counts.append(0.0)
            elif fact.name == "steer.applied" and fact.get("turn") in latest:
                counts[latest[fact.get("turn")]] += 1
        return counts, 0


@dataclass(frozen=True)
class TurnsPerRun(Measure):
    def samples(self, verdict: RunVerdict) -> tuple[list[float], int]:
        return [float(sum(1 for _, fact in verdict.observed if fact.name == "turn.started"))], 0


MEASURES: dict[str, Measure] = {
    "steer-latency": SteerLatency("measure:steer-latency", ("steer.accepted", "steer.applied"), "s"),
    "steers-per-turn": SteersPerTurn("measure:steers-per-turn", ("steer.applied", "turn.started"), "steers"),
    "turns-per-run": TurnsPerRun("measure:turns-per-run", ("turn.started",), "turns"),
}


def parse_query(text: str) -> Query:
    """The query `text` names, or a UsageError in one line that gives the syntax."""
    text = " ".join(text.split())
    if text == "violation":
        return Violated(text)
    if text.startswith("violation:") and len(text) > len("violation:") and " " not in text:
        return Violated(text, prop=text.removeprefix("violation:"))
    if text.startswith("reached:") and len(text) > len("reached:") and " " not in text:
        return Reached(text, prop=text.removeprefix("reached:"))
    if text.startswith("measure:"):
        measure = MEASURES.get(text.removeprefix("measure:"))
        if measure is None:
            raise UsageError(f"unknown measure {text!r}; use one of: {', '.join('measure:' + m for m in MEASURES)}")
        return measure
    match = _FACT.fullmatch(text)
    if match:
        name = match["name"]
        if name not in FACT_NAMES:
            raise UsageError(f"query {text!r}: unknown fact {name!r}; known facts: {', '.join(FACT_NAMES)}")
        deadline = math.inf
        if match["deadline"] is not None:
            deadline = _deadline(text, match["deadline"])
        return Occurs(text, (name,), name=name, deadline=deadline)
    raise UsageError(f"cannot read query {text!r}; a query is one of: {SYNTAX}")


def _deadline(text: str, value: str) -> float:
    try:
        deadline = float(value)
    except ValueError:
        deadline = math.nan
    if not math.isfinite(deadline) or deadline < 0:
        raise UsageError(f"query {text!r}: `within` takes a virtual time in seconds >= 0, not {value!r}")
    return deadline


_ASSERTION = re.compile(r"P\((?P<query>[^()]*)\)\s*(?P<op><=|>=|<|>)\s*(?P<bound>\S+)")


def parse_assertion(text: str) -> tuple[Event, str, float]:
    """`P(QUERY) OP BOUND`, as in `P(violation) < 0.001`: the event, the comparison and the bound."""
    match = _ASSERTION.fullmatch(text.strip())
    if match is None:
        raise UsageError(f"cannot read assertion {text!r}; write P(QUERY) OP BOUND, e.g. \"P(violation) < 0.001\", "
                         "with OP one of <, <=, >, >=")
    query = parse_query(match["query"])
    if not isinstance(query, Event):
        raise UsageError(f"assertion {text!r}: a probability bound needs an event (violation or fact), "
                         f"not the measure {query.text!r}")
    try:
        bound = float(match["bound"])
    except ValueError:
        raise UsageError(f"assertion {text!r}: the bound {match['bound']!r} is not a number") from None
    return query, match["op"], bound
