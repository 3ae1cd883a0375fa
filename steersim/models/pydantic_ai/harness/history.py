"""A Pydantic AI message history as the pydantic-ai model's facts: `--format pydantic-ai-messages`.

What a Pydantic AI user keeps of a conversation is its message history, `result.all_messages()`: one
element of `ModelMessagesTypeAdapter`'s list a line, as

    for message in result.all_messages():
        f.write(ModelMessagesTypeAdapter.dump_json([message])[1:-1] + b"\\n")

writes it (and `ModelMessagesTypeAdapter.validate_json(b"[" + line + b"]")` reads one back). A history
shows the conversation as the model was sent it, and the reader turns it into the events the model's own
harness records (`runner.Driven`), whose common facts (`facts.facts`, the one mapping) are the records:

- consecutive `ModelRequest`s are one model request (Pydantic AI sends them together), a turn: its tool
  returns (`ToolReturnPart`, or a `RetryPromptPart` answering a call) are the calls' `tool.returned`,
  written at their own lines; a return with `outcome` `interrupted` is a call a cancelled run left open,
  closed out by the request; its `UserPromptPart`s are enqueued messages delivered into it, by the end
  of the run's redirect when the response before was final (no tool call); the request's facts are
  written at its last line;
- a `ModelResponse` is the model's answer to the turn, with its `ToolCallPart`s; one whose `state` is
  `interrupted` is the answer a cancelled run never got (the run stopped with the turn open);
- a `run_id` not seen before starts a run (`r1, r2, ...` by first sight); the user prompts of its first
  line are the run's prompt, not enqueued messages.

Turns and calls get the model's names, which are positions (`r1.2` is r1's second request, `r1.2.t1` the
first call of its response); a return names its call by the call's id, and an id no response asked for
is kept as it is, so it matches no call. A message is named by the harness's marker (`steer m1`); any
other content is a message whose name the log does not tell, and a history without `run_id`s does not
tell the names of turns or calls: what the log does not tell is left out of the record (it matches
whatever the model says), so a production history is judged on the order of what it shows. A history
records neither the client's enqueues, dequeues and cancellations nor a tool's start, so those facts are
unobserved; a message that never entered the history can show only by what came after it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from steersim.core.model import Event
from steersim.harness.logs import Line, LogError, LogFormat, Record, observed_event
from steersim.models.pydantic_ai.facts import facts
from steersim.models.pydantic_ai.state import run_name, turn_name

MARKER = re.compile(r"steer (m[0-9]+)")  # the text of an enqueued message in the harness (`runner.marker`)
TOOL_PARTS = ("tool-return", "retry-prompt")  # a call's answer when it names its tool (a retry may not: output)


def message_of(part: dict[str, Any]) -> str | None:
    """The model's name of an enqueued message: the one its text names, else unknown."""
    content = part.get("content")
    found = MARKER.fullmatch(content) if isinstance(content, str) else None
    return found.group(1) if found else None


@dataclass
class Pending:
    """The request lines since the last response: one model request, written at its last line."""

    line: int = 0
    text: str = ""
    run: int | None = None
    delivered: list[str | None] = field(default_factory=list)
    closed_out: list[str | None] = field(default_factory=list)


