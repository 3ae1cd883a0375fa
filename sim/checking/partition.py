"""One worker's share of a partitioned breadth-first search (`sim.checking.parallel` drives it).

Worker w of N owns the states whose fingerprint is w modulo N: it keeps their fingerprints with their
discovery indices (the visited set of its partition) and expands them when their level comes. A level
takes three calls, each made on every worker at once:

- `settle_and_expand`: take in the new states of the level the coordinator assigned to this partition
  (with their global discovery indices), judge them (`sometimes`, the liveness goals and triggers), then
  expand them: every transition becomes one row of numpy-ready columns (search key, target fingerprint,
  action kind, actor, target slot), and the targets are kept, once per fingerprint, until the next call;
- `admit`: given the rows whose target this partition owns, from every worker, say which targets are new
  (the row that discovers each, the first in search order) and the index of every old one;
- `ship`: hand over, packed, the targets another partition found new.

The coordinator numbers the new states, so a worker never decides anything that depends on timing. Only
fingerprints and keys cross between processes for a transition; a state crosses once, when it is new
and owned elsewhere. Every method returns a model error as a value, naming the state it happened at, so
that the coordinator can put it in search order and give it its path.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim.checking.codes import Codes
from sim.checking.memory import private_mb
from sim.checking.reduction import canonical
from sim.checking.vector import SortedVisited
from sim.checking.visited import PackedStates
from sim.core.fingerprint import fingerprint
from sim.core.model import Model
from sim.core.product import Product, PState
from sim.errors import ModelError

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
    """New states of this partition, in index order: their fingerprints, discovery indices and states,
    each a slot of this worker's targets or a state packed by another worker (`classes` names the
    dataclasses packed states need). `judge`: evaluate the `sometimes` properties in `pending`, and with
    `liveness` the goals and triggers of every liveness property (the coordinator judges the initial
    states itself)."""

    fps: np.ndarray
    indices: np.ndarray
    states: Sequence[Any]
    classes: dict[str, type]
    pending: tuple[str, ...] = ()
    judge: bool = True
    liveness: bool = False


class Partition:
    """The states one worker owns, and the level it is working on."""

    def __init__(self, model: Model, me: int, workers: int, symmetry: bool) -> None:
        self.model = model
        self.product = Product(model)
        self.me, self.workers = me, workers
        self.symmetry = symmetry
        self.visited = SortedVisited()
        self.packer = PackedStates()
        self.targets: list[PState | None] = []  # the last level's targets, one per fingerprint
        self.target_fps = array("Q")
        self.kinds, self.actors = Codes(), Codes()
        self.at = -1  # the state being judged or expanded: where a model error happened

    # ------------------------------------------------------------------ the three calls of a level
    def settle_and_expand(self, batch: Settle, mode: str, budget: Budget) -> dict[str, Any]:
        """Settle `batch`, then, by `mode`: "expand" the new states, "probe" them (say whether any has an
        action: the depth limit is reached) or do nothing more ("none")."""
        reply: dict[str, Any] = {}
        try:
            states = self._settle(batch, reply)
        except ModelError as error:
            return {"error": error, "judging": self.at}
        level = list(zip(batch.indices.tolist(), states, strict=True))
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

    def admit(self, fps: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows of this level whose targets this partition owns. Returns the rows that discover a new
        state, in search order (the first row, by key, of each new fingerprint), and per row the target's
        index when it is known, else -1 - (the position of its state among the new ones)."""
        known = self.visited.lookup(fps).astype(np.int64)
        unknown = np.flatnonzero(known < 0)
        if not len(unknown):
            return unknown, known
        order = unknown[np.lexsort((keys[unknown], fps[unknown]))]
        sorted_fps = fps[order]
        head = np.ones(len(order), dtype=bool)
        head[1:] = sorted_fps[1:] != sorted_fps[:-1]
        group = np.cumsum(head) - 1
        firsts = order[head]
        by_key = np.argsort(keys[firsts], kind="stable")
        position = np.empty(len(by_key), dtype=np.int64)
        position[by_key] = np.arange(len(by_key))
        known[order] = -1 - position[group]
        return firsts[by_key], known

    def ship(self, wanted: dict[int, np.ndarray]) -> tuple[dict[int, list[Any]], dict[str, type]]:
        """The targets in the slots `wanted` by each other partition, packed, and the classes they need."""
        shipped = {}
        for owner, slots in wanted.items():
            out = []
            for slot in slots.tolist():
                out.append(self.packer.pack(self.targets[slot]))
                self.targets[slot] = None
            shipped[owner] = out
        return shipped, dict(self.packer.classes)

    # ------------------------------------------------------------------ inside a level
    def _settle(self, batch: Settle, reply: dict[str, Any]) -> list[PState]:
        self.packer.classes.update(batch.classes)
        targets, unpack = self.targets, self.packer.unpack
        states = [targets[s] if type(s) is int else unpack(s) for s in batch.states]  # type: ignore[index]
        self.targets, self.target_fps = [], array("Q")
        self.visited.add(batch.fps, batch.indices)
        if not batch.judge:
            return states
        waiting = [p for p in self.product.sometimes if p.name in batch.pending]
        live = self.product.liveness if batch.liveness else ()
        reached: dict[str, int] = {}
        unmet = bytearray(len(states))
        trigger = bytearray(len(states))
        for j, (index, state) in enumerate(zip(batch.indices.tolist(), states, strict=True)):
            self.at = index
            for bit, prop in enumerate(live):
                if not prop.goal(state):
                    unmet[j] |= 1 << bit
                if prop.trigger is not None and prop.trigger(state):
                    trigger[j] |= 1 << bit
            for prop in waiting:
                if prop.name not in reached and prop.state(state[0]):
                    reached[prop.name] = index
        reply.update(reached=reached, unmet=bytes(unmet), trigger=bytes(trigger))
        return states

    def _expand(self, level: list[tuple[int, PState]], budget: Budget) -> dict[str, Any]:
        product, model = self.product, self.model
        keys, fps, kinds, actors, slots = array("q"), array("Q"), array("H"), array("H"), array("i")
        targets, target_fps = self.targets, self.target_fps
        slot_of: dict[int, int] = {}
        findings: list[tuple[str, str, int, int]] = []  # (property, message, source index, action or -1)
        terminal = array("q")
        deadline = None if budget.seconds is None else time.monotonic() + budget.seconds
        ceiling = None if budget.memory_mb is None else private_mb() + budget.memory_mb
        kind_code, actor_code = self.kinds.code, self.actors.code
        failure: dict[str, Any] = {}
        rows = reported = 0
        try:
            for count, (index, state) in enumerate(level):
                if count % SOURCES_BETWEEN_CHECKS == SOURCES_BETWEEN_CHECKS - 1:
                    if deadline is not None and time.monotonic() > deadline:
                        return {"stopped": "time"}
                    if ceiling is not None and private_mb() > ceiling:
                        return {"stopped": "memory"}
                self.at, rows, reported = index, len(keys), len(findings)
                base = index << KEY_BITS
                moves = product.moves(state)
                for k, action, target, violations in moves:
                    fp = fingerprint(canonical(model, target) if self.symmetry else target)
                    slot = slot_of.get(fp)
                    if slot is None:
                        slot = slot_of[fp] = len(targets)
                        targets.append(target)
                        target_fps.append(fp)
                    keys.append(base | k)
                    fps.append(fp)
                    kinds.append(kind_code(action.kind))
                    actors.append(actor_code(action.actor))
                    slots.append(slot)
                    if violations:
                        findings += [(v.property, v.message, index, k) for v in violations]
                if not moves:
                    terminal.append(index)
                    findings += [(v.property, v.message, index, -1) for v in product.end_violations(state)]
        except ModelError as error:  # the sources before this one are whole; the coordinator orders the error
            failure = {"error": error, "expanding": index}
            for column in (keys, fps, kinds, actors, slots):
                del column[rows:]
            del findings[reported:]
            if terminal and terminal[-1] == index:
                terminal.pop()
        self._forget_visited_targets()
        return {**failure, "keys": np.frombuffer(keys, dtype=np.int64), "fps": np.frombuffer(fps, dtype=np.uint64),
                "kinds": np.frombuffer(kinds, dtype=np.uint16), "actors": np.frombuffer(actors, dtype=np.uint16),
                "slots": np.frombuffer(slots, dtype=np.int32), "kind_names": list(self.kinds),
                "actor_names": list(self.actors), "findings": findings,
                "terminal": np.frombuffer(terminal, dtype=np.int64)}

    def _probe(self, level: list[tuple[int, PState]]) -> bool:
        for index, state in level:
            self.at = index
            if self.product.actions(state):
                return True
        return False

    def _forget_visited_targets(self) -> None:
        """Drop the targets this partition owns and has already visited: only new ones are asked for."""
        fps = np.frombuffer(self.target_fps, dtype=np.uint64)
        mine = np.flatnonzero(fps % np.uint64(self.workers) == self.me)
        old = mine[self.visited.lookup(fps[mine]) >= 0]
        for slot in old.tolist():
            self.targets[slot] = None
