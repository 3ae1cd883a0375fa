"""Claude Code: a user message with priority `now` does not interrupt a turn while its Bash command runs.

The model answers the first request with a Bash tool_use whose command (`cat` of a named pipe) runs until
the script writes the pipe. While it runs, a user message with `"priority": "now"` goes in on stdin. The
SDK documents the field as "'now' interrupts the session's current turn, 'next' joins it without stopping
it, 'later' waits for its end", and the CLI's own schema descriptions say a 'now' message backgrounds
running shell commands ("exactly as a priority 'now' message would have (running shell commands are
backgrounded, not killed)"). The pinned build does neither: no `result` comes while the command runs; once
the script ends the command, the turn stops and the 'now' message starts its own. (An interrupt control
request, by contrast, ends the command at once.) The backgrounding may sit behind a rollout flag that an
offline session never receives, so the steersim model takes this as a reading (`now_during_tool=waits`),
not as a defect.

Standalone: the public stream-json protocol over stdio, a fake Anthropic Messages API over HTTP/SSE, the
Python standard library. The one bounded wait is the point: it shows that nothing happens within it.
Usage: python now_waits_for_running_command.py [--claude PATH] [--seconds N]
Exit 1 when the turn goes on while the command runs (it reproduces), 0 when the 'now' message stops the
turn (or backgrounds the command) first, 2 when the run could not be made.
"""

import argparse
import importlib.util
import json
import os
import platform
import queue
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGES = {"x86_64": "claude-code-linux-x64", "aarch64": "claude-code-linux-arm64"}
WAIT = 20.0
SESSION = str(uuid.uuid4())


def node_folders() -> list[Path]:
    """Where the pinned build may be installed: beside this script in the steersim source tree, then in the
    installed steersim package (this script may be a copy in a `--report` folder)."""
    folders = [HERE.parent / "node"]
    spec = importlib.util.find_spec("steersim")
    if spec is not None and spec.origin:
        folders.append(Path(spec.origin).parent / "models" / "claude_code" / "harness" / "node")
    return folders


def claude_in(folder: Path) -> Path:
    return folder / "node_modules" / "@anthropic-ai" / PACKAGES.get(platform.machine(), PACKAGES["x86_64"]) / "claude"


def default_claude() -> Path:
    folders = node_folders()
    return next((claude_in(f) for f in folders if claude_in(f).exists()), claude_in(folders[-1]))


def sse(event: dict) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def message(index: int, blocks: list, stop: str) -> list:
    """A whole streamed message: its start, each block (start, one delta, stop), its end."""
    out = [{"type": "message_start", "message": {"id": f"msg_{index}", "type": "message", "role": "assistant",
            "model": "claude-repro", "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}}]
    for n, (start, delta) in enumerate(blocks):
        out += [{"type": "content_block_start", "index": n, "content_block": start},
                {"type": "content_block_delta", "index": n, "delta": delta},
                {"type": "content_block_stop", "index": n}]
    return out + [{"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": 1}}, {"type": "message_stop"}]


class Backend:
    """POST /v1/messages: the first request gets the Bash call, every later one a short text answer."""

    def __init__(self, command: str):
        self.requests = queue.Queue()
        self.command = command
        backend = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                index = backend.requests.qsize() + 1
                backend.requests.put(body)
                if index == 1:
                    tool = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
                    arguments = json.dumps({"command": backend.command, "description": "wait"})
                    events = message(index, [(tool, {"type": "input_json_delta", "partial_json": arguments})],
                                     "tool_use")
                else:
                    events = message(index, [({"type": "text", "text": ""}, {"type": "text_delta", "text": "ok"})],
                                     "end_turn")
                data = b"".join(sse(e) for e in events)
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Cli:
    def __init__(self, binary: Path, home: Path, base_url: str):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
        env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / "config"), ANTHROPIC_BASE_URL=base_url,
                   ANTHROPIC_API_KEY="dummy", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1")
        (home / "config").mkdir()
        self.process = subprocess.Popen(
            [str(binary), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
             "--bare", "--tools", "Bash", "--allowedTools", "Bash", "--session-id", SESSION],
            cwd=home, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.process.stdout:
            if raw.strip():
                self.lines.put(json.loads(raw))

    def send(self, text: str, priority=None):
        body = {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None,
                "session_id": SESSION, "uuid": str(uuid.uuid4())}
        if priority:
            body["priority"] = priority
        self.process.stdin.write((json.dumps(body) + "\n").encode())
        self.process.stdin.flush()

    def wait(self, predicate, seconds: float):
        """The first line that satisfies `predicate` within `seconds`, else None."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return None
            if predicate(line):
                return line
        return None


def open_writer(pipe: Path) -> int:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            return os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)  # `cat` has not opened the pipe yet


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", type=Path, default=None, help="the claude binary (default: the pinned build)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the command runs after the message")
    args = parser.parse_args()
    binary = args.claude or default_claude()
    if not binary.exists():
        print(f"no claude binary at {binary}; npm ci --prefix steersim/models/claude_code/harness/node")
        return 2
    with tempfile.TemporaryDirectory(prefix="claude-now-") as folder:
        home = Path(folder)
        pipe = home / "gate"
        os.mkfifo(pipe)
        backend = Backend(f"cat {pipe}")
        cli = Cli(binary, home, f"http://127.0.0.1:{backend.server.server_address[1]}")
        try:
            cli.send("Run the command.")
            if cli.wait(lambda line: line.get("type") == "assistant", WAIT) is None:
                print("the Bash tool_use never came")
                return 2
            writer = open_writer(pipe)  # from here on the command runs
            cli.send("Stop, do something else.", "now")
            stopped = cli.wait(lambda line: line.get("type") in ("result", "user"), args.seconds)
            os.write(writer, b"done\n")
            os.close(writer)
            if stopped is not None:
                print(f"the 'now' message acted while the command ran: {stopped.get('type')} line")
                return 0
            after = cli.wait(lambda line: line.get("type") == "result", WAIT)
            print(f"for {args.seconds:g} s after the 'now' message the turn went on and the command ran; once it "
                  f"ended the turn ended ({after.get('subtype') if after else 'no result'}, stop_reason "
                  f"{after.get('stop_reason') if after else None})")
            return 1
        finally:
            cli.process.kill()
            cli.process.wait()
            backend.server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
