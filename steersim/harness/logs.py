"""Reading recorded logs as observed events: one reader per log format, each giving records with the
file and line they came from, so that a finding and a bad line both point at the text a person wrote.

A log is judged under partial observation: it records some kinds of event and not others. The kinds a
log records are the names that occur in it; every other kind of model step is taken as unobserved and
free (see `steersim.harness.logcheck`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from steersim.core.facts import FACT_FIELDS, FACT_NAMES
from steersim.core.model import Event
from steersim.errors import UsageError

LOG_SOURCE = "log"  # the lane of every event read from a log: a log says what happened, not who drew it


class LogError(UsageError):
    """A log that cannot be read: the message names the file and line and says how to fix it."""


@dataclass(frozen=True)
class Record:
    """One observed event and where it was written."""

    file: str
    line: int
    event: Event
    text: str  # the record as the log wrote it (stripped), for the finding

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


Line = tuple[int, dict[str, Any], str]  # a log line: its number, its JSON object, its text (stripped)


@dataclass(frozen=True)
class LogFormat:
    """A reader and what it reads. `projection` names how a model's events become comparable with the
    records: "facts" compares the common facts of each event (`model.facts`), "events" the model's own
    events by name and fields, "native" the model's own events whole (source and target too), with the
    model's own `match_event` (a system's reader builds them as the model does).

    A format reads line by line (`read_line`: one event per line) or the whole log at once (`read_lines`:
    for a system whose log needs context, such as ids renamed by first sight or lines that say nothing
    the model speaks of; each record keeps the line it came from). `kind` says which kind of record an
    event is, for partial observation: by default its name, but a log may record some events of one name
    and not others (a rollout writes a command's start and not an agent message's)."""

    name: str
    doc: str
    projection: str
    # a line reader's None: the line records nothing the model speaks of
    read_line: Callable[[dict[str, Any], str], Event | None] | None = None
    read_lines: Callable[[str, Sequence[Line]], list[Record]] | None = None
    kind: Callable[[Event], str] | None = None

    def records(self, path: str, lines: Iterable[Line]) -> list[Record]:
        """The log's records from its lines: a line reader keeps no line once read (a long log's parsed
        objects would otherwise all stay in memory), a whole-log reader gets them all."""
        if self.read_lines is not None:
            return self.read_lines(path, list(lines))
        assert self.read_line is not None, f"the {self.name} format has no reader"
        read = self.read_line
        return [Record(path, number, event, text) for number, obj, text in lines
                if (event := read(obj, f"{path}:{number}")) is not None]


def observed_event(name: str, data: dict[str, Any]) -> Event:
    return Event(LOG_SOURCE, LOG_SOURCE, name, MappingProxyType(data))


def _fact_record(obj: dict[str, Any], where: str) -> Event:
    name = obj.get("fact")
    if name not in FACT_NAMES:
        raise LogError(f"{where}: unknown fact {name!r}; a facts log has one object per line with \"fact\" one of "
                       f"{', '.join(FACT_NAMES)}")
    fields = {key: value for key, value in obj.items() if key != "fact"}
    unknown = sorted(set(fields) - set(FACT_FIELDS[name]))
    if unknown:
        raise LogError(f"{where}: {name} has no field {', '.join(unknown)} (its fields: "
                       f"{', '.join(FACT_FIELDS[name])}); leave out what the log does not know")
    return observed_event(name, fields)


def _event_record(obj: dict[str, Any], where: str) -> Event:
    name, data = obj.get("name"), obj.get("data", {})
    if not isinstance(name, str) or not isinstance(data, dict):
        raise LogError(f"{where}: an events log has one object per line, {{\"name\": EVENT, \"data\": {{...}}}} "
                       "(the model's own event names, as `steersim simulate --trace` writes them)")
    return observed_event(name, dict(data))


FORMATS: dict[str, LogFormat] = {
    "facts": LogFormat("facts", "one JSON object per line: {\"fact\": NAME, FIELD: VALUE, ...}, the core facts",
                       "facts", _fact_record),
    "events": LogFormat("events", "one JSON object per line: {\"name\": EVENT, \"data\": {...}}, the model's events",
                        "events", _event_record),
}


SYSTEM_FORMATS: dict[str, str] = {
    "openai-ws-frames": "steersim.models.openai_ws.harness.framelog:FRAME_LOG",
    "codex-appserver": "steersim.models.codex.harness.transcript:APPSERVER_LOG",
    "codex-rollout": "steersim.models.codex.harness.rollout:ROLLOUT_LOG",
    "openclaw-transcript": "steersim.models.openclaw.harness.transcript:TRANSCRIPT_LOG",
    "langgraph-records": "steersim.models.langgraph.harness.records:RECORDS_LOG",
    "claude-code-stream": "steersim.models.claude_code.harness.streamlog:STREAM_LOG",
    "pydantic-ai-messages": "steersim.models.pydantic_ai.harness.history:MESSAGES_LOG",
}
"""The readers of real systems' own logs, in their systems' harness packages, imported when asked for."""


def log_format(name: str) -> LogFormat:
    if name in FORMATS:
        return FORMATS[name]
    if name in SYSTEM_FORMATS:
        module, _, attribute = SYSTEM_FORMATS[name].partition(":")
        return getattr(importlib.import_module(module), attribute)
    known = ", ".join(sorted([*FORMATS, *SYSTEM_FORMATS]))
    raise UsageError(f"--format {name}: unknown log format; known formats: {known}")


def read_log(path: str, fmt: LogFormat) -> list[Record]:
    """Every record of the log at `path`, in order; blank lines, and lines the format's reader passes over,
    are skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as failed:
        raise LogError(f"{path}: cannot read the log ({failed.__class__.__name__}: {failed}); "
                       "give the path of a UTF-8 text file") from None
    return fmt.records(path, _lines(path, lines, fmt))


def _lines(path: str, lines: list[str], fmt: LogFormat) -> Iterator[Line]:
    for number, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text:
            continue
        where = f"{path}:{number}"
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as bad:
            raise LogError(f"{where}: not JSON ({bad.msg}); a {fmt.name} log has one JSON object per line") from None
        if not isinstance(obj, dict):
            raise LogError(f"{where}: a {fmt.name} log has one JSON object per line, not {type(obj).__name__}")
        yield number, obj, text
