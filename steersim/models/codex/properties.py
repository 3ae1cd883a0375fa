"""Codex's own promises about steering, as properties over the model's state, and their vacuity guards.

The core invariants already demand that an accepted steer reaches the model exactly once or the client is
told it did not (`no-lost-steers`), that the thread takes each message once and steers in acceptance order
(`ordered-history`), one active turn and paired tool results. These add what Codex's protocol says on top:
what `turn/steer` acknowledged is in the thread, every item it started completes, Codex writes steers in
the order it accepted them, and it accepts only steers that name the active turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from steersim.core.model import Always, Property, Sometimes
from steersim.models.codex.state import IDLE, CodexState


def persisted(s: CodexState) -> bool:
    """Every acknowledged steer is in the thread's history, or still waiting to be written there."""
    return all(m in s.history or m in s.pending for m in s.accepted)


def items_complete(s: CodexState) -> bool:
    """No turn ends with an item it started still open (a command the interrupt let run on is apart)."""
    return s.phase != IDLE or not s.open_items


def acceptance_order(s: CodexState) -> bool:
    written = [m for m in s.history if m in s.accepted]
    return written == [m for m in s.accepted if m in written]


def properties(params: Mapping[str, Any], bug: str | None = None) -> Sequence[Property]:
    out: list[Property] = [
        Always("acknowledged-steer-persisted", state=persisted,
               doc="a steer turn/steer acknowledged (it returned the turnId that accepted the input) is written "
                   "into the thread as a userMessage item, also when the turn is interrupted first"),
        Always("started-items-complete", state=items_complete,
               doc="every item/started is followed by its item/completed before its turn/completed"),
        Always("steers-in-acceptance-order", state=acceptance_order,
               doc="Codex writes steers into the thread in the order it acknowledged them"),
        Always("steer-preconditions", state=lambda s: not s.bad_accepted,
               doc="turn/steer succeeds only when expectedTurnId names the active turn and the input is not empty"),
    ]
    if params["steers"] > 0:
        out.append(Sometimes("steer-reaches-model-mid-turn",
                             state=lambda s: any(m in s.sent for m in s.accepted),
                             doc="some acknowledged steer is carried by a model request of its turn"))
    if params["steers"] > 0 and params["interrupts"] > 0:
        out.append(Sometimes("interrupt-with-pending-steer",
                             state=lambda s: s.phase == IDLE and s.interrupts > 0 and bool(s.accepted)
                             and not all(m in s.sent for m in s.accepted),
                             doc="some turn is interrupted after it acknowledged a steer no request carried yet"))
    if params["bad_steers"]:
        out.append(Sometimes("malformed-steer-refused", state=lambda s: len(s.bad) == 3,
                             doc="a stale, a bogus and an empty steer have each been refused"))
    return out
