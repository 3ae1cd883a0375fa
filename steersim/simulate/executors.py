"""Executors for seed sweeps: the same seeds, run in this process, in a process pool, or on Dask.

`steersim.simulate.sweep.run_sweep` folds verdicts in seed order, so a sweep's report does not depend on where its
seeds ran. An executor here only has to give back every seed's `RunVerdict`: it ships the seeds in
chunks (one task per chunk, never one per seed, so that scheduling costs little next to simulating), and
each worker rebuilds the simulator from a small picklable `SweepRecipe` once and reuses it for every
chunk it gets. This module is an outer ring: it imports Dask only when a Dask executor is asked for.
Ctrl-C keeps the chunks finished so far (`interrupted` is then set) and `close` stops every worker
(`steersim.interrupts`): local workers ignore it and are terminated, a Dask cluster is cancelled and closed.

Swarm testing (as in FoundationDB's simulator and Hypothesis): with `swarm`, each seed also turns off a
random subset of the environment's action kinds for its whole run, so that runs explore corners a
uniform mix of everything would rarely reach (a run in which the user never steers, or in which faults
never fire). Only kinds of actors outside the model's `fair_actors` are ever turned off: the system's own
steps always run, so a run that stops because everything left is turned off is a run in which the
environment fell silent, which the model's fairness allows; an obligation still open there (an accepted
steer never resolved) is a real finding, not an artefact of the subset.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np

from steersim.checking.search import Edges, Visitor, breadth_first, transitions_of
from steersim.core.model import Action, AdaptedModel, Model
from steersim.core.product import Product, PState, Transition
from steersim.core.registry import get_model_spec
from steersim.errors import ModelError, UsageError
from steersim.interrupts import collect, quiet_teardown_logs, worker_pool
from steersim.simulate.simulator import Simulator, check_run_bounds
from steersim.simulate.sweep import RunVerdict, SweepReport, record_run, run_seeds, run_sweep
from steersim.simulate.timing import TimingProfile, kind_key

SWARM_STREAM = 0x5357_524D  # spawn-key tag of the swarm streams, so they never coincide with timing streams
CHUNKS_PER_WORKER = 8  # enough chunks to balance uneven runs, few enough that scheduling stays cheap
MAX_CHUNK = 2_000
SWARM_DISCOVERY_STATES = 5_000  # states looked at to find the kinds swarm testing may turn off
PROGRESS_INTERVAL = 1.0  # seconds between progress reports of a sweep

Swarm = tuple[str, ...]  # the kinds one run turned off, in name order
ChunkResult = tuple[list[RunVerdict], list[Swarm]]


@dataclass(frozen=True)
class SweepRecipe:
    """Everything a worker needs to rebuild the simulator: the model's reference (a registered name or
    a path or module reference, see `steersim.core.registry`: never the spec's name alone), its resolved
    parameters, the bug variant, the timing profile (canonical JSON, so the recipe is hashable and
    cheap to ship) and the run bounds."""

    model: str
    params: tuple[tuple[str, Any], ...]
    bug: str | None
    timing_json: str
    max_steps: int = 10_000
    max_time: float | None = None
    swarm: bool = False
    watch: tuple[str, ...] = ()  # facts each run keeps with their times (`Simulator.watch`), in name order

    @classmethod
    def create(cls, model: str, params: Mapping[str, Any], bug: str | None, timing: TimingProfile,
               max_steps: int = 10_000, max_time: float | None = None, swarm: bool = False,
               watch: tuple[str, ...] = ()) -> SweepRecipe:
        return cls(model, tuple(params.items()), bug, json.dumps(timing.to_mapping()), max_steps, max_time, swarm,
                   tuple(sorted(watch)))

    def timing(self) -> TimingProfile:
        return TimingProfile.from_mapping(json.loads(self.timing_json))

    def build_model(self) -> Model:
        return built_model(self.model, self.params, self.bug)


@lru_cache(maxsize=8)
def built_model(model: str, params: tuple[tuple[str, Any], ...], bug: str | None) -> Model:
    """The model `model` refers to at resolved `params`, built once per process: a sweep, the recipe its
    seeds run from in this process, and the runs it records all use this one."""
    return get_model_spec(model).build_resolved(dict(params), bug)


class SwarmModel(AdaptedModel):
    """A model with some environment action kinds turned off: `actions()` leaves them out. Immutable,
    because the simulator memoises each state's enabled actions."""

    def __init__(self, inner: Model, disabled: frozenset[str]) -> None:
        super().__init__(inner)
        self.disabled = disabled

    def actions(self, state: Any) -> Sequence[Action]:
        return [a for a in self.inner.actions(state) if a.kind not in self.disabled]


