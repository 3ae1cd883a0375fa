"""Exhaustive checking with several processes: a level-synchronous breadth-first search over a
fingerprint-partitioned state space.

Worker w owns the states whose fingerprint is w modulo N: it keeps their visited set and parent
pointers, expands the new ones of each level and routes each successor to its owner. The coordinator
only exchanges per-level batches, so the distinct-state and transition counts are those of one
process, and a counterexample, chosen per property as the first in a fixed order among the shortest
found in a level, is a shortest one. Workers are forked, so they share the model object; parent
pointers cross partitions as (worker, index) pairs and paths are rebuilt by asking the owners.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from array import array
from collections.abc import Sequence
from typing import Any

from sim.checking.coverage import coverage_of, declared_kinds
from sim.checking.explorer import CheckOptions, CheckResult, PropertyResult, explained, verdict
from sim.checking.memory import group_mb, rss_mb
from sim.core.fingerprint import fingerprint
from sim.core.model import Model
from sim.core.paths import located, replay_indices
from sim.core.product import Product, Violation
from sim.errors import ModelError, UsageError
from sim.interrupts import INTERRUPTED_NOTE, UNDECIDED_NOTE, init_worker

CANDIDATES_BETWEEN_CHECKS = 512  # a worker looks at its memory this often within a level
Candidate = tuple[Any, int, int, int, int]  # (state, fp, parent worker, parent index, action index)


class _Partition:
    """One worker's share of the search."""

    def __init__(self, model: Model, me: int, workers: int) -> None:
        self.product = Product(model)
        self.me, self.workers = me, workers
        self.visited: set[int] = set()
        self.parent_worker = array("b")
        self.parent_index = array("q")
        self.action_index = array("H")

    def level(self, candidates: Sequence[Candidate], expand: bool, allowance_mb: float | None) -> dict[str, Any]:
        """Admit this level's candidates (first occurrence wins) and expand the new states. A worker may
        grow by `allowance_mb` in the level (its share of what --max-memory leaves): past that it stops,
        and says so with `memory`."""
        product = self.product
        out: list[list[Candidate]] = [[] for _ in range(self.workers)]
        findings: list[tuple[str, str, int, int]] = []  # (property, message, index, action index or -1)
        reached: list[tuple[str, int]] = []
        admitted = transitions = 0
        fired: dict[str, int] = {}
        has_more = over_memory = False
        ceiling = None if allowance_mb is None else rss_mb() + allowance_mb
        for count, (state, fp, parent_worker, parent_index, action) in enumerate(candidates, 1):
            if ceiling is not None and count % CANDIDATES_BETWEEN_CHECKS == 0 and rss_mb() > ceiling:
                over_memory = True
                break
            if fp in self.visited:
                continue
            self.visited.add(fp)
            index = len(self.parent_index)
            self.parent_worker.append(parent_worker)
            self.parent_index.append(parent_index)
            self.action_index.append(action)
            admitted += 1
            for prop in product.sometimes:
                if prop.state(state[0]):
                    reached.append((prop.name, index))
            if parent_worker < 0:
                findings += [(v.property, v.message, index, -1) for v in product.state_violations(state)]
            if not expand:
                has_more = has_more or bool(product.actions(state))
                continue
            any_successor = False
            for k, a in enumerate(product.actions(state)):
                transition = product.step(state, a)
                if transition is None:
                    continue
                any_successor = True
                transitions += 1
                fired[a.kind] = fired.get(a.kind, 0) + 1
                findings += [(v.property, v.message, index, k) for v in transition.violations]
                target_fp = fingerprint(transition.target)
                out[target_fp % self.workers].append((transition.target, target_fp, self.me, index, k))
            if not any_successor:
                findings += [(v.property, v.message, index, -1) for v in product.end_violations(state)]
        return {"out": out, "findings": findings, "reached": reached, "admitted": admitted,
                "transitions": transitions, "fired": fired, "has_more": has_more, "memory": over_memory}

    def parent(self, index: int) -> tuple[int, int, int]:
        return self.parent_worker[index], self.parent_index[index], self.action_index[index]


def _serve(model: Model, me: int, workers: int, conn: Any) -> None:
    init_worker()
    partition = _Partition(model, me, workers)
    while True:
        command, payload = conn.recv()
        if command == "level":
            try:
                conn.send(partition.level(*payload))
            except ModelError as error:  # raised judging the state admitted last; the coordinator adds its path
                conn.send({"error": error, "at": len(partition.parent_index) - 1})
        elif command == "parent":
            conn.send(partition.parent(payload))
        else:
            conn.close()
            return


def unsupported_with_workers(options: CheckOptions) -> str | None:
    """The first option a parallel check cannot honour, as the command line spells it (None: none is
    set). Such an option is refused rather than ignored, so that a run never claims what it did not do."""
    unsupported = (("--strategy dfs", options.strategy != "bfs"), ("--por", options.por),
                   ("--symmetry", options.symmetry), ("--checkpoint", options.checkpoint is not None),
                   ("--engine vector", options.engine == "vector"))
    return next((name for name, chosen in unsupported if chosen), None)


