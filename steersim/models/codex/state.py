"""The state of one Codex app-server thread as its client, the model backend and the tool see it.

Ids are the model's, in the order things happen: turns `t1, t2`, the prompts of `turn/start` `p1, p2`,
steers `s1, s2`, the agent message and tool call of request k `a<k>` and `c<k>`. The harness renames the
real ids (UUIDv7 turn and item ids, the backend's item ids) to these before it validates a recording.
"""

from __future__ import annotations

from dataclasses import dataclass

THREAD = "thread"  # the one thread of a run (the chain of the common vocabulary)

IDLE = "idle"  # no active turn
SAMPLING = "sampling"  # a model request is in flight, nothing streamed yet
TEXT = "text"  # the agent message streams (its item started)
SAID = "said"  # the agent message completed, the response has not
TOOL = "tool"  # exec_command runs
BOUNDARY = "boundary"  # the response ended, the tool finished or the stream was abandoned: Codex decides
PHASES = (IDLE, SAMPLING, TEXT, SAID, TOOL, BOUNDARY)

# The documented errors of turn/steer (JSON-RPC -32600, invalid request), in the model's words
NO_ACTIVE_TURN = "no-active-turn"  # "no active turn to steer"
TURN_MISMATCH = "turn-mismatch"  # "expected active turn id `X` but found `Y`"
EMPTY_INPUT = "empty-input"  # "input must not be empty"
INTERRUPTED = "interrupted"  # the turn that accepted a steer ended interrupted before the steer reached the model


@dataclass(frozen=True)
class CodexState:
    """Everything the next step depends on.

    `pending` holds accepted steers Codex has not yet written into the thread (no `userMessage` item);
    `history` the user messages written, in order; `sent` the messages some model request carried;
    `unsent` the steers the active turn accepted that no request of it carried yet; `accepted` every
    steer ever acknowledged (the persistence promise is about these).
    """

    phase: str = IDLE
    turns: int = 0  # turns started; the active (or last) turn is t<turns>
    prompts: int = 0  # turn/start requests the client sent
    steers: int = 0  # turn/steer requests the client sent (valid or not)
    requests: int = 0  # model requests Codex sent
    calls: int = 0  # tool calls of the active turn
    need_request: bool = False  # at a boundary: the model must be asked again (tool output, recorded steers)
    pending: tuple[str, ...] = ()
    history: tuple[str, ...] = ()
    sent: tuple[str, ...] = ()
    unsent: tuple[str, ...] = ()
    accepted: tuple[str, ...] = ()
    open_items: tuple[str, ...] = ()  # items started and not completed, of the active turn
    running_tool: str = ""  # a tool call still running after its turn was interrupted
    interrupts: int = 0
    bad: tuple[str, ...] = ()  # the malformed steers already sent (stale, bogus, empty)
    read: bool = False  # the client read the thread back (thread/read): the run is over
