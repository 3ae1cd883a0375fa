"""The vector engine: the explorer's breadth-first search, one whole level per numpy call.

A model may ship `vector_kernel()`: its transition relation compiled to numpy over packed states (one
row of small integers per model state), with the facts of each step given as codes into a fixed
alphabet of `Fact`s. The engine still judges the invariants with `steersim.core.monitors`: it carries each
monitor's state as an interned id and steps it through a table that the monitor itself fills in, once
per (monitor state, fact) pair rather than once per transition.

The engine reproduces the explorer exactly. It orders each level's transitions by (source, position
of the action in `actions()`), so every state gets the same discovery index, a run stops at the same
state for a violation or a state limit, and counterexamples are the same action paths, rebuilt by
re-executing them through `steersim.core.product.Product`. Only the search loop is its own; the bookkeeping,
verdicts, liveness and reports are the explorer's. `tests/test_vector.py` holds every kernel to its
model transition by transition, and the two engines' reports to each other.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, Protocol

import numpy as np

from steersim.checking.codes import Codes
from steersim.checking.explorer import CheckOptions, CheckResult, Explorer
from steersim.checking.guarded_kernel import GuardedKernel
from steersim.checking.liveness import NO_CLASS
from steersim.core.facts import Fact
from steersim.core.model import Action, Model, as_model_base
from steersim.core.monitors import StepMemo
from steersim.core.product import Product, PState

STEP_WORDS = 4  # 64-bit words a step of a chunk holds besides its row and ids (rough: see benchmarks/memory_bench.py)
CHUNK = 1 << 15  # states expanded per numpy pass: bounds the per-step arrays, not the search order
FNV_OFFSET, FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)


class StepBatch(NamedTuple):
    """The steps of one action slot from many states of a level. `source` indexes the level's rows,
    `position` is the action's index in `actions()` of each source, `actor` and `kind` the actor and
    the action kind of all of them,
    `targets` the packed model states reached, `facts` the fact codes of each step in order (-1 pads),
    and `broken` maps a step property to where the step breaks it (absent: nowhere)."""

    source: np.ndarray
    position: np.ndarray
    actor: str
    kind: str
    targets: np.ndarray
    facts: np.ndarray
    broken: Mapping[str, np.ndarray]


class VectorKernel(Protocol):
    """A model's transition relation over packed states: a state is a row of bytes, `width` of them
    meaningful (the engine pads rows to whole words; a kernel builds targets by copying rows, so the
    padding stays zero). `facts` is the alphabet fact codes index. `properties` names the model
    properties the kernel judges: the state ones through `predicates` (rows -> where each holds), the
    step ones through `StepBatch.broken`."""

    width: int
    facts: Sequence[Fact]
    properties: frozenset[str]

    def encode(self, state: Hashable) -> Sequence[int]: ...

    def decode(self, row: np.ndarray) -> Hashable: ...

    def steps(self, rows: np.ndarray) -> list[StepBatch]: ...

    def predicates(self, rows: np.ndarray) -> dict[str, np.ndarray]: ...


def vector_unsupported(model: Model, options: CheckOptions) -> str | None:
    """Why the vector engine cannot run this check (None when it can)."""
    if as_model_base(model).vector_kernel is None:
        return f"model {model.name!r} has no vector kernel"
    if options.strategy != "bfs":
        return "the vector engine searches breadth-first only"
    if options.max_depth is not None:
        return "the vector engine has no depth limit"
    if options.por or options.symmetry:
        return "the vector engine has no reductions"
    if options.checkpoint is not None:
        return "the vector engine does not checkpoint"
    product = Product(model)
    if product.eventually and options.liveness:
        return "the vector engine checks the monitors' liveness only, not a model's own eventually-properties"
    kernel = model.vector_kernel()  # type: ignore[attr-defined]
    wanted = {p.name for p in (*product.state_props, *product.step_props, *product.sometimes)}
    missing = sorted(wanted - set(kernel.properties))
    if missing:
        return f"the vector kernel does not judge {', '.join(missing)}"
    return None


class MonitorTable:
    """One monitor's automaton as far as the search has met it: its states interned to ids, and per
    (id, fact code) the next id and whether that step breaks the invariant, filled on first use from the
    product's memo of the monitor's steps (`steersim.core.monitors.StepMemo`)."""

    def __init__(self, steps: StepMemo, alphabet: Sequence[Fact]) -> None:
        self.steps = steps
        self.monitor = monitor = steps.monitor
        self.alphabet = alphabet
        self.watched = np.array([fact.name in monitor.watches for fact in alphabet], dtype=bool)
        self.states: list[Hashable] = []
        self.ids: dict[Hashable, int] = {}
        self.next = np.full((16, len(alphabet)), -1, dtype=np.int32)
        self.broken = np.zeros((16, len(alphabet)), dtype=bool)
        self.settled: list[bool] = []
        self.bad_end: list[bool] = []

    def intern(self, state: Hashable) -> int:
        sid = self.ids.get(state)
        if sid is None:
            sid = self.ids[state] = len(self.states)
            self.states.append(state)
            self.settled.append(self.monitor.settled(state))
            self.bad_end.append(self.monitor.at_end(state) is not None)
            if sid >= len(self.next):
                grow = len(self.next)
                self.next = np.vstack([self.next, np.full((grow, len(self.alphabet)), -1, dtype=np.int32)])
                self.broken = np.vstack([self.broken, np.zeros((grow, len(self.alphabet)), dtype=bool)])
        return sid

    def step(self, ids: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The next ids and where the step broke the invariant (a broken step keeps the old state,
        as in `Product.step`)."""
        following = self.next[ids, codes]
        missing = following < 0
        if missing.any():
            pairs = np.unique(np.stack([ids[missing], codes[missing]], axis=1), axis=0)
            for sid, code in pairs.tolist():
                self._fill(sid, code)
            following = self.next[ids, codes]
        return following, self.broken[ids, codes]

    def _fill(self, sid: int, code: int) -> None:
        following, broken = sid, False
        if self.watched[code]:
            step = self.steps.follow(self.states[sid], self.alphabet[code])
            following, broken = self.intern(step.state), step.broken is not None
        self.next[sid, code] = following
        self.broken[sid, code] = broken


