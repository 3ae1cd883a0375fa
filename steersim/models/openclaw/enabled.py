"""Which action kinds a configuration cannot fire, and what enables each.

OpenClaw's knobs pick between exclusive ways of working: the Codex runtime or the Agent core, sequential
or parallel tool execution, the gateway's queue mode. No one configuration can fire every action kind,
so a check names the kinds its parameters leave out, with the setting that brings each in, instead of
calling them unfired. Every entry follows from a guard of `OpenClawModel.actions` or of the step that
enters the phase; a check fails (`--require-coverage`) if one fires anyway.
"""

from __future__ import annotations

from steersim.models.openclaw.config import Config

AGENT_CORE_KINDS = ("tool.finish", "run.start", "model.respond", "turn.end", "turn.poll", "turn.next",
                    "run.follow_up_poll", "run.final_poll", "session.post_run")
SEQUENTIAL_KINDS = ("tool.checkpoint_a", "tool.launch", "tool.checkpoint_c")
PARALLEL_KINDS = ("tool.start", "tool.prepare", "tool.launch_batch", "tool.launch_call", "tool.commit")
CODEX_KINDS = ("codex.turn_start", "codex.boundary", "timer.codex_flush")


def kinds_not_enabled(cfg: Config) -> dict[str, str]:
    """Each kind `cfg` cannot fire, with the parameters that enable it."""
    off: dict[str, str] = {}
    if cfg.codex:
        for kind in (*AGENT_CORE_KINDS, *SEQUENTIAL_KINDS, *PARALLEL_KINDS, "run.compact", "run.finish"):
            off[kind] = "runtime=agent-core"
        off["user.abort"] = "runtime=agent-core with abort=true"
    else:
        for kind in CODEX_KINDS:
            off[kind] = "runtime=codex"
        tools = SEQUENTIAL_KINDS if cfg.tool_execution == "parallel" else PARALLEL_KINDS
        for kind in tools:
            off[kind] = f"tool_execution={'sequential' if tools is SEQUENTIAL_KINDS else 'parallel'}"
        if not cfg.abort:
            off["user.abort"] = "abort=true"
        if not cfg.compaction:
            off["run.compact"] = "compaction=true"
        if not cfg.end_listener_window:
            off["run.finish"] = "end_listener_window=true"
        if not cfg.session:
            off["session.post_run"] = "layer=session"
    if cfg.codex and (not cfg.codex_debounces or cfg.mode != "steer"):
        off["timer.codex_flush"] = "runtime=codex with mode=steer and codex_debounce_ms above 0"
    if cfg.mode != "interrupt":
        off["gateway.replace"] = "mode=interrupt"
    # Only a message that cannot steer reaches the follow-up queue: a queueing mode, or a steer refused
    # while the run compacts, winds down after an abort, or by a Codex turn.
    if cfg.mode in ("steer", "interrupt") and not (cfg.abort or cfg.compaction or cfg.codex):
        for kind in ("timer.debounce", "gateway.drain"):
            off[kind] = "mode=followup or mode=collect; in steer mode also abort, compaction or runtime=codex"
    if not cfg.debounces:  # no quiet window, so no timer to elapse: the queue drains at once
        off.setdefault("timer.debounce", "debounce_ms above 0")
    return off
