"""A Responses WebSocket frame log as the openai-ws model's events: `--format openai-ws-frames`.

One JSON object per line, a frame as it travelled, from the client's side: `{"direction": "sent",
"frame": {...}}` for a frame the client sent, `"received"` for one the server sent (the frame's own
fields may also stand beside `direction`, without `frame`). A frame is the model's event of the same
`type`, from client to server or back, and is matched by the model's own `frame_matches`: the server's
frames exactly, the client's by structure (its free text is its own). The server's bookkeeping steps and
the connection's open and close are not frames, so a frame log leaves them unobserved.
"""

from __future__ import annotations

from typing import Any

from steersim.core.model import Event
from steersim.harness.logs import LogError, LogFormat
from steersim.models.openai_ws.model import CLIENT, SERVER

SIDES = {"sent": (CLIENT, SERVER), "received": (SERVER, CLIENT)}


def frame_event(obj: dict[str, Any], where: str) -> Event:
    direction = obj.get("direction")
    frame = obj.get("frame", {key: value for key, value in obj.items() if key != "direction"})
    if direction not in SIDES:
        raise LogError(f"{where}: a frame log line needs \"direction\": \"sent\" (by the client) or \"received\" "
                       f"(from the server), not {direction!r}")
    if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
        raise LogError(f"{where}: a frame is a JSON object with a string \"type\" (a Responses WebSocket event)")
    source, target = SIDES[direction]
    return Event(source, target, frame["type"], frame)


FRAME_LOG = LogFormat("openai-ws-frames", "Responses WebSocket frames, one per line, with direction sent/received",
                      "native", frame_event)
