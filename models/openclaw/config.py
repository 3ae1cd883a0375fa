"""The knobs of the OpenClaw model, with the defaults OpenClaw documents (spec section 12), and the
size of the scripted scenario (how many tool calls, inbound messages, routes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from models.openclaw.queue_settings import DROP_ALIASES, MODE_ALIASES, normalize_mode
from models.openclaw.versions import PRESET, REFERENCE_VERSION, SKIP_TEXTS, VERSIONS
from sim.core.registry import Param

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
          "take when they are `preset` (see models/openclaw/versions.py)", choices=tuple(VERSIONS)),
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
    Param("debounce_ms", 500, "messages.queue.debounceMs: quiet window before the follow-up queue drains",
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


@dataclass(frozen=True)
class Config:
    """Validated parameters plus the bug variant; one field per parameter of PARAMS."""

    mode: str
    runtime: str
    layer: str
    version: str
    restore_on_abort: bool
    skip_text: str
    tool_execution: str
    steering_mode: str
    follow_up_mode: str
    calls: int
    tool_turns: int
    messages: int
    routes: int
    blocked_call: int
    agent_follow_ups: int
    stop_after_turn: bool
    abort: bool
    compaction: bool
    end_listener_window: bool
    debounce_ms: int
    cap: int
    drop: str
    codex_debounce_ms: int
    codex_turn_kind: str
    codex_boundaries: int
    bug: str | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any], bug: str | None = None) -> Config:
        """Aliases resolve as OpenClaw resolves them (`coalesce` is collect, `oldest` is old)."""
        values = {p.name: params[p.name] for p in PARAMS}
        values["mode"] = normalize_mode(values["mode"])
        values["drop"] = DROP_ALIASES[values["drop"]]
        preset = VERSIONS[values["version"]]
        restore = values["restore_on_abort"]
        values["restore_on_abort"] = preset.restore_on_abort if restore == PRESET else restore == "on"
        skip = values["skip_text"]
        values["skip_text"] = SKIP_TEXTS[preset.skip_text if skip == PRESET else skip]
        return cls(**values, bug=bug)

    @property
    def codex(self) -> bool:
        return self.runtime == "codex"

    @property
    def session(self) -> bool:
        """The AgentSession layer sits between the gateway and the Agent (not for Codex turns)."""
        return self.layer == "session" and not self.codex


def route_of(item: str, routes: int) -> int:
    """Inbound message `mN` comes from route N mod routes, so routes alternate deterministically."""
    return int(item[1:]) % routes
