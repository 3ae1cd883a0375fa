"""Pydantic AI's pending-message queue: `enqueue` with `asap` and `when_idle` into agent runs."""

from steersim.core.registry import ModelSpec
from steersim.models.pydantic_ai.model import PydanticAIModel
from steersim.models.pydantic_ai.spec import BUGS, PARAMS, READINGS

SPEC = ModelSpec(
    name="pydantic-ai",
    doc="Pydantic AI's pending-message queue: asap and when_idle enqueues, dequeue and cancellation of agent runs",
    params=PARAMS,
    bugs=BUGS,
    readings=READINGS,
    factory=PydanticAIModel,
)

__all__ = ["SPEC", "PydanticAIModel"]
