"""The recorded exchange with what differs from run to run taken out, so that two runs compare line by line.

Codex's ids are UUIDv7 (a timestamp in their first digits), its environment context carries the date and
the time zone, a command's output carries a chunk id and its wall time, items, notifications and the turn
metadata carry wall-clock times, the rollout file is named by the time, a command has a process id, and
each run has its own temporary folder. Each UUID becomes `uuid-<n>` by first sight, bare or inside a prefixed
id such as `msg_<uuid>` or `at_<uuid>` (the prefix stays), each time a 0, the rest a fixed placeholder, and
keys are written sorted.

Codex sends some notifications from tasks other than the one that answers the harness, so where they land
among the other lines varies from run to run although their place means nothing: the recording on disk puts
them at a canonical place (`canonical_order`), before ids are numbered. Only the file is reordered: the
model validates the order that was observed (`observe`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from steersim.models.codex.harness.runner import Recording

# a UUID alone or after an id's prefix (`msg_`, `at_`): `_` is a word character, so `\b` would not see it
UUID = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z])")
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


def raw_lines(recording: Recording) -> list[dict[str, Any]]:
    """The JSON-RPC messages in the order observed (`out`: from the harness), with the harness's moves and
    the model requests at their positions."""
    out: list[dict[str, Any]] = []
    extra: dict[int, list[dict[str, Any]]] = {}
    for move in recording.moves:
        extra.setdefault(move.at, []).append({"move": move.name, "index": move.index})
    for request in recording.requests:
        extra.setdefault(request.at, []).append({"model_request": request.index, "body": request.body})
    for position, message in enumerate(recording.messages):
        out.extend(extra.pop(position, []))
        out.append({"out" if message.out else "in": message.body})
    for position in sorted(extra):
        out.extend(extra[position])
    return out


def _notification(line: Mapping[str, Any]) -> Mapping[str, Any] | None:
    body = line.get("in")
    return body if isinstance(body, dict) and "method" in body and "id" not in body else None


def _unthreaded(line: Mapping[str, Any]) -> bool:
    """A notification about the app-server itself (`remoteControl/status/changed`): its params name no
    thread, and Codex sends it from its own task, so it can land anywhere among a run's lines."""
    body = _notification(line)
    params = body.get("params") if body else None
    return isinstance(params, dict) and "threadId" not in params and "thread" not in params


def _thread_started(line: Mapping[str, Any]) -> str | None:
    """The thread of a `thread/started` notification: Codex sends it from the thread's task while another
    one answers `thread/start`, so it lands before or after the reply, or after the harness's next request."""
    body = _notification(line)
    if body and body["method"] == "thread/started":
        return str(body.get("params", {}).get("thread", {}).get("id"))
    return None


def _reply_thread(line: Mapping[str, Any]) -> str | None:
    body = line.get("in")
    result = body.get("result") if isinstance(body, dict) else None
    thread = result.get("thread") if isinstance(result, dict) else None
    return str(thread.get("id")) if isinstance(thread, dict) and "id" in thread else None


def canonical_order(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines with the notifications whose place Codex does not promise, and the model does not read
    (`observe` reads turn and item notifications and replies only), put at one place: each notification
    about the app-server itself right after the reply to `initialize` (the first reply), each
    `thread/started` right after the first reply that names its thread. Every other line keeps its
    observed order."""
    unthreaded = [e for e in entries if _unthreaded(e)]
    started = {thread: e for e in entries if (thread := _thread_started(e)) is not None}
    out: list[dict[str, Any]] = []
    placed_unthreaded = False
    for entry in entries:
        if _unthreaded(entry) or _thread_started(entry) is not None:
            continue
        out.append(entry)
        body = entry.get("in")
        if not placed_unthreaded and isinstance(body, dict) and "id" in body:
            out.extend(unthreaded)
            placed_unthreaded = True
        thread = _reply_thread(entry)
        if thread in started:
            out.append(started.pop(thread))
    if not placed_unthreaded:
        out.extend(unthreaded)
    out.extend(started.values())  # a thread whose reply never came: at the end, in observed order
    return out


def lines(recording: Recording) -> Iterator[dict[str, Any]]:
    """The recording's lines in canonical order (`canonical_order`), each normalised."""
    norm = Normaliser()
    for entry in canonical_order(raw_lines(recording)):
        yield norm.value(entry)


def write(recording: Recording, path: Any) -> None:
    """The normalised recording, one JSON object a line with its keys sorted: two runs of a scenario that
    behaved alike give the same bytes."""
    with open(path, "w") as out:
        head = {"scenario": recording.scenario, "codex": recording.version, "end": recording.end}
        out.write(json.dumps(head, sort_keys=True) + "\n")
        for line in lines(recording):
            out.write(json.dumps(line, sort_keys=True) + "\n")
