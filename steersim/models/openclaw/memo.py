"""Steps remembered per the fields they read: most steps of a check read a few small fields (the phase,
a queue, the call statuses) and repeat what another state's step with the same values did.

A step handler is a function of the configuration, the action and the fields it reads (in the order it
reads them: which field it reads next depends only on the values read so far). `StepMemo` runs a
handler once on a `Recorder`, which notes each field read before the handler wrote it and each field
written, and files the outcome (the fields written, the events, their facts) in a tree per action: a
branch per field read, keyed by its value. A state whose values lead to an outcome takes that step
without running the handler; any other runs it and grows the tree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from steersim.core.facts import Fact
from steersim.core.model import Action, Event
from steersim.models.openclaw.config import Config
from steersim.models.openclaw.facts import facts
from steersim.models.openclaw.properties import LIFECYCLE_EVENTS, replay_lifecycle
from steersim.models.openclaw.state import FIELDS, OpenClawState, Step

SEEN = FIELDS.index("seen")
OUTCOME_LIMIT = 100_000  # outcomes remembered; past it the memo starts again
_new = tuple.__new__


class Recorder(Step):
    """A Step that records, in order, each field read before it was written (with its value), and each
    field written: what the handler's outcome depends on, and what it changes."""

    __slots__ = ("known", "reads", "written")

    def __init__(self, state: OpenClawState) -> None:
        super().__init__(state)
        self.reads: list[tuple[int, Any]] = []
        self.known: set[int] = set()  # the fields whose value the step depends on or decides
        self.written: set[int] = set()


def _recorded(index: int) -> property:
    def get(st: Recorder) -> Any:
        value = st[index]
        if index not in st.known:
            st.known.add(index)
            st.reads.append((index, value))
        return value

    def set_field(st: Recorder, value: Any) -> None:
        st.known.add(index)
        st.written.add(index)
        st[index] = value

    return property(get, set_field)


for _index, _name in enumerate(FIELDS):
    setattr(Recorder, _name, _recorded(_index))


class Branch(NamedTuple):
    """The field the handler reads next, and what follows per value of it."""

    index: int
    after: dict[Any, Any]


class Outcome(NamedTuple):
    """A step as a handler took it: the fields it wrote with their values, its events and their facts,
    and, when its events tell of tool calls, the lifecycle each `seen` before it becomes (else None)."""

    writes: tuple[tuple[int, Any], ...]
    events: tuple[Event, ...]
    facts: tuple[Fact, ...]
    lifecycles: dict[tuple[int, ...], tuple[int, ...]] | None


class StepMemo:
    """The steps `apply(st, action)` takes under the configuration `cfg`, remembered per action and per
    values of the fields read."""

    def __init__(self, apply: Callable[[Step, Action], None], cfg: Config) -> None:
        self.apply = apply
        self.cfg = cfg
        self.roots: dict[Action, Branch | Outcome] = {}
        self.outcomes = 0

    def step(self, s: OpenClawState, a: Action) -> tuple[OpenClawState, tuple[Event, ...], tuple[Fact, ...]]:
        """The next state, the events and their facts of the step (s, a), as `OpenClawModel.step` gives
        them."""
        node = self.roots.get(a)
        while type(node) is Branch:
            node = node.after.get(s[node.index])
        outcome = self._learn(s, a) if node is None else node
        fields = list(s)
        for index, value in outcome.writes:
            fields[index] = value
        lifecycles = outcome.lifecycles
        if lifecycles is not None:
            seen = lifecycles.get(s.seen)
            if seen is None:
                seen = lifecycles[s.seen] = replay_lifecycle(s.seen, outcome.events)
            fields[SEEN] = seen
        return _new(OpenClawState, fields), outcome.events, outcome.facts

    def _learn(self, s: OpenClawState, a: Action) -> Outcome:
        """Run the handler on a Recorder and file its outcome under the values it read."""
        st = Recorder(s)
        self.apply(st, a)
        events = tuple(st.events)
        tells = any(event.name in LIFECYCLE_EVENTS for event in events)
        outcome = Outcome(tuple((index, st[index]) for index in sorted(st.written)), events,
                          tuple([fact for event in events for fact in facts(event)]), {} if tells else None)
        if self.outcomes >= OUTCOME_LIMIT:
            self.roots.clear()
            self.outcomes = 0
        self.outcomes += 1
        self._file(a, st.reads, outcome)
        return outcome

    def _file(self, a: Action, reads: list[tuple[int, Any]], outcome: Outcome) -> None:
        if not reads:
            self.roots[a] = outcome
            return
        node = self.roots.get(a)
        if node is None:
            node = self.roots[a] = Branch(reads[0][0], {})
        for at, (index, value) in enumerate(reads):
            if type(node) is not Branch or node.index != index:
                raise RuntimeError(f"the step of {a.label()} read field {FIELDS[index]!r} where an earlier "
                                   "step with the same values read another: its handler is not a function of "
                                   "the fields it reads")
            if at + 1 == len(reads):
                node.after[value] = outcome
            else:
                node = node.after.setdefault(value, Branch(reads[at + 1][0], {}))