def environment_kinds(model: Model, max_states: int = SWARM_DISCOVERY_STATES) -> tuple[str, ...]:
    """The action kinds of actors outside `fair_actors`, as found by a breadth-first look at the first
    `max_states` states: the kinds swarm testing may turn off. A kind first offered deeper than that is
    never turned off. The system's own (fair) steps are never candidates."""
    product = Product(model)
    unfair = _UnfairKinds(tuple(model.fair_actors))
    # the initial states in the model's order, never a set's: the cut at max_states must not vary
    breadth_first(product.init_states(), transitions_of(product), visitor=unfair, budget=max_states)
    return tuple(sorted(unfair.kinds))


class _UnfairKinds(Visitor[PState, PState, Transition]):
    """The kinds of the actions offered to actors outside `fair`."""

    def __init__(self, fair: tuple[str, ...]) -> None:
        self.fair = fair
        self.kinds: set[str] = set()

    def expanded(self, node: PState, key: PState, depth: int, edges: Edges) -> None:
        for transition, _ in edges:
            action = transition.action
            if not any(fnmatchcase(action.actor, pattern) for pattern in self.fair):
                self.kinds.add(action.kind)


def swarm_subset(seed: int, kinds: Sequence[str]) -> frozenset[str]:
    """The kinds seed `seed` turns off: each with probability one half, from a numpy stream keyed by the
    seed and the kind's name alone, independent of the timing streams and of the other kinds."""
    off = set()
    for kind in kinds:
        stream = np.random.SeedSequence(seed, spawn_key=(SWARM_STREAM, kind_key(kind)))
        if np.random.default_rng(stream).random() < 0.5:
            off.add(kind)
    return frozenset(off)


@lru_cache(maxsize=8)
def _recipe_model(recipe: SweepRecipe) -> tuple[Model, tuple[str, ...]]:
    """The model of a recipe and its swarm candidates, built once per process."""
    model = recipe.build_model()
    return model, environment_kinds(model) if recipe.swarm else ()


@lru_cache(maxsize=32)
def _simulator(recipe: SweepRecipe, disabled: frozenset[str] = frozenset()) -> Simulator:
    """One simulator per recipe and swarm subset per process, so that its per-state memo serves every
    seed of the same subset."""
    model, _ = _recipe_model(recipe)
    if disabled:
        model = SwarmModel(model, disabled)
    return Simulator(model, recipe.timing(), recipe.max_steps, recipe.max_time, watch=frozenset(recipe.watch))


def run_chunk(recipe: SweepRecipe, seeds: Sequence[int]) -> ChunkResult:
    """Run one chunk of seeds: the unit of work every executor ships. With swarm, also the kinds each
    run turned off."""
    if not recipe.swarm:
        return run_seeds(_simulator(recipe), seeds), []
    _, kinds = _recipe_model(recipe)
    verdicts, subsets = [], []
    for seed in seeds:
        disabled = swarm_subset(seed, kinds)
        verdicts.extend(run_seeds(_simulator(recipe, disabled), [seed]))
        subsets.append(tuple(sorted(disabled)))
    return verdicts, subsets


def chunk_seeds(seeds: Sequence[int], workers: int, chunk_size: int | None = None) -> list[Sequence[int]]:
    """Consecutive slices of `seeds`: `chunk_size` each, or about CHUNKS_PER_WORKER per worker."""
    size = chunk_size or max(1, min(MAX_CHUNK, math.ceil(len(seeds) / (workers * CHUNKS_PER_WORKER))))
    return [seeds[i : i + size] for i in range(0, len(seeds), size)]


