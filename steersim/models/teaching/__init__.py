"""The teaching model: the smallest honest steering system (see `model.py`)."""

from steersim.core.registry import ModelSpec
from steersim.models.teaching.model import TeachingModel
from steersim.models.teaching.spec import BUGS, PARAMS, READINGS
from steersim.models.teaching.state import TeachingState

SPEC = ModelSpec(
    name="teaching",
    doc="an agent with K tool calls per turn, at most P in flight, a steer queue of capacity Q and N steers",
    params=PARAMS,
    bugs=BUGS,
    readings=READINGS,
    factory=lambda p, bug: TeachingModel(p["K"], p["N"], p["Q"], p["P"], bug),
)

__all__ = ["SPEC", "TeachingModel", "TeachingState"]
