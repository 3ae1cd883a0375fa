"""Claude Code's own promises about its queue, as properties over the model's state, and vacuity guards.

The SDK documents a user message's priority in one sentence: "'now' interrupts the session's current
turn, 'next' joins it without stopping it, 'later' waits for its end" (and the CLI's own instructions to
the model: a message sent mid-turn is surfaced "within the running turn, often alongside the next tool
result"). The core invariants already demand that every queued message reaches the model exactly once or
is reported otherwise (`no-lost-steers`), first-in first-out order within a priority and a history that
takes each message once (`ordered-history`), one running turn and a tool_result for every Bash call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from steersim.core.model import Always, Property, Sometimes
from steersim.models.claude_code.spec import priorities


def properties(params: Mapping[str, Any]) -> Sequence[Property]:
    out: list[Property] = [
        Always("next-joins-at-tool-result", state=lambda s: not s.next_left,
               doc="'next' joins the running turn without stopping it: no model request after a tool result "
                   "leaves a waiting 'next' message behind"),
        Always("later-waits-for-turn-end", state=lambda s: not s.later_joined,
               doc="'later' waits for the running turn's end: it never joins a turn it did not start"),
        Always("now-starts-own-turn", state=lambda s: not s.now_joined,
               doc="'now' interrupts the session's current turn: it is answered in a turn of its own, never "
                   "folded into the turn it stopped"),
    ]
    chosen = priorities(params)
    joiners = {"next"} | ({"default"} if params["default_priority"] == "next" else set())
    if params["messages"] > 1 and params["tool_calls"] > 0 and joiners & set(chosen):
        out.append(Sometimes("message-joins-running-turn", state=lambda s: s.joined,
                             doc="some message sent while a turn runs joins it at a tool result"))
    if params["messages"] > 1 and "now" in chosen:
        out.append(Sometimes("now-stops-turn", state=lambda s: s.stopped_for_now,
                             doc="some running turn is stopped for a 'now' message"))
    return out

