"""OpenClaw: steering into an active run, follow-up queues, collect, interrupt, and the Codex harness.

`SPEC` is the model registered as `openclaw`; `steersim conform openclaw` (see `harness/conform.py`) checks a
real installed OpenClaw build against it.
"""

from steersim.core.registry import ModelSpec
from steersim.models.openclaw.config import Config
from steersim.models.openclaw.model import OpenClawModel
from steersim.models.openclaw.spec import BUGS, PARAMS, READINGS

SPEC = ModelSpec(
    name="openclaw",
    doc="OpenClaw: gateway queue modes, Agent Core steering checkpoints and the Codex turn/steer harness",
    params=PARAMS,
    bugs=BUGS,
    readings=READINGS,
    factory=lambda params, bug: OpenClawModel(Config.from_params(params, bug)),
)

__all__ = ["SPEC", "Config", "OpenClawModel"]
