"""The OpenClaw model state (one flat named tuple) and a small step builder."""

from __future__ import annotations

from operator import itemgetter
from typing import Any, NamedTuple

from steersim.core.model import Event

IDLE, ENDING, START = "idle", "ending", "start"
Ended = tuple[int, str, tuple[tuple[str, str], ...]]
"""An ended call in `seen`: 2, and the text and details its tool_execution_end carried."""
Lifecycle = tuple[int | Ended, ...]


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
    Observed: `window` the follow-up queue's quiet window is open as the gateway's events tell it (an
    enqueue, a rejection at the cap or a requeue opened it and no debounce_elapsed closed it since),
    replayed from every step's events (`properties.window_after`), never from `quiet`.
    Observed: `seen` each call's lifecycle as the emitted events tell it (0 nothing, 1 tool_execution_start,
    `(2, text, details)` tool_execution_end with the result it carried, 3 its toolResult message; empty
    once an assistant message asks for no tools, so a run's last response is known to have asked for none), replayed
    from every step's events (`properties.replay_lifecycle`), never from `calls`, so properties judge what
    was emitted.
    Observed: `continued` AgentSession's continue polled steering and drained some, and no run has started
    since (so that run may skip its run-start poll); `steer_number` the number of the turn's last turn/steer
    (`clientUserMessageId`), 0 after turn/started: both replayed from the events
    (`properties.replay_checkpoints`), never from `skip_poll` or `steer_batches`."""

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
    window: bool = False
    seen: Lifecycle = ()
    continued: bool = False
    steer_number: int = 0


FIELDS = OpenClawState._fields
_new = tuple.__new__  # builds an OpenClawState from its fields in C


class Step(list):
    """A transition under construction: the source state's fields in a list, each read and set by its
    name, and the native events collected in order. `done()` returns the next state and the events.

    Every field is a property over its position (`_field`), whose getter is C (`operator.itemgetter`),
    so the handlers read and set `st.phase` as on a mutable state while the copy in (`list(state)`) and
    the state out (`tuple.__new__` of a plain copy) are C calls: the explorer takes a step per transition."""

    __slots__ = ("events",)

    def __init__(self, state: OpenClawState) -> None:
        list.__init__(self, state)
        self.events: list[Event] = []  # emitted so far in this step

    def emit(self, *events: Event) -> None:
        self.events.extend(events)

    def done(self) -> tuple[OpenClawState, list[Event]]:
        return _new(OpenClawState, self.copy()), self.events  # a plain list converts to a tuple the fastest


def _field(index: int) -> property:
    def set_field(st: Step, value: Any) -> None:
        st[index] = value

    return property(itemgetter(index), set_field)


for _index, _name in enumerate(FIELDS):
    setattr(Step, _name, _field(_index))


def set_at(values: tuple, index: int, value: Any) -> tuple:
    return (*values[:index], value, *values[index + 1:])