class HistoryReader:
    """Reads one history: runs by first sight of their `run_id`, requests counted within their run, call ids
    renamed by their place in the response that asked for them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.records: list[Record] = []
        self.runs: dict[str, int] = {}
        self.run: int | None = None
        self.requests = 0
        self.final = False  # the run's latest response asked for no tool: a request now is the end's redirect
        self.calls: dict[str, str] = {}  # a call's id in the log -> the model's name
        self.pending: Pending | None = None

    def turn(self) -> str | None:
        return None if self.run is None else turn_name(self.run, self.requests)

    def emit(self, line: int, text: str, name: str, **data: Any) -> None:
        """The model's event `name`, as records of its facts; a field the log does not tell is left out."""
        for fact in facts(Event("agent", "client", name, MappingProxyType(data))):
            known = {key: value for key, value in fact.fields if value is not None}
            self.records.append(Record(self.path, line, observed_event(fact.name, known), text))

    def line(self, number: int, obj: dict[str, Any], text: str) -> None:
        where = f"{self.path}:{number}"
        kind, parts = obj.get("kind"), obj.get("parts")
        if kind not in ("request", "response") or not isinstance(parts, list) or not all(
                isinstance(p, dict) for p in parts):
            raise LogError(f"{where}: a message history line is one ModelRequest or ModelResponse, {{\"kind\": "
                           "\"request\" | \"response\", \"parts\": [...], ...}}, as ModelMessagesTypeAdapter.dump_json "
                           "writes each element of result.all_messages()")
        if kind == "request":
            self.request(number, obj, parts, text)
        else:
            self.response(number, obj, parts, text)

    def request(self, number: int, obj: dict[str, Any], parts: list[dict[str, Any]], text: str) -> None:
        pending = self.pending = self.pending or Pending()
        prompt = False
        ident = obj.get("run_id")
        if isinstance(ident, str) and ident not in self.runs:
            self.runs[ident] = len(self.runs)
            prompt = True
        elif ident is None and not self.records and pending.line == 0:
            prompt = True
        pending.run = self.runs.get(ident) if isinstance(ident, str) else None
        pending.line, pending.text = number, text
        for part in parts:
            kind = part.get("part_kind")
            if kind in TOOL_PARTS and part.get("tool_name") is not None and part.get("tool_call_id") is not None:
                call = self.call(part["tool_call_id"])
                if part.get("outcome") == "interrupted":
                    pending.closed_out.append(call)
                else:
                    self.emit(number, text, "tool.returned", call=call)
            elif kind == "user-prompt" and not prompt:
                pending.delivered.append(message_of(part))

    def call(self, ident: Any) -> str | None:
        """The model's name of the call `ident` answers; an id no response asked for stays as it is."""
        return self.calls.get(str(ident), str(ident)) if self.runs else None

    def close(self) -> None:
        """The pending request was sent: its run's next turn (a new run's first), with what it carries."""
        pending, self.pending = self.pending, None
        if pending is None:
            return
        if pending.run != self.run:
            self.run, self.requests, self.final = pending.run, 0, False
        self.requests += 1
        turn, run = self.turn(), None if self.run is None else run_name(self.run)
        delivered = tuple(pending.delivered)
        if self.final and delivered:
            self.emit(pending.line, pending.text, "redirect", run=run, turn=turn, delivered=delivered)
            delivered = ()
        self.emit(pending.line, pending.text, "request", run=run, turn=turn, closed_out=tuple(pending.closed_out),
                  delivered=delivered)

    def response(self, number: int, obj: dict[str, Any], parts: list[dict[str, Any]], text: str) -> None:
        self.close()
        turn = self.turn()
        if obj.get("state") == "interrupted":
            self.emit(number, text, "stopped", run=None, turn=turn, stranded=())
            return
        ids = [p.get("tool_call_id") for p in parts if p.get("part_kind") == "tool-call"]
        calls = tuple(None if turn is None else f"{turn}.t{i + 1}" for i in range(len(ids)))
        self.calls.update({str(ident): call for ident, call in zip(ids, calls, strict=True) if call is not None})
        self.final = not calls
        self.emit(number, text, "response", turn=turn, calls=calls)


def read_history(path: str, lines: Sequence[Line]) -> list[Record]:
    reader = HistoryReader(path)
    for number, obj, text in lines:
        reader.line(number, obj, text)
    reader.close()
    return reader.records


MESSAGES_LOG = LogFormat("pydantic-ai-messages", "a Pydantic AI run's message history (result.all_messages()), "
                         "one ModelMessagesTypeAdapter element a line", "facts", read_lines=read_history)
