"""The teaching model: the smallest honest steering system (see `model.py`)."""

from models.teaching.model import SPEC, TeachingModel, TeachingState

__all__ = ["SPEC", "TeachingModel", "TeachingState"]
