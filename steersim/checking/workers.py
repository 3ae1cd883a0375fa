"""Where the partitions of a parallel check run: local worker processes, or the workers of a Dask cluster.

Either way the coordinator sees a `WorkerGroup`: one `Partition` per worker and one call that runs the
same method on every partition at once and returns the replies in partition order. Local partitions
live in the processes of `steersim.interrupts.worker_pool`, created once for the run; each runs one
long task that serves calls over its own pipe. The pool forks, so the workers inherit the model object
itself (any model works, however it was built). On Dask each partition is an actor built on a worker
from the model's reference (`ModelReference`: a registered name, `path/to/file.py:SPEC` or
`package.module:SPEC`), as sweeps build theirs.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from steersim.checking.ownership import Ownership
from steersim.checking.partition import Partition
from steersim.core.model import Model
from steersim.core.registry import get_model_spec
from steersim.errors import UsageError
from steersim.interrupts import quiet_teardown_logs, worker_pool


class WorkerGroup(Protocol):
    count: int
    ownership: Ownership  # how the partitions draw owners

    def call(self, method: str, args: Sequence[tuple]) -> list[Any]:
        """`method(*args[w])` on partition w, for every w at once; the replies in partition order."""
        ...


@dataclass(frozen=True)
class ModelReference:
    """What a remote worker needs to build the model: how the user named it, its resolved parameters
    and its bug variant."""

    model: str
    params: tuple[tuple[str, Any], ...]
    bug: str | None

    @classmethod
    def of(cls, identity: Mapping[str, Any]) -> ModelReference:
        if not identity.get("model"):
            raise UsageError("--dask needs the model by reference (a name, path/to/file.py:SPEC or "
                             "package.module:SPEC) in CheckOptions.identity; the command line gives it")
        return cls(identity["model"], tuple(dict(identity.get("params") or {}).items()), identity.get("bug"))

    def build(self) -> Model:
        return get_model_spec(self.model).build(dict(self.params), self.bug)


class WorkerFailure(Exception):
    """A partition's method raised something other than a model error: a fault of steersim's."""


# ------------------------------------------------------------------ local processes
_INHERITED: dict[str, Any] = {}  # what the pool's forked workers find: the model, the settings, their pipes


class PipeGroup:
    """Partitions in local processes, one pipe each."""

    def __init__(self, pipes: list[Any], ownership: Ownership) -> None:
        self.pipes = pipes
        self.count = len(pipes)
        self.ownership = ownership

    def call(self, method: str, args: Sequence[tuple]) -> list[Any]:
        for pipe, arg in zip(self.pipes, args, strict=True):
            pipe.send((method, arg))
        replies = []
        for pipe in self.pipes:
            try:
                replies.append(pipe.recv())
            except EOFError:
                raise WorkerFailure("a worker process of the check ended unexpectedly") from None
        for reply in replies:
            if isinstance(reply, WorkerFailure):
                raise reply
        return replies


@contextmanager
def local_partitions(model: Model, workers: int, symmetry: bool,
                     choose: Callable[[int, bool], Ownership]) -> Iterator[PipeGroup]:
    """`workers` partitions in processes of `worker_pool`, terminated on leaving whatever happened, their
    owners drawn as `choose(workers, forked=True)` says."""
    pipes = [mp.get_context("fork").Pipe() for _ in range(workers)]
    ownership = choose(workers, True)
    _INHERITED.update(model=model, settings=(workers, symmetry, ownership), pipes=pipes)
    try:
        with worker_pool(workers) as pool:
            _INHERITED.clear()
            for _, end in pipes:  # each worker holds its own end alone, so a worker that dies is an EOF here
                end.close()
            for me in range(workers):
                pool.apply_async(_serve, (me,))  # one long task each: a busy worker takes no second one
            yield PipeGroup([end for end, _ in pipes], ownership)
    finally:
        _INHERITED.clear()


def _serve(me: int) -> None:
    """A worker's task for the whole run: build its partition, then answer calls until the pool ends.
    The cyclic collector's own passes are off, as in the one-process explorer: after each call the young
    objects are collected and what is left alive is frozen out of the collector. It is the partition's
    states and tables, long-lived and acyclic, so scanning them again and again (as each level adds
    more) would find nothing and cost a good part of the run; reference counting still frees them."""
    pipes = _INHERITED["pipes"]
    for w, (coordinator_end, worker_end) in enumerate(pipes):
        coordinator_end.close()
        if w != me:
            worker_end.close()
    pipe = pipes[me][1]
    workers, symmetry, ownership = _INHERITED["settings"]
    try:
        partition: Partition | None = Partition(_INHERITED["model"], me, workers, symmetry, ownership)
    except Exception:  # every call is answered with it: the coordinator waits on this pipe
        partition, broken = None, WorkerFailure(f"worker {me} of the check could not start:\n{traceback.format_exc()}")
    gc.disable()
    while True:
        method, args = pipe.recv()
        try:
            reply = broken if partition is None else getattr(partition, method)(*args)
        except Exception:
            reply = WorkerFailure(f"worker {me} of the check failed:\n{traceback.format_exc()}")
        gc.collect(1)
        gc.freeze()
        pipe.send(reply)


# ------------------------------------------------------------------ Dask
class RemotePartition(Partition):
    """A partition built on a Dask worker from the model's reference."""

    def __init__(self, reference: ModelReference, me: int, workers: int, symmetry: bool,
                 ownership: Ownership) -> None:
        super().__init__(reference.build(), me, workers, symmetry, ownership)


class ActorGroup:
    """Partitions as Dask actors, spread over the cluster's workers."""

    def __init__(self, actors: list[Any], ownership: Ownership) -> None:
        self.actors = actors
        self.count = len(actors)
        self.ownership = ownership

    def call(self, method: str, args: Sequence[tuple]) -> list[Any]:
        futures = [getattr(actor, method)(*arg) for actor, arg in zip(self.actors, args, strict=True)]
        return [future.result() for future in futures]


@contextmanager
def dask_partitions(address: str, reference: ModelReference, partitions: int | None, symmetry: bool,
                    choose: Callable[[int, bool], Ownership]) -> Iterator[ActorGroup]:
    """One partition per worker of the cluster at `address` ("local": a cluster started here and closed
    on leaving), or `partitions` of them spread round the workers, their owners drawn as `choose(count,
    forked=False)` says (the workers do not share the command's hash seed)."""
    from steersim.simulate.executors import dask_client

    client, cluster = dask_client(address)
    try:
        names = sorted(client.scheduler_info().get("workers", {}))
        if not names:
            raise UsageError(f"--dask {address}: the scheduler has no workers; start some, or use `local`")
        count = partitions or len(names)
        ownership = choose(count, False)
        futures = [client.submit(RemotePartition, reference, me, count, symmetry, ownership, actor=True,
                                 workers=[names[me % len(names)]], pure=False) for me in range(count)]
        yield ActorGroup([future.result() for future in futures], ownership)
    except BaseException:  # Ctrl-C or an error: actors torn down mid-call log errors that tell the user nothing
        quiet_teardown_logs()
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
