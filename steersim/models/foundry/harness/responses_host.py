"""The package's Responses host, driven over HTTP in-process: `ResponsesAgentServerHost` with
`ResponsesServerOptions(steerable_conversations=True, resilient_background=True)`, served inside its
own lifespan (no request before its `TaskManager.startup()` returned) on the virtual loop.

A responses scenario's callers are POSTs to `/responses` (background, `store=true`, one
`agent_session_id`), whose `previous_response_id` names the latest or the first response accepted so
far. Each POST and its reply are recorded as the model's `surface=responses` events (`POST /responses`,
then `http.response` with the status, the error `code` or the response `status`), with responses named
`m<k>` in call order like the model's inputs; the handler's view at entry and how it left are the
`handler.*` events (at each safe point the handler reads `context.pending_input_count`, the "live count"
the host's docstring promises). At the end every accepted response is read back (`GET /responses/{id}`): one not
in a terminal status is an unresolved handle. Requests are ASGI calls on the loop itself, so the
scheduler orders them with the host's own steps.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from typing import Any

from steersim.harness.vloop import LoopLimit, LoopStalled, VirtualLoop
from steersim.models.foundry.harness.runner import Recording, ScenarioRun, sleep_until
from steersim.models.foundry.harness.scenarios import LATEST, STALE, HandlerPlan

os.environ.setdefault("AGENTSERVER_FLUSH_MODE", "sync")  # inline span flushing: no executor threads

try:
    from azure.ai.agentserver.responses import ResponseEventStream, ResponsesAgentServerHost, ResponsesServerOptions
except ImportError:  # the optional extra; surfaces.run_scenario reports it
    ResponsesAgentServerHost = None  # type: ignore[assignment,misc]

SESSION = "conformance"
TERMINAL = {"completed", "failed", "cancelled", "incomplete"}
SETTLE_S = 30.0  # virtual seconds after the last POST for the queued turns to drain
MAX_STEPS = 400_000


async def http(app: Any, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """One HTTP request to the ASGI `app`, in this task: the status and the JSON body (or raw bytes)."""
    payload = json.dumps(body).encode() if body is not None else b""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"steersim"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(payload)).encode())],
             "client": ("127.0.0.1", 1), "server": ("steersim", 80)}
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": payload, "more_body": False}
        await asyncio.Event().wait()  # the client stays connected
        raise AssertionError("unreachable")

    status, chunks = 0, []

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    raw = b"".join(chunks)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def reply_data(caller: str, status: int, body: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"caller": caller, "status": status}
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        data["code"] = body["error"].get("code")
    elif isinstance(body, dict) and "status" in body:
        data["response_status"] = body["status"]
    return data


class ResponsesRun(ScenarioRun):
    """One run of a responses scenario: the host, its POSTs, its handler, and the final read-back."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.app: Any = None
        self.response_ids: dict[str, str] = {}  # m<k> -> the id the host gave it
        self.names: dict[str, str] = {}  # the host's id -> m<k>
        self.posts_done = 0
        self.replied: set[str] = set()
        self.deferred: dict[str, list[tuple[str, str, str, dict[str, Any]]]] = {}

    def handler_event(self, mid: str, source: str, target: str, name: str, data: dict[str, Any]) -> None:
        """A handler event, recorded after its own POST's reply: the host starts the turn while it is
        still answering the POST, and the model orders the reply first."""
        if mid in self.replied:
            self.record(source, target, name, data)
        else:
            self.deferred.setdefault(mid, []).append((source, target, name, data))

    def _previous(self, policy: str) -> str | None:
        accepted = self.accepted
        if policy == LATEST and accepted:
            return accepted[-1]
        if policy == STALE and accepted:
            return accepted[0]
        return None

    async def post(self, index: int) -> None:
        plan = self.scenario.callers[index]
        await sleep_until(plan.at)
        mid = f"m{self.next_input}"
        self.next_input += 1
        previous = self._previous(plan.precondition)
        body = {"model": "steersim", "input": mid, "store": True, "background": True, "agent_session_id": SESSION}
        if previous is not None:
            body["previous_response_id"] = self.response_ids[previous]
        status, reply = await http(self.app, "POST", "/responses", body)
        self.record(f"caller:{mid}", "host", "POST /responses", {"caller": mid, "previous_response_id": previous})
        self.record("host", f"caller:{mid}", "http.response", reply_data(mid, status, reply))
        self.replied.add(mid)
        for source, target, name, data in self.deferred.pop(mid, []):
            self.record(source, target, name, data)
        if status == 200 and isinstance(reply, dict):
            self.response_ids[mid], self.names[reply["id"]] = reply["id"], mid
            self.accepted.append(mid)
            if reply.get("status") == "queued":
                self.queued.add(mid)
        self.posts_done += 1

    async def respond(self, request: Any, context: Any, cancellation_signal: asyncio.Event) -> Any:
        """The scripted handler: it reads its context at entry, waits out its steps (returning early
        when it honours a steering signal), and completes its response."""
        mid = await context.get_input_text()
        plan = self.scenario.handler(int(mid[1:])) if mid.startswith("m") else HandlerPlan(steps=())
        self.handler_event(mid, "chain", "handler", "handler.enter", {
            "input": mid, "is_steered_turn": bool(context.is_steered_turn),
            "first": mid not in self.entered, "queued": mid in self.queued})
        self.entered.add(mid)
        self.running.append(mid)
        stream = ResponseEventStream(response_id=context.response_id, request=request)
        try:
            yield stream.emit_created()
            yield stream.emit_in_progress()
            for delay in plan.steps:
                await asyncio.sleep(delay)
                self.handler_event(mid, "handler", "handler", "handler.check",
                                   {"input": mid, "pending_input_count": context.pending_input_count})
                if plan.honours and cancellation_signal.is_set() and context.pending_input_count > 0:
                    break
            how = "raise" if plan.ending == "raise" else "return"
            self.handler_event(mid, "handler", "chain", "handler.exit", {"input": mid, "how": how})
        finally:
            self.running.remove(mid)
        if plan.ending == "raise":
            raise RuntimeError(f"turn {mid} fails")
        yield stream.emit_completed()

    async def main(self, state_root: str) -> str:
        os.environ["AGENTSERVER_STATE_ROOT"] = state_root
        self.app = ResponsesAgentServerHost(
            options=ResponsesServerOptions(steerable_conversations=True, resilient_background=True),
            configure_observability=None)
        self.app.response_handler(self.respond)
        async with self.app.router.lifespan_context(self.app):
            posts = [asyncio.ensure_future(self.post(k)) for k in range(len(self.scenario.callers))]
            self.tasks += posts
            await asyncio.wait(posts)
            await asyncio.sleep(SETTLE_S)
            for mid, rid in self.response_ids.items():
                _, body = await http(self.app, "GET", f"/responses/{rid}")
                final = body.get("status") if isinstance(body, dict) else None
                if final not in TERMINAL:
                    self.rec.unresolved.append(mid)
        return "quiescent" if self.posts_done == len(self.scenario.callers) else "stalled"

    def run(self) -> Recording:
        loop = VirtualLoop(self.scheduler, max_steps=MAX_STEPS, max_time=self.scenario.horizon + SETTLE_S + 60.0,
                           describe_decisions=self.describe)
        loop.after_step.append(self.poll)
        self.loop = loop
        root = tempfile.TemporaryDirectory(prefix="steersim-responses-", ignore_cleanup_errors=True)
        try:
            try:
                self.rec.end = loop.run_until_complete(self.main(root.name))
            except LoopStalled:
                self.rec.end = "stalled"
            except LoopLimit:
                self.rec.end = "limit"
            self.rec.choices.extend(loop.choices)
            self.rec.widths.extend(loop.widths)
            self.rec.decisions.extend(loop.decisions or ())
            self.recording = False
            self.frozen.append(loop)
        finally:
            self._clean_up(root.cleanup)
        self.rec.inputs = self.next_input
        return self.rec
