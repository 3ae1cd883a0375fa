"""The teaching model: the smallest honest steering system (see `model.py`)."""

from models.teaching.model import TeachingModel
from models.teaching.spec import BUGS, PARAMS
from models.teaching.state import TeachingState
from sim.core.registry import ModelSpec

SPEC = ModelSpec(
    name="teaching",
    doc="an agent with K tool calls per turn, at most P in flight, a steer queue of capacity Q and N steers",
    params=PARAMS,
    bugs=BUGS,
    factory=lambda p, bug: TeachingModel(p["K"], p["N"], p["Q"], p["P"], bug),
)

__all__ = ["SPEC", "TeachingModel", "TeachingState"]