class SortedVisited:
    """The visited set as sorted fingerprints with each state's index: a level merges in one pass."""

    def __init__(self) -> None:
        self.fps = np.zeros(0, dtype=np.uint64)
        self.index = np.zeros(0, dtype=np.int32)

    def lookup(self, fps: np.ndarray) -> np.ndarray:
        """Each fingerprint's state index, or -1."""
        if not len(self.fps):
            return np.full(len(fps), -1, dtype=np.int32)
        at = np.searchsorted(self.fps, fps)
        inside = at < len(self.fps)
        found = np.zeros(len(fps), dtype=bool)
        found[inside] = self.fps[at[inside]] == fps[inside]
        return np.where(found, self.index[np.minimum(at, len(self.fps) - 1)], -1)

    def add(self, fps: np.ndarray, index: np.ndarray) -> None:
        order = np.argsort(fps)
        fps, index = fps[order], index[order]
        at = np.searchsorted(self.fps, fps)
        self.fps = np.insert(self.fps, at, fps)
        self.index = np.insert(self.index, at, index)


def fingerprints(rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """64-bit fingerprints of product rows: the packed model state (bytes, a multiple of 8 wide) and
    the monitor ids. Each 64-bit word is folded in with a multiply and a right shift, so that a change
    in any byte reaches every bit, then the splitmix64 finaliser spreads the result."""
    words = [np.ascontiguousarray(rows).view(np.uint64),
             np.ascontiguousarray(ids.astype(np.int64)).view(np.uint64)]
    h = np.full(len(rows), FNV_OFFSET, dtype=np.uint64)
    for block in words:
        for column in block.T:
            h ^= column
            h *= FNV_PRIME
            h ^= h >> np.uint64(29)
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


class Level(NamedTuple):
    """A level's transitions in search order (by source, then action position). The wide arrays,
    `targets` and `ids`, stay in the kernel's order: `order` maps search order to them, and only the
    new states are ever gathered."""

    source: np.ndarray
    position: np.ndarray
    actor: np.ndarray  # index into VectorExplorer.actors
    kind: np.ndarray  # index into VectorExplorer.kinds
    fps: np.ndarray
    broken: np.ndarray  # (steps, always-properties)
    order: np.ndarray
    targets: np.ndarray
    ids: np.ndarray


class VectorExplorer(Explorer):
    """The explorer with a level-at-a-time search loop over a model's vector kernel."""

    def __init__(self, model: Model, options: CheckOptions) -> None:
        super().__init__(model, options)
        self.kernel: VectorKernel = GuardedKernel(model.vector_kernel())  # type: ignore[attr-defined]
        product = self.product
        self.tables = [MonitorTable(steps, self.kernel.facts) for steps in product.monitor_steps]
        self.seen = SortedVisited()
        self.stride = -(-self.kernel.width // 8) * 8  # rows are padded to whole 64-bit words
        self.always = [m.name for m in product.monitors] + [p.name for p in (*product.step_props,
                                                                            *product.state_props)]
        self.actors, self.kinds = Codes(), Codes()
        self.actor_class: dict[int, int] = {}  # actor code -> its fairness class, once the actor is met
        # each liveness property checked is a monitor's `.eventually` (a model's own ones are refused)
        monitor_of = {f"{m.name}.eventually": i for i, m in enumerate(product.monitors)}
        self.live_monitors = [monitor_of[name] for name in self.live_names]

    # ------------------------------------------------------------------ search
    def run(self, resumed: Any = None, seconds_before: float = 0.0) -> CheckResult:
        """Search from the initial states (a vector run never checkpoints, so it never resumes)."""
        if resumed is not None:
            raise ValueError("the vector engine does not resume checkpoints")
        started = time.monotonic() - seconds_before
        opts = self.options
        rows, ids = self._initial_level()
        depth = 0
        next_report = started + opts.progress_interval
        pending = len(rows) > 0
        while pending and not self._stopped() and self.incomplete_reason is None:
            now = time.monotonic()
            if opts.timeout is not None and now - started > opts.timeout:
                self.incomplete_reason = f"time limit {opts.timeout:g} s reached"
                break
            if opts.progress is not None and now >= next_report:
                next_report = now + opts.progress_interval
                opts.progress(self._progress(now - started, len(rows), depth))
            rows, ids, pending = self._expand(rows, ids, depth)
            depth += 1
        if pending and self.incomplete_reason is None and not self._violated_and_stopping():
            self.incomplete_reason = f"state limit {opts.max_states} reached"
        if not pending and self.incomplete_reason is None:
            self._finish_complete()
        elif self.incomplete_reason and self.live and self.track_graph:
            self.notes.append(f"liveness not checked: {self.incomplete_reason}")
        seconds = time.monotonic() - started
        if opts.progress is not None:
            opts.progress(self._progress(seconds, len(rows) if pending else 0, self.max_depth))
        return self._result(seconds)

    def _initial_level(self) -> tuple[np.ndarray, np.ndarray]:
        kept_rows, kept_ids = [], []
        for k, init in enumerate(self.product.init_states()):
            row, ids = self._encode(init)
            fp = fingerprints(row[None, :], ids[None, :])
            if self.seen.lookup(fp)[0] >= 0:
                continue
            index = len(self.parents)
            self._append_states(fp, np.array([-1]), np.array([k]), 0, ids[None, :])
            self._judge_state(index, init, None)
            kept_rows.append(row)
            kept_ids.append(ids)
        return (np.array(kept_rows, dtype=np.uint8).reshape(-1, self.stride),
                np.array(kept_ids, dtype=np.int32).reshape(-1, len(self.tables)))

    def _encode(self, pstate: PState) -> tuple[np.ndarray, np.ndarray]:
        row = np.zeros(self.stride, dtype=np.uint8)
        row[: self.kernel.width] = self.kernel.encode(pstate[0])
        ids = np.array([table.intern(m) for table, m in zip(self.tables, pstate[1], strict=True)], dtype=np.int32)
        return row, ids

    def _index_of(self, pstate: PState) -> int:
        row, ids = self._encode(pstate)
        return int(self.seen.lookup(fingerprints(row[None, :], ids[None, :]))[0])

    def _steps(self, rows: np.ndarray, ids: np.ndarray) -> Level:
        """Every transition from `rows`, with the monitors stepped and the properties judged. The
        batches are joined first, so each fact column costs one table lookup per monitor per level."""
        batches = [b for b in self.kernel.steps(rows) if len(b.source)]
        sizes = [len(b.source) for b in batches]
        ends = np.cumsum([0, *sizes])
        count = int(ends[-1])
        width = max((b.facts.shape[1] for b in batches), default=0)
        facts = np.full((count, width), -1, dtype=np.int32)
        broken = np.zeros((count, len(self.always)), dtype=bool)
        for b, lo, hi in zip(batches, ends[:-1], ends[1:], strict=True):
            facts[lo:hi, : b.facts.shape[1]] = b.facts
            for name, where in b.broken.items():
                broken[lo:hi, self.always.index(name)] = where
        source = np.concatenate([b.source for b in batches]).astype(np.int64) if batches else np.zeros(0, np.int64)
        position = np.concatenate([b.position for b in batches]).astype(np.int64) if batches else source
        actor = np.repeat(np.array([self.actors.code(b.actor) for b in batches], dtype=np.int64), sizes)
        kind = np.repeat(np.array([self.kinds.code(b.kind) for b in batches], dtype=np.int64), sizes)
        targets = (np.vstack([b.targets for b in batches]) if batches
                   else np.zeros((0, self.stride), dtype=np.uint8))
        tids = ids[source]
        for column in facts.T:
            at = np.flatnonzero(column >= 0)
            codes = column[at]
            for m, table in enumerate(self.tables):
                watched = table.watched[codes]
                if not watched.any():
                    continue
                where, what = at[watched], codes[watched]
                tids[where, m], bad = table.step(tids[where, m], what)
                broken[where, m] |= bad
        state_props = self.product.state_props
        if state_props:
            holds = self.kernel.predicates(targets)
            for j, prop in enumerate(state_props, start=len(self.always) - len(state_props)):
                broken[:, j] |= ~holds[prop.name]
        order = np.argsort(source * (int(position.max(initial=0)) + 1) + position, kind="stable")
        fps = fingerprints(targets, tids)
        return Level(source[order], position[order], actor[order], kind[order], fps[order], broken[order], order,
                     targets, tids)

    def _expand(self, rows: np.ndarray, ids: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """Expand one level, in chunks of CHUNK states so that the per-step arrays stay small; returns the
        next level and whether anything is left to expand."""
        first = len(self.parents) - len(rows)
        found_rows, found_ids = [], []
        unexpanded = False
        for lo in range(0, len(rows), CHUNK):
            hi = min(lo + CHUNK, len(rows))
            if (lo and self._stopped()) or self._memory_exceeded(self._chunk_mb(hi - lo)):
                unexpanded = True
                break
            new_rows, new_ids, complete = self._expand_chunk(rows[lo:hi], ids[lo:hi], np.arange(first + lo, first + hi),
                                                             depth)
            found_rows.append(new_rows)
            found_ids.append(new_ids)
            if not complete:
                unexpanded = True
                break
        if not found_rows:
            return rows[:0], ids[:0], True
        rows, ids = np.vstack(found_rows), np.vstack(found_ids)
        return rows, ids, unexpanded or len(rows) > 0

    def _chunk_mb(self, states: int) -> float:
        """What expanding `states` states allocates at once, in MB: the chunk's steps (a row, fact codes,
        monitor ids and a few words of bookkeeping each, at the branching seen so far) and the copy of
        the visited set that merging the new states makes."""
        branching = self.transitions / len(self.parents) if self.transitions else 8.0
        per_step = 2 * self.stride + 8 * len(self.tables) + STEP_WORDS * 8
        return (states * branching * per_step + 12 * (len(self.seen.fps) + states * branching)) / 1e6

    def _expand_chunk(self, rows: np.ndarray, ids: np.ndarray, index: np.ndarray,
                      depth: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """Expand the states `index` (rows `rows`) in search order; returns the states found and whether
        every one of `rows` was expanded (not when the search stopped inside the chunk)."""
        n = len(rows)
        level = self._steps(rows, ids)
        fps = level.fps
        distinct, first, inverse = np.unique(fps, return_index=True, return_inverse=True)
        known = self.seen.lookup(distinct)
        unseen = np.flatnonzero(known < 0)
        firsts = first[unseen]  # the step that discovers each new state, in fingerprint order
        rank = np.empty(len(firsts), dtype=np.int64)
        rank[np.argsort(firsts)] = np.arange(len(firsts))
        count = len(self.parents)
        known[unseen] = count + rank
        target = known[inverse.reshape(-1)]
        discovers = np.zeros(len(fps), dtype=bool)
        discovers[firsts] = True
        terminal = np.bincount(level.source, minlength=n) == 0
        bad_end = np.zeros((n, len(self.tables)), dtype=bool)
        for m, table in enumerate(self.tables):
            bad_end[:, m] = np.asarray(table.bad_end, dtype=bool)[ids[:, m]] & terminal
        cut = self._cut(n, level, discovers, bad_end, count)
        taken = int(np.searchsorted(level.source, cut))
        self.transitions += taken
        for code, fired in enumerate(np.bincount(level.kind[:taken], minlength=len(self.kinds)).tolist()):
            if fired:
                self.fired[self.kinds[code]] = self.fired.get(self.kinds[code], 0) + fired
        self._record_level_violations(level, taken, bad_end[:cut], index)
        new = np.sort(firsts[firsts < taken])
        rows, ids = level.targets[level.order[new]], level.ids[level.order[new]]
        self._append_states(fps[new], index[level.source[new]], level.position[new], depth + 1, ids)
        self._judge_new(rows, count)
        start = int(index[0])
        self.terminal[start: start + cut] = terminal[:cut].astype(np.uint8).tobytes()
        if self.track_graph:
            self._record_edges(level, taken, index, target[:taken], cut)
        return rows, ids, cut == n

    def _cut(self, n: int, level: Level, discovers: np.ndarray, bad_end: np.ndarray, count: int) -> int:
        """How many of the level's states the explorer expands before it stops: it stops after the
        first state with a violating step or end (unless it keeps going), and before any state met
        when the state limit is already reached."""
        cut = n
        if not self.options.keep_going:
            bad_steps = np.flatnonzero(level.broken.any(axis=1))
            if len(bad_steps):
                cut = min(cut, int(level.source[bad_steps[0]]) + 1)
            bad_ends = np.flatnonzero(bad_end.any(axis=1))
            if len(bad_ends):
                cut = min(cut, int(bad_ends[0]) + 1)
        limit = self.options.max_states
        if limit is not None:
            found = np.bincount(level.source[discovers], minlength=n)
            before = count + np.cumsum(found) - found
            over = np.flatnonzero(before >= limit)
            if len(over):
                cut = min(cut, int(over[0]))
        return cut

    # ------------------------------------------------------------------ bookkeeping
    def _append_states(self, fps: np.ndarray, parents: np.ndarray, actions: np.ndarray, depth: int,
                       ids: np.ndarray) -> None:
        count = len(self.parents)
        self.seen.add(fps, np.arange(count, count + len(fps)))
        self.parents.frombytes(parents.astype(np.int64).tobytes())
        self.action_index.frombytes(actions.astype(np.uint16).tobytes())
        self.depths.frombytes(np.full(len(fps), depth, dtype=np.uint32).tobytes())
        self.terminal.extend(bytes(len(fps)))
        if len(fps) and depth > self.max_depth:
            self.max_depth = depth
        if not self.track_graph:
            return
        unmet = np.zeros(len(fps), dtype=np.uint8)
        for bit, m in enumerate(self.live_monitors):
            unmet |= np.where(np.asarray(self.tables[m].settled, dtype=bool)[ids[:, m]], 0, 1 << bit).astype(np.uint8)
        self.unmet.extend(unmet.tobytes())
        self.trigger.extend(unmet.tobytes())  # a monitor's obligation is its own trigger: "unsettled"
        self.enabled.frombytes(np.zeros(len(fps), dtype=np.uint64).tobytes())
        if len(self.parents) > self.options.liveness_limit:
            self._drop_graph(f"more than {self.options.liveness_limit:,} states (--liveness-limit)")

    def _judge_new(self, targets: np.ndarray, count: int) -> None:
        waiting = [p for p in self.product.sometimes if self.results[p.name].status != "reached"]
        if not waiting or not len(targets):
            return
        holds = self.kernel.predicates(targets)
        for prop in waiting:
            where = np.flatnonzero(holds[prop.name])
            if len(where):
                result = self.results[prop.name]
                result.status = "reached"
                result.counterexample = self._path(count + int(where[0]))

    def _record_level_violations(self, level: Level, taken: int, bad_end: np.ndarray, index: np.ndarray) -> None:
        """Each property's first violation in search order: a step's, or a dead end's (a state
        without steps comes in order of its index, and has no steps to tie with)."""
        for j, name in enumerate(self.always):
            if self.results[name].status == "violated":
                continue
            steps = np.flatnonzero(level.broken[:taken, j])
            ends = np.flatnonzero(bad_end[:, j]) if j < len(self.tables) else np.zeros(0, dtype=np.int64)
            step_at = int(level.source[steps[0]]) if len(steps) else None
            end_at = int(ends[0]) if len(ends) else None
            if step_at is not None and (end_at is None or step_at < end_at):
                path = self._path(int(index[step_at]), extra=int(level.position[steps[0]]))
                found = [v for v in path.steps[-1].violations if v.property == name]
            elif end_at is not None:
                path = self._path(int(index[end_at]))
                found = [v for v in self.product.end_violations(path.states[-1]) if v.property == name]
            else:
                continue
            if not found:
                raise RuntimeError(f"the vector kernel of {self.model.name!r} disagrees with the model on {name}")
            result = self.results[name]
            result.status = "violated"
            result.counterexample = replace(path, violation=found[0])

    def _record_edges(self, level: Level, taken: int, index: np.ndarray, target: np.ndarray, cut: int) -> None:
        """The liveness graph: fairness classes numbered in the order the search meets their actors,
        each expanded state's enabled fair classes, and the edges between states with a goal unmet."""
        actor = level.actor[:taken]
        codes, first = np.unique(actor, return_index=True)
        for code in codes[np.argsort(first)].tolist():
            if code not in self.actor_class:
                self.actor_class[code] = self._class_of(Action(self.actors[code], ""))
            if not self.track_graph:
                return
        classes = np.array([self.actor_class.get(c, NO_CLASS) for c in range(len(self.actors))],
                           dtype=np.uint16)[actor]
        sources = index[level.source[:taken]]
        bits = np.where(classes == NO_CLASS, np.uint64(0), np.left_shift(np.uint64(1), classes.astype(np.uint64)))
        enabled = np.zeros(cut, dtype=np.uint64)
        np.bitwise_or.at(enabled, level.source[:taken], bits)
        start = int(index[0])
        view = np.frombuffer(self.enabled, dtype=np.uint64)
        view[start: start + cut] = enabled
        unmet = np.frombuffer(self.unmet, dtype=np.uint8)
        keep = (unmet[sources] & unmet[target]) != 0
        del view, unmet  # the arrays grow again next level: no buffer may stay exported
        self.edge_src.frombytes(sources[keep].astype(np.uint32).tobytes())
        self.edge_dst.frombytes(target[keep].astype(np.uint32).tobytes())
        self.edge_class.frombytes(classes[keep].astype(np.uint16).tobytes())

