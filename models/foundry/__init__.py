"""Microsoft Foundry hosted agents: steerable multi-turn chains (`@multi_turn_task(steerable=True)`)
and the Responses host's `steerable_conversations`. `SPEC` registers the model; `conform` checks the
real `azure-ai-agentserver-core` package against it."""

from models.foundry.spec import SPEC

__all__ = ["SPEC"]
