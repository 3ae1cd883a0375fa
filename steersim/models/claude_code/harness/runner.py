"""Run one scenario against the real `claude -p` and the fake backend, and record everything.

Each step sends one thing (a user message, an interrupt, backend events, the end of the Bash command) and
then waits for what it must cause: the message's `queued`, the stream event that shows Claude Code read the
backend's events (`--include-partial-messages`), the assistant line that starts the command, its
tool_result, the turn's `result`. Only a `hasty` step goes on without waiting. The Bash command is `cat` of
a named pipe in the run's folder, so it ends exactly when the harness writes the pipe. The recording keeps
every stdout and stdin line, every model request body and every move of the harness, each with its
position among the lines.
"""

from __future__ import annotations

import errno
import os
import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steersim.models.claude_code import protocol as P
from steersim.models.claude_code.harness.backend import Backend, MessageStream, Stream
from steersim.models.claude_code.harness.cli import WAIT_SECONDS, Cli, Line, Stalled, message_uuid
from steersim.models.claude_code.harness.scenarios import Scenario, Step

POLL_SECONDS = 0.02  # how often a wait on two channels (stdout and the backend) looks at each
TEXT = "Please look at the files in this folder."


def message_text(ident: str) -> str:
    """The user text of message `ident`: its id first, so that a model request's messages name it."""
    return f"{ident}: {TEXT}"


@dataclass
class Move:
    """Something the harness made happen outside stdin, at position `at` of the line record."""

    name: str
    index: int
    at: int


@dataclass
class Request:
    """A model request as the backend received it; `at` is the line position when the harness took it."""

    index: int
    body: dict[str, Any]
    at: int


@dataclass
class Recording:
    scenario: str
    lines: list[Line] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    priorities: dict[str, str] = field(default_factory=dict)  # message id -> the priority it was sent with
    transcript: list[dict[str, Any]] = field(default_factory=list)
    end: str = "ok"
    version: str = ""


def _lifecycle(ident: str, state: str) -> Any:
    uuid = message_uuid(ident)
    return lambda line: line.type == "command_lifecycle" and line.body.get("command_uuid") == uuid \
        and line.body.get("state") == state


def _stream_event(kind: str) -> Any:
    return lambda line: line.type == "stream_event" and line.body.get("event", {}).get("delta", {}).get("type") == kind


