"""Mid-turn steering over the OpenAI Responses API WebSocket (`response.steer`): the `openai-ws` model,
its wire vocabulary, invariants, client obligations and a model-driven server for real clients."""

from steersim.core.registry import ModelSpec
from steersim.models.openai_ws.model import OpenAIWsModel
from steersim.models.openai_ws.spec import BUGS, PARAMS, READINGS
from steersim.models.openai_ws.state import WsState

SPEC = ModelSpec(
    name="openai-ws",
    doc="mid-turn steering over the OpenAI Responses API WebSocket (response.steer): lanes, responses, hosted and "
        "client-owned tools, steer queues, automatic and explicit successors, drops and reconnects",
    params=PARAMS,
    bugs=BUGS,
    readings=READINGS,
    factory=OpenAIWsModel,
)

__all__ = ["SPEC", "OpenAIWsModel", "WsState"]
