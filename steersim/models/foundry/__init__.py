"""Microsoft Foundry hosted agents: steerable multi-turn chains (`@multi_turn_task(steerable=True)`)
and the Responses host's `steerable_conversations`. `SPEC` registers the model; `harness.conform` checks the
real `azure-ai-agentserver-core` package against it."""

from steersim.core.registry import ModelSpec
from steersim.models.foundry.model import FoundryModel
from steersim.models.foundry.spec import BUGS, PARAMS, READINGS

SPEC = ModelSpec(
    name="foundry",
    doc="Foundry steerable chains: queued starts, cooperative cancel, If-Match, bounded queue, crash recovery",
    params=PARAMS,
    bugs=BUGS,
    readings=READINGS,
    factory=FoundryModel,
)

__all__ = ["SPEC", "FoundryModel"]
