"""A careful client of mid-turn steering that follows the docs (seed page "Mid-turn steering", SDK
docstrings), written with the real `openai` SDK. It steers the root response with two messages in a row,
tracks steers by
`steer.id`, returns its tool's output as soon as the response completes with a call (or when
`response.steer.pending` asks), carries a failed steer's returned input into its next request (a steer
at the newest running response, the tool-output continuation, or a new `response.create`), never
resends accepted steering, and after a dropped connection starts over with every input whose fate it
does not know. It exits 0 once every input is delivered and the newest response completed.

`CAREFUL_CLIENT_BREAK` names one documented obligation to break on purpose (tests use it).
"""

import asyncio
import json
import os
import sys

from openai import AsyncOpenAI
from websockets.exceptions import ConnectionClosed

MODEL = "gpt-6-astra"
TASK = "Draft a project plan for building a task-tracking app."
STEERS = ("Keep the scope small enough for one developer to finish in two weeks.",
          "Put testing in its own milestone.")
TOOLS = [{"type": "function", "name": "get_project_status", "strict": True,
          "parameters": {"type": "object", "properties": {"project": {"type": "string"}},
                         "required": ["project"], "additionalProperties": False}}]
TOOL_OUTPUT = "Design is complete. Development has not started."
BREAK = os.environ.get("CAREFUL_CLIENT_BREAK", "")


def broke(what):
    print(f"broke: {what}", file=sys.stderr, flush=True)


def user(text):
    return {"role": "user", "content": text}


