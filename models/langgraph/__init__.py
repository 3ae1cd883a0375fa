"""LangGraph server's double texting (`multitask_strategy`) on one thread."""

from models.langgraph.model import LangGraphModel
from models.langgraph.spec import BUGS, PARAMS
from sim.core.registry import ModelSpec

SPEC = ModelSpec(
    name="langgraph",
    doc="LangGraph's double texting: reject, enqueue, interrupt and rollback of runs on one thread",
    params=PARAMS,
    bugs=BUGS,
    factory=LangGraphModel,
)

__all__ = ["SPEC", "LangGraphModel"]
