"""The recorded exchange with what differs from run to run taken out, so that two runs compare line by line.

Claude Code's line uuids are random, its lines and transcript carry wall-clock times and durations, each
run has its own temporary folder, and each fresh config folder its own random device id (in the model
requests' metadata). Each UUID becomes `uuid-<n>` by first sight (the session's and the harness's message
uuids are fixed, so they keep their numbers), each time or duration a 0, the folder and the device id a
placeholder, and keys are written sorted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from steersim.models.claude_code.harness.runner import Recording

UUID = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z])")
FOLDER = re.compile(r"/[\w/.-]*steersim-claude-[\w]+")
DEVICE_ID = re.compile(r'(?<="device_id":")[0-9a-f]{64}(?=")')
TIME_KEYS = re.compile(r"(timestamp|_ms|Ms|duration\w*|_at|At)$")


class Normaliser:
    def __init__(self) -> None:
        self.uuids: dict[str, str] = {}

    def _uuid(self, found: re.Match[str]) -> str:
        return self.uuids.setdefault(found.group(0), f"uuid-{len(self.uuids) + 1}")

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if TIME_KEYS.search(key) and isinstance(value, (int, float, str)) and not isinstance(value, bool):
            return 0
        if isinstance(value, str):
            return DEVICE_ID.sub("DEVICE", FOLDER.sub("RUN", UUID.sub(self._uuid, value)))
        return value


def raw_lines(recording: Recording) -> list[dict[str, Any]]:
    """The stdin and stdout lines in the order observed (`out`: from the harness), with the harness's moves
    and the model requests at their positions, then the transcript's records."""
    extra: dict[int, list[dict[str, Any]]] = {}
    for move in recording.moves:
        extra.setdefault(move.at, []).append({"move": move.name, "index": move.index})
    for request in recording.requests:
        extra.setdefault(request.at, []).append({"model_request": request.index, "body": request.body})
    out: list[dict[str, Any]] = []
    for position, line in enumerate(recording.lines):
        out.extend(extra.pop(position, []))
        out.append({"out" if line.out else "in": line.body})
    for position in sorted(extra):
        out.extend(extra[position])
    out += [{"transcript": record} for record in recording.transcript]
    return out


def write(recording: Recording, target: Path) -> None:
    normaliser = Normaliser()
    with target.open("w") as handle:
        handle.write(json.dumps({"scenario": recording.scenario, "end": recording.end}, sort_keys=True) + "\n")
        for line in raw_lines(recording):
            handle.write(json.dumps(normaliser.value(line), sort_keys=True) + "\n")
