"""The Pydantic AI model's specification: parameters (the documented knobs and the readings the docs
leave open), bug variants and the properties that catch them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.core.registry import Bug, Param, Reading
from steersim.models.pydantic_ai.state import ANY, PRIORITIES

PARAMS = (
    Param("runs", 2, "agent runs, one after another, each continuing the conversation with the history of the "
          "one before it (a cancelled run's too); only runs before the last may be cancelled", low=1, high=3),
    Param("messages", 2, "messages the client enqueues (`AgentRun.enqueue`), at any point of any run, or after "
          "one has ended", low=1, high=4),
    Param("priority", ANY, "the priority of every enqueue; `any`: each enqueue picks one of the two",
          choices=(ANY, *PRIORITIES)),
    Param("tool_calls", 2, "tool calls in a response that calls tools; they run in parallel", low=0, high=3),
    Param("tool_rounds", 1, "responses per run that may call tools (the model may also answer at once)",
          low=0, high=2),
    Param("dequeue", True, "the client may `dequeue` a queued message"),
    Param("reprioritise", False, "the client may `set_enqueue_priority` of a queued message (it keeps its place)"),
    Param("cancel", True, "the client may `cancel()` a run before the last, at any await of the run"),
    Param("cancelled_queue", "stranded",
          "what becomes of messages still queued when a run is cancelled: `stranded` (left on the cancelled "
          "run's `pending_messages`, out of reach of `dequeue`, never delivered: what the source does, and what "
          "`PendingMessageQueue.dequeue` says) or `carried` (delivered by the next run); the docs of "
          "`RunCancelled` do not say", choices=("stranded", "carried")),
)

BUGS = (
    Bug("when-idle-interrupts", "`before_model_request` drains `when_idle` messages with the `asap` ones",
        "when-idle-waits-for-end", {"priority": ANY, "cancel": False, "runs": 1}),
    Bug("newest-first", "the queue hands out each priority's messages newest first", "ordered-history",
        {"priority": "asap", "tool_calls": 1, "cancel": False, "dequeue": False, "runs": 1}),
    Bug("close-after-check", "at the end the run finds the queue empty and closes it in a later step, so an "
        "enqueue from another thread in between is accepted and never delivered", "no-lost-steers",
        {"tool_calls": 0, "tool_rounds": 0, "cancel": False, "dequeue": False, "runs": 1, "messages": 1}),
    Bug("resume-skips-interrupted-returns", "a run continuing a cancelled run's history sends it to the model "
        "without closing out the calls left without a result", "paired-tool-results",
        {"tool_calls": 1, "dequeue": False, "messages": 1}),
    Bug("ended-run-accepts-enqueue", "a run that ended normally leaves its queue open, so a later `enqueue` is "
        "accepted instead of raising `UserError`", "enqueue-raises-after-end",
        {"tool_calls": 0, "tool_rounds": 0, "cancel": False, "dequeue": False, "runs": 1, "messages": 1}),
    Bug("tool-start-unreported", "a tool call runs without its start being reported, so its return comes from "
        "a call that never started", "real-result-after-start", {"cancel": False, "dequeue": False, "messages": 1}),
    Bug("redirect-names-ended-request", "the end-of-run redirect names the request that just ended, not the one "
        "it turns the end into, so its messages are applied to an ended request",
        "names-follow-requests", {"tool_calls": 0, "tool_rounds": 0, "cancel": False, "dequeue": False, "runs": 1}),
    Bug("cancel-carries-queue", "a cancelled run's queued messages are carried into the next run although "
        "cancelled_queue=stranded", "cancelled-queue-fits", {"dequeue": False}),
    Bug("set-priority-moves-to-back", "set_enqueue_priority moves the message to the back of the queue instead "
        "of keeping its place", "priority-change-keeps-place",
        {"reprioritise": True, "messages": 3, "cancel": False, "runs": 1, "dequeue": False}),
    Bug("one-run-too-many", "the client starts one run more than runs", "within-parameters",
        {"messages": 1, "dequeue": False, "tool_calls": 0, "tool_rounds": 0}),
)

DEFAULT_TIMING: Mapping[str, Any] = {
    "default": {"dist": "exponential", "mean": 0.01},
    "client.enqueue": {"dist": "exponential", "mean": 2.0},
    "client.dequeue": {"dist": "exponential", "mean": 4.0},
    "client.set_priority": {"dist": "exponential", "mean": 4.0},
    "client.cancel": {"dist": "exponential", "mean": 8.0},
    "agent.stop": {"dist": "exponential", "mean": 0.05},
    "client.start_run": {"dist": "exponential", "mean": 1.0},
    "model.respond": {"dist": "lognormal", "median": 1.5, "sigma": 0.5},
    "tool.start": {"dist": "exponential", "mean": 0.05},
    "tool.return": {"dist": "lognormal", "median": 1.0, "sigma": 1.0},
}


def kinds_not_enabled(params: Mapping[str, Any]) -> dict[str, str]:
    """Action kinds these parameters cannot fire, with what enables each."""
    off: dict[str, str] = {}
    if not params["dequeue"]:
        off["client.dequeue"] = "dequeue=true"
    if not params["reprioritise"]:
        off["client.set_priority"] = "reprioritise=true"
    if not params["cancel"] or params["runs"] < 2:
        off["client.cancel"] = off["agent.stop"] = "cancel=true, runs>=2"
    if params["runs"] < 2:
        off["client.start_run"] = "runs>=2"
    if params["tool_calls"] == 0 or params["tool_rounds"] == 0:
        off["tool.start"] = off["tool.return"] = "tool_calls>=1, tool_rounds>=1"
    return off

READINGS = (
    Reading({"cancelled_queue": "carried"}, "messages still queued at cancel() are delivered by the next run"),
    Reading({"reprioritise": True}, "the client may set_enqueue_priority of a queued message"),
)
