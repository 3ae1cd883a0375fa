"""Run one scenario against the real `codex app-server` and the fake backend, and record everything.

Each step sends one thing (a JSON-RPC request, backend events, the release of a tool call) and then waits
for what it must cause: the reply, the notification that shows Codex took the backend's events, the next
model request or `turn/completed`. Only a `hasty` step goes on without waiting. The tool is a real
`exec_command` (`cat` of a named pipe in the run's folder), so a tool call ends exactly when the harness
writes its pipe. The recording keeps every JSON-RPC message, every model request body and every move of
the harness, each with its position among the messages.
"""

from __future__ import annotations

import errno
import os
import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steersim.models.codex import protocol as P
from steersim.models.codex.harness.appserver import WAIT_SECONDS, AppServer, Message, Stalled
from steersim.models.codex.harness.backend import Backend, Stream
from steersim.models.codex.harness.responses import ResponseStream
from steersim.models.codex.harness.scenarios import Scenario, Step

POLL_SECONDS = 0.02  # how often a wait on two channels (stdout and the backend) looks at each
BOGUS_TURN = "00000000-0000-7000-8000-000000000000"
TEXTS = {"p": "List the files in this folder.", "s": "Only the Python files, please."}


def input_text(ident: str) -> str:
    """The user text of message `ident`: its id first, so that a model request's input names it."""
    return f"{ident}: {TEXTS[ident[0]]}"


@dataclass
class Move:
    """Something the harness made happen outside JSON-RPC, at position `at` of the message record."""

    name: str
    index: int | str
    at: int


@dataclass
class Request:
    """A model request as the backend received it; `at` is the message position when the harness took it."""

    index: int
    body: dict[str, Any]
    at: int


@dataclass
class Recording:
    scenario: str
    messages: list[Message] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    # JSON-RPC request id -> (message id, how it names the turn, whether its input is empty)
    sent_kinds: dict[int, tuple[str, str, bool]] = field(default_factory=dict)
    end: str = "ok"
    version: str = ""


