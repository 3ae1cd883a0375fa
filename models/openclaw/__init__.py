"""OpenClaw: steering into an active run, follow-up queues, collect, interrupt, and the Codex harness.

`SPEC` is the model registered as `openclaw`; `steersim conform openclaw` (see `conform.py`) checks a
real installed OpenClaw build against it.
"""

from models.openclaw.config import PARAMS, Config
from models.openclaw.model import OpenClawModel
from sim.core.registry import ModelSpec

BUGS = {
    "no-checkpoint-b": "a sequential call launches without polling steering right before the launch",
    "skip-without-result": "calls skipped by steering get no end event and no result message",
    "partial-parallel-recall": "the parallel launch checkpoint recalls only the first ready call",
    "steer-after-model-call": "the drained steer is appended after the next model call instead of before it",
    "collect-across-routes": "collect coalesces queued messages of different routes into one run",
    "all-in-one-at-a-time": "the steering queue drains every message even in one-at-a-time mode",
    "cancel-running-tool": "a steer that arrives while parallel tools run cancels them",
    "stop-outranks-steer": "shouldStopAfterTurn is consulted even when the tool batch drained a steer",
    "no-final-recheck": "the end of the run does not poll steering again after the follow-up drain",
    "no-debounce": "the follow-up queue drains without waiting for the debounce window",
    "skip-overwrites-preflight": "a parallel steering skip replaces the result of a call its preflight blocked",
    "overlapping-runs": "an interrupt starts its replacement run while the run it aborts still has a turn open",
    "double-end-event": "the parallel commit ends a call recalled by steering a second time before its result",
    "results-out-of-order": "a parallel batch appends each result as its tool finishes, in completion order",
    "wrong-skip-text": "the parallel launch checkpoint ends recalled calls with the abort text, not the skip text",
    "overflow-across-routes": "the overflow summary rides with the next drained prompt, whatever its route",
}

BUG_CATCHERS = {
    "no-checkpoint-b": "steer-before-launch",
    "skip-without-result": "paired-tool-results",
    "partial-parallel-recall": "no-launch-after-drain",
    "steer-after-model-call": "steer-before-next-call",
    "collect-across-routes": "collect-respects-routes",
    "all-in-one-at-a-time": "one-at-a-time-drain",
    "cancel-running-tool": "no-cancel-started",
    "stop-outranks-steer": "steer-outranks-stop",
    "no-final-recheck": "no-lost-steers",
    "no-debounce": "followup-waits-debounce",
    "skip-overwrites-preflight": "truthful-preflight",
    "overlapping-runs": "one-active-turn",
    "double-end-event": "one-start-one-end",
    "results-out-of-order": "results-in-source-order",
    "wrong-skip-text": "skip-result-exact",
    "overflow-across-routes": "collect-respects-routes",
}

BUG_PARAMS: dict[str, dict[str, object]] = {
    "no-checkpoint-b": {"tool_execution": "sequential"},
    "collect-across-routes": {"mode": "collect", "routes": 2},
    "stop-outranks-steer": {"stop_after_turn": True, "tool_execution": "sequential"},
    "no-final-recheck": {"layer": "agent"},
    "overflow-across-routes": {"mode": "collect", "routes": 2, "cap": 1},
    "no-debounce": {"mode": "followup"},
    "skip-overwrites-preflight": {"blocked_call": 0},
    "overlapping-runs": {"mode": "interrupt"},
}
"""The parameters under which each bug variant shows (the rest keep their defaults)."""

SPEC = ModelSpec(
    name="openclaw",
    doc="OpenClaw: gateway queue modes, Agent Core steering checkpoints and the Codex turn/steer harness",
    params=PARAMS,
    bugs=BUGS,
    factory=lambda params, bug: OpenClawModel(Config.from_params(params, bug)),
    bug_catchers=BUG_CATCHERS,
    bug_params=BUG_PARAMS,
)

__all__ = ["BUGS", "BUG_CATCHERS", "BUG_PARAMS", "SPEC", "Config", "OpenClawModel"]
