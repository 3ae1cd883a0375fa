"""The `openai-ws` model specification: documented parameters (one per covered ambiguity of the spec,
with the spec's default), the named bug variants and the property that catches each."""

from __future__ import annotations

from models.openai_ws.model import OpenAIWsModel
from sim.registry import ModelSpec, Param

PARAMS = (
    Param("lanes", 1, "lanes (stream_id) the client uses, one response chain each", low=1, high=3),
    Param("steers", 3, "response.steer frames the client sends in the whole run", low=0, high=6),
    Param("pending_limit", 2, "A14: accepted unresolved steers a response holds; more get "
          "too_many_pending_steers", low=1, high=5),
    Param("hosted_tools", 1, "hosted tool calls (web search) a first-connection root runs before its last item",
          low=0, high=2),
    Param("client_tools", 1, "1: a first-connection root ends with a client-owned function call (explicit "
          "continuation, steer.pending)", low=0, high=1),
    Param("reconnects", 1, "times the connection may drop (the client then reconnects onto a fresh one)",
          low=0, high=2),
    Param("stream_ids", "named", "named: every lane sends stream_id; default: lane 0 is the default lane "
          "(no stream_id)", choices=("named", "default")),
    Param("steerable", True, "R15: false binds the root to a conversation, so every steer fails "
          "steering_not_supported"),
    Param("invalid_input", False, "A16: the client may also send steers with a tool output in input "
          "(refused invalid_input)"),
    Param("batching", "all", "A1: all = a successor commits every queued steer; one = one steer per successor",
          choices=("all", "one")),
    Param("interruption", "either", "A2: either = a queued steer may interrupt at a boundary or the response "
          "finishes first; eager = always interrupt; finish = never", choices=("either", "eager", "finish")),
    Param("late_steer", "join", "A3: a steer after the parent's terminal event, before its successor exists: "
          "join the batch or fail response_not_active", choices=("join", "reject")),
    Param("completed_steer", "reject", "A4: a steer at a normally completed response with no queue: reject "
          "(response_already_completed) or start an automatic successor", choices=("reject", "successor")),
    Param("waiting_steer", "reject", "A5: a steer at a response waiting for tool output: reject "
          "(response_already_completed) or queue it and send pending", choices=("reject", "queue")),
    Param("response_failures", False, "A7: a response may end response.failed; its queued steers then fail "
          "with failed_parent_code"),
    Param("failed_parent_code", "response_not_active", "A7: the code of steers whose parent failed",
          choices=("response_not_active", "successor_creation_failed")),
    Param("successor_failures", True, "the server may fail to create an automatic successor "
          "(successor_creation_failed with each steer's id)"),
    Param("sequence_scope", "response", "A10: sequence_number counts per response or per connection",
          choices=("response", "connection")),
)

BUGS = {
    "commit-twice": "the successor of a root keeps the steers it committed queued, so its own successor commits "
                    "them again",
    "drop-on-normal-completion": "a steer queued when its parent completes normally is neither committed nor "
                                 "failed",
    "reorder-steers": "a successor commits its parent's queue in reverse acceptance order",
    "successor-before-terminal": "the automatic successor is created while its parent is still in progress",
    "pending-before-completed": "response.steer.pending is sent before the parent's response.completed",
    "commit-across-reconnect": "steers queued on a dropped connection are committed into a response on the "
                               "new connection",
    "ignore-pending-limit": "the server accepts steers beyond pending_limit",
    "successor-without-tool-output": "a parent that completed with a client-owned call and queued steers gets an "
                                     "automatic successor without the call's output",
    "resend-accepted": "the client resends the input of a steer that is accepted and still queued",
}

BUG_CATCHERS = {
    "commit-twice": "inv02-no-double-application",
    "drop-on-normal-completion": "inv01-exactly-one-resolution",
    "reorder-steers": "inv05-submission-order",
    "successor-before-terminal": "inv06-commit-after-parent-terminal",
    "pending-before-completed": "inv10-pending-discipline",
    "commit-across-reconnect": "inv13-connection-locality",
    "ignore-pending-limit": "inv21-bounded-queue",
    "successor-without-tool-output": "inv08-no-successor-while-input-required",
    "resend-accepted": "client-no-resend-accepted",
}

SPEC = ModelSpec(
    name="openai-ws",
    doc="mid-turn steering over the OpenAI Responses API WebSocket (response.steer): lanes, responses, hosted and "
        "client-owned tools, steer queues, automatic and explicit successors, drops and reconnects",
    params=PARAMS,
    bugs=BUGS,
    factory=lambda params, bug: OpenAIWsModel(params, bug),
    bug_catchers=BUG_CATCHERS,
    # Two steers show these bugs; the default three would multiply their (larger) state spaces.
    bug_params={"successor-before-terminal": {"steers": 2}, "commit-twice": {"steers": 2}},
)
