"""The state of one Claude Code session as its client, the model backend and the Bash tool see it.

Ids are the model's, in the order things happen: user messages `m1, m2, ...` in the order the client sent
them, turns `t1, t2`, model request k's Bash call `c<k>`. The harness renames the real ids (message uuids,
`toolu_` ids) to these before it validates a recording.
"""

from __future__ import annotations

from dataclasses import dataclass

SESSION = "session"  # the one conversation of a run (the chain of the common vocabulary)

IDLE = "idle"  # no turn runs
ASKING = "asking"  # the turn took messages in (`started`) and has not sent its model request yet
SAMPLING = "sampling"  # a model request is in flight, nothing streamed yet
TEXT = "text"  # the model streams text
CALLING = "calling"  # the model streams a Bash tool_use block
TOOL = "tool"  # the Bash command runs
FINISHED = "finished"  # the command ended: Claude Code has not yet written its tool_result
RESULT = "result"  # the command's tool_result is in: Claude Code decides how the turn goes on
ENDING = "ending"  # the model's response ended (end_turn): Claude Code ends the turn
PHASES = (IDLE, ASKING, SAMPLING, TEXT, CALLING, TOOL, FINISHED, RESULT, ENDING)
STREAMING = (ASKING, SAMPLING, TEXT, CALLING)  # where a `now` message stops the turn at once

# how a turn ends (the `result` line): its model answered, a `now` message stopped it, an interrupt did
ENDED, STOPPED, INTERRUPTED = "ended", "stopped", "interrupted"


@dataclass(frozen=True)
class ClaudeCodeState:
    """Everything the next step depends on.

    `queue` holds the messages Claude Code reported `queued` and no turn took in yet, each with its
    effective priority, in arrival order; `turn_messages` the messages the running turn took in (they are
    `completed` or `cancelled` with it: those that joined at a tool result are `completed` before its
    `result`, those it started with after it); `history` every message taken into the conversation, in order (a
    message whose turn was stopped before its request went out stays there: later requests carry its text).
    The flags record what the vacuity guards ask a check to reach.
    """

    phase: str = IDLE
    sent: int = 0  # user messages the client sent
    turns: int = 0  # turns started; the running (or last) turn is t<turns>
    requests: int = 0  # model requests Claude Code sent
    calls: int = 0  # Bash calls of the running turn
    interrupts: int = 0
    queue: tuple[tuple[str, str], ...] = ()
    turn_messages: tuple[str, ...] = ()
    joined_in: tuple[str, ...] = ()  # those of turn_messages that joined it at a tool result
    history: tuple[str, ...] = ()
    unsent: tuple[str, ...] = ()  # messages taken into the conversation that no model request carried yet
    stopped_for_now: bool = False  # some turn was stopped for a `now` message (vacuity)
    now_ended_command: bool = False  # a `now` message ended a running Bash command (vacuity)
    joined: bool = False  # some message joined a running turn at a tool result (vacuity)
