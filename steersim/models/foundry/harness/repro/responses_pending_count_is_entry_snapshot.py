"""Reproduce: on the Responses host, `context.pending_input_count` is the count at the start of the
turn, not a live count: a turn on which two responses queue keeps reading 0 while its cancellation
signal, which the queued responses set, fires.

azure-ai-agentserver-responses, the resilient orchestrator (`hosting/_resilient_orchestrator.py`) copies
the core task context's `pending_input_count` onto the `ResponseContext` once, when the turn is entered
(`context.pending_input_count = ctx.pending_input_count`), as a plain attribute nothing updates. The
`ResponseContext` docstring promises "queued steering inputs (live count)", and the Foundry docs' wind-down
idiom `if cancel.is_set() and pending_input_count > 0: return partial_result` never fires on that turn.

Plain asyncio and the packages' public API: `ResponsesAgentServerHost(options=ResponsesServerOptions(
steerable_conversations=True, resilient_background=True))`, served inside its lifespan, requests sent
as ASGI calls (what `httpx.ASGITransport` does). Exit 1 when the first turn, after two POSTs were answered
`queued`, reads a count below 2, 0 otherwise.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile

os.environ.pop("FOUNDRY_HOSTING_ENVIRONMENT", None)
os.environ["AZURE_AI_AGENTSERVER_DISABLE_EXPERIMENTAL_WARNING"] = "true"
os.environ["AGENTSERVER_STATE_ROOT"] = tempfile.mkdtemp(prefix="repro-responses-count-")
os.environ["AGENTSERVER_FLUSH_MODE"] = "sync"
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.responses import (  # noqa: E402
    ResponseEventStream,
    ResponsesAgentServerHost,
    ResponsesServerOptions,
)

app = ResponsesAgentServerHost(options=ResponsesServerOptions(steerable_conversations=True, resilient_background=True),
                               configure_observability=None)
release_first_turn: asyncio.Event | None = None
counts: list[tuple[int, bool]] = []


@app.response_handler
async def handler(request, context, cancellation_signal):
    stream = ResponseEventStream(response_id=context.response_id, request=request)
    yield stream.emit_created()
    yield stream.emit_in_progress()
    if await context.get_input_text() == "m0" and release_first_turn is not None:
        await release_first_turn.wait()
        await asyncio.sleep(0.5)  # the signal reaches the turn from a poll of the task's record
        counts.append((context.pending_input_count, cancellation_signal.is_set()))
    yield stream.emit_completed()


async def post(body: dict) -> tuple[int, dict]:
    payload = json.dumps(body).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/responses", "raw_path": b"/responses", "query_string": b"", "root_path": "",
             "headers": [(b"host", b"repro"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(payload)).encode())],
             "client": ("127.0.0.1", 1), "server": ("repro", 80)}
    messages = [{"type": "http.request", "body": payload, "more_body": False}]

    async def receive() -> dict:
        if messages:
            return messages.pop()
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    reply: dict = {"status": 0, "body": b""}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            reply["status"] = message["status"]
        elif message["type"] == "http.response.body":
            reply["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return reply["status"], json.loads(reply["body"])


async def main() -> int:
    global release_first_turn
    release_first_turn = asyncio.Event()
    base = {"model": "agent", "store": True, "background": True, "agent_session_id": "session-1"}
    async with app.router.lifespan_context(app):
        status, first = await post({**base, "input": "m0"})
        latest = first["id"]
        for k in (1, 2):
            status, body = await post({**base, "input": f"m{k}", "previous_response_id": latest})
            print(f"POST m{k}: HTTP {status} {body.get('status')}")
            assert status == 200 and body["status"] == "queued", (status, body)
            latest = body["id"]
        release_first_turn.set()
        for _ in range(300):
            if counts:
                break
            await asyncio.sleep(0.01)
    count, signalled = counts[0]
    print(f"the first turn then read context.pending_input_count={count} (cancellation signal set: {signalled})")
    return 1 if count < 2 else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