def check_parallel(model: Model, options: CheckOptions, workers: int, identity: Any = None) -> CheckResult:
    """Breadth-first exhaustive check with `workers` processes (safety, `sometimes` and dead ends;
    liveness needs the whole graph in one place and is reported as not checked). Ctrl-C ends it with
    the levels done so far, status interrupted; the workers, which ignore it, are terminated."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    refused = unsupported_with_workers(options)
    if refused is not None:
        raise UsageError(f"{refused} cannot be used with --workers {workers}: a parallel check does not "
                         "support it; drop one of the two")
    started = time.monotonic()
    context = mp.get_context("fork")
    pipes, procs = [], []
    for me in range(workers):
        parent_end, child_end = context.Pipe()
        proc = context.Process(target=_serve, args=(model, me, workers, child_end), daemon=True)
        proc.start()
        pipes.append(parent_end)
        procs.append(proc)
    product = Product(model)
    results = {i.name: PropertyResult(i.name, i.kind, "unknown", i.doc) for i in product.property_infos()}
    notes = []
    if product.liveness and options.liveness:
        notes.append(f"liveness not checked: --workers {workers} explores without the whole graph in one place")
    try:
        incoming: list[list[Candidate]] = [[] for _ in range(workers)]
        for k, init in enumerate(product.init_states()):
            fp = fingerprint(init)
            incoming[fp % workers].append((init, fp, -1, -1, k))
        distinct = transitions = depth = max_depth = 0
        fired: dict[str, int] = {}
        incomplete = None
        interrupted = False
        worker_pids = [proc.pid for proc in procs]
        limit = options.max_memory_mb
        while any(incoming):
            expand = options.max_depth is None or depth < options.max_depth
            allowance = None
            if limit is not None:
                held = group_mb("self", worker_pids)
                if held > limit:
                    incomplete = f"memory limit {limit:g} MB reached"
                    break
                allowance = (limit - held) / (workers + 1)  # the coordinator's share takes the replies
            for pipe, batch in zip(pipes, incoming, strict=True):
                pipe.send(("level", (batch, expand, allowance)))
            replies = [pipe.recv() for pipe in pipes]
            for worker, reply in enumerate(replies):
                if "error" in reply:
                    raise located(reply["error"], _path(product, pipes, worker, reply["at"], None, None))
            distinct += sum(r["admitted"] for r in replies)
            transitions += sum(r["transitions"] for r in replies)
            for reply in replies:
                for kind, count in reply["fired"].items():
                    fired[kind] = fired.get(kind, 0) + count
            if any(r["admitted"] for r in replies):
                max_depth = depth
            for worker, reply in enumerate(replies):
                for name, index in reply["reached"]:
                    result = results[name]
                    if result.status != "reached":
                        result.status = "reached"
                        result.counterexample = _path(product, pipes, worker, index, None, None)
            found = sorted((name, worker, index, action, message) for worker, r in enumerate(replies)
                           for name, message, index, action in r["findings"])
            for name, worker, index, action, message in found:
                result = results[name]
                if result.status != "violated":
                    result.status = "violated"
                    result.counterexample = _path(product, pipes, worker, index, action if action >= 0 else None,
                                                  Violation(name, message))
            if any(r["memory"] for r in replies):
                incomplete = f"memory limit {limit:g} MB reached"
                break
            if not expand and any(r["has_more"] for r in replies):
                incomplete = f"depth limit {options.max_depth} reached"
                break
            if found and not options.keep_going:
                break
            if options.max_states is not None and distinct >= options.max_states:
                incomplete = f"state limit {options.max_states} reached"
                break
            if options.timeout is not None and time.monotonic() - started > options.timeout:
                incomplete = f"time limit {options.timeout:g} s reached"
                break
            incoming = [[c for r in replies for c in r["out"][w]] for w in range(workers)]
            depth += 1
            if options.progress is not None:
                seconds = time.monotonic() - started
                options.progress({"seconds": seconds, "states": transitions, "distinct": distinct,
                                  "queue": sum(map(len, incoming)), "depth": depth,
                                  "rate": distinct / seconds if seconds else 0.0})
        violated = any(r.status == "violated" for r in results.values())
        if not incomplete and not (violated and any(incoming) and not options.keep_going):
            for r in results.values():
                if r.status == "unknown" and r.kind == "always":
                    r.status = "holds"
                elif r.status == "unknown" and r.kind == "sometimes":
                    r.status = "unreached"
    except KeyboardInterrupt:
        interrupted = True
    finally:
        for pipe, proc in zip(pipes, procs, strict=True):
            if interrupted:
                proc.terminate()  # mid-level, a worker would finish its level before reading "stop"
            else:
                pipe.send(("stop", None))
            proc.join()
    props = list(results.values())
    for r in props:
        if r.status == "unknown" and interrupted:
            r.note = UNDECIDED_NOTE
        elif r.status == "unknown":
            r.note = notes[0] if r.kind == "eventually" and notes else "not decided: the run ended first"
    status = verdict(props, interrupted, bool(incomplete), options.liveness)
    if interrupted:
        notes.insert(0, INTERRUPTED_NOTE)
    if incomplete:
        notes.insert(0, f"incomplete: {incomplete}")
    coverage = coverage_of(declared_kinds(product.model), fired)
    result = CheckResult(model.name, status, distinct, transitions, max_depth, time.monotonic() - started, props, notes,
                         coverage)
    return explained(model, result)


def _path(product: Product, pipes: list, worker: int, index: int, action: int | None,
          violation: Violation | None) -> Any:
    indices = [] if action is None else [action]
    while True:
        pipes[worker].send(("parent", index))
        parent_worker, parent_index, action_index = pipes[worker].recv()
        if parent_worker < 0:
            init = action_index
            break
        indices.append(action_index)
        worker, index = parent_worker, parent_index
    indices.reverse()
    return replay_indices(product, init, indices, None, violation)
