"""An OpenClaw session transcript as the openclaw model's events: `--format openclaw-transcript`.

OpenClaw keeps a session's transcript as transcript events (`SessionManager`, backed by its SQLite store in
the pinned build; an exported or archived session is the same events, one JSON object a line): a `session`
header, then entries linked by `parentId`. An entry of type `message` is a message the session appended when
the agent ended it, so each is the model's `message_end` of that message:

- a `user` message is named by its text (the prompt `p0`, a steer `m1`, a follow-up `f1`, as the harness
  writes them; OpenClaw's turn-aborted guidance, sent as user text, is `turn-aborted`);
- an `assistant` message by the tool calls it makes and its `stopReason` (an aborted one is `a-1`, as in
  the model; another is named by the model request it answers, which a transcript does not record, so
  that id is left out and matches any);
- a `toolResult` message by its `toolCallId`, with its text and details;
- a `custom_message` entry of type `openclaw:turn-aborted` is the hidden turn-aborted guidance.

Model and thinking-level changes, labels and the leaf pointer are not steps of the model and are skipped.
The transcript records no model requests, tool starts or queue polls: those kinds are unobserved, so a
transcript is judged on which messages were appended and in what order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from steersim.core.model import Event
from steersim.harness.logs import Line, LogError, LogFormat, Record
from steersim.models.openclaw import events as E
from steersim.models.openclaw.harness.translate import item_of

TURN_ABORTED_TYPE = "openclaw:turn-aborted"


def text_of(content: Any) -> str:
    """A message's text, as the driver reads it: a string, or the text parts of a content list joined."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(part.get("text", "") for part in parts if isinstance(part, dict) and part.get("type") == "text")


def message_event(message: dict[str, Any], where: str) -> Event:
    role = message.get("role")
    if role == "user":
        return E.agent("message_end", role=role, id=item_of(text_of(message.get("content"))))
    if role == "assistant":
        calls = [part.get("id") for part in message.get("content") or []
                 if isinstance(part, dict) and part.get("type") == "toolCall"]
        stop = message.get("stopReason")
        named = {"id": "a-1"} if stop == "aborted" else {}
        return E.agent("message_end", role=role, **named, toolCalls=calls, stopReason=stop)
    if role == "toolResult":
        return E.agent("message_end", role=role, id=message.get("toolCallId"), text=text_of(message.get("content")),
                       details=message.get("details") or {})
    raise LogError(f"{where}: a message of role {role!r}; a transcript's messages are user, assistant or toolResult")


def read_transcript(path: str, lines: Sequence[Line]) -> list[Record]:
    records = []
    for number, obj, text in lines:
        kind, where = obj.get("type"), f"{path}:{number}"
        if kind == "message":
            if not isinstance(obj.get("message"), dict):
                raise LogError(f"{where}: a message entry holds its message as an object, {{\"message\": {{...}}}}")
            records.append(Record(path, number, message_event(obj["message"], where), text))
        elif kind == "custom_message":
            custom = str(obj.get("customType", ""))
            ident = E.ABORTED_TURN_ID if custom == TURN_ABORTED_TYPE else custom
            records.append(Record(path, number, E.agent("message_end", role="custom", id=ident), text))
        elif not isinstance(kind, str):
            raise LogError(f"{where}: a transcript entry has a string \"type\" (session, message, custom_message, "
                           "...), as OpenClaw's SessionManager persists it")
    return records


TRANSCRIPT_LOG = LogFormat("openclaw-transcript", "an OpenClaw session transcript: its entries, one JSON object a line",
                           "native", read_lines=read_transcript)
