"""`steersim serve openai-ws`: a Responses WebSocket server on 127.0.0.1 that speaks the protocol as the
model decides, for real clients (the SDK reaches it with `base_url="http://127.0.0.1:PORT/v1"`).

The server's choices (interrupt now or complete first, accept or fail a steer, drop the connection, and
how many of its own moves it takes before it reads the client's reaction to an event) come from a
seeded numpy Generator keyed to protocol positions, or are replayed from a recorded trace. After
`response.steer.pending` it waits an announced time for the tool output. It records the session as a
trace (real client frames and wall times included, findings on its last line), judges the client
obligations on every frame, and validates the observation against the model. Exit 0 only when a steer
was judged and nothing was found; 1 for a finding; 3 when nothing was judged. A frame it cannot read (`frames`) gets an
`error` event and is a finding; a frame over `--max-frame-bytes` closes the connection (1009) and is one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

from steersim.argtypes import non_negative_int, output_file, positive_float, positive_int, refuse_path_clashes
from steersim.core.model import Action
from steersim.core.paths import action_from_json
from steersim.core.product import Violation
from steersim.errors import ArgumentParser, UsageError
from steersim.harness.finding import Finding
from steersim.models.openai_ws import SPEC
from steersim.models.openai_ws.frames import DEFAULT_MAX_FRAME_BYTES, Malformed, read_frame
from steersim.models.openai_ws.harness.session import SERVE_DEFAULTS, Session
from steersim.models.openai_ws.wire import error_event
from steersim.traces.trace import make_trace, read_trace, write_trace

PATH = "/v1/responses"
# Events a client may react to; after one, the server reads the client's next frame once it has taken a
# seeded number of its own moves (0: it waits for the reaction first; more: the reaction races them).
INVITING = frozenset({"response.created", "response.completed", "response.incomplete", "response.failed",
                      "response.steer.failed", "response.steer.pending"})
LAGS = (0, 0, 1, 2, 4)
LISTEN_SECONDS = 0.5  # how long a scheduled read waits for a client that has nothing to say
FIRST_LISTEN_SECONDS = 3.0  # the same for a connection's first reaction (an SDK's first event parse is slow)
FAULT_WEIGHT = 0.15  # a drop is rarer than the server's ordinary moves
TOOL_OUTPUT_SECONDS = 10.0  # announced: how long the server waits for required input after steer.pending
IDLE_SECONDS = 5.0  # nothing to do and nothing heard: the server ends the session
RECONNECT_SECONDS = 1.0  # after a drop, how long the server waits for the client to come back
QUIET = ""  # what `_next_frame` gives when nothing arrived in time (a frame is bytes, never this)
FRAME_FINDING = "client-frame"  # the property of a finding about a frame the server could not read


class SeededChoices:
    """The server's choices from a seed, keyed to protocol positions rather than wall time: after an
    event that invites a reaction, how many of its own moves the server takes before it reads the
    client's next frame, and weighted picks among its moves. A client frame is read only when the server
    decides to read (the socket's buffer is the uplink delay), so one seed plays one scenario for a fast
    client and a slow one alike, as long as the client reacts within `LISTEN_SECONDS`."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.lag: int | None = None

    def listen(self) -> bool:
        return self.lag == 0

    def listen_seconds(self, heard: int) -> float:
        """`heard`: client frames read on this connection so far."""
        return LISTEN_SECONDS if heard > 1 else FIRST_LISTEN_SECONDS

    def sent(self, frames: Sequence[dict[str, Any]]) -> None:
        if self.lag is None and any(f["type"] in INVITING for f in frames):
            self.lag = int(self.rng.choice(LAGS))

    def heard(self) -> None:
        self.lag = None

    def pick(self, actions: Sequence[Action]) -> Action | None:
        """A move, or None to wait for the client; when only a drop is left, the server mostly waits."""
        if self.lag:
            self.lag -= 1
        if not actions:
            return None
        weights = np.array([FAULT_WEIGHT if a.kind.startswith("fault.") else 1.0 for a in actions])
        if all(a.kind.startswith("fault.") for a in actions):
            return actions[0] if self.rng.random() < FAULT_WEIGHT else None
        return actions[int(self.rng.choice(len(actions), p=weights / weights.sum()))]


class ReplayedChoices:
    """The server's moves of a recorded trace, in order; client steps are waited for."""

    def __init__(self, actions: Sequence[dict[str, Any]]) -> None:
        self.script = list(actions)
        self.position = 0

    def listen(self) -> bool:
        return self.position < len(self.script) and not self._next_is_server()

    def listen_seconds(self, heard: int) -> float:
        return IDLE_SECONDS

    def sent(self, frames: Sequence[dict[str, Any]]) -> None:
        """Replay needs no bookkeeping of what was sent."""

    def heard(self) -> None:
        self.advance_client()

    def _next_is_server(self) -> bool:
        return self.position < len(self.script) and self.script[self.position]["actor"] != "client"

    def advance_client(self) -> None:
        if self.position < len(self.script) and self.script[self.position]["actor"] == "client":
            self.position += 1

    def pick(self, actions: Sequence[Action]) -> Action | None:
        if not self._next_is_server():
            return None
        wanted = self.script[self.position]
        action = action_from_json(wanted, actions)
        if action is not None:
            self.position += 1
            return action
        raise UsageError(f"the trace's step {self.position} ({wanted['kind']}) is not enabled in this run; "
                         "the client behaved differently than when the trace was recorded")


@dataclass
class ModelServer:
    """Serves one session: the model's run against one client, across the client's reconnections."""

    session: Session
    choices: SeededChoices | ReplayedChoices
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    tool_seconds: float = TOOL_OUTPUT_SECONDS
    done: asyncio.Event = field(default_factory=asyncio.Event)
    busy: bool = False

    async def handler(self, ws: ServerConnection) -> None:
        if self.busy or self.done.is_set() or ws.request is None or ws.request.path.split("?")[0] != PATH:
            await ws.close(1008, "one session per server, at /v1/responses")
            return
        self.busy = True
        try:
            reconnected = self.session.transitions and not self.session.connected
            if reconnected and await self._client(ws, "websocket.open", {"path": PATH}) is None:
                return
            await self._drive(ws)
        except Exception as broken:  # a harness fault must end the session loudly, not hang the client
            self.session.findings.append(Finding("harness", "error", f"{type(broken).__name__}: {broken}"))
            await ws.close(1011, "harness error")
            self.done.set()
            raise
        finally:
            self.busy = False
            if self.session.connected or self.session.finished:
                self.done.set()
            else:
                asyncio.get_running_loop().call_later(RECONNECT_SECONDS, self._give_up)

    def _give_up(self) -> None:
        if not self.busy:
            self.done.set()

    async def _drive(self, ws: ServerConnection) -> None:
        inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        reader = asyncio.create_task(self._read(ws, inbox))
        heard = 0
        try:
            while True:
                if self.choices.listen():
                    raw = await self._next_frame(inbox, self.choices.listen_seconds(heard))
                    self.choices.heard()
                    if raw is None:
                        return  # the client closed
                    if raw != QUIET:
                        heard += 1
                        if not await self._frame(ws, raw):
                            return
                        continue
                action = self.choices.pick(self.session.server_actions())
                if action is None:
                    if self.session.finished:
                        await ws.close(1000, "done")
                        return
                    waiting = self.session.waiting_for_required_input()
                    raw = await self._next_frame(inbox, self.tool_seconds if waiting else IDLE_SECONDS)
                    if raw is None:
                        return
                    if raw == QUIET:
                        if waiting:
                            self.session.required_input_overdue(self.tool_seconds)
                        await ws.close(1000, "idle")
                        return
                    heard += 1
                    if not await self._frame(ws, raw):
                        return
                    continue
                await self._send(ws, self.session.server_step(action))
                if action.kind == "fault.disconnect":
                    await ws.close(1011, "connection lost")
                    return
        finally:
            reader.cancel()

    async def _read(self, ws: ServerConnection, inbox: asyncio.Queue[bytes | None]) -> None:
        """Every frame, text or binary, as bytes (decoding is `read_frame`'s, so that no frame can end
        the reader), then None when the connection ends."""
        try:
            while True:
                inbox.put_nowait(await ws.recv(decode=False))
        except ConnectionClosed as closed:
            if closed.rcvd is None and closed.sent is not None and closed.sent.code == CloseCode.MESSAGE_TOO_BIG:
                self.session.findings.append(Finding(
                    FRAME_FINDING, "malformed", f"client sent a frame over the {self.max_frame_bytes:,}-byte limit "
                    f"(--max-frame-bytes); the server closed the connection with 1009 ({closed.sent.reason})"))
        finally:
            inbox.put_nowait(None)

    @staticmethod
    async def _next_frame(inbox: asyncio.Queue[bytes | None], wait: float) -> bytes | str | None:
        """The next frame, None if the client closed, QUIET if nothing arrived within `wait` seconds."""
        if wait <= 0:
            await asyncio.sleep(0)
            return inbox.get_nowait() if not inbox.empty() else QUIET
        try:
            return await asyncio.wait_for(inbox.get(), wait)
        except TimeoutError:
            return QUIET

    async def _frame(self, ws: ServerConnection, raw: bytes) -> bool:
        data = read_frame(raw)
        if isinstance(data, Malformed):  # answered as the API answers a malformed event; the session goes on
            self.session.findings.append(Finding(FRAME_FINDING, "malformed", f"{data.reason} Frame: {data.excerpt}"))
            await self._send(ws, [error_event(data.reason)])
            return True
        return await self._client(ws, data.get("type", "missing_type"), data) is not None

    async def _client(self, ws: ServerConnection, name: str, data: dict[str, Any]) -> bool | None:
        frames = self.session.client_event(name, data)
        self.choices.heard()
        if frames is None:
            stopped = self.session.stopped
            if stopped is None:
                await ws.close(1000, "incomplete: a bound of the model's client was reached")
            else:
                await ws.close(1008, f"{stopped.property}"[:100])
            self.done.set()
            return None
        await self._send(ws, frames)
        return True

    async def _send(self, ws: ServerConnection, frames: Sequence[dict[str, Any]]) -> None:
        self.choices.sent(frames)
        with contextlib.suppress(ConnectionClosed):
            for frame in frames:
                await ws.send(json.dumps(frame))


async def run_server(session: Session, choices: SeededChoices | ReplayedChoices, port: int,
                     ready: asyncio.Future[int] | None = None, limit: float | None = None,
                     max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
                     tool_seconds: float = TOOL_OUTPUT_SECONDS) -> list[Finding]:
    """Serve one session on 127.0.0.1:`port` (0: any free port, reported through `ready`) until it ends."""
    server = ModelServer(session, choices, max_frame_bytes, tool_seconds)
    started = time.monotonic()
    session.clock = lambda: round(time.monotonic() - started, 6)
    async with serve(server.handler, "127.0.0.1", port, max_size=max_frame_bytes) as listener:
        bound = listener.sockets[0].getsockname()[1]
        if ready is not None:
            ready.set_result(bound)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.done.wait(), limit)
    return session.finish()


