"""`codex app-server` as a child process, spoken to in JSON-RPC over stdio (one JSON object a line).

Each run gets a fresh `CODEX_HOME` whose `config.toml` points a custom model provider at the fake
backend, with no retries (a retry would be a request the model did not make), approvals off, a sandbox
mode that needs no privileges, and plugins and apps off (they reach the network). Every message in
either direction is recorded in order; the harness waits on notifications, never on time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WAIT_SECONDS = 20.0  # the longest any one awaited message may take before the run is given up

CONFIG = """\
model = "gpt-6-astra"
model_provider = "steersim"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.steersim]
name = "steersim fake Responses backend"
base_url = "{base_url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
apps = false
"""


class Stalled(RuntimeError):
    """An awaited message did not come: Codex is stuck or gone (its stderr tail says which)."""


@dataclass(frozen=True)
class Message:
    """One JSON-RPC message: `out` from the harness to Codex, else from Codex."""

    out: bool
    body: dict[str, Any]

    @property
    def method(self) -> str | None:
        return self.body.get("method")


Predicate = Callable[[Message], bool]


class AppServer:
    """A running app-server, its message record and the JSON-RPC ids the harness used."""

    def __init__(self, binary: Path, base_url: str, sessions_to: Path | None = None) -> None:
        self.sessions_to = sessions_to  # where to keep the rollout files Codex wrote, once it has exited
        self._home = tempfile.TemporaryDirectory(prefix="steersim-codex-")
        home = Path(self._home.name)
        (home / "codex-home").mkdir()
        (home / "work").mkdir()
        (home / "codex-home" / "config.toml").write_text(CONFIG.format(base_url=base_url))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
        env.update(CODEX_HOME=str(home / "codex-home"), RUST_LOG="error", NO_COLOR="1")
        self._stderr = open(home / "stderr.log", "w+b")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen([str(binary), "app-server"], cwd=home / "work", env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self.workdir = home / "work"
        self.messages: list[Message] = []
        self._changed = threading.Condition()
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, name="codex-app-server", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.strip():
                with self._changed:
                    self.messages.append(Message(False, json.loads(line)))
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _write(self, body: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        with self._changed:
            self.messages.append(Message(True, body))
        self.process.stdin.write((json.dumps(body) + "\n").encode())
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> int:
        """Send a request; its id (the reply is awaited with `reply`)."""
        self._next_id += 1
        self._write({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._write({"method": method, **({} if params is None else {"params": params})})

    def wait(self, predicate: Predicate, after: int = 0, what: str = "a message") -> Message:
        """The first message from Codex at position `after` or later that satisfies `predicate`. The
        reader thread wakes this wait on every message; WAIT_SECONDS only bounds a Codex that never answers."""
        deadline = time.monotonic() + WAIT_SECONDS
        with self._changed:
            position = after
            while True:
                for message in self.messages[position:]:
                    if not message.out and predicate(message):
                        return message
                position = len(self.messages)
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise Stalled(f"codex app-server sent no {what}: {self.stderr_tail()}")
                self._changed.wait(left)

    def reply(self, request_id: int) -> dict[str, Any]:
        """The result or error of request `request_id`."""
        return self.wait(lambda m: m.body.get("id") == request_id and "method" not in m.body,
                         what=f"reply to request {request_id}").body

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.reply(self.request(method, params))

    def mark(self) -> int:
        """The current end of the record: wait for what comes after it with `wait(..., after=mark)`."""
        with self._changed:
            return len(self.messages)

    def stderr_tail(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else f"(no stderr; exit status {self.process.poll()})"

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=5)
        self._stderr.close()
        sessions = Path(self._home.name) / "codex-home" / "sessions"
        if self.sessions_to is not None and sessions.is_dir():
            for rollout in sorted(sessions.rglob("rollout-*.jsonl")):
                self.sessions_to.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(rollout, self.sessions_to / rollout.name)
        self._home.cleanup()

    def __enter__(self) -> AppServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start_session(self) -> str:
        """initialize, initialized, thread/start: the new thread's id."""
        self.call("initialize", {"clientInfo": {"name": "steersim", "version": "0.1.0"}})
        self.notify("initialized")
        return self.call("thread/start", {})["result"]["thread"]["id"]
