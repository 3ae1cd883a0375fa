"""The OpenClaw model's specification: its knobs, with the defaults OpenClaw documents (spec section 12),
and the size of the scripted scenario (how many tool calls, inbound messages, routes); the named bug
variants with the property that catches each and the parameters under which each shows; the default
timing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.core.registry import Bug, Param, Reading
from steersim.models.openclaw.queue_settings import DROP_ALIASES, MODE_ALIASES
from steersim.models.openclaw.versions import PRESET, REFERENCE_VERSION, SKIP_TEXTS, VERSIONS

MODES = ("steer", "followup", "collect", "interrupt")
MODE_CHOICES = (*MODES, *(alias for alias in MODE_ALIASES if alias not in MODES))
DROPS = ("summarize", "old", "new")
DROP_CHOICES = (*DROPS, *(alias for alias in DROP_ALIASES if alias not in DROPS))
DRAIN_MODES = ("one-at-a-time", "all")

PARAMS: tuple[Param, ...] = (
    Param("mode", "steer", "gateway queue mode for messages that arrive during an active run (aliases accepted)",
          choices=MODE_CHOICES),
    Param("runtime", "agent-core", "the runtime the session runs on", choices=("agent-core", "codex")),
    Param("layer", "session", "where the gateway meets the agent core: `session` (the embedded runner's "
          "AgentSession: steering admission closes once the run aborts, and the post-run loop calls "
          "Agent.continue() while hasQueuedMessages()) or the bare `agent` (one Agent.prompt, nothing after)",
          choices=("session", "agent")),
    Param("version", REFERENCE_VERSION, "the published build whose preset the version-dependent parameters "
          "take when they are `preset` (see steersim/models/openclaw/versions.py)", choices=tuple(VERSIONS)),
    Param("restore_on_abort", PRESET, "drained steers and follow-ups that an aborted run never injected go "
          "back to the front of their queues (Agent.finishRun restore)", choices=(PRESET, "on", "off")),
    Param("skip_text", PRESET, "the text of a steering skip result (STEERING_TOOL_SKIP_MESSAGE)",
          choices=(PRESET, *SKIP_TEXTS)),
    Param("tool_execution", "parallel", "Agent toolExecution", choices=("parallel", "sequential")),
    Param("steering_mode", "one-at-a-time", "Agent steeringMode (drain of the in-run steering queue)",
          choices=DRAIN_MODES),
    Param("follow_up_mode", "one-at-a-time", "Agent followUpMode (drain of the agent follow-up queue)",
          choices=DRAIN_MODES),
    Param("calls", 2, "tool calls in each scripted tool-use response", low=0, high=4),
    Param("tool_turns", 1, "how many model responses (counted over the session) ask for tools", low=0, high=3),
    Param("messages", 3, "inbound user messages sent at any time", low=0, high=4),
    Param("routes", 1, "distinct routes (channel/to/account/thread); message n uses route n mod routes",
          low=1, high=3),
    Param("blocked_call", -1, "index of the call whose beforeToolCall preflight blocks it (-1: none)",
          low=-1, high=3),
    Param("agent_follow_ups", 0, "messages queued with Agent.followUp before the run", low=0, high=2),
    Param("stop_after_turn", False, "shouldStopAfterTurn answers true whenever it is consulted"),
    Param("abort", False, "the user may abort (/stop) the active run once"),
    Param("compaction", False, "the run compacts once after its first turn, refusing steering meanwhile"),
    Param("end_listener_window", False,
          "agent_end listeners run while the Agent still counts as streaming, so a steer can land there"),
    Param("debounce_ms", 500, "the follow-up queue's quiet window before it drains (`/queue debounce:`, "
          "messages.queue.debounceMsByChannel, the channel plugin's default, built-in 500 ms)",
          low=0, high=86_400_000),
    Param("cap", 20, "messages.queue.cap: follow-up queue capacity", low=1, high=1000),
    Param("drop", "summarize", "messages.queue.drop: what a full follow-up queue does",
          choices=DROP_CHOICES),
    Param("codex_debounce_ms", 500, "Codex turn/steer quiet window (CODEX_STEER_ALL_DEBOUNCE_MS)",
          low=0, high=86_400_000),
    Param("codex_turn_kind", "default", "kind of the active Codex turn (review and compact turns refuse steering)",
          choices=("default", "review", "compact")),
    Param("codex_boundaries", 2, "model boundaries in a Codex turn (accepted steering is consumed at each)",
          low=1, high=3),
)

BUGS = (
    Bug("no-checkpoint-b", "a sequential call launches without polling steering right before the launch",
        "steer-before-launch", {"tool_execution": 'sequential'}),
    Bug("skip-without-result", "calls skipped by steering get no end event and no result message",
        "paired-tool-results"),
    Bug("partial-parallel-recall", "the parallel launch checkpoint recalls only the first ready call",
        "no-launch-after-drain"),
    Bug("steer-after-model-call", "the drained steer is appended after the next model call instead of before it",
        "steer-before-next-call"),
    Bug("collect-across-routes", "collect coalesces queued messages of different routes into one run",
        "collect-respects-routes", {"mode": 'collect', "routes": 2}),
    Bug("all-in-one-at-a-time", "the steering queue drains every message even in one-at-a-time mode",
        "one-at-a-time-drain"),
    Bug("cancel-running-tool", "a steer that arrives while parallel tools run cancels them", "no-cancel-started"),
    Bug("stop-outranks-steer", "shouldStopAfterTurn is consulted even when the tool batch drained a steer",
        "steer-outranks-stop", {"stop_after_turn": True, "tool_execution": 'sequential'}),
    Bug("no-final-recheck", "the end of the run does not poll steering again after the follow-up drain",
        "no-lost-steers", {"layer": 'agent'}),
    Bug("no-debounce", "the follow-up queue drains without waiting for the debounce window",
        "followup-waits-debounce", {"mode": 'followup'}),
    Bug("skip-overwrites-preflight", "a parallel steering skip replaces the result of a call its preflight blocked",
        "truthful-preflight", {"blocked_call": 0}),
    Bug("overlapping-runs", "an interrupt starts its replacement run while the run it aborts still has a turn open",
        "one-active-turn", {"mode": 'interrupt'}),
    Bug("double-end-event", "the parallel commit ends a call recalled by steering a second time before its result",
        "one-start-one-end"),
    Bug("results-out-of-order", "a parallel batch appends each result as its tool finishes, in completion order",
        "results-in-source-order"),
    Bug("wrong-skip-text", "the parallel launch checkpoint ends recalled calls with the abort text, not the skip "
        "text",
        "skip-result-exact"),
    Bug("skip-result-reads-abort", "the parallel commit writes the abort text into the result message of a call "
        "that steering skipped, whose end event read the skip",
        "result-matches-end"),
    Bug("unbounded-summary", "the overflow summary keeps every dropped message instead of the newest `cap` "
        "per route", "summary-bounded", {"mode": 'followup', "cap": 1, "drop": 'summarize'}),
    Bug("streaming-through-agent-end", "the Agent still counts as streaming while agent_end listeners run, "
        "although no listener holds the run open (end_listener_window off)", "switched-off-stays-off"),
    Bug("steer-consumed-twice", "a Codex model boundary keeps the turn/steer batches it consumed, so the next "
        "boundary echoes them again", "codex-consumes-what-was-sent", {"runtime": "codex", "messages": 1}),
    Bug("overflow-across-routes", "the overflow summary rides with the next drained prompt, whatever its route",
        "collect-respects-routes", {"mode": 'collect', "routes": 2, "cap": 1}),
    Bug("skip-reads-abort", "a steer drained at sequential checkpoint B ends the tail with \"Operation aborted\", "
        "as if the run had been aborted, instead of the steering skip", "abort-result-exact",
        {"tool_execution": 'sequential'}),
    Bug("interrupt-without-abort", "an interrupt leaves the active run running and only queues its message as the "
        "replacement, which runs once that run ends by itself", "abort-stops-the-run", {"mode": 'interrupt'}),
    Bug("follow-up-after-abort", "leaving the turn loop, an aborted run still drains the agent follow-up queue "
        "(no stopIfAborted before the follow-up drain)", "abort-stops-the-run",
        {"abort": True, "agent_follow_ups": 1}),
    Bug("prepare-ignores-abort", "the parallel prepare phase goes on preparing calls after the abort, leaving "
        "them to the launch checkpoint", "abort-stops-prepare", {"abort": True}),
    Bug("silent-steer-fallback", "the Codex steering queue refuses a message that arrives before the turn "
        "streams without saying so (no steer_rejected), and the gateway queues it as a follow-up",
        "fallback-follows-refusal", {"runtime": "codex", "messages": 1}),
    Bug("tool-results-unanswered", "the loop leaves after a tool batch without calling the model on the "
        "results (hasMoreToolCalls is lost)", "tool-results-reach-model"),
    Bug("block-reads-started", "a parallel call blocked by its beforeToolCall preflight ends as if its "
        "implementation had run (executionStarted true)", "truthful-preflight", {"blocked_call": 0}),
    Bug("turn-end-drops-unsent", "a closing Codex turn hands back only the turn/steer batches in flight, "
        "losing the messages still in the quiet window", "codex-consumes-what-was-sent",
        {"runtime": "codex", "messages": 1}),
    Bug("codex-flush-at-once", "the Codex steering queue sends each message as its own turn/steer at once, "
        "although a quiet window is configured", "codex-steer-window", {"runtime": "codex", "messages": 1}),
    Bug("poll-after-abort", "after an aborted turn the loop polls steering (and consults shouldStopAfterTurn) "
        "before it leaves through stopIfAborted", "abort-skips-turn-checkpoints", {"mode": 'followup', "abort": True}),
    Bug("summary-joins-followup", "outside collect, the overflow summary is prepended to the next queued "
        "message's run instead of running as a synthetic follow-up of its own", "overflow-summary-runs-alone",
        {"mode": 'followup', "cap": 1}),
    Bug("cap-admits-one-more", "the drop policy runs only once the follow-up queue holds more than `cap` "
        "messages, so a full queue takes one more", "enqueue-within-cap", {"mode": 'followup', "cap": 1}),
    Bug("follow-up-drain-unreported", "leaving the turn loop, the Agent takes its follow-up queue without "
        "getFollowUpMessages, so no poll reports the drain", "drains-reported", {"agent_follow_ups": 1}),
    Bug("finish-run-keeps-streaming", "finishRun never clears the bare Agent's streaming state, so the run never "
        "settles and waitForIdle never resolves", "run-settles", {"layer": "agent"}),
    Bug("echo-skips-transcript", "a steer batch Codex echoes as a userMessage is not written into the session "
        "transcript", "echo-in-transcript", {"runtime": "codex", "messages": 1}),
    Bug("continue-skip-sticks", "the run-start skip of a run AgentSession continued with drained steering is "
        "never cleared, so every later run starts without polling steering", "run-start-polls", {"mode": "steer"}),
    Bug("no-after-turn-poll", "after turn_end the loop goes on without polling steering, so a steer that arrived "
        "during the turn misses the next model call", "after-turn-polls"),
    Bug("settle-unreported", "the run settles without run_settled: waitForIdle's report of what the queues "
        "still hold never comes", "settle-reported", {"layer": "agent"}),
    Bug("steer-count-from-one", "the Codex turn's steer counter starts at 1, so its first turn/steer is numbered "
        "2", "steers-numbered", {"runtime": "codex", "messages": 1}),
    Bug("enqueue-keeps-window", "an enqueue does not restart the follow-up queue's quiet window, so a message "
        "that arrives after the window elapsed drains at once", "followup-waits-debounce", {"mode": 'followup'}),
)

DEFAULT_TIMING: Mapping[str, Any] = {
    "default": {"dist": "exponential", "mean": 0.01},
    "user.message": {"dist": "exponential", "mean": 4.0},
    "user.abort": {"dist": "exponential", "mean": 20.0},
    "model.respond": {"dist": "lognormal", "median": 3.0, "sigma": 0.5},
    "tool.finish": {"dist": "lognormal", "median": 1.5, "sigma": 1.0},
    "codex.boundary": {"dist": "lognormal", "median": 3.0, "sigma": 0.5},
}

READINGS = (
    Reading({"tool_execution": "sequential"}, "Agent toolExecution sequential: steering is polled before each launch"),
    Reading({"tool_execution": "sequential", "stop_after_turn": True},
            "sequential tools, and shouldStopAfterTurn answers true (a drained steer outranks it)"),
    Reading({"layer": "agent", "steering_mode": "all"},
            "the bare Agent (one Agent.prompt, nothing after), draining every steer at once"),
    Reading({"version": "2026.9.6", "mode": "followup", "abort": True, "agent_follow_ups": 1},
            "the newer build, whose aborted run puts drained messages back at the front of their queues"),
    Reading({"blocked_call": 0, "agent_follow_ups": 1, "end_listener_window": True},
            "a beforeToolCall preflight blocks a call, a message waits in Agent.followUp, and a steer may land "
            "while agent_end listeners run"),
    Reading({"tool_execution": "sequential", "blocked_call": 0, "agent_follow_ups": 1, "end_listener_window": True},
            "the same, with sequential tools"),
    Reading({"mode": "followup", "cap": 1}, "the follow-up queue, full at one message: overflow is summarised"),
    Reading({"mode": "followup", "follow_up_mode": "all", "debounce_ms": 0, "cap": 1, "drop": "old"},
            "the follow-up queue drained at once and whole, dropping the oldest message when full"),
    Reading({"mode": "followup", "cap": 1, "drop": "new"}, "a full follow-up queue refuses the new message"),
    Reading({"mode": "followup", "abort": True}, "the follow-up queue, and the user may abort (/stop) the run"),
    Reading({"mode": "collect", "routes": 2, "messages": 4}, "collect coalesces queued messages, per route"),
    Reading({"mode": "collect", "tool_execution": "sequential"}, "collect, with sequential tools"),
    Reading({"mode": "interrupt"}, "a new message aborts the active run and starts its own"),
    Reading({"mode": "interrupt", "tool_execution": "sequential"}, "interrupt, with sequential tools"),
    Reading({"runtime": "codex", "messages": 1}, "the native Codex app-server harness, one message batched in a "
            "quiet window (more than one meets the documented ordering defect the matrix records)"),
    Reading({"runtime": "codex", "messages": 1, "codex_debounce_ms": 0},
            "the Codex harness with no quiet window: each message goes out as its own turn/steer"),
    Reading({"runtime": "codex", "codex_turn_kind": "review"}, "a Codex review turn, which refuses steering"),
    Reading({"runtime": "codex", "codex_turn_kind": "compact"}, "a Codex compaction turn, which refuses steering"),
)