def session_trace(session: Session, seed: int | None):
    """The session as a trace: every step with its wall time (seconds since the server started), the
    client's own frames, and the findings, with the frame that ended the session, on the last line."""
    findings = [Violation(f.property, f"{f.kind}: {f.summary}") for f in session.findings]
    times = session.times if len(session.times) == len(session.transitions) else None
    return make_trace(SPEC.name, session.model.p, session.bug, 0, session.transitions, times=times, seed=seed,
                      end=session.trace_end(), end_violations=findings)


async def _serve_announced(session: Session, choices: SeededChoices | ReplayedChoices, port: int,
                           limit: float | None, max_frame_bytes: int, tool_seconds: float) -> list[Finding]:
    """Serve, telling the user where (the port may have been chosen by the system) and how long the
    server waits for required tool output."""
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    ready.add_done_callback(lambda bound: print(
        f"serving openai-ws on ws://127.0.0.1:{bound.result()}{PATH} (OPENAI_BASE_URL=http://127.0.0.1:"
        f"{bound.result()}/v1); after response.steer.pending it waits {tool_seconds:g} s for the tool output",
        file=sys.stderr, flush=True))
    return await run_server(session, choices, port, ready, limit, max_frame_bytes, tool_seconds)


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="steersim serve openai-ws",
        description="A Responses WebSocket server on 127.0.0.1 that speaks response.steer as the openai-ws model "
                    "decides; it records the session and checks the client. Exit 0: a steer was judged and "
                    "nothing was found; 1: a finding; 3: nothing judged (no client, no steer) or a bound of the "
                    "model's client reached.")
    parser.add_argument("--port", type=int, required=True, help="port on 127.0.0.1 (0: any free port)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed", type=non_negative_int, help="take the server's choices from this seed")
    source.add_argument("--trace", type=Path, help="replay the server's choices of this recorded trace")
    parser.add_argument("-p", dest="params", action="append", default=[], metavar="KEY=VALUE",
                        help="model parameter (the defaults suit the seed example and careful clients)")
    parser.add_argument("--record", type=output_file, help="write the session's trace (JSON Lines) here")
    parser.add_argument("--json", type=output_file, help="write the findings as JSON here")
    parser.add_argument("--timeout", type=positive_float, default=None, help="end the session after this many seconds")
    parser.add_argument("--max-frame-bytes", type=positive_int, default=DEFAULT_MAX_FRAME_BYTES, metavar="N",
                        help=f"refuse client frames larger than this (default {DEFAULT_MAX_FRAME_BYTES:,})")
    parser.add_argument("--tool-timeout", type=positive_float, default=TOOL_OUTPUT_SECONDS,
                        help="seconds the server waits for required tool output after response.steer.pending "
                             f"(default {TOOL_OUTPUT_SECONDS:g}); a client silent that long is a finding")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    refuse_path_clashes("serve openai-ws", [("--trace", args.trace and str(args.trace))],
                        [("--record", args.record), ("--json", args.json)])
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a TCP port; use 0..65535 (0: any free port)")
    if args.trace is not None:
        recorded = read_trace(args.trace)
        if recorded.model != SPEC.name:
            raise UsageError(f"trace {args.trace} is of model {recorded.model!r}, not {SPEC.name!r}")
        params, bug = recorded.params, recorded.bug
        choices: SeededChoices | ReplayedChoices = ReplayedChoices([step.action for step in recorded.steps])
    else:
        params = {**SERVE_DEFAULTS, **SPEC.parse_assignments(args.params)}
        bug, choices = None, SeededChoices(args.seed)
    session = Session(SPEC.resolve(params), bug)
    findings = asyncio.run(_serve_announced(session, choices, args.port, args.timeout, args.max_frame_bytes,
                                            args.tool_timeout))
    if args.record is not None:
        write_trace(args.record, session_trace(session, args.seed))
    if args.json is not None:
        Path(args.json).write_text(json.dumps({"system": SPEC.name, "steps": len(session.transitions),
                                               "verdict": session.verdict(),
                                               "findings": [f.to_json() for f in findings]}, indent=2) + "\n")
    for finding in findings:
        print(f"{finding.kind} {finding.property}: {finding.summary}")
    print(session.verdict())
    return session.exit_code()
