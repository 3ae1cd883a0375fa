"""The explorer: exhaustive search of a model's product with the fact monitors.

Breadth-first by default, so the first counterexample found for a safety property is a shortest one.
The visited set maps each product state itself (its representative under symmetry) to its discovery
index: exact, so no two states are ever taken for one, and looked up with the state's own hash and
equality, which cost less than any encoding of the state would. Flat arrays hold, per index, the
parent's index, the index of the action that reached it and its depth. Each state is expanded in one
call (`Product.search`), which looks its targets up in the visited set as it steps them, so that the
explorer handles only the steps that reach a new state or break a property. Counterexamples are
rebuilt by re-executing the action path (`steersim.core.paths`).

Liveness (`Eventually`, leads-to under weak fairness) needs the graph: while the run stays under
`liveness_limit` states the explorer also keeps, per state, which goals are unmet, which triggers hold
and which fair actors are enabled, and the edges between unmet states; `steersim.checking.liveness` then decides each
property from those arrays. Above the limit liveness is reported as unknown, with the reason.
"""

from __future__ import annotations

import gc
import sys
import time
from array import array
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from steersim.checking.checkpoint import check_checkpoint_target, load_checkpoint, save_checkpoint
from steersim.checking.coverage import Coverage, coverage_of, declared_kinds, not_enabled_kinds
from steersim.checking.liveness import NO_CLASS, find_lasso
from steersim.checking.memory import liveness_mb, rss_mb
from steersim.checking.reduction import canonical, has_local_actions, has_symmetry
from steersim.checking.visited import Frontier
from steersim.core.model import Action, Model
from steersim.core.paths import Path, located, replay_indices
from steersim.core.product import Product, PState, Violation
from steersim.errors import EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION, ModelError
from steersim.interrupts import INTERRUPTED, INTERRUPTED_NOTE, UNDECIDED_NOTE

# the search looks at its limits every 256 expansions
EXPANSIONS_BETWEEN_CHECKS = 256


@dataclass
class CheckOptions:
    """Search strategy and limits. A limit that ends the run makes the verdict `incomplete`."""

    strategy: str = "bfs"
    max_states: int | None = None
    max_depth: int | None = None
    timeout: float | None = None
    max_memory_mb: float | None = None
    keep_going: bool = False
    liveness: bool = True
    liveness_limit: int = 2_000_000
    por: bool = False
    symmetry: bool = False
    checkpoint: str | None = None
    checkpoint_every: float = 60.0
    identity: dict[str, Any] = field(default_factory=dict)  # what a checkpoint must match to be resumed
    progress: Callable[[dict[str, Any]], None] | None = None
    progress_interval: float = 1.0
    engine: str = "auto"  # auto | generic | vector (see steersim.checking.vector); auto takes vector when it can run


@dataclass
class PropertyResult:
    name: str
    kind: str
    status: str  # holds | violated | reached | unreached | unknown
    doc: str = ""
    counterexample: Path | None = None
    note: str = ""
    cause: dict[str, Any] | None = None  # detect_step, cause_step, summary of a violation (steersim.traces.cause)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "status": self.status}
        if self.counterexample is not None:
            out["counterexample"] = {**self.counterexample.to_json(), **(self.cause or {})}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class CheckResult:
    model: str
    status: str  # ok | violation | incomplete | interrupted
    states: int
    transitions: int
    max_depth: int
    seconds: float
    properties: list[PropertyResult]
    notes: list[str] = field(default_factory=list)
    coverage: Coverage = field(default_factory=lambda: coverage_of((), {}))  # transitions per action kind

    @property
    def exit_code(self) -> int:
        return {"ok": EXIT_OK, "violation": EXIT_VIOLATION, "incomplete": EXIT_INCOMPLETE,
                INTERRUPTED: EXIT_INTERRUPTED}[self.status]