class SeedExecutor:
    """Base of the executors: `executor(seeds) -> verdicts`, the call `run_sweep` makes. Subclasses say
    how seeds are chunked and chunks run (`chunk_results`, as each finishes); the swarm subsets of the
    last call are kept in `swarm_subsets`, and `interrupted` says whether Ctrl-C cut it short. In this
    process a chunk is one seed, so that Ctrl-C loses no finished run (there is no scheduling cost to
    save)."""

    workers = 1

    def __init__(self, recipe: SweepRecipe, chunk_size: int | None = None) -> None:
        self.recipe = recipe
        self.chunk_size = chunk_size
        self.swarm_subsets: dict[int, Swarm] = {}
        self.interrupted = False
        self.progress: Callable[[dict[str, Any]], None] | None = None

    def chunks(self, seeds: Sequence[int]) -> Iterable[Sequence[int]]:
        if self.chunk_size is None:  # one seed at a time, each made when it is run
            return (seeds[i : i + 1] for i in range(len(seeds)))
        return chunk_seeds(seeds, self.workers, self.chunk_size)

    def chunk_results(self, chunks: Iterable[Sequence[int]]) -> Iterator[ChunkResult]:
        return (run_chunk(self.recipe, chunk) for chunk in chunks)

    def __call__(self, seeds: Sequence[int]) -> list[RunVerdict]:
        verdicts: list[RunVerdict] = []
        self.swarm_subsets = {}
        results, self.interrupted = collect(self._reported(self.chunk_results(self.chunks(seeds)), len(seeds)))
        for chunk_verdicts, subsets in results:
            verdicts.extend(chunk_verdicts)
            self.swarm_subsets.update((v.seed, s) for v, s in zip(chunk_verdicts, subsets, strict=False))
        return verdicts

    def _reported(self, results: Iterator[ChunkResult], seeds: int) -> Iterator[ChunkResult]:
        """`results`, telling `progress` how many runs are done at most once per PROGRESS_INTERVAL."""
        started = time.monotonic()
        next_report, runs = started + PROGRESS_INTERVAL, 0
        for result in results:
            runs += len(result[0])
            yield result
            if self.progress is not None and time.monotonic() >= next_report:
                next_report = time.monotonic() + PROGRESS_INTERVAL
                self.progress({"seconds": time.monotonic() - started, "runs": runs, "seeds": seeds})

    def close(self) -> None:
        """Release workers or cluster connections (nothing to release in-process)."""


class ProcessExecutor(SeedExecutor):
    """Chunks on a pool of local worker processes (`steersim.interrupts.worker_pool`)."""

    def __init__(self, recipe: SweepRecipe, workers: int, chunk_size: int | None = None) -> None:
        super().__init__(recipe, chunk_size)
        self.workers = workers
        self._stack = ExitStack()
        self._pool = self._stack.enter_context(worker_pool(workers))

    def chunks(self, seeds: Sequence[int]) -> Iterable[Sequence[int]]:
        return chunk_seeds(seeds, self.workers, self.chunk_size)

    def chunk_results(self, chunks: Iterable[Sequence[int]]) -> Iterator[ChunkResult]:
        return self._pool.imap(partial(run_chunk, self.recipe), chunks)

    def close(self) -> None:
        self._stack.close()


class DaskExecutor(SeedExecutor):
    """Chunks on a Dask distributed cluster: `address` of a running scheduler, or "local" for a
    LocalCluster of two worker processes started (and stopped by `close`) here."""

    def __init__(self, recipe: SweepRecipe, address: str, chunk_size: int | None = None,
                 connect_timeout: float = 20.0) -> None:
        super().__init__(recipe, chunk_size)
        self._client, self._cluster = dask_client(address, connect_timeout)
        self.workers = max(1, len(self._client.scheduler_info().get("workers", {})))
        self._futures: list[Any] = []

    def chunks(self, seeds: Sequence[int]) -> Iterable[Sequence[int]]:
        return chunk_seeds(seeds, self.workers, self.chunk_size)

    def chunk_results(self, chunks: Iterable[Sequence[int]]) -> Iterator[ChunkResult]:
        from dask.distributed import as_completed

        self._futures = self._client.map(_run_chunk_handing_back_errors, [self.recipe] * len(chunks),
                                         [list(c) for c in chunks], pure=False)
        return (_raised(future.result()) for future in as_completed(self._futures))

    def close(self) -> None:
        if self.interrupted:  # tasks torn down mid-flight log errors that tell the user nothing new
            quiet_teardown_logs()
        self._client.cancel(self._futures)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def dask_client(address: str, connect_timeout: float = 20.0) -> tuple[Any, Any]:
    """A client of the Dask scheduler at `address`, or of a LocalCluster of two worker processes started
    here for "local", and that cluster (None for a scheduler of the user's, which is left running)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--dask needs Dask distributed; install it with `pip install -e '.[dist]'`") from None
    if address != "local":
        try:
            return Client(address, timeout=connect_timeout), None
        except OSError as unreachable:
            raise UsageError(f"--dask {address}: cannot reach a Dask scheduler there ({unreachable}); "
                             "give tcp://HOST:PORT of a running scheduler, or `local`") from None
    # without a dashboard the scheduler still serves health and metrics pages over HTTP, by default on
    # 8787; a port taken there (a dashboard of the user's) would make distributed warn in several lines
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                           scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                           preload=["steersim.interrupts"], silence_logs=logging.ERROR)  # closing mid-task warns
    try:
        return Client(cluster), cluster
    except BaseException:  # Ctrl-C while connecting: the cluster started here must not stay up
        cluster.close()
        raise


def _raised(result: ChunkResult | ModelError) -> ChunkResult:
    """A chunk's result, or the model error a worker handed back, raised here."""
    if isinstance(result, ModelError):
        raise result
    return result


