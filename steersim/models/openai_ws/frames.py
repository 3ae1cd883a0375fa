"""Reading a client's frames as bytes, so that no frame can break the reader: each one is an event
object, or the reason it is malformed.

A frame is malformed when it is not UTF-8 (text or binary alike: a binary frame holding UTF-8 JSON is
read like a text frame, as the SDK reads the server's), not JSON, nested deeper than the parser goes,
or not a JSON object. The server answers a malformed frame as the API answers a malformed event, with
an `error` event, and records it as a finding. A frame over the size limit never reaches this module:
the WebSocket layer refuses it (close code 1009) before buffering it. Findings and messages quote a
frame only as a bounded excerpt, never whole: a client may send megabytes.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024  # the largest client frame served (`--max-frame-bytes`)
EXCERPT_CHARS = 200


class Malformed(NamedTuple):
    """Why a frame is no event (`reason`, for the client's `error` event) and a bounded excerpt of it."""

    reason: str
    excerpt: str


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` if it is short, else its first `limit` characters and how long the whole is."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters in all)"


def read_frame(raw: bytes | str) -> dict[str, Any] | Malformed:
    """The event object a frame carries, or why it is malformed."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            return Malformed(f"The frame is not valid UTF-8 (byte {bad.start}).",
                             excerpt(raw.decode("utf-8", errors="backslashreplace")))
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as bad:
        return Malformed(f"The frame is not valid JSON: {bad.msg} (character {bad.pos}).", excerpt(raw))
    except RecursionError:
        return Malformed("The frame nests JSON too deeply.", excerpt(raw))
    if not isinstance(data, dict):
        return Malformed(f"The frame must be a JSON object, not {type(data).__name__}.", excerpt(raw))
    return data
