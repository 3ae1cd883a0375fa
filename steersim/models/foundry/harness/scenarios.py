"""Scripted environments for the conformance harness: who calls when, with which precondition, and
how each turn's handler behaves.

A scenario fixes the environment; the interleaving is left to the scheduler of the virtual loop. Inputs
are named in call order (`m0` is the first input whose start() is issued), as in the model, so a
scenario's callers are plans, not names. Handler plans are indexed by that same order.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from steersim.errors import UsageError

NO_PRECONDITION, LATEST, STALE = "none", "latest", "stale"


@dataclass(frozen=True)
class CallerPlan:
    """A caller that calls start() at virtual time `at`. `precondition`: no `if_last_input_id`, the
    latest input id it has seen accepted, or the first one (stale once another input was accepted).
    `cancel_at`: when it cancels its handle (still queued, or its turn running), if it has not resolved by
    then. `after`: the caller whose
    handle this one holds: it calls as soon as that handle's outcome (or refusal) arrived, in the same
    task, the way a client sends its next message when the reply to its last one comes in.
    `names_input`: it passes `input_id`; otherwise it omits it and the package generates one."""

    at: float
    precondition: str = NO_PRECONDITION
    cancel_at: float | None = None
    after: int | None = None
    names_input: bool = True


@dataclass(frozen=True)
class HandlerPlan:
    """One turn's handler: it sleeps `steps[i]` before safe point i, where it reads its context; if it
    `honours` the signal it returns early when cancelled with inputs pending; at the end it returns or
    raises. `crash_at`: the safe point at which the process crashes (first lifetime only). During a
    graceful shutdown a handler that `exits_for_recovery` returns `await ctx.exit_for_recovery()` at its
    next safe point; one that does not runs on until the grace period ends."""

    steps: tuple[float, ...] = (1.0, 1.0)
    honours: bool = True
    ending: str = "return"
    crash_at: int | None = None
    exits_for_recovery: bool = True


@dataclass(frozen=True)
class Scenario:
    """An environment. `provider_yields`: the store is remote, every call takes virtual latency.
    `early_start`: callers may call start() while the lifetime's `TaskManager.startup()` is still
    running, which `AgentServerHost` never allows (its lifespan awaits startup() before it serves); by
    default they wait for it, as behind the host. `surface`: `tasks` calls `start()`; `responses` POSTs
    to the package's Responses host (`steersim.models.foundry.harness.responses_host`), each caller's precondition
    choosing its `previous_response_id`."""

    name: str
    callers: tuple[CallerPlan, ...]
    handlers: tuple[HandlerPlan, ...] = ()
    steerable: bool = True
    provider_yields: bool = False
    early_start: bool = False
    surface: str = "tasks"
    shutdown_at: float | None = None
    restart_after: float = 5.0
    horizon: float = 120.0
    notes: str = field(default="", compare=False)

    def handler(self, k: int) -> HandlerPlan:
        return self.handlers[k] if k < len(self.handlers) else HandlerPlan()

    @property
    def crashes(self) -> bool:
        return any(h.crash_at is not None for h in self.handlers)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _callers(*times: float, **per_index: Any) -> tuple[CallerPlan, ...]:
    return tuple(CallerPlan(t, **per_index.get(f"c{k}", {})) for k, t in enumerate(times))


HONOUR, IGNORE = HandlerPlan(), HandlerPlan(honours=False)
LONG_IGNORING = HandlerPlan(steps=(1.0, 1.0, 1.0), honours=False)

NAMED: dict[str, Scenario] = {s.name: s for s in (
    Scenario("steer-honoured", _callers(0.0, 0.5, 0.7), (HONOUR, HONOUR, HONOUR),
             notes="two steers land on a running turn whose handler honours the signal"),
    Scenario("steer-ignored", _callers(0.0, 0.5, 0.7), (IGNORE, IGNORE, IGNORE),
             notes="the handler ignores the signal; queued turns wait for it"),
    Scenario("raise-with-queue", _callers(0.0, 0.5, 0.6), (HandlerPlan(ending="raise"), HONOUR, HONOUR),
             notes="the running handler raises with two inputs queued"),
    Scenario("queued-cancel", _callers(0.0, 0.5, 0.6, c2={"cancel_at": 0.8}), (LONG_IGNORING, HONOUR, HONOUR),
             notes="the last queued caller cancels its handle while it waits"),
    Scenario("cancel-after-promotion", _callers(0.0, 0.5, c1={"cancel_at": 3.5}), (HONOUR, LONG_IGNORING),
             notes="a queued caller cancels after its input became the running turn"),
    Scenario("full-queue", _callers(0.0, *(0.1 + 0.01 * k for k in range(10))), (LONG_IGNORING,),
             notes="ten inputs queue behind a long turn; the tenth finds the queue full"),
    Scenario("full-queue-then-steer", _callers(0.0, *(0.1 + 0.01 * k for k in range(10)), 0.5),
             (HandlerPlan(steps=(1.0,), honours=False),),
             notes="a refused start() on a full queue, then the queue drains"),
    Scenario("refusal-then-steer", _callers(0.0, *(0.1 + 0.01 * k for k in range(10)), 1.5),
             (HandlerPlan(steps=(1.0,), honours=False),),
             notes="nine inputs wait behind a turn, a tenth start() is refused with SteeringQueueFull, and a "
                   "start() accepted after the queue moved queues behind the survivors"),
    Scenario("raise-then-follow-up", _callers(0.0, 0.5, 0.0, c2={"after": 0}),
             (HandlerPlan(honours=False, ending="raise"), HONOUR, HONOUR),
             notes="the running handler raises with an input queued, and its caller sends its next message "
                   "as soon as its TaskFailed arrives (local store)"),
    Scenario("stale-precondition",
             _callers(0.0, 0.5, 0.7, c1={"precondition": LATEST}, c2={"precondition": STALE}),
             (HONOUR, HONOUR, HONOUR), notes="a caller asserts an input id that another caller advanced past"),
    Scenario("crash-recovery", _callers(0.0, 0.5, 0.6, 9.0),
             (HandlerPlan(honours=False, crash_at=1), HONOUR, HONOUR, HONOUR),
             notes="the process crashes with two inputs queued; a new lifetime recovers the chain"),
    Scenario("crash-then-steer", _callers(0.0, 0.5, 6.0, 6.5),
             (HandlerPlan(steps=(1.0, 1.0, 1.0), honours=False, crash_at=1), LONG_IGNORING, HONOUR, HONOUR),
             notes="after a crash, new callers steer the recovered chain"),
    Scenario("crash-in-steered-turn", _callers(0.0, 0.5, 0.7, 9.0),
             (HONOUR, HandlerPlan(steps=(1.0, 1.0, 1.0), honours=False, crash_at=1), HONOUR, HONOUR),
             notes="the process crashes during a turn promoted from the queue, with an input still queued behind it"),
    Scenario("restart-race", _callers(0.0, 0.5, 2.5, 3.0),
             (HandlerPlan(steps=(1.0, 1.0, 1.0), honours=False, crash_at=1), HONOUR, HONOUR, HONOUR),
             provider_yields=True,
             notes="inputs due while the process is down are sent once the new lifetime serves, racing the "
                   "turns its recovery scan started"),
    Scenario("restart-race-early-start", _callers(0.0, 0.5, 2.5, 3.0),
             (HandlerPlan(steps=(1.0, 1.0, 1.0), honours=False, crash_at=1), HONOUR, HONOUR, HONOUR),
             provider_yields=True, early_start=True,
             notes="as restart-race, but the inputs are sent while startup() and its recovery scan still run "
                   "(outside AgentServerHost, which serves only after startup())"),
    Scenario("graceful-shutdown", _callers(0.0, 0.5, 0.6, 12.0), (LONG_IGNORING, HONOUR, HONOUR, HONOUR),
             shutdown_at=1.5, notes="a shutdown while a turn runs with two inputs queued; the handler "
             "exits for recovery and the next lifetime resumes the chain"),
    Scenario("forced-shutdown", _callers(0.0, 0.5, 40.0),
             (HandlerPlan(steps=(1.0, 30.0), honours=False, exits_for_recovery=False), HONOUR, HONOUR),
             shutdown_at=1.5, horizon=200.0,
             notes="a handler that ignores the shutdown is cancelled when the grace period ends"),
    Scenario("non-steerable", _callers(0.0, 0.5, 3.0), (HONOUR, HONOUR, HONOUR), steerable=False,
             notes="a concurrent start() on a non-steerable chain is refused"),
    Scenario("back-to-back", _callers(0.0, 2.0, 2.0, 2.0), (HONOUR, HONOUR, HONOUR, HONOUR),
             notes="inputs arrive exactly when the running turn ends"),
    Scenario("remote-store", _callers(0.0, 0.5, 0.7, 2.0, 0.0, c4={"after": 0}),
             (HONOUR, HandlerPlan(ending="raise"), HONOUR, HONOUR, HONOUR),
             provider_yields=True, notes="every store call takes the latency of a remote store's; the first "
             "caller sends its next message as soon as its reply arrives"),
    Scenario("remote-store-fixed-times", _callers(0.0, 0.5, 0.7, 2.0),
             (HONOUR, HandlerPlan(ending="raise"), HONOUR, HONOUR), provider_yields=True,
             notes="as remote-store, but every caller calls at a fixed time; only at zero latency do those "
                   "times coincide with the ends of turns"),
    Scenario("responses-steer", _callers(0.0, 0.5, 0.7, c1={"precondition": LATEST}, c2={"precondition": LATEST}),
             (HONOUR, HONOUR, HONOUR), surface="responses",
             notes="POSTs with previous_response_id naming the latest response land on a running turn"),
    Scenario("responses-fork", _callers(0.0, 0.5, 0.7, c1={"precondition": LATEST}, c2={"precondition": STALE}),
             (LONG_IGNORING, HONOUR, HONOUR), surface="responses",
             notes="a POST whose previous_response_id is not the conversation's most recent response"),
    Scenario("responses-full-queue",
             _callers(0.0, *(0.1 + 0.01 * k for k in range(10)), 1.5,
                      **{f"c{k}": {"precondition": LATEST} for k in range(1, 12)}),
             (HandlerPlan(steps=(1.0,), honours=False),), surface="responses",
             notes="nine POSTs queue behind a turn, a tenth finds the queue full, and one accepted after the queue "
                   "moved queues behind the survivors"),
    Scenario("remote-store-raise", _callers(0.0, 0.5, 2.0, 2.0), (HandlerPlan(ending="raise"), IGNORE, IGNORE, IGNORE),
             provider_yields=True, notes="a remote store while a turn raises and new inputs arrive"),
    Scenario("cancel-running", _callers(0.0, c0={"cancel_at": 1.5}), (LONG_IGNORING,),
             notes="a caller cancels the handle of its running turn, which was never queued"),
    Scenario("no-input-id", _callers(0.0, 0.5, 4.0, **{f"c{k}": {"names_input": False} for k in range(3)}),
             (HONOUR, HONOUR, HONOUR),
             notes="callers omit input_id: a fresh turn, a steer, and a start() that resumes the suspended chain"),
    Scenario("responses-pending-count",
             _callers(0.0, 0.5, 0.7, c1={"precondition": LATEST}, c2={"precondition": LATEST}),
             (LONG_IGNORING, HONOUR, HONOUR), surface="responses",
             notes="a turn reads context.pending_input_count at its safe points while two POSTs queue behind it"),
)}


def random_scenario(seed: int) -> Scenario:
    """A small random environment: 2-4 callers, mixed handler styles, sometimes a crash, a cancel, a
    stale precondition or a remote store."""
    rng = np.random.default_rng([seed, 5])
    n = int(rng.integers(2, 5))
    times = np.sort(np.round(rng.uniform(0.0, 3.0, size=n), 1))
    times[0] = 0.0
    callers = []
    for k, at in enumerate(times):
        precondition = str(rng.choice([NO_PRECONDITION, NO_PRECONDITION, LATEST, STALE])) if k else NO_PRECONDITION
        cancel_at = float(at + round(float(rng.uniform(0.1, 3.0)), 1)) if k and rng.random() < 0.2 else None
        callers.append(CallerPlan(float(at), precondition, cancel_at))
    crash_turn = int(rng.integers(n)) if rng.random() < 0.25 else None
    handlers = tuple(
        HandlerPlan(steps=tuple(float(d) for d in np.round(rng.uniform(0.2, 1.5, size=int(rng.integers(1, 4))), 1)),
                    honours=bool(rng.random() < 0.6), ending="raise" if rng.random() < 0.2 else "return",
                    crash_at=0 if k == crash_turn else None)
        for k in range(n)
    )
    return Scenario(f"random-{seed}", tuple(callers), handlers, steerable=bool(rng.random() < 0.85),
                    provider_yields=bool(rng.random() < 0.3))


def scenario_named(name: str) -> Scenario:
    """A named scenario, or `random-<seed>`."""
    if name in NAMED:
        return NAMED[name]
    prefix, _, number = name.partition("-")
    if prefix == "random" and number.isdigit():
        return random_scenario(int(number))
    raise UsageError(f"unknown scenario {name!r}; use one of {', '.join(NAMED)} or random-<seed>")