class Run:
    """The state of one scenario run: the CLI, the backend, the newest model request and the command."""

    def __init__(self, cli: Cli, backend: Backend, recording: Recording) -> None:
        self.cli, self.be, self.rec = cli, backend, recording
        self.sent = 0
        self.stream: Stream | None = None  # the newest model request's response
        self.builder: MessageStream | None = None
        self.started = False  # the newest response has begun (message_start went out)
        self.streaming = ""  # what the newest response streams and has not ended: "", "text" or "tool_use"
        self.ended = False  # the harness ended the newest response
        self.taken_at = 0  # the line position when the newest request was taken
        self.gate: int | None = None  # the write end of the running command's pipe, once `cat` opened it
        self.gate_call = 0

    # ----------------------------------------------------------------------------------------- waiting
    def _take(self, stream: Stream) -> None:
        self.rec.requests.append(Request(stream.index, stream.body, self.cli.mark()))
        self.stream, self.builder = stream, MessageStream(stream.index)
        self.started = self.ended = False
        self.streaming = ""
        self.taken_at = self.cli.mark()

    def drain(self) -> None:
        """Model requests that arrived while the harness waited on something else."""
        while True:
            try:
                self._take(self.be.next_stream(0))
            except queue.Empty:
                return

    def abandoned(self) -> bool:
        """Claude Code gave up the newest response: a turn ended (`result`) after the harness took it."""
        self.drain()
        return any(not line.out and line.type == "result" for line in self.cli.lines[self.taken_at:])

    def await_request(self) -> None:
        try:
            self._take(self.be.next_stream(WAIT_SECONDS))
        except queue.Empty:
            raise Stalled(f"claude sent no model request: {self.cli.stderr_tail()}") from None

    # ------------------------------------------------------------------------------------------ sending
    def send(self, name: str, events: list[dict[str, Any]], end: bool = False) -> None:
        assert self.stream is not None and self.builder is not None
        if not self.started:
            events = self.builder.start() + events
            self.started = True
        self.rec.moves.append(Move(name, self.stream.index, self.cli.mark()))
        self.stream.send(events)
        if end:
            self.stream.end()
            self.ended = True

    def user(self, priority: str) -> int:
        self.sent += 1
        ident = P.message_id(self.sent)
        self.rec.priorities[ident] = priority
        mark = self.cli.mark()
        self.cli.user(ident, message_text(ident), None if priority == "default" else priority)
        self.cli.wait(_lifecycle(ident, P.QUEUED), mark, what=f"queued for {ident}")
        return mark

    # -------------------------------------------------------------------------------------------- steps
    def do(self, step: Step) -> None:
        getattr(self, "_" + step.kind)(step)

    def _start(self, step: Step) -> None:
        self.user("default")
        self.await_request()

    def _text(self, step: Step) -> None:
        assert self.builder is not None
        mark = self.cli.mark()
        self.send(P.TEXT_DELTA, self.builder.text_start("Here are "))
        self.streaming = "text"
        self.cli.wait(_stream_event("text_delta"), mark, what="the text delta")

    def _tool_use(self, step: Step) -> None:
        assert self.builder is not None
        self.gate_call = self.stream.index if self.stream else 0
        pipe = self.pipe(self.gate_call)
        os.mkfifo(pipe)
        mark = self.cli.mark()
        self.send(P.TOOL_USE_START, self.builder.tool_start(f"cat {pipe}"))
        self.streaming = "tool_use"
        self.cli.wait(_stream_event("input_json_delta"), mark, what="the tool_use input delta")

    def _tool_input(self, step: Step) -> None:
        assert self.builder is not None
        if self.abandoned():
            return
        mark = self.cli.mark()
        self.send(P.TOOL_USE_DONE, self.builder.tool_rest() + self.builder.block_stop() + self.builder.stop("tool_use"),
                  end=True)
        self.streaming = ""
        self.cli.wait(lambda line: line.type == "assistant" and any(
            block.get("type") == "tool_use" for block in line.body["message"]["content"]), mark,
            what="the assistant tool_use line")
        self.gate = open_gate(self.pipe(self.gate_call))

    def _end(self, step: Step) -> None:
        assert self.builder is not None
        mark = self.cli.mark()
        self.send(P.END_TURN, self.builder.text_more("the files.") + self.builder.block_stop() +
                  self.builder.stop("end_turn"), end=True)
        self.streaming = ""
        if not step.hasty:
            self.cli.wait(lambda line: line.type == "result", mark, what="the result of the turn")

    def _send(self, step: Step) -> None:
        """A `now` message while a turn runs and no command does stops the turn: wait for its `result`, the
        message's own `started` and the announcement of its model request, so that the harness answers
        no response Claude Code has given up. A `now` message while the command runs waits for it to end
        (the model's default reading); the `release` step then waits."""
        stops = step.arg == "now" and self.turn_running() and self.gate is None and not step.hasty
        mark = self.user(step.arg)
        if stops:
            ident = P.message_id(self.sent)
            self.cli.wait(lambda line: line.type == "result", mark, what="the result of the turn a now message stops")
            self.cli.wait(_lifecycle(ident, P.STARTED), mark, what=f"started for {ident}")
            uuid = message_uuid(ident)
            self.cli.wait(lambda line: line.type == "system" and line.body.get("status") == "requesting"
                          and uuid in line.body.get("user_message_uuids", []), mark, what=f"the request for {ident}")

    def turn_running(self) -> bool:
        """A turn runs: some message was `started` after the last `result`."""
        running = False
        for line in self.cli.lines:
            if not line.out and line.type == "command_lifecycle" and line.body["state"] == P.STARTED:
                running = True
            elif not line.out and line.type == "result":
                running = False
        return running

    def _release(self, step: Step) -> None:
        if self.gate is None:
            return  # the command never ran: its turn was stopped before the tool_use was complete
        mark = self.cli.mark()
        self.rec.moves.append(Move(P.TOOL_FINISHED, self.gate_call, mark))
        release(self.gate)
        self.gate = None
        if step.hasty:
            return
        call = f"toolu_{self.gate_call:04d}"
        self.cli.wait(lambda line: line.type == "user" and _tool_result_of(line) == call, mark,
                      what=f"the tool_result of {call}")

    def _interrupt(self, step: Step) -> None:
        mark = self.cli.mark()
        rid = self.cli.control("interrupt", **({"cancel_queued": True} if step.arg == "cancel" else {}))
        self.cli.wait(lambda line: line.type == "control_response" and
                      line.body.get("response", {}).get("request_id") == rid, mark, what="the interrupt's response")
        self.cli.wait(lambda line: line.type == "result", mark, what="the result of the interrupted turn")
        if self.gate is not None:  # the interrupt ended `cat`; its pipe has no reader any more
            os.close(self.gate)
            self.gate = None

    def _finish(self, step: Step) -> None:
        """End the newest response as the model would, then answer every further request with a whole
        text response, until every message sent has been completed or cancelled and no turn runs; then end
        stdin and wait for the CLI to exit."""
        if self.stream is not None and not self.ended and not self.abandoned():
            if self.streaming == "tool_use":
                self._tool_input(step)
                self._release(step)
            else:
                self._answer()
        if self.gate is not None:
            self._release(step)
        deadline = time.monotonic() + WAIT_SECONDS
        while not self.settled():
            try:
                self._take(self.be.next_stream(POLL_SECONDS))
                self._answer()
                deadline = time.monotonic() + WAIT_SECONDS
            except queue.Empty:
                pass
            if time.monotonic() > deadline or self.cli.process.poll() is not None:
                raise Stalled(f"not every message was answered: {self.cli.stderr_tail()}")
        self.cli.close_input()
        while self.cli.process.poll() is None:
            try:
                self._take(self.be.next_stream(POLL_SECONDS))
                self._answer()
            except queue.Empty:
                pass
            if time.monotonic() > deadline:
                raise Stalled("claude did not exit after its input ended")

    def _answer(self) -> None:
        """The newest request's whole answer: text (unless it already streams), and the end of the turn."""
        assert self.builder is not None
        if self.streaming != "text":
            self.send(P.TEXT_DELTA, self.builder.text_start("Here are "))
        self.send(P.END_TURN, self.builder.text_more("the files.") + self.builder.block_stop() +
                  self.builder.stop("end_turn"), end=True)
        self.streaming = ""

    def settled(self) -> bool:
        """Every message sent has its last lifecycle state, and no turn runs (a `started` has its `result`)."""
        last: dict[str, str] = {}
        running = False
        for line in self.cli.lines:
            if not line.out and line.type == "command_lifecycle":
                last[line.body["command_uuid"]] = line.body["state"]
                running = running or line.body["state"] == P.STARTED
            elif not line.out and line.type == "result":
                running = False
        return not running and all(last.get(message_uuid(P.message_id(k))) in (P.COMPLETED, P.CANCELLED)
                                   for k in range(1, self.sent + 1))

    def pipe(self, index: int) -> Path:
        return self.cli.workdir / f"gate-{index}"


