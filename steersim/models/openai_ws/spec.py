"""The `openai-ws` model specification: documented parameters (one per covered ambiguity of the spec,
with the spec's default), the named bug variants and the property that catches each (the larger state spaces'
bugs show with two steers instead of the default three), and the default timing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.core.registry import Bug, Param, Reading

PARAMS = (
    Param("lanes", 1, "lanes (stream_id) the client uses, one response chain each", low=1, high=3),
    Param("steers", 3, "response.steer frames the client sends in the whole run", low=0, high=6),
    Param("pending_limit", 2, "A14: accepted unresolved steers a response holds; more get "
          "too_many_pending_steers", low=1, high=5),
    Param("hosted_tools", 1, "hosted tool calls (web search) a first-connection root runs before its last item",
          low=0, high=2),
    Param("client_tools", 1, "1: the client declares its function tool, so a first-connection root ends with "
          "a client-owned call (explicit continuation, steer.pending); 0: it never does; 2: each root's create "
          "decides (a real client's, when served)", low=0, high=2),
    Param("followups", 2, "new requests the client may send after a chain ended (e.g. carrying a failed "
          "steer's input into response.create)", low=0, high=4),
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

BUGS = (
    Bug("commit-twice", "the successor of a root keeps the steers it committed queued, so its own successor "
        "commits them again",
        "inv02-no-double-application", {"steers": 2, "followups": 0}),
    Bug("drop-on-normal-completion", "a steer queued when its parent completes normally is neither committed nor "
        "failed",
        "inv01-exactly-one-resolution", {"followups": 0}),
    Bug("reorder-steers", "a successor commits its parent's queue in reverse acceptance order",
        "inv05-submission-order", {"followups": 0}),
    Bug("successor-before-terminal", "the automatic successor is created while its parent is still in progress",
        "inv06-commit-after-parent-terminal", {"steers": 2, "followups": 0}),
    Bug("pending-before-completed", "response.steer.pending is sent before the parent's response.completed",
        "inv10-pending-discipline", {"followups": 0}),
    Bug("commit-across-reconnect", "steers queued on a dropped connection are committed into a response on the new "
        "connection",
        "inv13-connection-locality", {"followups": 0}),
    Bug("ignore-pending-limit", "the server accepts steers beyond pending_limit", "inv21-bounded-queue",
        {"followups": 0}),
    Bug("successor-without-tool-output", "a parent that completed with a client-owned call and queued steers gets "
        "an automatic successor without the call's output",
        "inv08-no-successor-while-input-required", {"followups": 0}),
    Bug("resend-accepted", "the client resends the input of a steer that is accepted and still queued",
        "client-no-resend-accepted", {"followups": 0}),
    Bug("reuse-steer-id", "steer ids are numbered per response, so a successor's steer reuses an id its parent's "
        "steer already had",
        "inv04-unique-steer-ids", {"followups": 0}),
    Bug("steered-without-steer", "the root's first successor ends incomplete(steered) on the steers it already "
        "committed, with none queued",
        "inv07-steered-has-accepted-steer", {"followups": 0}),
    Bug("pending-stub-item-id", "response.steer.pending's required_input names the call by its item id, not its "
        "call_id",
        "inv09-tool-completeness", {"followups": 0}),
    Bug("duplicate-successor", "the server creates a second automatic successor of a root it already continued",
        "inv11-one-continuation-per-parent", {"steers": 2, "followups": 0}),
    Bug("no-stream-id-echo", "response.steer.accepted omits the target's stream_id", "inv14-stream-id-echo",
        {"followups": 0}),
    Bug("accept-unsteerable", "a conversation-bound response accepts steers instead of failing them "
        "steering_not_supported",
        "inv15-eligibility", {"steerable": False, "steers": 2, "followups": 0}),
    Bug("refused-steer-schedules-successor", "a steer refused response_already_completed still schedules an "
        "automatic successor of its target",
        "inv16-rejected-steer-no-effect", {"followups": 0}),
    Bug("drop-input-on-failure", "a failure after acceptance returns the steer with an empty input",
        "inv17-input-round-trip", {"followups": 0}),
    Bug("pad-interrupted-output", "an interrupted response reports its whole planned output as finished",
        "inv18-output-never-rewritten", {"followups": 0}),
    Bug("repeat-terminal-on-successor", "the server repeats a completed parent's response.completed when it "
        "creates the successor",
        "inv19-response-lifecycle", {"followups": 0}),
    Bug("restart-sequence-on-refusal", "a refused steer's failure is numbered 0 instead of taking the next "
        "sequence number",
        "inv20-sequence-numbers-increase", {"followups": 0}),
    Bug("skip-sequence-on-refusal", "a refused steer's failure takes the number after the next one, so its scope "
        "skips a sequence number", "sequence-numbers-consecutive", {"followups": 0}),
    Bug("silent-drop", "the server drops the connection without a close frame", "connection-events",
        {"followups": 0}),
    Bug("progress-for-wrong-item", "the server sends response.web_search_call.in_progress as a message or function "
        "call item is added, and none for the web search item", "item-events", {"followups": 0}),
    Bug("item-done-in-progress", "response.output_item.done repeats the item as it was added (in progress, no "
        "content) instead of the finished item", "item-events", {"followups": 0}),
    Bug("interrupt-hosted-tool", "a queued steer interrupts a response while its hosted tool call is running",
        "safe-output-boundary", {"followups": 0}),
    Bug("queued-request-never-starts", "a new request that waits in its lane's queue is never started, though the "
        "lane frees", "queued-requests-start", {"followups": 2}),
    Bug("queued-requests-lifo", "of two new requests waiting in a lane's queue, the newer one starts first",
        "lane-fifo", {"followups": 3, "steers": 1}),
    Bug("history-on-default-lane", "a successor commits its steers into the history of the default lane (the chain "
        "without stream_id) instead of its own lane's", "history-on-own-lane", {"followups": 0}),
    Bug("silent-pending", "the server holds a steer for the client's tool output without sending "
        "response.steer.pending", "steer-events", {"followups": 0}),
    Bug("stream-id-on-steer", "the client sends the target's stream_id on response.steer",
        "client-no-stream-id-on-steer", {"followups": 0}),
    Bug("continue-automatic-parent", "the client sends its own continuation of a parent whose queued steers "
        "continue automatically",
        "client-no-automatic-continuation", {"followups": 0}),
    Bug("continue-twice", "the client retries an explicit continuation it already sent",
        "client-one-continuation-per-parent", {"steers": 2, "followups": 0}),
    Bug("continue-on-default-lane", "the client sends the explicit continuation without the parent's stream_id",
        "client-continuation-on-parent-lane", {"followups": 0}),
    Bug("steer-stale-parent", "the client steers a response after it already steered that response's successor",
        "client-steer-newest-response", {"followups": 0}),
)

# every kind of action the model takes, in the order its coverage table lists them
ACTION_KINDS = ("client.create", "client.steer", "client.tool_output", "client.reconnect", "client.followup",
                "server.item", "server.item_done", "server.complete", "server.interrupt", "server.fail",
                "server.successor", "server.successor_fails", "server.pending", "server.start_queued", "tool.finish",
                "fault.disconnect")

DEFAULT_TIMING: Mapping[str, Any] = {
    "default": {"dist": "exponential", "mean": 0.2},
    "client.steer": {"dist": "exponential", "mean": 2.0},
    "client.tool_output": {"dist": "lognormal", "median": 1.0, "sigma": 0.5},
    "server.item": {"dist": "lognormal", "median": 0.5, "sigma": 0.5},
    "server.item_done": {"dist": "lognormal", "median": 1.5, "sigma": 0.7},
    "tool.finish": {"dist": "lognormal", "median": 2.0, "sigma": 1.0},
    "fault.disconnect": {"dist": "exponential", "mean": 30.0},
}


def kinds_not_enabled(params: Mapping[str, Any]) -> dict[str, str]:
    """Action kinds these parameters cannot fire, with what enables each: failed responses are an opt-in
    scenario (beside the default's two follow-up requests they grow the check's graph about tenfold)."""
    off = {}
    if not params["followups"]:
        off["client.followup"] = "followups=1 or more"
    if params["followups"] < 2:  # a queued request is a second new request sent while the first one runs
        off["server.start_queued"] = "followups=2 or more"
    if not params["response_failures"]:
        off["server.fail"] = "response_failures=true"
    return off

# The other readings of the ambiguities (A1-A16), each without the follow-ups that the defaults send, which
# only the lane queue needs: seconds in all.
READINGS = (
    Reading({"followups": 0, "interruption": "eager"}, "A2: a queued steer always interrupts at a boundary"),
    Reading({"followups": 0, "interruption": "finish"}, "A2: the response always finishes first"),
    Reading({"followups": 0, "batching": "one", "late_steer": "reject"},
            "A1 and A3: one steer per successor, and a steer after the parent's terminal event fails"),
    Reading({"followups": 0, "completed_steer": "successor", "waiting_steer": "queue", "response_failures": True},
            "A4, A5 and A7: steers start automatic successors and queue behind tool output; responses may fail"),
    Reading({"followups": 3, "steerable": False},
            "R15: a root bound to a conversation refuses every steer; of the client's three new requests, two can "
            "wait in one lane's FIFO queue"),
    Reading({"steers": 2, "followups": 1, "invalid_input": True}, "A16: steers carrying a tool output are refused"),
    Reading({"followups": 0, "stream_ids": "default", "sequence_scope": "connection"},
            "A10: lane 0 is the default lane, and sequence_number counts per connection"),
    Reading({"steers": 2, "hosted_tools": 2, "client_tools": 2, "followups": 0, "response_failures": True,
             "failed_parent_code": "successor_creation_failed", "successor_failures": False},
            "A7's other code, with hosted and client tools in every root"),
)
