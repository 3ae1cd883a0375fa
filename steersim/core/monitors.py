"""The four core invariants of the brief, as deterministic automata over facts.

A monitor's state is a hashable value built from tuples in a fixed order, so the explorer can carry it
in the product state (and fingerprint it) and the simulator can run it online. A monitor keeps only
what is still open (outstanding steers, unpaired calls, active turns): once an obligation is met it is
forgotten, which keeps the product state space no larger than the model's own whenever the open
obligations are a function of the model state.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from steersim.core.facts import Fact

RESOLUTIONS = ("steer.applied", "steer.failed", "steer.unknown")


class MonitorViolation(Exception):
    """Raised by a monitor's `step` when a fact breaks its invariant; the message says how, and
    `subjects` names the steers, calls or turns whose obligation it is (`steersim.traces.cause` looks in the
    model's state for where each was lost)."""

    def __init__(self, message: str, subjects: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.subjects = tuple(str(s) for s in subjects)


@dataclass(frozen=True)
class Monitor:
    """Base of the fact monitors. `step` returns the next monitor state or raises MonitorViolation;
    `at_end` judges a state in which the system can do nothing more; `settled` is the liveness goal
    (no obligation open), used by the `<name>.eventually` property. `open_subjects` names what is still
    open and `unmet` says in words what it still waits for, so that a counterexample's cause reads in
    the system's vocabulary ("s1 ... without being applied")."""

    name: ClassVar[str]
    doc: ClassVar[str]
    watches: ClassVar[frozenset[str]]  # the fact names `step` reacts to; the product sends only these
    unmet: ClassVar[str] = "its obligation being met"

    def initial(self) -> Hashable:
        return ()

    def step(self, state: Hashable, fact: Fact) -> Hashable:
        raise NotImplementedError

    def at_end(self, state: Hashable) -> str | None:
        return None

    def settled(self, state: Hashable) -> bool:
        return True

    def open_subjects(self, state: Hashable) -> tuple[str, ...]:
        """The ids of the obligations still open in `state`, in the monitor's order."""
        return ()


def _without(items: tuple, index: int) -> tuple:
    return items[:index] + items[index + 1 :]


def _find(items: tuple, key: object) -> int:
    for index, item in enumerate(items):
        if item[0] == key:
            return index
    return -1


@dataclass(frozen=True)
class NoLostSteers(Monitor):
    """Every submitted steer is answered (accepted or rejected, or its fate is unknown), and every
    accepted steer ends in exactly one of applied, failed, unknown. State: the open steers in
    submission order, each `(id, "submitted" | "accepted")`."""

    name: ClassVar[str] = "no-lost-steers"
    doc: ClassVar[str] = "every accepted steer ends in exactly one of applied, failed, unknown"
    watches: ClassVar[frozenset[str]] = frozenset(
        ("steer.submitted", "steer.accepted", "steer.rejected", *RESOLUTIONS))
    unmet: ClassVar[str] = "being applied, failed or reported unknown"

    def step(self, state: tuple, fact: Fact) -> tuple:
        name = fact.name
        sid = fact.fields[0][1]
        index = _find(state, sid)
        if name == "steer.submitted":
            if index >= 0:
                raise MonitorViolation(f"steer {sid!r} submitted twice while still open", (sid,))
            return (*state, (sid, "submitted"))
        if name == "steer.accepted":
            if index < 0 or state[index][1] != "submitted":
                raise MonitorViolation(f"steer {sid!r} accepted but it is not an open submission", (sid,))
            return state[:index] + ((sid, "accepted"),) + state[index + 1 :]
        if name == "steer.rejected":
            if index < 0 or state[index][1] != "submitted":
                raise MonitorViolation(f"steer {sid!r} rejected but it is not an open submission", (sid,))
            return _without(state, index)
        if name == "steer.unknown" and index >= 0:
            return _without(state, index)
        if index < 0 or state[index][1] != "accepted":
            raise MonitorViolation(
                f"{name} for steer {sid!r}, which is not an accepted, unresolved steer "
                "(resolved twice, or never accepted)", (sid,)
            )
        return _without(state, index)

    def at_end(self, state: tuple) -> str | None:
        if state:
            open_ids = ", ".join(f"{sid!r} ({phase})" for sid, phase in state)
            return f"the system can do nothing more, but steers are still open: {open_ids}"
        return None

    def settled(self, state: tuple) -> bool:
        return not state

    def open_subjects(self, state: tuple) -> tuple[str, ...]:
        return tuple(str(sid) for sid, _ in state)


@dataclass(frozen=True)
class OneActiveTurn(Monitor):
    """At most one active turn per chain. State: `(chain, turn)` of each active turn, by chain."""

    name: ClassVar[str] = "one-active-turn"
    doc: ClassVar[str] = "at most one turn is active per chain"
    watches: ClassVar[frozenset[str]] = frozenset(("turn.started", "turn.ended"))
    unmet: ClassVar[str] = "being ended"

    def step(self, state: tuple, fact: Fact) -> tuple:
        if fact.name == "turn.started":
            turn, chain = fact.get("turn"), fact.get("chain")
            index = _find(state, chain)
            if index >= 0:
                raise MonitorViolation(
                    f"turn {turn!r} started on chain {chain!r} while turn {state[index][1]!r} is active",
                    (state[index][1],))
            return tuple(sorted((*state, (chain, turn)), key=lambda item: str(item[0])))
        if fact.name == "turn.ended":
            turn = fact.get("turn")
            for index, (_, active) in enumerate(state):
                if active == turn:
                    return _without(state, index)
            raise MonitorViolation(f"turn {turn!r} ended but it is not active", (turn,))
        return state

    def open_subjects(self, state: tuple) -> tuple[str, ...]:
        return tuple(str(turn) for _, turn in state)


@dataclass(frozen=True)
class OrderedHistory(Monitor):
    """Applied steers appear in acceptance order on their target, and the history never takes the same
    item twice. State: `(targets, accepted, history)`: the target of each open submission, the accepted
    unresolved steers in acceptance order as `(id, target)`, and the items appended per chain."""

    name: ClassVar[str] = "ordered-history"
    doc: ClassVar[str] = "history is append-only; applied steers appear in acceptance order"
    watches: ClassVar[frozenset[str]] = frozenset(
        ("steer.submitted", "steer.accepted", "steer.rejected", "history.appended", *RESOLUTIONS))
    unmet: ClassVar[str] = "being applied"

    def initial(self) -> tuple:
        return ((), (), ())

    def step(self, state: tuple, fact: Fact) -> tuple:
        targets, accepted, history = state
        name = fact.name
        if name == "steer.submitted":
            return ((*targets, (fact.get("id"), fact.get("target"))), accepted, history)
        if name == "steer.accepted" or name == "steer.rejected":
            sid = fact.get("id")
            index = _find(targets, sid)
            if index < 0:
                return state
            target = targets[index][1]
            targets = _without(targets, index)
            if name == "steer.accepted":
                accepted = (*accepted, (sid, target))
            return (targets, accepted, history)
        if name in RESOLUTIONS:
            sid = fact.get("id")
            index = _find(accepted, sid)
            if index < 0:
                index = _find(targets, sid)
                return state if index < 0 else (_without(targets, index), accepted, history)
            target = accepted[index][1]
            if name == "steer.applied":
                for earlier, earlier_target in accepted[:index]:
                    if earlier_target == target:
                        raise MonitorViolation(
                            f"steer {sid!r} applied before {earlier!r}, which was accepted earlier "
                            f"for the same target {target!r} and is still queued", (earlier,)
                        )
            return (targets, _without(accepted, index), history)
        if name == "history.appended":
            chain, item = fact.get("chain"), fact.get("item")
            index = _find(history, chain)
            items = history[index][1] if index >= 0 else ()
            if item in items:
                raise MonitorViolation(f"history of chain {chain!r} took item {item!r} a second time", (item,))
            entry = (chain, (*items, item))
            history = history[:index] + (entry,) + history[index + 1 :] if index >= 0 else (*history, entry)
            return (targets, accepted, history)
        return state

    def open_subjects(self, state: tuple) -> tuple[str, ...]:
        return tuple(str(sid) for sid, _ in state[1])


@dataclass(frozen=True)
class PairedToolResults(Monitor):
    """Every requested call gets exactly one result (real or synthetic) before the next model call of
    its chain, and starts at most once, before its result. State: `(turns, calls)`: the chain of the
    latest turn per chain as `(turn, chain)`, and the open calls as `(call, chain, started)`."""

    name: ClassVar[str] = "paired-tool-results"
    doc: ClassVar[str] = "every requested call gets exactly one result before the next model call"
    watches: ClassVar[frozenset[str]] = frozenset(("turn.started", "tool.requested", "tool.started", "tool.result"))
    unmet: ClassVar[str] = "getting a result"

    def initial(self) -> tuple:
        return ((), ())

    def step(self, state: tuple, fact: Fact) -> tuple:
        turns, calls = state
        name = fact.name
        if name == "turn.started":
            turn, chain = fact.get("turn"), fact.get("chain")
            for call, call_chain, _ in calls:
                if call_chain == chain:
                    raise MonitorViolation(
                        f"turn {turn!r} of chain {chain!r} started while call {call!r} has no result", (call,))
            kept = tuple(entry for entry in turns if entry[1] != chain)
            return ((*kept, (turn, chain)), calls)
        if name == "tool.requested":
            call, turn = fact.get("call"), fact.get("turn")
            if _find(calls, call) >= 0:
                raise MonitorViolation(f"call {call!r} requested again before its result", (call,))
            index = _find(turns, turn)
            chain = turns[index][1] if index >= 0 else turn
            return (turns, (*calls, (call, chain, False)))
        if name == "tool.started":
            call = fact.get("call")
            index = _find(calls, call)
            if index < 0:
                raise MonitorViolation(f"call {call!r} started but it has no open request", (call,))
            if calls[index][2]:
                raise MonitorViolation(f"call {call!r} started twice", (call,))
            entry = (call, calls[index][1], True)
            return (turns, calls[:index] + (entry,) + calls[index + 1 :])
        if name == "tool.result":
            call = fact.get("call")
            index = _find(calls, call)
            if index < 0:
                raise MonitorViolation(f"result for call {call!r}, which has no open request (a second result?)",
                                       (call,))
            return (turns, _without(calls, index))
        return state

    def at_end(self, state: tuple) -> str | None:
        _, calls = state
        if calls:
            return "the system can do nothing more, but calls have no result: " + ", ".join(
                repr(call) for call, _, _ in calls
            )
        return None

    def settled(self, state: tuple) -> bool:
        return not state[1]

    def open_subjects(self, state: tuple) -> tuple[str, ...]:
        return tuple(str(call) for call, _, _ in state[1])


@dataclass(frozen=True)
class TruthfulResults(Monitor):
    """A real result comes from a call that started, a synthetic one from a call that never did. Not a
    core invariant: a system may end a started call with a synthetic result (an abort), so a model opts
    in through `monitors()` where its vocabulary makes the distinction. It judges what the model emits,
    so a step that drops a start event, or marks a skip as real, is seen. State: the started calls that
    have no result yet, in start order."""

    name: ClassVar[str] = "truthful-results"
    doc: ClassVar[str] = "a real result comes from a call that started, a synthetic one from a call that never did"
    watches: ClassVar[frozenset[str]] = frozenset(("tool.started", "tool.result"))

    def step(self, state: tuple, fact: Fact) -> tuple:
        call = fact.get("call")
        if fact.name == "tool.started":
            return state if call in state else (*state, call)
        started = call in state
        if fact.get("synthetic") and started:
            raise MonitorViolation(f"call {call!r} started, but its result is synthetic")
        if not fact.get("synthetic") and not started:
            raise MonitorViolation(f"call {call!r} has a real result, but it never started")
        return tuple(c for c in state if c != call)


class Followed(NamedTuple):
    """Where one fact takes one monitor state: the next state, and the violation message when the fact
    breaks the invariant (then the state stays as it was)."""

    state: Hashable
    broken: str | None


MEMO_LIMIT = 1 << 18  # (state, fact) pairs a memo holds; past it the memo starts again


class StepMemo:
    """One monitor's steps, each (monitor state, fact) pair stepped once: a search meets the same
    pairs over and over (the monitor states are few, the facts fewer), so every engine steps monitors
    through here, the generic explorer per transition and the vector engine per fact code of a level."""

    def __init__(self, monitor: Monitor) -> None:
        self.monitor = monitor
        self.memo: dict[tuple[Hashable, Fact], Followed] = {}

    def follow(self, state: Hashable, fact: Fact) -> Followed:
        key = (state, fact)
        hit = self.memo.get(key)
        if hit is None:
            try:
                hit = Followed(self.monitor.step(state, fact), None)
            except MonitorViolation as broken:
                hit = Followed(state, f"{fact}: {broken}")
            if len(self.memo) >= MEMO_LIMIT:
                self.memo.clear()
            self.memo[key] = hit
        return hit


CORE_MONITORS: tuple[Monitor, ...] = (NoLostSteers(), OneActiveTurn(), OrderedHistory(), PairedToolResults())
CORE_PROPERTY_NAMES = tuple(monitor.name for monitor in CORE_MONITORS)