def _tool_result_of(line: Line) -> str:
    content = line.body.get("message", {}).get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return str(block.get("tool_use_id"))
    return ""


def open_gate(pipe: Path) -> int:
    """The write end of `pipe`, once the command reading it (`cat`) has opened it: from then on the
    command runs, and it ends when the harness writes the pipe."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            return os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as broken:
            if broken.errno != errno.ENXIO or time.monotonic() > deadline:
                raise Stalled(f"the command reading {pipe.name} never started") from None
            time.sleep(POLL_SECONDS)  # no reader yet: `cat` has not opened the pipe; nothing to wait on


def release(fd: int) -> None:
    """Let the command end: a line, then the end of the pipe."""
    try:
        os.write(fd, b"done\n")
    finally:
        os.close(fd)


def run(scenario: Scenario, binary: Path, version: str = "") -> Recording:
    """Run `scenario` against a fresh `claude -p`; the recording, ending `ok` or with what stalled."""
    recording = Recording(scenario.name, version=version)
    with Backend() as backend, Cli(binary, backend.base_url) as cli:
        state = Run(cli, backend, recording)
        try:
            for step in scenario.steps:
                state.do(step)
        except Stalled as stalled:
            recording.end = f"stalled: {stalled}"
        finally:
            if state.gate is not None:
                release(state.gate)
            state.drain()
            recording.lines = list(cli.lines)
            recording.transcript = cli.transcript()
    return recording
