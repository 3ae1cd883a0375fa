"""The recorded exchange with what differs from run to run taken out, so that two runs compare line by line.

Codex's ids are UUIDv7 (a timestamp in their first digits), its environment context carries the date and
the time zone, a command's output carries a chunk id and its wall time, items, notifications and the turn
metadata carry wall-clock times, the rollout file is named by the time, a command has a process id, and
each run has its own temporary folder. Each UUID becomes `uuid-<n>` by first sight, each time a 0, the rest
a fixed placeholder. What stays different between two runs is the order of notifications Codex sends
concurrently (`thread/started` and `remoteControl/status/changed`, for one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from steersim.models.codex.harness.runner import Recording

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TEXT_RULES = (
    (re.compile(r"<current_date>[^<]*</current_date>"), "<current_date>DATE</current_date>"),
    (re.compile(r"<timezone>[^<]*</timezone>"), "<timezone>ZONE</timezone>"),
    (re.compile(r"Chunk ID: [0-9a-f]+"), "Chunk ID: CHUNK"),
    (re.compile(r"Wall time: [0-9.]+ seconds"), "Wall time: WALL seconds"),
    (re.compile(r"/[\w/.-]*steersim-codex-[\w]+"), "RUN"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d"), "STAMP"),  # a rollout file's name
    (re.compile(r"\d{4}/\d\d/\d\d/"), "DAY/"),  # its folder
    (re.compile(r'(_unix_ms\\?": ?)\d+'), r"\g<1>0"),  # times inside the turn metadata string
)
TIME_KEYS = re.compile(r"(At|AtMs|Ms|_at)$")
RUN_KEYS = frozenset({"processId"})  # the command's process id


class Normaliser:
    def __init__(self) -> None:
        self.uuids: dict[str, str] = {}

    def _uuid(self, found: re.Match[str]) -> str:
        return self.uuids.setdefault(found.group(0), f"uuid-{len(self.uuids) + 1}")

    def text(self, value: str) -> str:
        value = UUID.sub(self._uuid, value)
        for pattern, placeholder in TEXT_RULES:
            value = pattern.sub(placeholder, value)
        return value

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and TIME_KEYS.search(key):
            return 0
        if key in RUN_KEYS:
            return "PID"
        if isinstance(value, str):
            return self.text(value)
        return value


def lines(recording: Recording) -> Iterator[dict[str, Any]]:
    """The JSON-RPC messages in order (`out`: from the harness), the harness's moves and the model requests
    at their positions, each normalised."""
    norm = Normaliser()
    extra: dict[int, list[dict[str, Any]]] = {}
    for move in recording.moves:
        extra.setdefault(move.at, []).append({"move": move.name, "index": move.index})
    for request in recording.requests:
        extra.setdefault(request.at, []).append({"model_request": request.index, "body": request.body})
    for position, message in enumerate(recording.messages):
        for entry in extra.pop(position, []):
            yield norm.value(entry)
        yield norm.value({"out" if message.out else "in": message.body})
    for position in sorted(extra):
        for entry in extra[position]:
            yield norm.value(entry)


def write(recording: Recording, path: Any) -> None:
    with open(path, "w") as out:
        out.write(json.dumps({"scenario": recording.scenario, "codex": recording.version, "end": recording.end}) + "\n")
        for line in lines(recording):
            out.write(json.dumps(line) + "\n")
