"""The OpenClaw model's validated configuration: one field per parameter of `spec.PARAMS`, aliases
resolved as OpenClaw resolves them, and the version preset applied."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from steersim.models.openclaw.queue_settings import DROP_ALIASES, normalize_mode
from steersim.models.openclaw.spec import PARAMS
from steersim.models.openclaw.versions import PRESET, SKIP_TEXTS, VERSIONS


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

    # cached: the step handlers ask these on every transition
    @cached_property
    def codex(self) -> bool:
        return self.runtime == "codex"

    @cached_property
    def debounces(self) -> bool:
        """The follow-up queue has a quiet window: any positive `debounce_ms` (its length is the simulator's
        timing, `timer.debounce`; to the transitions only whether there is one matters)."""
        return self.debounce_ms > 0

    @cached_property
    def codex_debounces(self) -> bool:
        """The Codex steering queue has a quiet window (`codex_debounce_ms` above 0); 0 sends each message
        at once."""
        return self.codex_debounce_ms > 0

    @cached_property
    def session(self) -> bool:
        """The AgentSession layer sits between the gateway and the Agent (not for Codex turns)."""
        return self.layer == "session" and not self.codex


def route_of(item: str, routes: int) -> int:
    """Inbound message `mN` comes from route N mod routes, so routes alternate deterministically."""
    return int(item[1:]) % routes
