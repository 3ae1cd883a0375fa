"""LangGraph server's double texting (`multitask_strategy`) on one thread."""

from models.langgraph.model import LangGraphModel
from models.langgraph.spec import SPEC

__all__ = ["SPEC", "LangGraphModel"]