class Run:
    """The state of one scenario run: the app-server, the backend, the open stream and the active turn."""

    def __init__(self, server: AppServer, backend: Backend, recording: Recording) -> None:
        self.cx, self.be, self.rec = server, backend, recording
        self.thread = ""
        self.turns: list[str] = []  # real turn ids, in order
        self.active = ""  # the active turn's real id ("" when none)
        self.stream: Stream | None = None  # the newest model request's open response
        self.builder: ResponseStream | None = None
        self.created = False
        self.streaming_text = False  # the newest response's agent message has started
        self.said = False  # ... and completed
        self.prompts = 0
        self.steers = 0
        self.running_call = ""  # a command whose pipe the harness has not written yet

    # ----------------------------------------------------------------------------------------- waiting
    def _take(self, stream: Stream) -> None:
        self.rec.requests.append(Request(stream.index + 1, stream.body, self.cx.mark()))
        self.stream, self.builder, self.created = stream, ResponseStream(stream.index + 1), False
        self.streaming_text = self.said = False

    def _completed(self, turn: str) -> Any:
        return lambda m: m.method == "turn/completed" and m.body["params"]["turn"]["id"] == turn

    def await_request_or_end(self, after: int) -> str:
        """Wait for the next model request or for the active turn's turn/completed: which came."""
        deadline = time.monotonic() + WAIT_SECONDS
        done = self._completed(self.active)
        while True:
            try:
                self._take(self.be.next_stream(POLL_SECONDS))
                return "request"
            except queue.Empty:
                pass
            if any(not m.out and done(m) for m in self.cx.messages[after:]):
                self.active = ""
                return "completed"
            if time.monotonic() > deadline or self.cx.process.poll() is not None:
                raise Stalled(f"neither a model request nor turn/completed came: {self.cx.stderr_tail()}")

    def await_request(self) -> None:
        try:
            self._take(self.be.next_stream(WAIT_SECONDS))
        except queue.Empty:
            raise Stalled(f"Codex sent no model request: {self.cx.stderr_tail()}") from None

    def note_completion(self, after: int) -> None:
        """The active turn may have completed meanwhile (a hasty step raced it)."""
        if self.active and any(not m.out and self._completed(self.active)(m) for m in self.cx.messages[after:]):
            self.active = ""

    # ------------------------------------------------------------------------------------------ sending
    def send(self, name: str, events: list[dict[str, Any]], end: bool = False) -> None:
        assert self.stream is not None and self.builder is not None
        if not self.created:
            events = self.builder.created() + events
            self.created = True
        self.rec.moves.append(Move(name, self.stream.index + 1, self.cx.mark()))
        self.stream.send(events)
        if end:
            self.stream.end()

    def steer_params(self, ident: str, expected: str, empty: bool) -> dict[str, Any]:
        turn = {P.ACTIVE: self.turns[-1] if self.turns else BOGUS_TURN,
                P.STALE: self.turns[-2] if len(self.turns) > 1 else BOGUS_TURN, P.BOGUS: BOGUS_TURN}[expected]
        return {"threadId": self.thread, "expectedTurnId": turn, "clientUserMessageId": ident,
                "input": [] if empty else [{"type": "text", "text": input_text(ident)}]}

    # -------------------------------------------------------------------------------------------- steps
    def do(self, step: Step) -> None:
        getattr(self, "_" + step.kind)(step)

    def _turn_start(self, step: Step) -> None:
        if not self.active:
            self.drain()
        self.prompts += 1
        ident = P.prompt_id(self.prompts)
        rid = self.cx.request("turn/start", {"threadId": self.thread, "clientUserMessageId": ident,
                                          "input": [{"type": "text", "text": input_text(ident)}]})
        self.rec.sent_kinds[rid] = (ident, P.ACTIVE, False)
        reply = self.cx.reply(rid)
        turn = reply.get("result", {}).get("turn", {}).get("id", "")
        if turn and turn != self.active:
            self.turns.append(turn)
            self.active = turn
            self.await_request()
        elif turn and not step.hasty and self.stream is not None and self._model_streams():
            self.await_request_or_end(self.cx.mark())

    def _model_streams(self) -> bool:
        """A model request of the active turn is in flight (no command runs)."""
        return not self.running_call

    def _text_delta(self, step: Step) -> None:
        assert self.builder is not None
        mark = self.cx.mark()
        self.send(P.TEXT_DELTA, self.builder.text_start() + self.builder.text_delta("Here are "))
        self.streaming_text = True
        item = f"msg_{self.builder.index:04d}"
        self.cx.wait(lambda m: m.method == "item/agentMessage/delta" and m.body["params"]["itemId"] == item, mark,
                     what=f"delta of {item}")

    def _text_done(self, step: Step) -> None:
        assert self.builder is not None
        mark = self.cx.mark()
        self.send(P.TEXT_DONE, self.builder.text_done("Here are the files."))
        self.said = True
        item = f"msg_{self.builder.index:04d}"
        self.cx.wait(lambda m: m.method == "item/completed" and m.body["params"]["item"]["id"] == item, mark,
                     what=f"item/completed of {item}")

    def _tool_call(self, step: Step) -> None:
        assert self.builder is not None
        call = f"call_{self.builder.index:04d}"
        pipe = self.cx.workdir / f"gate-{call}"
        os.mkfifo(pipe)
        mark = self.cx.mark()
        self.send(P.TOOL_CALL, self.builder.tool_call(f"cat {pipe}") + self.builder.completed([]), end=True)
        self.cx.wait(lambda m: m.method == "item/started" and m.body["params"]["item"]["id"] == call, mark,
                     what=f"item/started of {call}")
        self.running_call = call

    def _complete(self, step: Step) -> None:
        assert self.builder is not None
        mark = self.cx.mark()
        self.send(P.COMPLETED, self.builder.completed([]), end=True)
        if not step.hasty:
            self.await_request_or_end(mark)

    def _tool_finish(self, step: Step) -> None:
        call, self.running_call = self.running_call, ""
        mark = self.cx.mark()
        self.rec.moves.append(Move(P.TOOL_FINISHED, call, mark))
        release(self.cx.workdir / f"gate-{call}")
        self.cx.wait(lambda m: m.method == "item/completed" and m.body["params"]["item"]["id"] == call, mark,
                     what=f"item/completed of {call}")
        self.note_completion(mark)
        if self.active and not step.hasty:
            self.await_request_or_end(mark)

    def _steer(self, step: Step) -> None:
        self.steers += 1
        ident = P.steer_id(self.steers)
        expected = P.ACTIVE
        mark = self.cx.mark()
        rid = self.cx.request("turn/steer", self.steer_params(ident, expected, False))
        self.rec.sent_kinds[rid] = (ident, expected, False)
        reply = self.cx.reply(rid)
        self.note_completion(mark)
        if "result" in reply and self.active and not step.hasty and self._model_streams():
            self.await_request_or_end(mark)  # a steer while the model streams makes Codex sample again

    def _bad_steer(self, step: Step) -> None:
        self.steers += 1
        ident = P.steer_id(self.steers)
        expected, empty = (P.ACTIVE, True) if step.arg == "empty" else (step.arg, False)
        rid = self.cx.request("turn/steer", self.steer_params(ident, expected, empty))
        self.rec.sent_kinds[rid] = (ident, expected, empty)
        self.cx.reply(rid)

    def _written(self, step: Step) -> None:
        ident = P.steer_id(self.steers)
        self.cx.wait(lambda m: m.method == "item/completed" and m.body["params"]["item"].get("clientId") == ident,
                     what=f"userMessage item of {ident}")

    def _interrupt(self, step: Step) -> None:
        turn = self.active
        mark = self.cx.mark()
        self.cx.reply(self.cx.request("turn/interrupt", {"threadId": self.thread, "turnId": turn}))
        self.cx.wait(self._completed(turn), mark, what="turn/completed after turn/interrupt")
        self.active = ""

    def _finish(self, step: Step) -> None:
        """Answer the newest model request with a whole text response until the turn completes."""
        while self.active:
            if not self.said:
                if not self.streaming_text:
                    self._text_delta(step)
                self._text_done(step)
            self._complete(step)

    def drain(self) -> None:
        """Model requests that arrived while the harness waited on something else (an abandoned turn's)."""
        while True:
            try:
                stream = self.be.next_stream(0)
            except queue.Empty:
                return
            self.rec.requests.append(Request(stream.index + 1, stream.body, self.cx.mark()))

    def _read(self, step: Step) -> None:
        self.cx.call("thread/read", {"threadId": self.thread, "includeTurns": True})


