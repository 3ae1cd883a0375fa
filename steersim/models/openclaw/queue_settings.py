"""How the gateway resolves a session's queue mode and options (`queue/normalize.ts`,
`queue/settings.ts`, `queue/directive.ts`): aliases, retired modes, `/queue` directives and the
precedence of docs/concepts/queue.md: for the mode inline > session > `byChannel` > `mode` > built-in
`steer` (a channel plugin supplies a debounce default, never a mode); for the options inline > session
> `debounceMsByChannel` > plugin debounce > built-in 500 ms, and for cap and drop inline > session >
config > built-in. `steersim conform openclaw` checks these against the build's own
`resolveQueueSettingsCore` (`harness/gateway_conform.py`)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MODE_ALIASES = {
    "interrupt": "interrupt", "interrupts": "interrupt", "abort": "interrupt",
    "steer": "steer", "steering": "steer",
    "followup": "followup", "follow-ups": "followup", "followups": "followup",
    "collect": "collect", "coalesce": "collect",
}
BUILT_IN_DEBOUNCE_MS, BUILT_IN_CAP, BUILT_IN_DROP = 500, 20, "summarize"
DROP_ALIASES = {"old": "old", "oldest": "old", "new": "new", "newest": "new", "summarize": "summarize",
                "summary": "summarize"}
RESET_WORDS = ("default", "reset", "clear")
BUILT_IN_MODE = "steer"
UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$")


def normalize_mode(text: str | None) -> str | None:
    """A mode name or alias, as the mode it means (None: not a mode)."""
    return MODE_ALIASES.get(text.strip().lower()) if text else None


def normalize_drop(text: str | None) -> str | None:
    """A drop policy name or alias (None: not a policy)."""
    return DROP_ALIASES.get(text.strip().lower()) if text else None


def session_mode(stored: str | None) -> str | None:
    """A persisted session `queueMode` (`normalizePersistedQueueMode`): retired `queue`/`queued` meant
    steer, retired steer-backlog (`steer+backlog`, `steer_backlog`) meant followup; case is ignored."""
    retired = (stored or "").strip().lower()
    if retired in ("steer-backlog", "steer+backlog", "steer_backlog"):
        return "followup"
    if retired in ("queue", "queued"):
        return "steer"
    return normalize_mode(stored)


def config_mode(value: str | None) -> str | None:
    """`messages.queue.mode` (or a per-channel value): a stale `steer-backlog` is ignored."""
    return None if value == "steer-backlog" else normalize_mode(value)


def parse_duration_ms(text: str) -> int | None:
    """`parseDurationMs` with the default unit ms: `500`, `0.5s`, `2m`."""
    match = DURATION.match(text.strip().lower())
    if not match:
        return None
    return round(float(match.group(1)) * UNIT_MS[match.group(2) or "ms"])


@dataclass(frozen=True)
class QueueDirective:
    """A `/queue` directive: a mode and options, or a reset of the session override."""

    mode: str | None = None
    debounce_ms: int | None = None
    cap: int | None = None
    drop: str | None = None
    reset: bool = False


def parse_directive(text: str) -> QueueDirective | None:
    """`/queue collect debounce:0.5s cap:25 drop:summarize`; parsing stops at the first unrecognised token,
    and a cap below 1 is ignored. Not a directive: None."""
    tokens = text.split()
    if not tokens or tokens[0].lower() != "/queue":
        return None
    mode = debounce = cap = drop = None
    reset = False
    for token in tokens[1:]:
        key, _, value = token.partition(":")
        lowered = key.lower()
        if not value and lowered in RESET_WORDS:
            reset = True
        elif not value and normalize_mode(lowered):
            mode = normalize_mode(lowered)
        elif lowered == "debounce" and parse_duration_ms(value) is not None:
            debounce = parse_duration_ms(value)
        elif lowered == "cap" and _number(value) is not None:
            floored = math.floor(_number(value) or 0)
            cap = floored if floored >= 1 else cap
        elif lowered == "drop" and value.lower() in DROP_ALIASES:
            drop = DROP_ALIASES[value.lower()]
        else:
            break
    return QueueDirective(mode, debounce, cap, drop, reset)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def resolve_mode(*, inline: str | None = None, session: str | None = None, channel: str | None = None,
                 by_channel: dict[str, str] | None = None, config: str | None = None) -> str:
    """The queue mode for one inbound message: inline `/queue`, the session override, the channel's
    configured mode, the global configured mode, then `steer`."""
    channel_value = (by_channel or {}).get((channel or "").lower())
    for candidate in (normalize_mode(inline), session_mode(session), config_mode(channel_value),
                      config_mode(config)):
        if candidate:
            return candidate
    return BUILT_IN_MODE


@dataclass(frozen=True)
class QueueOptions:
    """The options a follow-up queue runs with once every layer has had its say."""

    debounce_ms: float
    cap: int
    drop: str


def resolve_options(*, inline: QueueDirective | None = None, session: QueueDirective | None = None,
                    channel: str | None = None, debounce_by_channel: dict[str, float] | None = None,
                    plugin_debounce_ms: float | None = None, cap: float | None = None,
                    drop: str | None = None) -> QueueOptions:
    """The follow-up queue's options. The debounce has no global config key: a per-channel value, then the
    channel plugin's default, then the built-in 500 ms. A cap is floored and at least 1."""
    given = [d for d in (inline, session) if d is not None]
    channel_debounce = (debounce_by_channel or {}).get((channel or "").lower())
    debounce = next((d.debounce_ms for d in given if d.debounce_ms is not None),
                    channel_debounce if channel_debounce is not None else
                    plugin_debounce_ms if plugin_debounce_ms is not None else BUILT_IN_DEBOUNCE_MS)
    chosen_cap = next((d.cap for d in given if d.cap is not None), cap if cap is not None else BUILT_IN_CAP)
    chosen_drop = next((d.drop for d in given if d.drop is not None), normalize_drop(drop) or BUILT_IN_DROP)
    return QueueOptions(max(0, debounce), max(1, math.floor(chosen_cap)), chosen_drop)
