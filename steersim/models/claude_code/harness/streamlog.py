"""Claude Code's stream-json output as the claude-code model's events: `--format claude-code-stream`.

One JSON object per line, as `claude -p --output-format stream-json --verbose` writes them to the host: a
`command_lifecycle` line is the model's event of that name with its `state`, a `result` line ends a turn
(`how` is `ended` when the model ended it, `stop_reason` `end_turn`; a stopped or interrupted turn is left
open, the line cannot tell which), an `assistant` line with a Bash `tool_use` starts the command and a
`user` line with a `tool_result` is its result, and a `control_response` that lists `still_queued` answers
an interrupt. Every other line (system, stream events, text) records nothing the model speaks of and is
passed over. The ids of the log are Claude Code's uuids, which no reader of one line can rename to the
model's `m1`, `t1`, `c1`, so the records leave them out: the log is judged by what happened in which
order, not to which message.
"""

from __future__ import annotations

from typing import Any

from steersim.core.model import Event
from steersim.harness.logs import LogError, LogFormat, observed_event
from steersim.models.claude_code import protocol as P
from steersim.models.claude_code.state import ENDED


def _blocks(obj: dict[str, Any]) -> list[dict[str, Any]]:
    content = obj.get("message", {}).get("content") if isinstance(obj.get("message"), dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def stream_event(obj: dict[str, Any], where: str) -> Event | None:
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise LogError(f"{where}: a stream-json line is a JSON object with a string \"type\" (as `claude -p "
                       "--output-format stream-json` writes it)")
    if kind == P.LIFECYCLE:
        state = obj.get("state")
        if not isinstance(state, str):
            raise LogError(f"{where}: a command_lifecycle line needs its \"state\"")
        return observed_event(P.LIFECYCLE, {"state": state})
    if kind == P.RESULT:
        return observed_event(P.RESULT, {"how": ENDED} if obj.get("stop_reason") == "end_turn" else {})
    if kind == "assistant" and any(b.get("type") == "tool_use" for b in _blocks(obj)):
        return observed_event(P.TOOL_START, {})
    if kind == "user" and any(b.get("type") == "tool_result" for b in _blocks(obj)):
        return observed_event(P.TOOL_RESULT, {})
    if kind == "control_response" and "still_queued" in (obj.get("response", {}).get("response") or {}):
        return observed_event(P.INTERRUPT, {})
    return None


STREAM_LOG = LogFormat("claude-code-stream", "Claude Code's stream-json output (claude -p --output-format "
                       "stream-json --verbose), one line each", "events", stream_event)
