"""`claude -p` in stream-json mode as a child process: user messages and control requests on stdin, one
JSON object a line; events on stdout, one JSON object a line.

Each run gets a fresh `HOME` and `CLAUDE_CONFIG_DIR`, an `ANTHROPIC_BASE_URL` at the fake backend, a
dummy key, non-essential traffic and telemetry off, `--bare` (no hooks, plugins, memory files or keychain)
and Bash as the only tool, allowed without a prompt. Every line in either direction is recorded in order;
the harness waits on the CLI's events, never on time.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steersim.models.claude_code.harness.backend import MODEL

WAIT_SECONDS = 20.0  # the longest any one awaited event may take before the run is given up
SESSION = "5e551011-0000-4000-8000-000000000001"  # the session id every run uses (each has its own config)


class Stalled(RuntimeError):
    """An awaited event did not come: Claude Code is stuck or gone (its stderr tail says which)."""


@dataclass(frozen=True)
class Line:
    """One stream-json line: `out` from the harness to Claude Code, else from Claude Code."""

    out: bool
    body: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.body.get("type", ""))


Predicate = Callable[[Line], bool]


def message_uuid(ident: str) -> str:
    """A fixed uuid per message id (`m1` -> ...0001), so that recordings are the same on every run."""
    return str(uuid.UUID(int=0x5E551011_0000_4000_8000_000000000000 + 0x10000 + int(ident[1:])))


def command(binary: Path) -> list[str]:
    return [str(binary), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
            "--include-partial-messages", "--bare", "--tools", "Bash", "--allowedTools", "Bash",
            "--session-id", SESSION, "--model", MODEL]


def environment(home: Path, base_url: str) -> dict[str, str]:
    """The inherited environment without any Anthropic or Claude setting, plus the offline ones."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "DISABLE_"))}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / "config"), ANTHROPIC_BASE_URL=base_url,
               ANTHROPIC_API_KEY="dummy", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
               DISABLE_AUTOUPDATER="1", NO_COLOR="1")
    return env


class Cli:
    """A running `claude -p`, its line record and the control request ids the harness used."""

    def __init__(self, binary: Path, base_url: str) -> None:
        self._home = tempfile.TemporaryDirectory(prefix="steersim-claude-")
        home = Path(self._home.name)
        (home / "config").mkdir()
        (home / "work").mkdir()
        self.home = home
        self.workdir = home / "work"
        self._stderr = open(home / "stderr.log", "w+b")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(command(binary), cwd=self.workdir, env=environment(home, base_url),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self.lines: list[Line] = []
        self._changed = threading.Condition()
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, name="claude-cli", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            if raw.strip():
                with self._changed:
                    self.lines.append(Line(False, json.loads(raw)))
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def write(self, body: dict[str, Any]) -> int:
        """Send one line; its position in the record."""
        assert self.process.stdin is not None
        with self._changed:
            self.lines.append(Line(True, body))
            at = len(self.lines) - 1
        self.process.stdin.write((json.dumps(body) + "\n").encode())
        self.process.stdin.flush()
        return at

    def user(self, ident: str, text: str, priority: str | None) -> int:
        body: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": text},
                                "parent_tool_use_id": None, "session_id": SESSION, "uuid": message_uuid(ident)}
        if priority is not None:
            body["priority"] = priority
        return self.write(body)

    def control(self, subtype: str, **fields: Any) -> str:
        self._next_id += 1
        rid = f"req_{self._next_id}"
        self.write({"type": "control_request", "request_id": rid, "request": {"subtype": subtype, **fields}})
        return rid

    def wait(self, predicate: Predicate, after: int = 0, what: str = "an event") -> Line:
        """The first line from Claude Code at position `after` or later that satisfies `predicate`. The
        reader thread wakes this wait on every line; WAIT_SECONDS only bounds a CLI that never answers."""
        deadline = time.monotonic() + WAIT_SECONDS
        with self._changed:
            position = after
            while True:
                for line in self.lines[position:]:
                    if not line.out and predicate(line):
                        return line
                position = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise Stalled(f"claude sent no {what}: {self.stderr_tail()}")
                self._changed.wait(left)

    def mark(self) -> int:
        """The current end of the record: wait for what comes after it with `wait(..., after=mark)`."""
        with self._changed:
            return len(self.lines)

    def transcript(self) -> list[dict[str, Any]]:
        """The session's transcript JSONL, as Claude Code wrote it so far."""
        found = sorted((self.home / "config" / "projects").glob(f"*/{SESSION}.jsonl"))
        if not found:
            return []
        return [json.loads(raw) for raw in found[0].read_text().splitlines() if raw.strip()]

    def stderr_tail(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else f"(no stderr; exit status {self.process.poll()})"

    def close_input(self) -> None:
        """End stdin: Claude Code finishes what it has and exits."""
        assert self.process.stdin is not None
        if not self.process.stdin.closed:
            self.process.stdin.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.close_input()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=5)
        self._stderr.close()
        self._home.cleanup()

    def __enter__(self) -> Cli:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
