"""`steersim serve openai-ws` against clients that send what no SDK sends: a frame over the size limit,
bytes that are not UTF-8, JSON nested past the parser. Each is answered (an `error` event, or close
code 1009 for a frame too large to read), each is a finding, and no finding quotes a frame whole."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from openai.types.responses.responses_server_event import ResponseWsError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from steersim.models.openai_ws import SPEC
from steersim.models.openai_ws.frames import EXCERPT_CHARS
from steersim.models.openai_ws.harness.serve import FRAME_FINDING, PATH, SeededChoices, run_server
from steersim.models.openai_ws.harness.session import SERVE_DEFAULTS, Finding, Session

ROOT = Path(__file__).resolve().parent.parent


def serve_one(client: Callable[[ClientConnection], Awaitable[None]], **options) -> list[Finding]:
    """Serve one session to `client` and return its findings."""

    async def main() -> list[Finding]:
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        session = Session(SPEC.resolve(dict(SERVE_DEFAULTS)))
        server = asyncio.create_task(run_server(session, SeededChoices(0), 0, ready, limit=30, **options))
        async with connect(f"ws://127.0.0.1:{await ready}{PATH}", max_size=None) as ws:
            await client(ws)
        return await server

    return asyncio.run(main())


async def error_answer(ws: ClientConnection) -> ResponseWsError:
    """The server's answer, which must be an `error` event the SDK reads."""
    event = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert event["type"] == "error", event
    return ResponseWsError.model_validate(event)


def malformed(findings: list[Finding]) -> list[Finding]:
    assert {f.kind for f in findings} == {"malformed"}, findings
    assert {f.property for f in findings} == {FRAME_FINDING}
    return findings


def test_a_frame_over_the_limit_is_refused_with_1009():
    closed: list[int] = []

    async def client(ws: ClientConnection) -> None:
        await ws.send("x" * 5_000)
        with pytest.raises(ConnectionClosed) as refused:
            await asyncio.wait_for(ws.recv(), 10)
        closed.append(refused.value.rcvd.code)

    [finding] = malformed(serve_one(client, max_frame_bytes=4_096))
    assert closed == [1009]
    assert "over the 4,096-byte limit (--max-frame-bytes)" in finding.summary


@pytest.mark.parametrize("text", [False, True], ids=["binary", "text"])
def test_bytes_that_are_not_utf8_get_an_error_event(text):
    answers: list[ResponseWsError] = []

    async def client(ws: ClientConnection) -> None:
        await ws.send(b'{"type": "response.create", "input": "\xff\xfe"}', text=text)
        answers.append(await error_answer(ws))

    [finding] = malformed(serve_one(client))
    assert answers[0].error.type == "invalid_request_error"
    assert "not valid UTF-8" in answers[0].error.message
    assert "not valid UTF-8" in finding.summary


def test_json_nested_past_the_parser_gets_an_error_event():
    answers: list[ResponseWsError] = []

    async def client(ws: ClientConnection) -> None:
        await ws.send("[" * 100_000)
        answers.append(await error_answer(ws))
        await ws.send(json.dumps({"type": "response.create", "input": "x"}))  # the session goes on
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "response.created"

    [finding] = malformed(serve_one(client))
    assert "nests JSON too deeply" in answers[0].error.message
    assert len(finding.summary) < 2 * EXCERPT_CHARS


def test_findings_quote_a_bounded_excerpt_and_the_session_exits_1(tmp_path):
    """Through the command line: a megabyte of garbage and a megabyte-long frame the model cannot
    produce give two findings, exit 1, and a few hundred characters of output, not megabytes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    report = tmp_path / "findings.json"
    command = subprocess.Popen([sys.executable, "-m", "steersim.cli", "serve", "openai-ws", "--port", "0",
                                "--seed", "1",
                                "--timeout", "60", "--json", str(report)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", command.stderr.readline()).group(1))

        async def client() -> None:
            async with connect(f"ws://127.0.0.1:{port}{PATH}", max_size=None) as ws:
                await ws.send("{" + "x" * 1_000_000)
                await error_answer(ws)
                await ws.send(json.dumps({"type": "bogus", "pad": "y" * 1_000_000}))
                with pytest.raises(ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), 10)

        asyncio.run(client())
        out, err = command.communicate(timeout=60)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
    assert command.returncode == 1, err
    findings = json.loads(report.read_text())["findings"]
    assert [(f["kind"], f["property"]) for f in findings] == [("malformed", FRAME_FINDING), ("divergence", "model")]
    assert "1,000,001 characters in all" in findings[0]["summary"]
    assert "1,000," in findings[1]["summary"] and len(findings[1]["summary"]) < 1_000
    assert len(out) < 2_000 and "x" * (EXCERPT_CHARS + 1) not in out and "y" * (EXCERPT_CHARS + 1) not in out
