"""OpenAI Codex's app-server (`codex app-server`, JSON-RPC over stdio): `turn/steer` into a running turn.
`SPEC` registers the model; `harness.conform` checks the pinned `@openai/codex` build against it."""

from steersim.core.registry import ModelSpec
from steersim.models.codex.model import CodexModel
from steersim.models.codex.spec import BUGS, PARAMS, READINGS

SPEC = ModelSpec(
    name="codex",
    doc="Codex app-server turn/steer: turns, steers with expectedTurnId, interrupts, the model's stream and "
        "exec_command, and where an accepted steer enters the thread",
    params=PARAMS,
    bugs=BUGS,
    readings=READINGS,
    factory=CodexModel,
)

__all__ = ["SPEC", "CodexModel"]
