"""Codex app-server: a steer that `turn/steer` acknowledged is lost when the turn is interrupted.

The model answers the first request with an `exec_command` call that blocks on a named pipe. While it
runs, `turn/steer` returns `{"turnId": ...}` ("returns the active turnId that accepted the input", README);
then `turn/interrupt`. The steer gets no `userMessage` item, `thread/read` does not have it, and the next
turn's model request does not carry it: the accepted input is gone, and nothing told the client.

Standalone: the public JSON-RPC protocol over stdio, a fake Responses endpoint over HTTP/SSE, the Python
standard library. Usage: python interrupt_drops_acknowledged_steer.py [--codex PATH]
Exit 1 when the steer is lost (it reproduces), 0 when it is kept, 2 when the run could not be made.
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRIPLE = {"x86_64": ("linux-x64", "x86_64-unknown-linux-musl"),
          "aarch64": ("linux-arm64", "aarch64-unknown-linux-musl")}
WAIT = 20.0
STEER = "Only the Python files, please."


def node_folders() -> list[Path]:
    """Where the pinned build may be installed: beside this script in the steersim source tree, then in the
    installed steersim package (this script may be a copy in a `--report` folder). Found without
    importing steersim: the script needs only the standard library."""
    folders = [HERE.parent / "node"]
    spec = importlib.util.find_spec("steersim")
    if spec is not None and spec.origin:
        folders.append(Path(spec.origin).parent / "models" / "codex" / "harness" / "node")
    return folders


def codex_in(folder: Path) -> Path:
    package, triple = TRIPLE.get(platform.machine(), TRIPLE["x86_64"])
    return folder / "node_modules" / "@openai" / f"codex-{package}" / "vendor" / triple / "bin" / "codex"


def default_codex() -> Path:
    """The pinned binary in the first folder that has it (else where the last one would have it)."""
    folders = node_folders()
    return next((codex_in(f) for f in folders if codex_in(f).exists()), codex_in(folders[-1]))


class Backend:
    """POST /v1/responses: each request waits for the events the script sends into it."""

    def __init__(self):
        self.streams = queue.Queue()
        backend = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                outbox = queue.Queue()
                backend.streams.put((body, outbox))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
                    while (event := outbox.get()) is not None:
                        data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def next(self):
        return self.streams.get(timeout=WAIT)


def response(rid, status):
    return {"id": rid, "object": "response", "created_at": 1767225600, "status": status, "model": "gpt-6-astra",
            "output": [], "parallel_tool_calls": False, "tool_choice": "auto", "tools": [],
            **({"usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                          "output_tokens": 5,
                          "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}
               if status == "completed" else {})}


def answer_text(outbox, rid, text):
    item = {"id": f"msg_{rid}", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
    for n, event in enumerate([
            {"type": "response.created", "response": response(rid, "in_progress")},
            {"type": "response.output_item.added", "output_index": 0, "item": {**item, "status": "in_progress",
                                                                                "content": []}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": response(rid, "completed")}]):
        outbox.put({**event, "sequence_number": n})
    outbox.put(None)


class AppServer:
    def __init__(self, codex, base_url, home):
        (home / "codex-home").mkdir()
        (home / "work").mkdir()
        (home / "codex-home" / "config.toml").write_text(f"""\