class Explorer:
    """One exhaustive run over a model. Use `check(model, options)`."""

    def __init__(self, model: Model, options: CheckOptions) -> None:
        if options.checkpoint is not None:
            check_checkpoint_target(options.checkpoint)
        self.model = model
        self.product = Product(model)
        self.options = options
        self.visited: dict[Hashable, int] = {}
        self.parents = array("q")
        self.action_index = array("H")
        self.depths = array("I")
        self.terminal = bytearray()
        self.results = {info.name: PropertyResult(info.name, info.kind, "unknown", info.doc)
                        for info in self.product.property_infos()}
        self.transitions = 0
        self.violations_seen = 0  # properties found violated so far (`run` counts a resumed run's)
        self.fired: dict[str, int] = {}  # transitions taken per action kind
        self.max_depth = 0
        self.incomplete_reason: str | None = None
        self.interrupted = False
        self.notes: list[str] = []
        self.live = self.product.liveness if options.liveness else ()
        self.live_names = [p.name for p in self.live]
        # the liveness properties without a trigger, whose obligation starts in the initial states
        self.untriggered = sum(1 << bit for bit, prop in enumerate(self.live) if prop.trigger is None)
        if len(self.live) > 8:
            raise ValueError("at most 8 eventually-properties can be checked in one run")
        if not options.liveness and self.product.liveness:
            self.notes.append("liveness not checked: turned off by the caller")
        # the liveness graph, kept while track_graph holds
        self.track_graph = bool(self.live)
        self.unmet = bytearray()  # per state: bit k set when liveness goal k does not hold
        self.trigger = bytearray()  # per state: bit k set when liveness trigger k holds
        self.enabled = array("Q")  # per state: bit c set when fair actor c can act
        self.edge_src = array("I")
        self.edge_dst = array("I")
        self.edge_class = array("H")
        self.classes: dict[str, int] = {}
        self.actor_classes: dict[str, int] = {}  # actor -> its class or NO_CLASS (`_class_of`)
        self.por = options.por and has_local_actions(model)
        if options.por and not self.por:
            self.notes.append("partial-order reduction off: the model declares no local actions (is_local)")
        if self.por and self.live:
            self.por = False
            self.notes.append("partial-order reduction off: it is not sound for liveness under fairness; "
                              "use --no-liveness to check safety with it")
        if self.por:
            self.notes.append("partial-order reduction on: counterexamples need not be shortest")
        self.symmetry = options.symmetry and has_symmetry(model)
        if options.symmetry and not self.symmetry:
            self.notes.append("symmetry reduction off: the model declares no symmetry")
        self.judged = (*(p.state for p in self.product.sometimes), *(p.state for p in self.product.state_props))
        self._track_unreached(self._unreached())
        # each state is judged by the state properties once, when first reached, not on every step that
        # reaches it; under symmetry the visited set holds a representative, and every state reached is judged
        self.judge_targets = not self.symmetry

    def _unreached(self) -> list:
        """The sometimes-properties no state has satisfied yet: the only ones a new state is judged by."""
        return [p for p in self.product.sometimes if self.results[p.name].status != "reached"]

    def _track_unreached(self, unreached: list) -> None:
        """`unreached`, with the predicates a search asks of every new state first (`reaching`)."""
        self.unreached = unreached
        holds = self.product.sometimes_predicates
        self.reaching = tuple(holds[prop.name] for prop in unreached)

    # ------------------------------------------------------------------ search
    def run_interruptible(self, resumed: Frontier | None = None, seconds_before: float = 0.0) -> CheckResult:
        """`run`, where Ctrl-C ends the search with what it has so far: status interrupted, the counts
        reached and the verdicts already decided (`steersim.interrupts`)."""
        started = time.monotonic() - seconds_before
        try:
            return self.run(resumed, seconds_before)
        except KeyboardInterrupt:
            self.interrupted = True
            return self._result(time.monotonic() - started)

    def run(self, resumed: Frontier | None = None, seconds_before: float = 0.0) -> CheckResult:
        """Search from the initial states, or continue a checkpoint's frontier (`resumed`).

        The cyclic garbage collector's own passes are off meanwhile: the visited states live until the
        search ends, and each full pass would traverse all of them again (a quarter of the run's time).
        The young objects are collected instead at every look at the limits, so that reference cycles
        the model's code drops are freed as before (unless the caller had turned the collector off)."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._search(resumed, seconds_before, collecting)
        finally:
            if collecting:
                gc.enable()

    def _search(self, resumed: Frontier | None, seconds_before: float, collecting: bool) -> CheckResult:
        started = time.monotonic() - seconds_before
        product, opts = self.product, self.options
        frontier = Frontier(lifo=opts.strategy != "bfs") if resumed is None else resumed
        self._track_unreached(self._unreached())
        for k, init in enumerate(product.init_states() if resumed is None else ()):
            key = self._key(init)
            if key in self.visited:
                continue
            try:
                index = self._add(key, -1, k, 0, init)
                self._judge_state(index, init, None)
            except ModelError as error:
                raise error.with_path((), f"initial state {k}") from None
            frontier.append((index, init, 0))
        pop, queued = frontier.pop, frontier.entries  # the deque itself, asked before every expansion
        next_report = time.monotonic() + opts.progress_interval
        next_checkpoint = time.monotonic() + opts.checkpoint_every
        check_every = 0
        expand = self._expand
        max_depth = opts.max_depth
        parents, max_states = self.parents, opts.max_states
        self.violations_seen = sum(r.status == "violated" for r in self.results.values())
        while queued:
            # `_stopped`, reading the counters first: it is asked before every expansion
            if (self.violations_seen and self._violated_and_stopping()) or (
                    max_states is not None and len(parents) >= max_states):
                break
            index, state, depth = pop()
            try:
                if max_depth is not None and depth >= max_depth:
                    if product.actions(state):
                        self.incomplete_reason = f"depth limit {max_depth} reached"
                    continue
                expand(index, state, depth, frontier)
            except ModelError as error:
                raise located(error, self._path(index)) from None
            check_every += 1
            if check_every >= EXPANSIONS_BETWEEN_CHECKS:
                check_every = 0
                if collecting:
                    gc.collect(1)
                now = time.monotonic()
                if opts.timeout is not None and now - started > opts.timeout:
                    self.incomplete_reason = f"time limit {opts.timeout:g} s reached"
                    break
                if self._memory_exceeded(self._growth_mb()):
                    break
                if opts.progress is not None and now >= next_report:
                    next_report = now + opts.progress_interval
                    opts.progress(self._progress(now - started, len(frontier), depth))
                if opts.checkpoint is not None and now >= next_checkpoint:
                    save_checkpoint(opts.checkpoint, self, frontier, now - started)
                    next_checkpoint = time.monotonic() + opts.checkpoint_every
        if frontier and self.incomplete_reason is None and not self._violated_and_stopping():
            self.incomplete_reason = f"state limit {opts.max_states} reached"
        if not frontier and self.incomplete_reason is None:
            self._finish_complete()
        elif self.incomplete_reason and self.live and self.track_graph:
            self.notes.append(f"liveness not checked: {self.incomplete_reason}")
        seconds = time.monotonic() - started
        if opts.progress is not None:
            opts.progress(self._progress(seconds, len(frontier), self.max_depth))
        return self._result(seconds)

    def _key(self, pstate: PState) -> Hashable:
        """What the visited set knows a state by: the state, or its representative under symmetry."""
        return canonical(self.model, pstate) if self.symmetry else pstate

    def _growth_mb(self) -> float:
        """What the visited set allocates at once if it grows in the next expansions: a dict doubles
        its table, so at most about its present size again."""
        return sys.getsizeof(self.visited) / 1e6

    def _index_of(self, pstate: PState) -> int:
        """The discovery index of a visited state (-1 when unvisited)."""
        return self.visited.get(self._key(pstate), -1)

    def _ample_step(self, state: PState) -> tuple[int, list] | None:
        """A singleton ample set: the first local action whose step is invisible here and leads to a new
        state (the cycle proviso), entered in the visited set and returned as `Product.search` returns
        steps; None when the state must be fully expanded."""
        model, product = self.model, self.product
        for k, action in enumerate(list(product.actions(state))):
            if not model.is_local(action):  # type: ignore[attr-defined]
                continue
            transition = product.step(state, action)
            if transition is None or transition.facts or transition.violations:
                continue
            before, target = state[0], transition.target
            if any(judge(before) != judge(target[0]) for judge in self.judged):
                continue
            key = self._key(target)
            if key in self.visited:
                continue
            self.fired[action.kind] = self.fired.get(action.kind, 0) + 1
            code = self.visited[key] = len(self.visited)
            return 1, [(k, code, target, ())]
        return None

    def _expand(self, index: int, state: PState, depth: int, frontier: Frontier) -> None:
        every = [] if self.track_graph else None
        taken = self._ample_step(state) if self.por else None
        count, found = taken or self.product.search(
            state, self.visited, self.fired, key=self._key if self.symmetry else None,
            judge_every=not self.judge_targets, every=every)
        self.transitions += count
        append, child_depth = frontier.append, depth + 1
        # a new state is judged in one pass over the unwrapped predicates: the sometimes-properties not
        # yet reached and, where the search left it to here, the state properties; only a state one of
        # them flags (or that raises) is judged again, property by property (`_judge_state`)
        judging = self.product.state_predicates if self.judge_targets else ()
        for k, code, target, violations in found:  # the steps that reach a new state or break a property
            if violations:
                self._record_violations(index, k, violations)
            if target is not None:
                self._record_state(code, index, k, child_depth, target)
                model_state, suspect = target[0], False
                try:
                    for holds in self.reaching:
                        if holds(model_state):
                            suspect = True
                    for judge in judging:
                        if not judge(model_state):
                            suspect = True
                except Exception:
                    suspect = True
                if suspect:
                    self._judge_state(code, target, index)
                append((code, target, child_depth))
        if every is not None and self.track_graph:  # recording a state may have dropped the graph
            self._record_edges(index, every)
        if not count:
            self.terminal[index] = 1
            for violation in self.product.end_violations(state):
                self._record_violation_at(index, violation)

    def _record_edges(self, index: int, every: list[tuple[int, Action, int]]) -> None:
        """The liveness graph's part from state `index`: the fair actors enabled there, and its steps
        between states where some goal is unmet."""
        unmet, actor_classes = self.unmet, self.actor_classes
        edge_src, edge_dst, edge_class = self.edge_src, self.edge_dst, self.edge_class
        enabled_mask = 0
        for _, action, target_index in every:
            cls = actor_classes.get(action.actor)
            if cls is None:
                cls = self._class_of(action)
                if not self.track_graph:  # a 65th fair actor drops the graph
                    return
            if cls != NO_CLASS:
                enabled_mask |= 1 << cls
            if unmet[index] & unmet[target_index]:
                edge_src.append(index)
                edge_dst.append(target_index)
                edge_class.append(cls)
        self.enabled[index] = enabled_mask

    def _add(self, key: Hashable, parent: int, action: int, depth: int, state: PState) -> int:
        index = len(self.parents)
        self.visited[key] = index
        return self._record_state(index, parent, action, depth, state)

    def _record_state(self, index: int, parent: int, action: int, depth: int, state: PState) -> int:
        """The bookkeeping of state `index`, just entered in the visited set."""
        self.parents.append(parent)
        self.action_index.append(action)
        self.depths.append(depth)
        self.terminal.append(0)
        if depth > self.max_depth:
            self.max_depth = depth
        if self.track_graph:
            unmet, trig = self.product.liveness_bits(state)
            if parent == -1:
                trig |= self.untriggered
            self.unmet.append(unmet)
            self.trigger.append(trig)
            self.enabled.append(0)
            if index + 1 > self.options.liveness_limit:
                self._drop_graph(f"more than {self.options.liveness_limit:,} states (--liveness-limit)")
        return index

    def _drop_graph(self, reason: str) -> None:
        self.track_graph = False
        self.unmet, self.trigger, self.enabled = bytearray(), bytearray(), array("Q")
        self.edge_src, self.edge_dst, self.edge_class = array("I"), array("I"), array("H")
        self.notes.append(f"liveness not checked: {reason}")

    def _class_of(self, action: Any) -> int:
        """The fairness class of the action's actor (NO_CLASS: not fair), numbered in the order the search
        meets fair actors, and remembered per actor (`actor_classes`)."""
        cls = self.actor_classes.get(action.actor)
        if cls is not None:
            return cls
        name = self.product.fairness_class(action)
        cls = NO_CLASS if name is None else self.classes.get(name)
        if cls is None:
            cls = len(self.classes)
            if cls >= 64:
                self._drop_graph("more than 64 fair actors")
                return NO_CLASS
            self.classes[name] = cls
        self.actor_classes[action.actor] = cls
        return cls

    # ------------------------------------------------------------------ verdicts
    def _judge_state(self, index: int, state: PState, via: int | None) -> None:
        """Judge state `index`, just reached (`via` its parent's index; None for an initial state), by
        the sometimes-properties not yet reached and, unless the step that reached it judged them
        (`judge_targets`), by the state properties, property by property: a search calls it only for a
        state that one pass over the unwrapped predicates found suspect (`_expand`)."""
        product = self.product
        model_state = state[0]
        reached = [prop for prop in self.unreached if prop.state(model_state)]
        for prop in reached:
            result = self.results[prop.name]
            result.status = "reached"
            result.counterexample = self._path(index)
        if reached:
            self._track_unreached([p for p in self.unreached if p not in reached])
        if (via is None or self.judge_targets) and product.state_props:
            for violation in product.state_violations(state):
                self._record_violation_at(index, violation)

    def _record_violations(self, index: int, action: int, violations: tuple[Violation, ...]) -> None:
        for violation in violations:
            result = self.results[violation.property]
            if result.status != "violated":
                result.status = "violated"
                result.counterexample = self._path(index, extra=action, violation=violation)
                self.violations_seen += 1

    def _record_violation_at(self, index: int, violation: Violation) -> None:
        result = self.results[violation.property]
        if result.status != "violated":
            result.status = "violated"
            result.counterexample = self._path(index, violation=violation)
            self.violations_seen += 1

    def _memory_exceeded(self, coming_mb: float = 0.0) -> bool:
        """Whether this process holds, or with the `coming_mb` the next step allocates would hold, more
        than --max-memory; then the run ends incomplete, before the step."""
        limit = self.options.max_memory_mb
        if limit is not None and rss_mb() + coming_mb > limit:
            self.incomplete_reason = f"memory limit {limit:g} MB reached"
            return True
        return False

    def _violated_and_stopping(self) -> bool:
        return not self.options.keep_going and any(r.status == "violated" for r in self.results.values())

    def _stopped(self) -> bool:
        if self._violated_and_stopping():
            return True
        max_states = self.options.max_states
        return max_states is not None and len(self.parents) >= max_states

    def _indices_to(self, index: int) -> tuple[int, list[int]]:
        """The initial state's number and the action indices leading from it to state `index`."""
        indices = []
        while self.parents[index] != -1:
            indices.append(self.action_index[index])
            index = self.parents[index]
        indices.reverse()
        return self.action_index[index], indices

    def _path(self, index: int, extra: int | None = None, violation: Violation | None = None,
              more: list[int] | None = None, loop_start: int | None = None) -> Path:
        init, indices = self._indices_to(index)
        if extra is not None:
            indices.append(extra)
        indices.extend(more or ())
        return replay_indices(self.product, init, indices, loop_start, violation)

    def _finish_complete(self) -> None:
        for result in self.results.values():
            if result.status == "unknown" and result.kind == "always":
                result.status = "holds"
            elif result.status == "unknown" and result.kind == "sometimes":
                result.status = "unreached"
        if not self.track_graph:
            return
        limit = self.options.max_memory_mb
        needed = liveness_mb(len(self.parents), len(self.edge_src))
        if limit is not None and rss_mb() + needed > limit:
            self._drop_graph(f"it needs about {needed:,.0f} MB more, above --max-memory {limit:g} MB")
            return
        self._check_liveness()

    # ------------------------------------------------------------------ liveness
    def _check_liveness(self) -> None:
        unmet = np.frombuffer(bytes(self.unmet), dtype=np.uint8)
        trigger = np.frombuffer(bytes(self.trigger), dtype=np.uint8)
        terminal = np.frombuffer(bytes(self.terminal), dtype=np.uint8).astype(bool)
        enabled = np.frombuffer(self.enabled, dtype=np.uint64)
        depths = np.frombuffer(self.depths, dtype=np.uint32)
        src = np.frombuffer(self.edge_src, dtype=np.uint32).astype(np.int64)
        dst = np.frombuffer(self.edge_dst, dtype=np.uint32).astype(np.int64)
        cls = np.frombuffer(self.edge_class, dtype=np.uint16)
        for bit, prop in enumerate(self.live):
            mask = np.uint8(1 << bit)
            lasso = find_lasso((unmet & mask).astype(bool), (trigger & mask).astype(bool), terminal, enabled,
                               depths, src, dst, cls)
            result = self.results[prop.name]
            if lasso is None:
                result.status = "holds"
                continue
            actions = [self._edge_action(u, v) for u, v in pairwise([lasso.start, *lasso.route])]
            loop_start = None
            if lasso.cycle is not None:
                loop_start = len(self._indices_to(lasso.start)[1]) + len(actions)
                actions += [self._edge_action(u, v) for u, v in pairwise(lasso.cycle)]
                message = "the goal never holds on this fair cycle"
            else:
                message = "the goal never holds on this path: it ends with the goal unmet"
            result.status = "violated"
            result.counterexample = self._path(lasso.start, more=actions, loop_start=loop_start,
                                               violation=Violation(prop.name, message))

    def _edge_action(self, u: int, v: int) -> int:
        """The index of an action leading from state u to state v (re-executes u's successors)."""
        state = self._path(u).states[-1]
        for k, action in enumerate(self.product.actions(state)):
            transition = self.product.step(state, action)
            if transition is not None and self._index_of(transition.target) == v:
                return k
        raise RuntimeError("liveness edge not found on re-execution")

    # ------------------------------------------------------------------ output
    def _progress(self, seconds: float, queued: int, depth: int) -> dict[str, Any]:
        distinct = len(self.parents)
        return {"seconds": seconds, "states": self.transitions, "distinct": distinct, "queue": queued,
                "depth": depth, "rate": distinct / seconds if seconds > 0 else 0.0}

    def _result(self, seconds: float) -> CheckResult:
        props = list(self.results.values())
        status = verdict(props, self.interrupted, self.incomplete_reason is not None, self.options.liveness)
        notes = list(self.notes)
        if self.incomplete_reason:
            notes.insert(0, f"incomplete: {self.incomplete_reason}")
        if self.interrupted:
            notes.insert(0, INTERRUPTED_NOTE)
        for r in props:
            if r.status == "unknown" and not r.note:
                r.note = UNDECIDED_NOTE if self.interrupted else (
                    "not decided: the run ended first" if r.kind != "eventually" else
                    next((n for n in notes if n.startswith("liveness not checked")), "liveness not checked"))
        model = self.product.model
        coverage = coverage_of(declared_kinds(model), self.fired, not_enabled_kinds(model))
        return CheckResult(self.product.model.name, status, len(self.parents), self.transitions,
                           self.max_depth, seconds, props, notes, coverage)


def verdict(props: list[PropertyResult], interrupted: bool, incomplete: bool, liveness: bool) -> str:
    """A check's status, the one rule every engine applies: Ctrl-C first, then any violated or unreached
    property, then a limit hit or a property left undecided (an eventually-property counts only when
    liveness was asked for), else ok."""
    if interrupted:
        return INTERRUPTED
    if any(r.status in ("violated", "unreached") for r in props):
        return "violation"
    if incomplete or any(r.status == "unknown" for r in props if r.kind != "eventually" or liveness):
        return "incomplete"
    return "ok"


def explained(model: Model, result: CheckResult) -> CheckResult:
    """`result` with the cause of each counterexample (`steersim.traces.cause`)."""
    from steersim.traces.trace import explain_result

    explain_result(model, result)
    return result


def resume(model: Model, path: str, options: CheckOptions) -> CheckResult:
    """Continue an interrupted run from its checkpoint: the same verdict and counts as if it had not
    stopped. The model and the options that shape the search must be those of the saved run."""
    explorer = Explorer(model, options)
    frontier, seconds = load_checkpoint(path, explorer)
    return explained(model, explorer.run_interruptible(frontier, seconds))

