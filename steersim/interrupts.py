"""Ctrl-C, handled one way by every command and every executor.

A terminal sends SIGINT to the whole foreground process group: left alone, every worker process would
raise KeyboardInterrupt and print its own traceback, and a worker busy with a task could outlive the
command. So the rule is:

- workers never see Ctrl-C: each one calls `init_worker` first (a pool's initializer, or the first line
  of a forked worker), which ignores SIGINT and turns SIGTERM into a clean exit, so that a worker the
  parent terminates still ends the child processes it runs; a Dask worker preloads this module, whose
  `dask_setup` turns SIGINT into quiet teardown logs;
- the parent alone gets the KeyboardInterrupt, and catches it at the boundary of its loop: an engine
  returns its result so far with status `interrupted`, a loop over units of work keeps the units
  finished (`collect`), and whoever started workers terminates and joins them (`worker_pool`);
- the command writes its partial report and returns EXIT_INTERRUPTED, and `steersim.cli.main` prints the one
  line that says so;
- an interrupt raised inside a finalizer (a `__del__`, or a weakref callback, which asyncio's task sets
  run all the time) is only printed and dropped by Python, and the Ctrl-C would be lost: the command
  and every worker put `_redeliver` in front of `sys.unraisablehook`, which delivers such a signal again, so
  that it is raised in the code the finalizer interrupted;
- clean-up that must not be cut in half (removing a temporary folder: `shutil.rmtree` interrupted
  between its own calls can close a descriptor twice and fail with EBADF instead of the interrupt) runs
  under `interrupts_deferred`, and a Ctrl-C that arrives meanwhile is raised when it is done.
"""

from __future__ import annotations

import _thread
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from steersim.errors import EXIT_INTERRUPTED

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

INTERRUPTED = "interrupted"  # the status of a report cut short by Ctrl-C
INTERRUPTED_NOTE = "interrupted (Ctrl-C): the counts and verdicts are those reached so far"
UNDECIDED_NOTE = "not decided: interrupted (Ctrl-C)"  # a property the interrupted run had not judged yet
T = TypeVar("T")
TERMINATE_GRACE_S = 2  # seconds a terminated worker has to unwind before it is ended outright


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Run the block whole: a SIGINT that arrives in it is held and raised as KeyboardInterrupt after it
    (only the main thread has signal handlers; elsewhere the block just runs)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        raise KeyboardInterrupt


def quiet_teardown_logs() -> None:
    """Dask tasks and actors torn down mid-call by Ctrl-C or an error log tracebacks (through distributed's
    loggers and tornado's, whose callbacks run on its event loop) that tell the user nothing new."""
    import logging

    for name in ("distributed", "tornado.application"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


class Terminated(SystemExit):
    """A worker's exit on its parent's SIGTERM (`init_worker`)."""


_SIGNAL_OF: dict[type[BaseException], signal.Signals] = {KeyboardInterrupt: signal.SIGINT,
                                                        Terminated: signal.SIGTERM}


@contextmanager
def swallowed_interrupts_redelivered() -> Iterator[None]:
    """Run the block with `_redeliver` in front of `sys.unraisablehook`."""
    previous = sys.unraisablehook
    sys.unraisablehook = partial(_redeliver, previous)
    try:
        yield
    finally:
        sys.unraisablehook = previous


def _redeliver(hook: Callable[[sys.UnraisableHookArgs], object], unraisable: sys.UnraisableHookArgs) -> None:
    """Python cannot raise an exception out of a finalizer, so the KeyboardInterrupt (or `Terminated`)
    that a signal's handler raises there is handed to the unraisable hook and dropped. Another thread
    sends the signal to the main thread again, once this hook has returned (sent from here, it would be
    handled inside the hook, whose exceptions are dropped too), and as a signal, which also ends a
    blocking wait; its handler then runs in the main thread's ordinary code, where the exception
    unwinds as it should. Any other unraisable exception goes on to `hook`, as does any at all once
    the interpreter is ending."""
    signum = _SIGNAL_OF.get(unraisable.exc_type)
    if signum is None or sys.is_finalizing():  # no thread can start once the interpreter is ending
        hook(unraisable)
    else:
        _thread.start_new_thread(signal.pthread_kill, (threading.main_thread().ident, signum))


def init_worker() -> None:
    """The first thing a worker process does: Ctrl-C is its parent's business, and a SIGTERM from the
    parent unwinds the worker (running `finally` blocks and killing its own children) instead of
    dropping it on the spot."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_terminate)
    sys.unraisablehook = partial(_redeliver, sys.__unraisablehook__)


def dask_setup(worker: object) -> None:
    """Dask's preload hook, run in each worker of a cluster started here (`preload=["steersim.interrupts"]`):
    a Dask worker does not stop on Ctrl-C, closing the cluster stops it. The Ctrl-C only quiets its
    teardown logs, as the parent's are: a worker whose heartbeat meets the scheduler already closed
    would otherwise print that error's traceback under the command's one line."""
    signal.signal(signal.SIGINT, lambda signum, frame: quiet_teardown_logs())


def _exit_on_terminate(signum: int, frame: object) -> None:
    """Unwind the worker; and, should the unwinding itself not end (a `finally` block that waits on
    something the terminating parent holds), let SIGALRM's default action end the worker a moment later,
    so that the parent's join never waits on it for ever."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(TERMINATE_GRACE_S)
    raise Terminated(EXIT_INTERRUPTED)


def collect(items: Iterable[T]) -> tuple[list[T], bool]:
    """The items of `items` until it ends or Ctrl-C, and whether Ctrl-C cut it short: the partial
    result of a loop over units of work (seeds, chunks, cases, runs)."""
    taken: list[T] = []
    try:
        for item in items:
            taken.append(item)
    except KeyboardInterrupt:
        return taken, True
    return taken, False


@contextmanager
def worker_pool(workers: int) -> Iterator[Pool]:
    """A process pool whose workers ignore Ctrl-C (`init_worker`). On leaving, the workers are
    terminated and joined whatever happened: the results wanted have been taken by then, and a worker
    still busy after Ctrl-C must not outlive the command."""
    import multiprocessing as mp

    pool = mp.get_context("fork").Pool(workers, initializer=init_worker)
    try:
        yield pool
    finally:
        _terminate(pool)


def _terminate(pool: Pool) -> None:
    """`pool.terminate()` and join, with a bound: a worker still alive a while after the pool's own
    SIGTERM (rarely, one is never signalled and waits for ever on the task queue's lock, which the
    terminating pool holds) is ended with SIGKILL, so that leaving the pool can never hang."""
    processes = list(getattr(pool, "_pool", ()))  # the pool's worker processes (not a public attribute)
    closing = threading.Thread(target=pool.terminate, daemon=True)
    closing.start()
    closing.join(timeout=3 * TERMINATE_GRACE_S)
    if closing.is_alive():
        for process in processes:
            if process.is_alive():
                process.kill()
        closing.join()
    pool.join()