model = "gpt-6-astra"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "{base_url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
apps = false
""")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
        env["CODEX_HOME"] = str(home / "codex-home")
        self.workdir = home / "work"
        self.proc = subprocess.Popen([str(codex), "app-server"], cwd=self.workdir, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.messages, self.changed, self.next_id = [], threading.Condition(), 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.changed:
                self.messages.append(json.loads(line))
                self.changed.notify_all()

    def send(self, body):
        self.proc.stdin.write(json.dumps(body) + "\n")
        self.proc.stdin.flush()

    def wait(self, test, what):
        end = time.monotonic() + WAIT
        with self.changed:
            while True:
                for message in self.messages:
                    if test(message):
                        return message
                if time.monotonic() > end:
                    raise TimeoutError(f"no {what}")
                self.changed.wait(0.5)

    def call(self, method, params):
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == ident and "method" not in m, f"reply to {method}")

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def user_texts(body):
    return [part.get("text", "") for entry in body["input"] if entry.get("role") == "user"
            for part in entry.get("content", [])]


def reproduce(codex):
    backend = Backend()
    with tempfile.TemporaryDirectory() as tmp:
        server = AppServer(codex, f"http://127.0.0.1:{backend.server.server_address[1]}/v1", Path(tmp))
        try:
            server.call("initialize", {"clientInfo": {"name": "repro", "version": "0"}})
            server.send({"method": "initialized"})
            thread = server.call("thread/start", {})["result"]["thread"]["id"]
            turn = server.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "List files."}]})
            turn = turn["result"]["turn"]["id"]
            pipe = server.workdir / "gate"
            os.mkfifo(pipe)
            _, outbox = backend.next()
            call = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "exec_command",
                    "arguments": json.dumps({"cmd": f"cat {pipe}"}), "status": "completed"}
            for n, event in enumerate([
                    {"type": "response.created", "response": response("resp_1", "in_progress")},
                    {"type": "response.output_item.added", "output_index": 0, "item": call},
                    {"type": "response.output_item.done", "output_index": 0, "item": call},
                    {"type": "response.completed", "response": response("resp_1", "completed")}]):
                outbox.put({**event, "sequence_number": n})
            outbox.put(None)
            server.wait(lambda m: m.get("method") == "item/started"
                        and m["params"]["item"]["type"] == "commandExecution", "item/started commandExecution")
            steered = server.call("turn/steer", {"threadId": thread, "expectedTurnId": turn,
                                                 "input": [{"type": "text", "text": STEER}]})
            print(f"turn/steer -> {json.dumps(steered.get('result', steered.get('error')))}")
            if "result" not in steered:
                print("turn/steer was refused, so nothing was acknowledged: not reproduced")
                return 0
            server.call("turn/interrupt", {"threadId": thread, "turnId": turn})
            done = server.wait(lambda m: m.get("method") == "turn/completed", "turn/completed")
            print(f"turn/completed status {done['params']['turn']['status']}")
            with open(pipe, "w") as release:  # the command ran on; let it end
                release.write("done\n")
            written = any(m.get("method") == "item/completed" and m["params"]["item"]["type"] == "userMessage"
                          and any(p.get("text") == STEER for p in m["params"]["item"]["content"])
                          for m in server.messages)
            read = server.call("thread/read", {"threadId": thread, "includeTurns": True})["result"]["thread"]
            persisted = any(p.get("text") == STEER for t in read["turns"] for i in t["items"]
                            if i["type"] == "userMessage" for p in i["content"])
            server.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "Go on."}]})
            body, outbox = backend.next()
            carried = STEER in user_texts(body)
            answer_text(outbox, "resp_2", "Done.")
            print(f"userMessage item for the steer: {written}; in thread/read: {persisted}; "
                  f"in the next turn's model request: {carried}")
            if not (written or persisted or carried):
                print("REPRODUCED: the acknowledged steer was dropped by the interrupt")
                return 1
            print("not reproduced: the steer was kept")
            return 0
        finally:
            server.close()
            backend.server.shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codex", type=Path, help="the codex binary (default: the pinned one)")
    args = parser.parse_args()
    if args.codex is None:
        args.codex = default_codex()
        if not args.codex.exists():
            folders = [f for f in node_folders() if (f / "package.json").exists()]  # where npm can install it
            install = (f"install it with `npm ci --prefix {folders[-1]}`, or" if folders
                       else "no steersim source tree or installed steersim was found to install it into, so")
            print(f"no pinned codex build found; {install} pass --codex PATH", file=sys.stderr)
            return 2
    if not args.codex.exists():
        print(f"no codex binary at {args.codex}; pass the path of one with --codex PATH", file=sys.stderr)
        return 2
    try:
        return reproduce(args.codex)
    except TimeoutError as stalled:
        print(f"the run could not be made: {stalled}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
