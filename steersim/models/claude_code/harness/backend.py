"""A fake Anthropic Messages API on 127.0.0.1 whose streams advance only when the harness says so.

Claude Code POSTs `/v1/messages` with `stream: true` and reads the answer as server-sent events. Each
request is recorded and handed to the harness as a `Stream`; the HTTP thread then writes exactly the
events the harness sends into it, and ends the response when told. Nothing here sleeps or times the
stream: when the model's next event goes out is the harness's decision, taken after it has seen Claude
Code react to the last one. A request that does not stream (none is expected under `--bare`) gets a
short whole text answer, so that it cannot hang a run, and is recorded all the same.
"""

from __future__ import annotations

import json
import queue
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

END = None  # the command that ends a stream
MODEL = "claude-steersim-1"


def sse(event: dict[str, Any]) -> bytes:
    """One server-sent event: its `type` as the event name, the object as data."""
    return f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n".encode()


class MessageStream:
    """The events of one streamed message, built in order: its start, text or a Bash tool_use, its end."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.blocks = 0

    @property
    def message_id(self) -> str:
        return f"msg_{self.index:04d}"

    def tool_id(self) -> str:
        return f"toolu_{self.index:04d}"

    def start(self) -> list[dict[str, Any]]:
        return [{"type": "message_start", "message": {
            "id": self.message_id, "type": "message", "role": "assistant", "model": MODEL, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}]

    def text_start(self, text: str) -> list[dict[str, Any]]:
        return [{"type": "content_block_start", "index": self.blocks, "content_block": {"type": "text", "text": ""}},
                {"type": "content_block_delta", "index": self.blocks, "delta": {"type": "text_delta", "text": text}}]

    def text_more(self, text: str) -> list[dict[str, Any]]:
        return [{"type": "content_block_delta", "index": self.blocks, "delta": {"type": "text_delta", "text": text}}]

    def block_stop(self) -> list[dict[str, Any]]:
        self.blocks += 1
        return [{"type": "content_block_stop", "index": self.blocks - 1}]

    def tool_start(self, command: str) -> list[dict[str, Any]]:
        """A Bash tool_use whose input arrives in two halves: this is the first (the block stays open)."""
        arguments = json.dumps({"command": command, "description": "wait for the gate"})
        half = len(arguments) // 2
        self._rest = arguments[half:]
        return [{"type": "content_block_start", "index": self.blocks,
                 "content_block": {"type": "tool_use", "id": self.tool_id(), "name": "Bash", "input": {}}},
                {"type": "content_block_delta", "index": self.blocks,
                 "delta": {"type": "input_json_delta", "partial_json": arguments[:half]}}]

    def tool_rest(self) -> list[dict[str, Any]]:
        return [{"type": "content_block_delta", "index": self.blocks,
                 "delta": {"type": "input_json_delta", "partial_json": self._rest}}]

    def stop(self, reason: str) -> list[dict[str, Any]]:
        return [{"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
                 "usage": {"output_tokens": 5}}, {"type": "message_stop"}]


@dataclass
class Stream:
    """One model request Claude Code sent, and the channel to its (still open) response."""

    index: int
    body: dict[str, Any]
    commands: queue.Queue = field(default_factory=queue.Queue)
    closed: threading.Event = field(default_factory=threading.Event)
    broken: bool = False  # Claude Code closed the connection before the response ended

    def send(self, events: list[dict[str, Any]]) -> None:
        self.commands.put(events)

    def end(self) -> None:
        self.commands.put(END)


class QuietServer(ThreadingHTTPServer):
    """Claude Code closes the connection of a response it gives up (a stopped turn): that is its right,
    not an error of the run, so it is not printed."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Nothing to report: the recording shows which responses Claude Code read."""


class Backend:
    """The endpoint and its record: every streamed request body, in arrival order."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.other: list[str] = []  # paths of requests that were not streamed messages
        self.incoming: queue.Queue[Stream] = queue.Queue()
        self._lock = threading.Lock()
        self._streams: list[Stream] = []
        self.server = QuietServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="claude-backend", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Backend:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in self._streams:
            stream.end()
        self.server.shutdown()
        self.server.server_close()

    def next_stream(self, timeout: float) -> Stream:
        """The next request Claude Code streams (`queue.Empty` after `timeout` seconds: it sent none)."""
        return self.incoming.get(timeout=timeout)

    def _accept(self, body: dict[str, Any]) -> Stream:
        with self._lock:
            stream = Stream(len(self.requests) + 1, body)
            self.requests.append(body)
            self._streams.append(stream)
        self.incoming.put(stream)
        return stream

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        backend = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the record is `Backend.requests`."""

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                backend.other.append(self.path)
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw) if raw else {}
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path or not body.get("stream"):
                    backend.other.append(self.path)
                    self._json(200, {"id": "msg_side", "type": "message", "role": "assistant", "model": MODEL,
                                     "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                                     "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})
                    return
                stream = backend._accept(body)
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    while (events := stream.commands.get()) is not END:
                        for event in events:
                            data = sse(event)
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except OSError:
                    stream.broken = True
                finally:
                    stream.closed.set()

        return Handler
