"""How the gateway resolves a session's queue mode and options (`queue/normalize.ts`,
`queue/settings.ts`, `queue/directive.ts`): aliases, retired modes, `/queue` directives and the
precedence inline > session > per channel > config > channel plugin > built-in `steer`."""

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
DROP_ALIASES = {"old": "old", "oldest": "old", "new": "new", "newest": "new", "summarize": "summarize",
                "summary": "summarize"}
RESET_WORDS = ("default", "reset", "clear")
BUILT_IN_MODE = "steer"
UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$")


def normalize_mode(text: str | None) -> str | None:
    """A mode name or alias, as the mode it means (None: not a mode)."""
    return MODE_ALIASES.get(text.strip().lower()) if text else None


def session_mode(stored: str | None) -> str | None:
    """A persisted session `queueMode`: retired `queue` meant steer, retired steer-backlog meant followup."""
    if stored in ("steer-backlog", "steer+backlog"):
        return "followup"
    if stored == "queue":
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
                 by_channel: dict[str, str] | None = None, config: str | None = None,
                 plugin: str | None = None) -> str:
    """The queue mode for one inbound message: inline `/queue`, the session override, the channel's
    configured mode, the global configured mode, the channel plugin's default, then `steer`."""
    channel_value = (by_channel or {}).get(channel or "")
    for candidate in (normalize_mode(inline), session_mode(session), config_mode(channel_value),
                      config_mode(config), normalize_mode(plugin)):
        if candidate:
            return candidate
    return BUILT_IN_MODE