def release(pipe: Path) -> None:
    """Let the command reading `pipe` end: open it for writing (once its reader is there) and write a line."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as broken:
            if broken.errno != errno.ENXIO or time.monotonic() > deadline:
                raise Stalled(f"the command reading {pipe.name} never started") from None
            time.sleep(POLL_SECONDS)  # no reader yet: `cat` has not opened the pipe; nothing to wait on
    try:
        os.write(fd, b"done\n")
    finally:
        os.close(fd)


def run(scenario: Scenario, binary: Path, version: str = "", sessions_to: Path | None = None) -> Recording:
    """Run `scenario` against a fresh app-server; the recording, ending `ok` or with what stalled. With
    `sessions_to`, the rollout files Codex wrote for the run are kept there (`--format codex-rollout`)."""
    recording = Recording(scenario.name, version=version)
    with Backend() as backend, AppServer(binary, backend.base_url, sessions_to) as server:
        state = Run(server, backend, recording)
        try:
            state.thread = server.start_session()
            for step in scenario.steps:
                state.do(step)
        except Stalled as stalled:
            recording.end = f"stalled: {stalled}"
        finally:
            if state.running_call:
                release(server.workdir / f"gate-{state.running_call}")
            state.drain()
            recording.messages = list(server.messages)
    return recording
