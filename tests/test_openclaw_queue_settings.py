"""Queue mode resolution and `/queue` directives, as OpenClaw's gateway resolves them."""

from __future__ import annotations

import pytest

from steersim.models.openclaw import SPEC
from steersim.models.openclaw.queue_settings import (
    QueueDirective,
    QueueOptions,
    config_mode,
    parse_directive,
    parse_duration_ms,
    resolve_mode,
    resolve_options,
    session_mode,
)


@pytest.mark.parametrize(("alias", "mode"), [
    ("interrupts", "interrupt"), ("abort", "interrupt"), ("steering", "steer"), ("follow-ups", "followup"),
    ("followups", "followup"), ("coalesce", "collect"),
])
def test_aliases(alias, mode):
    assert resolve_mode(inline=alias) == mode
    assert SPEC.build({"mode": alias}).cfg.mode == mode


def test_retired_modes():
    assert config_mode("steer-backlog") is None
    assert resolve_mode(config="steer-backlog") == "steer"
    assert session_mode("queue") == session_mode("Queued") == "steer"
    assert session_mode("steer-backlog") == session_mode("steer+backlog") == session_mode("Steer_Backlog") == "followup"


def test_precedence():
    layers = {"session": "collect", "channel": "Slack", "by_channel": {"slack": "followup"}, "config": "interrupt"}
    assert resolve_mode(inline="interrupt", **layers) == "interrupt"
    assert resolve_mode(**layers) == "collect"
    assert resolve_mode(**{**layers, "session": None}) == "followup"
    assert resolve_mode(config="interrupt") == "interrupt"
    assert resolve_mode() == "steer"


def test_options_precedence():
    """No global debounce key: inline/session, then per channel, then the plugin default, then 500 ms;
    cap and drop from inline/session, then config, then 20 and summarize."""
    assert resolve_options() == QueueOptions(500, 20, "summarize")
    assert resolve_options(plugin_debounce_ms=700, channel="telegram", debounce_by_channel={"telegram": 1200},
                           cap=0, drop="newest") == QueueOptions(1200, 1, "new")
    assert resolve_options(plugin_debounce_ms=700) == QueueOptions(700, 20, "summarize")
    session = QueueDirective(debounce_ms=250, cap=3, drop="old")
    assert resolve_options(session=session, plugin_debounce_ms=700, cap=5, drop="new") == QueueOptions(250, 3, "old")
    assert resolve_options(inline=QueueDirective(cap=9), session=session).cap == 9


def test_directives():
    assert parse_directive("/queue collect debounce:0.5s cap:25 drop:summary") == QueueDirective(
        "collect", 500, 25, "summarize")
    assert parse_directive("/queue followup cap:0 drop:oldest") == QueueDirective("followup", drop="old")
    assert parse_directive("/queue cap:3.7 bogus drop:new") == QueueDirective(cap=3)
    assert parse_directive("/queue reset") == QueueDirective(reset=True)
    assert parse_directive("hello") is None
    assert parse_duration_ms("250") == 250 and parse_duration_ms("2m") == 120_000 and parse_duration_ms("x") is None
