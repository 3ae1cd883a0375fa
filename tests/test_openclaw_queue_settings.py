"""Queue mode resolution and `/queue` directives, as OpenClaw's gateway resolves them."""

from __future__ import annotations

import pytest

from models.openclaw import SPEC
from models.openclaw.queue_settings import (
    QueueDirective,
    config_mode,
    parse_directive,
    parse_duration_ms,
    resolve_mode,
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
    assert session_mode("queue") == "steer"
    assert session_mode("steer-backlog") == session_mode("steer+backlog") == "followup"


def test_precedence():
    layers = {"session": "collect", "channel": "slack", "by_channel": {"slack": "followup"}, "config": "interrupt",
              "plugin": "followup"}
    assert resolve_mode(inline="interrupt", **layers) == "interrupt"
    assert resolve_mode(**layers) == "collect"
    assert resolve_mode(**{**layers, "session": None}) == "followup"
    assert resolve_mode(config="interrupt", plugin="collect") == "interrupt"
    assert resolve_mode(plugin="collect") == "collect"
    assert resolve_mode() == "steer"


def test_directives():
    assert parse_directive("/queue collect debounce:0.5s cap:25 drop:summary") == QueueDirective(
        "collect", 500, 25, "summarize")
    assert parse_directive("/queue followup cap:0 drop:oldest") == QueueDirective("followup", drop="old")
    assert parse_directive("/queue cap:3.7 bogus drop:new") == QueueDirective(cap=3)
    assert parse_directive("/queue reset") == QueueDirective(reset=True)
    assert parse_directive("hello") is None
    assert parse_duration_ms("250") == 250 and parse_duration_ms("2m") == 120_000 and parse_duration_ms("x") is None
