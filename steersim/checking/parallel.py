"""Exhaustive checking on several workers: a partitioned breadth-first search, with the report of one
process.

Each state has an owner among the workers (`steersim.checking.partition`): the owner keeps it, exactly, in
its part of the visited set, and judges and expands it. A level's transitions come back as numpy
columns of search keys (a key is the source's discovery index and the position of the action) and
targets (the worker's code of the state; the coordinator keeps the index of each worker's codes); the
unknown targets owned elsewhere go to their owners, who say which are new. The coordinator takes no
step of the model. It orders each level's transitions by key, which is the order in which one process
takes them, and from that alone numbers the new states (each by the first transition that reaches it),
finds where one process would have stopped (after the first violating state unless --keep-going, or
before the state at which --max-states is reached), and records the counts, the verdicts, the parent
pointers and, for liveness, the graph arrays. So the distinct-state and transition counts, the
discovery indices, the counterexamples and the coverage are those of the one-process engine, whatever
the timing of the workers and whichever worker owns what; liveness is then decided by the explorer's
own code over the gathered arrays. Only seconds differ.

Workers are local processes or a Dask cluster (`steersim.checking.workers`). What the partitioned search
cannot honour (depth-first order, partial-order reduction, checkpoints, the vector engine) is refused
by `steersim.checking.engines.refusal` before any work starts.
"""

from __future__ import annotations

import time
from array import array
from contextlib import AbstractContextManager
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from steersim.checking.codes import Codes
from steersim.checking.explorer import CheckOptions, CheckResult, Explorer
from steersim.checking.liveness import NO_CLASS
from steersim.checking.memory import rss_mb
from steersim.checking.ownership import choose
from steersim.checking.partition import KEY_BITS, Budget, Settle
from steersim.checking.workers import ModelReference, WorkerGroup, dask_partitions, local_partitions
from steersim.core.model import Action, Model
from steersim.core.paths import located
from steersim.core.product import Violation
from steersim.errors import ModelError

ACTION_MASK = (1 << KEY_BITS) - 1
STATE = "state"  # marks a finding of the state properties on the state a step reaches first


class Level(NamedTuple):
    """A level's transitions from every worker, in search order (by key: source index, then action
    position), with the worker that took each, its target as that worker gave it (its code of the
    state: `PartitionedExplorer.indices` says which index that is), and its kind and actor as the
    coordinator's codes; the findings (property, message, source, action or -1 for a dead end, and
    STATE for a state property's verdict on the state that step reaches first) in search order; the
    dead ends; and the first source a model error stopped at, with the error."""

    keys: np.ndarray
    refs: np.ndarray
    worker: np.ndarray
    kinds: np.ndarray
    actors: np.ndarray
    findings: list[tuple]
    terminal: list[int]
    failure: tuple[int, ModelError] | None

    @property
    def sources(self) -> np.ndarray:
        return self.keys >> KEY_BITS


class Numbering(NamedTuple):
    """What the coordinator decides of a level's new states: their first keys in search order (the
    admitted ones first: those before the cut), and per worker the index of each new state it owns
    (`admitted`, -1 past the cut), in the order its `admit` gave them."""

    firsts: np.ndarray
    count: int
    admitted: list[np.ndarray]


