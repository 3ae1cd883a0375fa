"""One worker's share of a partitioned breadth-first search (`steersim.checking.parallel` drives it).

Each state has one owner among the N workers (`steersim.checking.ownership`). A worker keeps the states it owns in a
dict, as the one-process explorer keeps all of them (exact: no fingerprint stands for a state), and
expands them when their level comes. Every state it meets, whoever owns it, gets a code of this worker
the first time it is met (0, 1, 2, ... in the order met) and keeps it: the coordinator holds what each
code's discovery index is, so a transition to a state met before costs one dict lookup, as in one
process, nothing crosses for it, and the worker never goes back to its dict to learn an index. A level
takes two calls, each made on every worker at once:

- `settle_and_expand`: take in which of the new states this worker owns are admitted and their
  discovery indices, judge them (`sometimes`, the liveness goals and triggers), then expand them. Each
  transition becomes one row of numpy-ready columns (search key, target's code, action); the codes
  from `base` on are this level's unknown targets. Those owned elsewhere leave, packed
  (`steersim.checking.transfer`), for their owners;
- `admit`: given the unknown targets this partition owns, its own and those other workers met, with
  the first key each reached it by, say which are new (the first key and the code of each, in search
  order) and this partition's code of each target the others asked about.

The coordinator numbers the new states, so a worker never decides anything that depends on timing. A
state crosses between processes only when a worker meets it for the first time and another worker owns
it. Every method returns a model error as a value, naming the state it happened at, so that the
coordinator can put it in search order and give it its path.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from steersim.checking import transfer
from steersim.checking.memory import private_mb
from steersim.checking.ownership import WHOLE, Ownership
from steersim.checking.reduction import canonical
from steersim.core.model import Action, Model
from steersim.core.product import Product, PState
from steersim.errors import ModelError

KEY_BITS = 16  # a row's search key is (source index << KEY_BITS) | position of the action in actions()
SOURCES_BETWEEN_CHECKS = 256  # a worker looks at the clock and its memory this often within a level


@dataclass(frozen=True)
class Budget:
    """What a worker may spend on one level: seconds (its own clock: workers may be other machines)
    and MB of private memory above what it holds at the start; None: no bound."""

    seconds: float | None = None
    memory_mb: float | None = None


@dataclass(frozen=True)
class Settle:
    """What the coordinator decided of the last level, for one worker: `admitted`, the discovery index
    of each new state this partition owns, in the order `admit` gave them (-1: not admitted, the search
    stops before it). `initial`: the initial states this partition owns, with their indices (the
    coordinator judges those itself; they take this worker's first codes, in this order). `waiting`:
    the `sometimes` properties no state has satisfied yet; `judge`: evaluate those, and with `liveness`
    the goals and triggers of every liveness property."""

    admitted: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    initial: Sequence[tuple[int, Any]] = ()
    waiting: tuple[str, ...] = ()
    judge: bool = True
    liveness: bool = False


@dataclass(frozen=True)
class Asked:
    """Unknown targets one worker met that another owns: their numbers among the sender's unknown
    targets of the level (a number n is the sender's code base + n), the first search key each was
    reached by there, and the states pickled together once: the coordinator passes them on without
    decoding them, and one pickle writes a part that several states share (they share most) once, so
    it is small and quick to read."""

    numbers: np.ndarray
    firsts: np.ndarray
    blob: bytes


class Partition:
    """The states one worker owns and knows, and the level it is working on."""

    def __init__(self, model: Model, me: int, workers: int, symmetry: bool,
                 ownership: Ownership = WHOLE) -> None:
        self.model = model
        self.product = Product(model)
        self.me, self.workers, self.ownership = me, workers, ownership
        self.symmetry = symmetry
        self.known: dict[Hashable, int] = {}  # key -> this worker's code of every state met, owned or not
        self.codes = 0  # how many codes are given: the next state met gets this one
        self.base = 0  # the first code of this level's unknown targets
        self.unknown_keys: list[Hashable] = []
        self.unknown_states: list[PState] = []
        self.unknown_firsts = array("q")
        self.new_states: list[PState] = []  # what the last `admit` found new, in its order
        self._owned_unknown: tuple[np.ndarray, list, list] = (np.zeros(0, dtype=np.int64), [], [])
        self.actions: dict[Action, int] = {}  # every action met, numbered in the order met
        self.sent = 0  # how many of them the coordinator has been told of
        self.at = -1  # the state being judged or expanded: where a model error happened

    def _key(self, pstate: PState) -> Hashable:
        return canonical(self.model, pstate) if self.symmetry else pstate

    # ------------------------------------------------------------------ the two calls of a level
    def settle_and_expand(self, batch: Settle, mode: str, budget: Budget) -> dict[str, Any]:
        """Settle `batch`, then, by `mode`: "expand" the new states, "probe" them (say whether any has an
        action: the depth limit is reached) or do nothing more ("none")."""
        reply: dict[str, Any] = {}
        level = self._settle(batch)
        try:
            self._judge(level, batch, reply)
        except ModelError as error:
            return {"error": error, "judging": self.at}
        if mode == "expand":
            reply.update(self._expand(level, budget))
        elif mode == "probe":
            try:
                reply["has_more"] = self._probe(level)
            except ModelError as error:
                return {"error": error, "expanding": self.at}
        if budget.memory_mb is not None:  # reading it costs milliseconds: only under --max-memory
            reply["memory_mb"] = private_mb()
        return reply

    def admit(self, asked: Sequence[Asked]) -> dict[str, Any]:
        """Which of this level's unknown targets that this partition owns are new: its own (kept at the
        end of `_expand`: all new, as a state this partition owns and knew would not be unknown) and
        those `asked` by the other workers. Returns `firsts`, the first search key of each new state,
        ascending (the order the coordinator numbers them in, and `new_states`'s), `new_codes`, this
        partition's code of each, in that order, `theirs` (one per element of `asked`): this
        partition's code of each target asked about, and `codes`, how many codes it has given."""
        known = self.known
        own_numbers, states, firsts = self._owned_unknown
        own_codes = (self.base + own_numbers).tolist()
        slot_of = {code: at for at, code in enumerate(own_codes)}  # code -> position among the new states
        codes = own_codes[:]
        theirs = []
        for batch in asked:
            targets = transfer.loads(batch.blob)
            keys = [self._key(t) for t in targets] if self.symmetry else targets
            out = []
            for key, state, first in zip(keys, targets, batch.firsts.tolist(), strict=True):
                fresh = self.codes
                code = known.setdefault(key, fresh)  # one hash per target
                if code == fresh:
                    self.codes += 1
                    slot_of[code] = len(states)
                    codes.append(code)
                    states.append(state)
                    firsts.append(first)
                else:
                    at = slot_of.get(code)
                    if at is not None and first < firsts[at]:
                        states[at], firsts[at] = state, first
                out.append(code)
            theirs.append(np.array(out, dtype=np.int64))
        order = np.argsort(np.array(firsts, dtype=np.int64), kind="stable")
        self.new_states = [states[i] for i in order.tolist()]
        self._owned_unknown = (np.zeros(0, dtype=np.int64), [], [])
        sorted_firsts = np.array(firsts, dtype=np.int64)[order]
        judged, failure = self._judge_new(sorted_firsts)
        return {"firsts": sorted_firsts, "new_codes": np.array(codes, dtype=np.int64)[order], "theirs": theirs,
                "codes": self.codes, "judged": judged, **failure}

    def _judge_new(self, firsts: np.ndarray) -> tuple[list[tuple[int, str, str]], dict[str, Any]]:
        """The state properties' verdicts on the new states, in search order: (position, property,
        message) per violation, and a model error as a value, at the source that reached the state."""
        judged: list[tuple[int, str, str]] = []
        if self.symmetry or not self.product.state_props:
            return judged, {}
        position = 0
        try:
            for position, state in enumerate(self.new_states):
                judged += [(position, v.property, v.message) for v in self.product.state_violations(state)]
        except ModelError as error:
            return judged, {"error": error, "judging": int(firsts[position]) >> KEY_BITS}
        return judged, {}

    # ------------------------------------------------------------------ inside a level
    def _settle(self, batch: Settle) -> list[tuple[int, PState]]:
        """The states this partition now expands: its initial states, which take its next codes, and the
        new states it owns that the coordinator admitted. Nothing else changes here: the indices of the
        states met are the coordinator's to keep, by code."""
        level = []
        for index, state in batch.initial:
            self.known[self._key(state)] = self.codes
            self.codes += 1
            level.append((index, state))
        level += [(index, state) for index, state in zip(batch.admitted.tolist(), self.new_states, strict=True)
                  if index >= 0]  # past the cut, the search stops
        self.new_states = []
        return level

    def _judge(self, level: list[tuple[int, PState]], batch: Settle, reply: dict[str, Any]) -> None:
        if not batch.judge:
            return
        waiting = [p for p in self.product.sometimes if p.name in batch.waiting]
        bits_of = self.product.liveness_bits if batch.liveness else None
        reached: dict[str, int] = {}
        unmet = bytearray(len(level))
        trigger = bytearray(len(level))
        for j, (index, state) in enumerate(level):
            self.at = index
            if bits_of is not None:
                unmet[j], trigger[j] = bits_of(state)
            for prop in waiting:
                if prop.name not in reached and prop.state(state[0]):
                    reached[prop.name] = index
        reply.update(reached=reached, unmet=bytes(unmet), trigger=bytes(trigger))

    def _expand(self, level: list[tuple[int, PState]], budget: Budget) -> dict[str, Any]:
        """Expand the level's states through `Product.search`, which looks each target up in `known` and
        gives a target met for the first time this worker's next code: every step becomes a row (its
        search key, its target's code, its action's code), the targets new to this worker are this
        level's unknown targets, and the steps that break a property its findings. As in the one-process
        explorer, each new state is judged by the state properties once, by its owner when it admits it,
        not on every step that reaches it (under symmetry, on every step)."""
        product, symmetry = self.product, self.symmetry
        search, known, key = product.search, self.known, (self._key if symmetry else None)
        self.base = self.codes
        self.unknown_keys, self.unknown_states, self.unknown_firsts = [], [], array("q")
        unknown_keys, unknown_states, unknown_firsts = self.unknown_keys, self.unknown_states, self.unknown_firsts
        findings: list[tuple[str, str, int, int]] = []  # (property, message, source index, action or -1)
        sources, terminal = array("q"), array("q")
        rows: list[tuple[int, Action, int]] = []  # every step of the level: (position, action, target's code)
        fired: dict[str, int] = {}  # the coordinator counts the steps it takes from the rows
        deadline = None if budget.seconds is None else time.monotonic() + budget.seconds
        ceiling = None if budget.memory_mb is None else private_mb() + budget.memory_mb
        failure: dict[str, Any] = {}
        try:
            for count, (index, state) in enumerate(level):
                if count % SOURCES_BETWEEN_CHECKS == SOURCES_BETWEEN_CHECKS - 1:
                    if deadline is not None and time.monotonic() > deadline:
                        return {"stopped": "time"}
                    if ceiling is not None and private_mb() > ceiling:
                        return {"stopped": "memory"}
                self.at, before = index, len(rows)
                steps, found = search(state, known, fired, key=key, judge_every=symmetry, every=rows)
                base = index << KEY_BITS
                for position, _, target, violations in found:
                    if target is not None:
                        unknown_keys.append(self._key(target) if symmetry else target)
                        unknown_states.append(target)
                        unknown_firsts.append(base | position)
                    if violations:
                        findings += [(v.property, v.message, index, position) for v in violations]
                sources.extend((index,) * steps)
                if not steps:
                    terminal.append(index)
                    findings += [(v.property, v.message, index, -1) for v in product.end_violations(state)]
        except ModelError as error:  # the sources before this one are whole; the coordinator orders the error
            failure = {"error": error, "expanding": index}
            del rows[before:]
        self.codes = len(known)  # codes a failed expansion gave stay given, so that no two states share one
        keys, refs, codes = self._rows(sources, rows)
        met = list(self.actions)[self.sent:]
        self.sent = len(self.actions)
        return {**failure, **self._ask(), "base": self.base, "keys": keys, "refs": refs, "codes": codes,
                "met": [(action.kind, action.actor) for action in met], "findings": findings,
                "terminal": np.frombuffer(terminal, dtype=np.int64)}

    def _rows(self, sources: array, rows: list[tuple[int, Action, int]]) -> tuple[np.ndarray, ...]:
        """The level's rows as the coordinator's columns: search keys, targets' codes and actions' codes
        (each action met numbered in the order met, as `met` tells the coordinator)."""
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint32)
        positions, actions, targets = zip(*rows, strict=True)
        numbered = self.actions
        for action in dict.fromkeys(actions):
            if action not in numbered:
                numbered[action] = len(numbered)
        keys = (np.frombuffer(sources, dtype=np.int64) << KEY_BITS) | np.array(positions, dtype=np.int64)
        return (keys, np.array(targets, dtype=np.int64),
                np.array(list(map(numbered.__getitem__, actions)), dtype=np.uint32))

    def _ask(self) -> dict[str, Any]:
        """This level's unknown targets by owner: those owned here are kept for `admit`; the others
        leave pickled, one `Asked` per owner."""
        keys = self.unknown_keys
        owners = self.ownership.owners(keys, self.workers)
        by_owner = [np.flatnonzero(owners == owner) for owner in range(self.workers)]
        firsts = np.frombuffer(self.unknown_firsts, dtype=np.int64)
        mine = by_owner[self.me]
        self._owned_unknown = (mine, [self.unknown_states[n] for n in mine.tolist()], firsts[mine].tolist())
        asked: dict[int, Asked] = {}
        for owner, numbers in enumerate(by_owner):
            if owner == self.me or not len(numbers):
                continue
            targets = [self.unknown_states[n] for n in numbers.tolist()]
            asked[owner] = Asked(numbers, firsts[numbers], transfer.dumps(targets))
        return {"asked": asked}

    def _probe(self, level: list[tuple[int, PState]]) -> bool:
        for index, state in level:
            self.at = index
            if self.product.actions(state):
                return True
        return False
