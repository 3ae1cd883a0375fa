"""OpenAI Codex's app-server (`codex app-server`, JSON-RPC over stdio): `turn/steer` into a running turn."""

from models.codex.model import CodexModel
from models.codex.spec import SPEC

__all__ = ["SPEC", "CodexModel"]
