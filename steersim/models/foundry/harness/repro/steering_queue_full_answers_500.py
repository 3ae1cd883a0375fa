"""Reproduce: on a steerable conversation of the Responses host, a POST that finds the steering queue
full is answered 500 `server_error`, not a busy answer.

azure-ai-agentserver-responses, the create endpoint (`hosting/_endpoint_handler.py`) maps the core's
`LastInputIdPreconditionFailed` to 409 `conversation_fork_not_supported` and `TaskConflictError` to 409
`conversation_locked`, but has no case for `SteeringQueueFull`, which falls through to the generic
handler: HTTP 500 "internal server error". The Foundry docs say of the full queue: "show the user a clear
'please wait' message instead of silently discarding the input"; a 500 tells the client the server
failed.

Plain asyncio and the packages' public API: `ResponsesAgentServerHost(options=ResponsesServerOptions(
steerable_conversations=True, resilient_background=True))`, served inside its lifespan, requests sent
as ASGI calls (what `httpx.ASGITransport` does). Exit 1 when the tenth queued POST gets a 5xx, 0 when
it gets any other answer.
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
os.environ["AGENTSERVER_STATE_ROOT"] = tempfile.mkdtemp(prefix="repro-responses-full-")
os.environ["AGENTSERVER_FLUSH_MODE"] = "sync"
logging.getLogger("azure").setLevel(logging.CRITICAL + 1)

from azure.ai.agentserver.responses import (  # noqa: E402
    ResponseEventStream,
    ResponsesAgentServerHost,
    ResponsesServerOptions,
)

QUEUE_CAPACITY = 9
app = ResponsesAgentServerHost(options=ResponsesServerOptions(steerable_conversations=True, resilient_background=True),
                               configure_observability=None)
release_first_turn: asyncio.Event | None = None


@app.response_handler
async def handler(request, context, cancellation_signal):
    stream = ResponseEventStream(response_id=context.response_id, request=request)
    yield stream.emit_created()
    yield stream.emit_in_progress()
    if await context.get_input_text() == "m0" and release_first_turn is not None:
        await release_first_turn.wait()
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
        for k in range(1, QUEUE_CAPACITY + 1):
            status, body = await post({**base, "input": f"m{k}", "previous_response_id": latest})
            assert status == 200 and body["status"] == "queued", (status, body)
            latest = body["id"]
        status, body = await post({**base, "input": "m10", "previous_response_id": latest})
        print(f"POST /responses with {QUEUE_CAPACITY} responses queued: HTTP {status} {body.get('error', body)}")
        release_first_turn.set()
    return 1 if status >= 500 else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