class PartitionedExplorer(Explorer):
    """The explorer's bookkeeping, verdicts and liveness over a search that workers carry out."""

    def __init__(self, model: Model, options: CheckOptions, workers: int, dask: str | None = None) -> None:
        super().__init__(model, options)
        self.workers, self.dask = workers, dask
        self.reference = None if dask is None else ModelReference.of(options.identity)
        self.edge_action = array("H")  # per liveness edge, the position of its action: lassos need no visited set
        self.pending_edges: tuple[np.ndarray, ...] | None = None  # a level's edges, until their targets are judged
        self.kinds, self.actors = Codes(), Codes()
        self.actor_class: dict[int, int] = {}  # actor code -> its fairness class, once the actor is met
        self.met: list[list[tuple[int, int]]] = []  # per worker, its action codes' (kind, actor) codes
        self.worker_mb: list[float] = []
        # per worker, the discovery index of each of its codes (-1: none yet), with room to grow
        self.indices: list[np.ndarray] = []
        self.failure: tuple[int, ModelError] | None = None

    def _group(self) -> AbstractContextManager[WorkerGroup]:
        if self.reference is not None and self.dask is not None:
            return dask_partitions(self.dask, self.reference, self.workers if self.workers > 1 else None,
                                   self.symmetry, partial(choose, self.product))
        return local_partitions(self.model, self.workers, self.symmetry, partial(choose, self.product))

    # ------------------------------------------------------------------ search
    def run(self, resumed: Any = None, seconds_before: float = 0.0) -> CheckResult:
        """Search from the initial states (a partitioned run never checkpoints, so it never resumes)."""
        if resumed is not None:
            raise ValueError("a partitioned check does not resume checkpoints")
        started = time.monotonic()
        with self._group() as group:
            queued = self._levels(group, started)
        opts = self.options
        if queued and self.incomplete_reason is None and not self._violated_and_stopping():
            self.incomplete_reason = f"state limit {opts.max_states} reached"
        if not queued and self.incomplete_reason is None:
            self._finish_complete()
        elif self.incomplete_reason and self.live and self.track_graph:
            self.notes.append(f"liveness not checked: {self.incomplete_reason}")
        seconds = time.monotonic() - started
        if opts.progress is not None:
            opts.progress(self._progress(seconds, queued, self.max_depth))
        return self._result(seconds)

    def _levels(self, group: WorkerGroup, started: float) -> int:
        """Level after level until the search ends; returns how many states it leaves queued."""
        opts = self.options
        self.met = [[] for _ in range(group.count)]
        settle = self._initial(group)
        start, end, depth = 0, len(self.parents), 0
        unexpanded = 0  # states of the last level left unexpanded where the search stopped inside it
        stopping = self._stopped()
        next_report = time.monotonic() + opts.progress_interval  # from when the workers are up
        while True:
            mode = "none" if stopping else self._limits(started)
            if mode != "none" and opts.max_depth is not None and depth >= opts.max_depth:
                mode = "probe"
            budget = self._budget(started, group.count)
            replies = group.call("settle_and_expand", [(batch, mode, budget) for batch in settle])
            self._absorb(replies, settle)
            if self.failure is not None:
                index, error = self.failure
                raise located(error, self._path(index)) from None
            queued = end - start + unexpanded
            if mode == "none":
                return queued
            if mode == "probe":
                failures = [(reply["expanding"], reply["error"]) for reply in replies if "expanding" in reply]
                if failures:
                    index, error = min(failures, key=lambda found: found[0])
                    raise located(error, self._path(index)) from None
                if any(reply["has_more"] for reply in replies):
                    self.incomplete_reason = f"depth limit {opts.max_depth} reached"
                return 0
            stopped = next((r["stopped"] for r in replies if r.get("stopped")), None)
            if stopped is not None:
                self.incomplete_reason = (f"time limit {opts.timeout:g} s reached" if stopped == "time"
                                          else f"memory limit {opts.max_memory_mb:g} MB reached")
                return queued
            level = self._gather(replies)
            numbering, cut, level = self._number(group, replies, level, start, end - start)
            taken = int(np.searchsorted(level.keys, (start + cut) << KEY_BITS))
            base = len(self.parents)
            self._append_states(numbering.firsts[: numbering.count], depth + 1)  # paths to them are asked next
            self._record(level, taken, self._targets(level), start, cut, numbering.firsts, base)
            waiting = tuple(p.name for p in self.product.sometimes if self.results[p.name].status != "reached")
            settle = [Settle(admitted, waiting=waiting, judge=True, liveness=self.track_graph)
                      for admitted in numbering.admitted]
            unexpanded = end - start - cut
            stopping = unexpanded > 0 or self.failure is not None or self._stopped()
            start, end, depth = end, len(self.parents), depth + 1
            if opts.progress is not None and time.monotonic() >= next_report:
                next_report = time.monotonic() + opts.progress_interval
                opts.progress(self._progress(time.monotonic() - started, end - start + unexpanded, depth))
            if end == start and not stopping:
                self._flush_edges()
                return 0

    def _initial(self, group: WorkerGroup) -> list[Settle]:
        """Number and judge the initial states here, as the explorer does, and deal them to their owners."""
        found: list[list[tuple[int, Any]]] = [[] for _ in range(group.count)]
        for k, init in enumerate(self.product.init_states()):
            key = self._key(init)
            if key in self.visited:
                continue
            try:
                index = self._add(key, -1, k, 0, init)
                self._judge_state(index, init, None)
            except ModelError as error:
                raise error.with_path((), f"initial state {k}") from None
            found[int(group.ownership.owners([key], group.count)[0])].append((index, init))
        self.indices = [np.array([index for index, _ in mine], dtype=np.int64) for mine in found]
        return [Settle(initial=mine, judge=False) for mine in found]

    def _limits(self, started: float) -> str:
        """"expand", or "none" when the time or memory limit is reached before the next level."""
        opts = self.options
        if opts.timeout is not None and time.monotonic() - started > opts.timeout:
            self.incomplete_reason = f"time limit {opts.timeout:g} s reached"
            return "none"
        if opts.max_memory_mb is not None and rss_mb() + sum(self.worker_mb) > opts.max_memory_mb:
            self.incomplete_reason = f"memory limit {opts.max_memory_mb:g} MB reached"
            return "none"
        return "expand"

    def _budget(self, started: float, workers: int) -> Budget:
        """Each worker's share of the time and memory left: the coordinator keeps a share for the replies."""
        opts = self.options
        seconds = None if opts.timeout is None else max(0.0, opts.timeout - (time.monotonic() - started))
        memory = None
        if opts.max_memory_mb is not None:
            memory = (opts.max_memory_mb - rss_mb() - sum(self.worker_mb)) / (workers + 1)
        return Budget(seconds, memory)

    # ------------------------------------------------------------------ the coordinator's share of a level
    def _absorb(self, replies: list[dict[str, Any]], settled: list[Settle]) -> None:
        """The judgements of the states just settled: a model error (the first in discovery order, placed
        at its parent, which the explorer was expanding), `sometimes` reached, the liveness bits."""
        judging = [(reply["judging"], reply["error"]) for reply in replies if "judging" in reply]
        if judging:
            index, error = min(judging, key=lambda found: found[0])
            raise located(error, self._path(self.parents[index])) from None
        self.worker_mb = [reply.get("memory_mb", 0.0) for reply in replies]
        if not settled or not settled[0].judge:
            return
        for name in sorted({name for reply in replies for name in reply["reached"]}):
            index = min(reply["reached"][name] for reply in replies if name in reply["reached"])
            result = self.results[name]
            if result.status != "reached":
                result.status = "reached"
                result.counterexample = self._path(index)
        if self.track_graph:
            indices = [batch.admitted[batch.admitted >= 0] for batch in settled]
            size = sum(len(mine) for mine in indices)
            base = len(self.parents) - size
            unmet, trigger = np.zeros(size, dtype=np.uint8), np.zeros(size, dtype=np.uint8)
            for mine, reply in zip(indices, replies, strict=True):
                unmet[mine - base] = np.frombuffer(reply["unmet"], dtype=np.uint8)
                trigger[mine - base] = np.frombuffer(reply["trigger"], dtype=np.uint8)
            self.unmet.extend(unmet.tobytes())
            self.trigger.extend(trigger.tobytes())
            self.enabled.frombytes(bytes(8 * size))
            if len(self.parents) > self.options.liveness_limit:
                self._drop_graph(f"more than {self.options.liveness_limit:,} states (--liveness-limit)")
        self._flush_edges()

    def _gather(self, replies: list[dict[str, Any]]) -> Level:
        """Every worker's rows of the level, joined and put in search order."""
        columns: dict[str, list[np.ndarray]] = {name: [] for name in Level._fields[:5]}
        findings, terminal, failures = [], [], []
        for w, reply in enumerate(replies):
            self.met[w] += [(self.kinds.code(kind), self.actors.code(actor)) for kind, actor in reply["met"]]
            met = np.array(self.met[w] or [(0, 0)], dtype=np.int64).reshape(-1, 2)
            columns["keys"].append(reply["keys"])
            columns["refs"].append(reply["refs"])
            columns["worker"].append(np.full(len(reply["keys"]), w, dtype=np.int64))
            columns["kinds"].append(met[reply["codes"], 0])
            columns["actors"].append(met[reply["codes"], 1])
            findings += reply["findings"]
            terminal += reply["terminal"].tolist()
            if "expanding" in reply:
                failures.append((reply["expanding"], reply["error"]))
        joined = {name: np.concatenate(parts) for name, parts in columns.items()}
        order = np.argsort(joined["keys"], kind="stable")
        findings.sort(key=lambda found: (found[2], found[3]))
        failure = min(failures, key=lambda found: found[0]) if failures else None
        return Level(*(joined[name][order] for name in columns), findings, terminal, failure)

    def _number(self, group: WorkerGroup, replies: list[dict[str, Any]], level: Level, start: int,
                size: int) -> tuple[Numbering, int, Level]:
        """Ask each owner which of the level's unknown targets are new, number the new states in search
        order (each by the first transition that reaches it), find where one process stops in this
        level, and learn the index of every code the workers gave in it."""
        workers = group.count
        senders = [[w for w, reply in enumerate(replies) if o in reply["asked"]] for o in range(workers)]
        answers = group.call("admit", [([replies[w]["asked"][o] for w in senders[o]],) for o in range(workers)])
        level = self._with_state_findings(level, answers)
        firsts = np.concatenate([answer["firsts"] for answer in answers])
        rank = np.empty(len(firsts), dtype=np.int64)
        order = np.argsort(firsts, kind="stable")
        rank[order] = np.arange(len(firsts))
        firsts = firsts[order]
        cut = self._cut(level, firsts >> KEY_BITS, start, size)
        count = int(np.searchsorted(firsts >> KEY_BITS, start + cut))
        base = len(self.parents)
        admitted, at = [], 0
        for w, answer in enumerate(answers):
            mine = rank[at: at + len(answer["firsts"])]
            admitted.append(np.where(mine < count, base + mine, -1))
            at += len(answer["firsts"])
            table = self.indices[w]
            if len(table) < answer["codes"]:  # doubled, so that growing costs O(1) per code over the run
                grown = np.full(max(answer["codes"], 2 * len(table)), -1, dtype=np.int64)
                grown[: len(table)] = table
                self.indices[w] = table = grown
            table[answer["new_codes"]] = admitted[w]
        for o, answer in enumerate(answers):  # what a worker asked another about: the owner's index
            for w, theirs in zip(senders[o], answer["theirs"], strict=True):
                self.indices[w][replies[w]["base"] + replies[w]["asked"][o].numbers] = self.indices[o][theirs]
        return Numbering(firsts, count, admitted), cut, level

    def _with_state_findings(self, level: Level, answers: list[dict[str, Any]]) -> Level:
        """The level with the owners' verdicts on its new states: each violation a finding at the step
        that first reaches the state (`STATE`: recorded at the state, after that step's own findings),
        and a model error while judging one a failure at that step's source, after any error the
        expansion of that source met (it steps before it judges)."""
        findings = list(level.findings)
        failures = [] if level.failure is None else [(level.failure[0], 0, level.failure[1])]
        for answer in answers:
            firsts = answer["firsts"].tolist()
            findings += [(name, message, firsts[at] >> KEY_BITS, firsts[at] & ACTION_MASK, STATE)
                         for at, name, message in answer["judged"]]
            if "judging" in answer:
                failures.append((answer["judging"], 1, answer["error"]))
        findings.sort(key=lambda found: (found[2], found[3], len(found)))
        failure = min(failures, key=lambda found: found[:2]) if failures else None
        return level._replace(findings=findings, failure=None if failure is None else (failure[0], failure[2]))

    def _targets(self, level: Level) -> np.ndarray:
        """Every row's target index (-1 for a state past the cut)."""
        dst = np.empty(len(level.refs), dtype=np.int64)
        for w, indices in enumerate(self.indices):
            rows = level.worker == w
            dst[rows] = indices[level.refs[rows]]
        return dst

    def _cut(self, level: Level, new_sources: np.ndarray, start: int, size: int) -> int:
        """How many states of the level one process would expand before it stops: after the first state
        with a violating step or end (unless --keep-going), before the state at which the state limit is
        reached, before the state a model error happened at (which then ends the run). `new_sources`:
        the source of each new state, in search order."""
        cut = size
        if not self.options.keep_going and level.findings:
            cut = min(cut, level.findings[0][2] - start + 1)
        limit = self.options.max_states
        if limit is not None:
            found = np.bincount(new_sources - start, minlength=size)
            before = len(self.parents) + np.cumsum(found) - found
            over = np.flatnonzero(before >= limit)
            if len(over):
                cut = min(cut, int(over[0]))
        if level.failure is not None and level.failure[0] - start < cut:
            cut = level.failure[0] - start
            self.failure = level.failure
        return cut

    def _record(self, level: Level, taken: int, dst: np.ndarray, start: int, cut: int, firsts: np.ndarray,
                base: int) -> None:
        """Counts, coverage, violations, dead ends and the liveness graph of the states expanded; the
        level's new states are numbered from `base` in the order of their first keys, `firsts`."""
        self.transitions += taken
        fired = np.bincount(level.kinds[:taken], minlength=len(self.kinds)).tolist()
        for code, times in enumerate(fired):
            if times:
                self.fired[self.kinds[code]] = self.fired.get(self.kinds[code], 0) + times
        for name, message, source, action, *at_state in level.findings:
            if source >= start + cut:
                break
            if at_state:
                index = base + int(np.searchsorted(firsts, (source << KEY_BITS) | action))
                self._record_violation_at(index, Violation(name, message))
            elif action >= 0:
                self._record_violations(source, action, (Violation(name, message),))
            else:
                self._record_violation_at(source, Violation(name, message))
        for source in level.terminal:
            if source < start + cut:
                self.terminal[source] = 1
        if self.track_graph:
            self._record_graph(level, taken, dst[:taken], start, cut)

    def _record_graph(self, level: Level, taken: int, dst: np.ndarray, start: int, cut: int) -> None:
        """Fairness classes numbered in the order the search meets their actors, each expanded state's
        enabled fair classes, and the level's edges, kept until their targets' goals are known."""
        actors = level.actors[:taken]
        codes, first = np.unique(actors, return_index=True)
        for code in codes[np.argsort(first)].tolist():
            if code not in self.actor_class:
                self.actor_class[code] = self._class_of(Action(self.actors[code], ""))
            if not self.track_graph:
                return
        classes = np.array([self.actor_class.get(c, NO_CLASS) for c in range(len(self.actors))] or [NO_CLASS],
                           dtype=np.uint16)[actors]
        sources = level.sources[:taken]
        bits = np.where(classes == NO_CLASS, np.uint64(0), np.left_shift(np.uint64(1), classes.astype(np.uint64)))
        enabled = np.zeros(cut, dtype=np.uint64)
        np.bitwise_or.at(enabled, sources - start, bits)
        view = np.frombuffer(self.enabled, dtype=np.uint64)
        view[start: start + cut] = enabled
        del view  # the array grows again: no buffer may stay exported
        self.pending_edges = (sources, dst, classes, level.keys[:taken] & ACTION_MASK)

    def _flush_edges(self) -> None:
        """The pending edges between states with a goal unmet, in search order."""
        if self.pending_edges is None:
            return
        sources, targets, classes, actions = self.pending_edges
        self.pending_edges = None
        if not self.track_graph:
            return
        unmet = np.frombuffer(self.unmet, dtype=np.uint8)
        keep = (unmet[sources] & unmet[targets]) != 0
        del unmet
        self.edge_src.frombytes(sources[keep].astype(np.uint32).tobytes())
        self.edge_dst.frombytes(targets[keep].astype(np.uint32).tobytes())
        self.edge_class.frombytes(classes[keep].astype(np.uint16).tobytes())
        self.edge_action.frombytes(actions[keep].astype(np.uint16).tobytes())

    def _append_states(self, firsts: np.ndarray, depth: int) -> None:
        """The bookkeeping of the new states admitted, each by the first transition reaching it."""
        count = len(firsts)
        self.parents.frombytes((firsts >> KEY_BITS).astype(np.int64).tobytes())
        self.action_index.frombytes((firsts & ACTION_MASK).astype(np.uint16).tobytes())
        self.depths.frombytes(np.full(count, depth, dtype=np.uint32).tobytes())
        self.terminal.extend(bytes(count))
        if count and depth > self.max_depth:
            self.max_depth = depth

    # ------------------------------------------------------------------ bookkeeping
    def _edge_action(self, u: int, v: int) -> int:
        """The position of the first action from u to v: the first such edge, as edges are in search order."""
        src = np.frombuffer(self.edge_src, dtype=np.uint32)
        dst = np.frombuffer(self.edge_dst, dtype=np.uint32)
        at = int(np.flatnonzero((src == u) & (dst == v))[0])
        del src, dst
        return self.edge_action[at]