class Client:
    def __init__(self, connection):
        self.c = connection
        self.in_flight = []  # steer inputs sent and not yet answered, in order
        self.accepted = {}  # steer id -> (input, target), unresolved
        self.carried = []  # inputs to deliver in the next request
        self.status = {}  # response id -> status
        self.newest = None
        self.requested = []  # parents (or "root") of creates whose response.created has not come, in order
        self.new_requests = []  # parents of those that are new requests carrying failed input
        self.answered = set()  # parents whose tool output was sent
        self.calls = {}  # response id -> call ids of its function calls
        self.steered_root = False
        self.final_text = None
        self.broken = set()

    async def steer(self, target, text, **extra):
        self.in_flight.append(text)
        await self.c.send({"type": "response.steer", "previous_response_id": target, "input": text, **extra})

    async def create(self, parent, items):
        self.requested.append(parent or "root")
        event = {"type": "response.create", "model": MODEL, "tools": TOOLS, "input": items}
        if parent:
            event["previous_response_id"] = parent
        await self.c.send(event)

    async def start(self, inputs):
        items = [user(TASK)] + [user(text) for text in inputs]
        await self.create(None, items)

    async def continue_with_output(self, parent):
        """The explicit continuation: the saved tool results, then any carried input (the server
        prepends the queued steers itself)."""
        if parent in self.answered or BREAK == "never-return-tool-output":
            return
        self.answered.add(parent)
        items = [{"type": "function_call_output", "call_id": call, "output": TOOL_OUTPUT}
                 for call in self.calls[parent]]
        items += [user(text) for text in self.carried]
        self.carried = []
        extra = {}
        if BREAK == "continuation-on-other-lane":
            extra = {"stream_id": "lane-b"}
            broke("continuation on another lane")
        await self.c.send({"type": "response.create", "model": MODEL, "tools": TOOLS, "previous_response_id": parent,
                           "input": items, **extra})
        self.requested.append(parent)
        if BREAK == "second-continuation":
            broke("second continuation")
            await self.c.send({"type": "response.create", "model": MODEL, "previous_response_id": parent,
                               "input": items})

    def unresolved_on(self, response):
        return [sid for sid, (_, target) in self.accepted.items() if target == response]

    async def deliver_carried(self, after_failure_code=None):
        """Carry failed input forward: into the newest running response (unless the server said too
        much is pending: then wait for the next response), or once the chain ended into a new request,
        at once even while an earlier new request has not started: "Requests with the same `stream_id`
        are processed FIFO" (SDK, `response.create` `stream_id`), so the server runs them in order."""
        if not self.carried or self.newest is None:
            return
        status = self.status.get(self.newest)
        if status == "in_progress":
            if after_failure_code == "too_many_pending_steers":
                return
            texts, self.carried = self.carried, []
            for text in texts:
                await self.steer(self.newest, text)
            return
        if self.accepted or any(p not in self.new_requests for p in self.requested):
            return  # a response is coming: a successor, or a continuation this client requested
        # a steer still in flight at an ended chain gets refused (nothing it could join is queued), so the
        # new request need not wait for its reply
        if self.calls.get(self.newest) and self.newest not in self.answered:
            await self.continue_with_output(self.newest)
            return
        texts, self.carried = self.carried, []
        self.new_requests.append(self.newest)
        await self.create(self.newest, [user(text) for text in texts])

    def done(self):
        return (self.steered_root and not self.in_flight and not self.accepted and not self.carried
                and not self.requested and self.status.get(self.newest) == "completed"
                and (not self.calls.get(self.newest) or self.newest in self.answered))

    async def on(self, event):
        kind = event.type
        if kind == "error":
            raise RuntimeError(event.to_json())
        if kind == "response.created":
            response = event.response
            self.newest = response.id
            self.status[response.id] = "in_progress"
            parent = response.previous_response_id or "root"
            if parent in self.requested:
                self.requested.remove(parent)
            if parent in self.new_requests:
                self.new_requests.remove(parent)
            for sid in self.unresolved_on(response.previous_response_id):
                del self.accepted[sid]  # the successor's response.created is the commit point
            if BREAK == "steer-stale-parent" and response.previous_response_id and "stale" not in self.broken:
                self.broken.add("stale")
                await self.steer(response.id, "Also list the risks.")
                broke("steer at a superseded response")
                await self.steer(response.previous_response_id, "And the milestones.")
            if not self.steered_root:
                self.steered_root = True
                extra = {}
                if BREAK == "stream-id-on-steer":
                    extra = {"stream_id": "default"}
                    broke("stream_id on a steer")
                for text in STEERS:
                    await self.steer(response.id, text, **extra)
            await self.deliver_carried()
        elif kind == "response.steer.accepted":
            text = self.in_flight.pop(0)
            self.accepted[event.steer.id] = (text, event.steer.previous_response_id)
        elif kind == "response.steer.failed":
            if event.steer.id is not None and event.steer.id in self.accepted:
                del self.accepted[event.steer.id]
            else:
                self.in_flight.pop(0)
            self.carried.append(event.steer.input)
            await self.deliver_carried(event.error.code)
        elif kind == "response.steer.pending":
            parent = event.steer.previous_response_id
            if BREAK == "resend-accepted" and "resend" not in self.broken:
                self.broken.add("resend")
                text, _ = self.accepted[event.steer.id]
                broke("resend of accepted steering")
                await self.steer(parent, text)
            await self.continue_with_output(parent)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = event.response
            self.status[response.id] = response.status
            calls = [item.call_id for item in response.output if item.type == "function_call"]
            if calls:
                self.calls[response.id] = calls
            if kind == "response.completed":
                self.final_text = response.output_text
                if calls and BREAK != "resend-accepted":  # that defect resends when pending asks
                    await self.continue_with_output(response.id)
            if (BREAK == "automatic-continuation" and self.unresolved_on(response.id) and not calls
                    and "auto" not in self.broken):
                self.broken.add("auto")
                broke("response.create while an automatic continuation is coming")
                await self.create(response.id, [user("Continue.")])
            await self.deliver_carried()


async def session(client, inputs):
    """One connection: "done", or after a drop the inputs whose fate is unknown (to start over with)."""
    async with client.responses.connect() as connection:
        state = Client(connection)
        state.steered_root = bool(inputs)  # starting over: the inputs ride in the new request
        try:
            await state.start(inputs)
            async for event in connection:
                await state.on(event)
                if state.done():
                    print(state.final_text)
                    return "done"
        except ConnectionClosed:
            # Queued steering did not survive the drop, and a new connection cannot continue the old
            # chain: start the work over with every requirement the user gave, each once.
            texts = [*STEERS] + inputs + [text for text, _ in state.accepted.values()] + state.in_flight + state.carried
            return [text for i, text in enumerate(texts) if isinstance(text, str) and text not in texts[:i]]
        raise RuntimeError("the server closed the connection before every input was delivered")


async def main():
    client = AsyncOpenAI()
    inputs = []
    async with asyncio.timeout(60):
        for _ in range(3):
            left = await session(client, inputs)
            if left == "done":
                return 0
            inputs = left
    print(json.dumps({"undelivered": inputs}), file=sys.stderr)
    return 1


sys.exit(asyncio.run(main()))