def _run_chunk_handing_back_errors(recipe: SweepRecipe, seeds: Sequence[int]) -> ChunkResult | ModelError:
    """`run_chunk`, with a model error returned instead of raised: a Dask worker logs a task that raises
    as a failure of its own, which would bury the one message the user needs."""
    try:
        return run_chunk(recipe, seeds)
    except ModelError as error:
        return error


def make_executor(recipe: SweepRecipe, workers: int = 1, dask: str | None = None,
                  chunk_size: int | None = None) -> SeedExecutor:
    if dask is not None:
        return DaskExecutor(recipe, dask, chunk_size)
    if workers < 1:
        raise UsageError(f"--workers takes a whole number >= 1, not {workers}")
    if workers == 1:
        return SeedExecutor(recipe, chunk_size)
    return ProcessExecutor(recipe, workers, chunk_size)


def sweep(model: str, params: Mapping[str, Any], bug: str | None, seeds: Sequence[int],
          timing_file: str | None = None, max_steps: int = 10_000, max_time: float | None = None,
          out: Path | None = None, workers: int = 1, dask: str | None = None, swarm: bool = False,
          chunk_size: int | None = None, progress: Callable[[dict[str, Any]], None] | None = None) -> SweepReport:
    """`run_sweep` of the model `model` refers to, at resolved `params` (`ModelSpec.resolve`), on the executor
    chosen by `workers`/`dask`. The report is the same whatever runs the seeds. With `swarm` it also lists,
    per run, the kinds that run turned off, and the first counterexample's trace is recorded with that
    run's kinds turned off. `progress`, if given, hears how many runs are done about once a second."""
    check_run_bounds(max_steps, max_time)  # before any worker starts
    inner = built_model(model, tuple(params.items()), bug)
    timing = TimingProfile.from_file(timing_file) if timing_file else TimingProfile.from_mapping(inner.default_timing())
    recipe = SweepRecipe.create(model, params, bug, timing, max_steps, max_time, swarm)
    executor = make_executor(recipe, workers, dask, chunk_size)
    executor.progress = progress
    try:
        report = run_sweep(model, params, bug, inner, seeds, timing_file=timing_file, max_steps=max_steps,
                           max_time=max_time, out=None if swarm else out, executor=executor)
    finally:
        executor.close()
    if swarm:
        report.extra["swarm"] = [{"seed": v.seed, "disabled": list(executor.swarm_subsets[v.seed])}
                                 for v in report.verdicts]
        if report.first_seed is not None and out is not None and not report.interrupted:
            report.first_trace = str(_record_swarm_run(recipe, report.first_seed, out))
    return report


def record_runs(report: SweepReport, timing_file: str | None, max_steps: int, max_time: float | None,
                swarm: bool, out: Path, only_violations: bool = False) -> list[Path]:
    """Re-run the seeds of a sweep with recording on and write each run's trace into `out` (runs are
    deterministic, so these are the runs the sweep judged); `only_violations`: the runs that broke a
    property. A swarm run is recorded with the kinds it turned off, as the sweep ran it."""
    inner = built_model(report.model, tuple(report.params.items()), report.bug)
    timing = TimingProfile.from_file(timing_file) if timing_file else TimingProfile.from_mapping(inner.default_timing())
    recipe = SweepRecipe.create(report.model, report.params, report.bug, timing, max_steps, max_time, swarm)
    _, kinds = _recipe_model(recipe)
    written = []
    for verdict in report.verdicts:
        if only_violations and not verdict.violations:
            continue
        simulator = _simulator(recipe, swarm_subset(verdict.seed, kinds) if swarm else frozenset())
        written.append(record_run(simulator, report.model, dict(report.params), report.bug, verdict.seed, out,
                                  "-swarm" if swarm else ""))
    return written


def _record_swarm_run(recipe: SweepRecipe, seed: int, out: Path) -> Path:
    """Re-run one swarm seed with recording on and write its trace. The trace is a path of the whole
    model (turning kinds off only removes choices), so `steersim replay` checks it as it is."""
    _, kinds = _recipe_model(recipe)
    simulator = _simulator(recipe, swarm_subset(seed, kinds))
    return record_run(simulator, recipe.model, dict(recipe.params), recipe.bug, seed, out, "-swarm")
