"""`Agent.run_stream` drops a message enqueued during the run when its final result ends the run.

A tool enqueues a follow-up (`ctx.enqueue(..., priority='when_idle')`, the documented way to queue a
follow-up task); `enqueue` returns an `enqueue_id`, so the message was accepted. `agent.run()` delivers it
in one more request. `agent.run_stream()` ends at the final result, and the message is gone: it is not
in `all_messages()`, not on the run's `pending_messages`, and no `EnqueuedMessagesEvent` is emitted. The
same happens to an `asap` message enqueued while the final response streams (the steering case).

Exits 1 while the message is dropped, 0 once it is delivered or kept on `pending_messages`.
Needs only `pydantic-ai-slim`; plain asyncio, no network (the model is a `FunctionModel`).
"""

import asyncio
import sys

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel


def first_request(messages):
    return not any(isinstance(m, ModelResponse) for m in messages)


async def answer(messages, info):
    if first_request(messages):
        return ModelResponse(parts=[ToolCallPart("work", {}, tool_call_id="call-1")])
    return ModelResponse(parts=[TextPart("done")])


async def stream(messages, info):
    if first_request(messages):
        yield {0: DeltaToolCall("work", "{}", tool_call_id="call-1")}
    else:
        yield "do"
        if steering:  # while the final response streams, a steering message arrives
            contexts[-1].enqueue("steer now", priority="asap")
        await asyncio.sleep(0.01)
        yield "ne"


agent = Agent(FunctionModel(answer, stream_function=stream))
contexts = []
steering = []


@agent.tool
async def work(ctx: RunContext) -> str:
    contexts.append(ctx)
    ctx.enqueue("follow-up", priority="when_idle")
    return "started"


def said(messages):
    return [p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, UserPromptPart)]


async def main() -> int:
    ran = await agent.run("hello")
    print(f"agent.run: history has {said(ran.all_messages())}")

    enqueued = []
    async with agent.run_stream("hello", event_stream_handler=collect(enqueued)) as streamed:
        await streamed.get_output()
    history = said(streamed.all_messages())
    pending = contexts[-1].pending_messages
    print(f"agent.run_stream: history has {history}; pending_messages holds {len(pending)}; "
          f"EnqueuedMessagesEvents: {len(enqueued)}")
    lost = "follow-up" not in history and not pending

    steering.append(True)
    async with agent.run_stream("hello") as streamed:
        await streamed.get_output()
    history = said(streamed.all_messages())
    pending = contexts[-1].pending_messages
    print(f"agent.run_stream, `asap` while the final response streams: history has {history}; "
          f"pending_messages holds {len(pending)}")
    lost_asap = "steer now" not in history and not pending
    if lost or lost_asap:
        print("REPRODUCED: an accepted message was neither delivered nor left queued "
              f"({'when_idle' if lost else ''}{' and ' if lost and lost_asap else ''}{'asap' if lost_asap else ''})")
        return 1
    print("not reproduced: the messages were delivered or kept")
    return 0


def collect(into):
    async def handler(ctx, events):
        async for event in events:
            if type(event).__name__ == "EnqueuedMessagesEvent":
                into.append(event)
    return handler


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
