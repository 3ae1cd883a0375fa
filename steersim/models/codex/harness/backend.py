"""A fake Responses endpoint on 127.0.0.1 whose streams advance only when the harness says so.

Codex POSTs `/v1/responses` and reads the answer as server-sent events. Each request is recorded and
handed to the harness as a `Stream`; the HTTP thread then writes exactly the events the harness sends
into it, and ends the response when told. Nothing here sleeps or times the stream: when the model's
next event goes out is the harness's decision, taken after it has seen Codex react to the last one.
"""

from __future__ import annotations

import gzip
import json
import queue
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from steersim.models.codex.harness.responses import sse

END = None  # the command that ends a stream


@dataclass
class Stream:
    """One model request Codex sent, and the channel to its (still open) response."""

    index: int
    body: dict[str, Any]
    commands: queue.Queue = field(default_factory=queue.Queue)
    closed: threading.Event = field(default_factory=threading.Event)
    broken: bool = False  # Codex closed the connection before the response ended

    def send(self, events: list[dict[str, Any]]) -> None:
        self.commands.put(events)

    def end(self) -> None:
        self.commands.put(END)


class Backend:
    """The endpoint and its record: every request body, in arrival order."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.incoming: queue.Queue[Stream] = queue.Queue()
        self._lock = threading.Lock()
        self._streams: list[Stream] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="codex-backend", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Backend:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in self._streams:
            stream.end()
        self.server.shutdown()
        self.server.server_close()

    def next_stream(self, timeout: float) -> Stream:
        """The next request Codex sends (`queue.Empty` after `timeout` seconds: it sent none)."""
        return self.incoming.get(timeout=timeout)

    def _accept(self, body: dict[str, Any]) -> Stream:
        with self._lock:
            stream = Stream(len(self.requests), body)
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

            def do_GET(self) -> None:  # models, plugins and the like: not offered
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.headers.get("content-encoding") == "gzip":
                    raw = gzip.decompress(raw)
                if not self.path.endswith("/responses"):
                    self.do_GET()
                    return
                stream = backend._accept(json.loads(raw))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
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
