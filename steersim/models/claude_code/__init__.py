"""Claude Code's message queue (`claude -p --input-format stream-json`): user messages sent while a turn
runs, their priorities `now`, `next` and `later`, interrupts and the Bash tool. `SPEC` registers the
model; `harness.conform` checks the pinned `@anthropic-ai/claude-code` build against it."""

from steersim.core.registry import ModelSpec
from steersim.models.claude_code.model import ClaudeCodeModel
from steersim.models.claude_code.spec import BUGS, PARAMS, READINGS

SPEC = ModelSpec(
    name="claude-code",
    doc="Claude Code's message queue: user messages with priority now/next/later, joining the running turn at "
        "a tool result or starting a turn of their own, interrupts, and the Bash tool",
    params=PARAMS,
    bugs=BUGS,
    readings=READINGS,
    factory=ClaudeCodeModel,
)

__all__ = ["SPEC", "ClaudeCodeModel"]
