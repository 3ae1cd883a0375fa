"""The root causes found in Claude Code 2.1.332's message queue, in its own vocabulary, each with the
documented contract it breaks and the standalone script that reproduces it (`repro/`, exit 1 while it
reproduces).

A cause is keyed by what explains the recorded runs (a bug variant of the model, or a check); the harness
reports one without an entry here under its own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPRO_DIR = Path(__file__).resolve().parent / "repro"


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    explanation: str
    contract: str  # what Claude Code's own documentation says, quoted
    repro: str  # file name under REPRO_DIR


CAUSES: dict[str, Cause] = {}
