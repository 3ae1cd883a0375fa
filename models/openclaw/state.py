"""The OpenClaw model state (one flat named tuple) and a small step builder."""

from __future__ import annotations

from typing import Any, NamedTuple

from sim.core.model import Event

IDLE, ENDING, START = "idle", "ending", "start"


class OpenClawState(NamedTuple):
    """A named tuple, so that the explorer hashes and compares states in C.

    Runtime: `phase` the program counter of the agent loop (or of the Codex turn), `prompts` of the run
    about to start, `llm_calls` model calls so far (the scripted model asks for tools on the first
    `tool_turns`), `turn_open`, `has_more` (the iteration ran a tool batch), `pending` drained steers not
    yet injected, `steerq` Agent.steeringQueue, `followups` Agent.followUpQueue, `hist` user-role items of
    the transcript, `calls` status of each call of the batch (new, ready, running, ended, done), `call`
    the call the batch loop is at, `drained` this batch drained steering, `aborted`/`aborts`, `compacted`,
    `skip_poll` the run was continued with drained steering and skips its run-start poll, `after_launch` a
    parallel batch passed its launch checkpoint and its turn has not ended, `late_steer` a steer was
    accepted then (no checkpoint of the batch polls it).
    Gateway: `sent` inbound messages so far, `fq` the follow-up queue, `dropped` evicted items awaiting
    their overflow summary, `quiet` the debounce window has passed since the last enqueue, `forced` a
    collect drain was found cross-route, `replacement` the interrupt message waiting to run.
    Codex: `batch` messages in the quiet window, `inflight` batches sent with turn/steer and not yet
    consumed, `steer_batches` batches sent in this turn, `boundaries` model boundaries left.
    Observed: `seen` each call's lifecycle as the emitted events tell it (0 nothing, 1 tool_execution_start,
    2 tool_execution_end, 3 its toolResult message), replayed from every step's events
    (`properties.replay_lifecycle`), never from `calls`, so properties judge what was emitted."""

    phase: str = START
    prompts: tuple[str, ...] = ("p0",)
    llm_calls: int = 0
    turn_open: bool = True
    has_more: bool = False
    pending: tuple[str, ...] = ()
    steerq: tuple[str, ...] = ()
    followups: tuple[str, ...] = ()
    hist: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    call: int = 0
    drained: bool = False
    aborted: bool = False
    aborts: int = 0
    compacted: bool = False
    skip_poll: bool = False
    after_launch: bool = False
    late_steer: bool = False
    sent: int = 0
    fq: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    quiet: bool = True
    forced: bool = False
    replacement: str = ""
    batch: tuple[str, ...] = ()
    inflight: tuple[tuple[str, ...], ...] = ()
    steer_batches: int = 0
    boundaries: int = 0
    seen: tuple[int, ...] = ()


FIELDS = OpenClawState._fields
_new = tuple.__new__  # builds an OpenClawState from its fields in C


class Step:
    """A transition under construction: reads fall through to the source state until a field is set,
    and the native events are collected in order. `done()` returns the next state and the events."""

    def __init__(self, state: OpenClawState) -> None:
        self.__dict__["source"] = state
        self.__dict__["changes"] = {}
        self.__dict__["events"] = []

    def __getattr__(self, name: str) -> Any:
        changes = self.__dict__["changes"]
        return changes[name] if name in changes else getattr(self.__dict__["source"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        self.__dict__["changes"][name] = value

    def emit(self, *events: Event) -> None:
        self.__dict__["events"].extend(events)

    @property
    def emitted(self) -> list[Event]:
        """The events emitted so far in this step."""
        return self.__dict__["events"]

    def done(self) -> tuple[OpenClawState, list[Event]]:
        """Direct construction: several times faster than `_replace` on the explorer's hot path."""
        source, changes = self.__dict__["source"], self.__dict__["changes"]
        values = [changes.get(name, value) for name, value in zip(FIELDS, source, strict=True)]
        return _new(OpenClawState, values), self.__dict__["events"]


def set_at(values: tuple, index: int, value: Any) -> tuple:
    return (*values[:index], value, *values[index + 1:])
