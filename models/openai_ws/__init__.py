"""Mid-turn steering over the OpenAI Responses API WebSocket (`response.steer`): the `openai-ws` model,
its wire vocabulary, invariants, client obligations and a model-driven server for real clients."""

from models.openai_ws.model import OpenAIWsModel
from models.openai_ws.spec import SPEC
from models.openai_ws.state import WsState

__all__ = ["SPEC", "OpenAIWsModel", "WsState"]
