"""LangGraph server's double texting (`multitask_strategy`) on one thread."""

from steersim.core.registry import ModelSpec
from steersim.models.langgraph.model import LangGraphModel
from steersim.models.langgraph.spec import BUGS, PARAMS, READINGS

SPEC = ModelSpec(
    name="langgraph",
    doc="LangGraph's double texting: reject, enqueue, interrupt and rollback of runs on one thread",
    params=PARAMS,
    bugs=BUGS,
    readings=READINGS,
    factory=LangGraphModel,
)

__all__ = ["SPEC", "LangGraphModel"]
