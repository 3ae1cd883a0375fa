"""The teaching model's state and the names of its phases, chain and turn.

They live apart from `model.py` because two modules build and read these states: the model and its
vector kernel (`vector.py`), which the model hands out from `vector_kernel()`.
"""

from __future__ import annotations

from typing import NamedTuple

MODEL, LAUNCH, CLEAR, IDLE = "model", "launch", "clear", "idle"
CHAIN = "conversation"
TURN = "turn"


class TeachingState(NamedTuple):
    """A named tuple, so that the explorer hashes and compares states in C. `i` next call to launch,
    `c` next result to collect, `nl` calls launched, `intr` this turn was cut short by a steer, `pend`
    steers read into the history but not yet removed from the queue, `sent` and `rej` steers sent and
    rejected, `q` the queue, `hist` delivered steer ids, `nres` results per call, `calls` launched calls
    still running, `ress` finished calls whose result is not yet collected."""

    phase: str
    i: int
    c: int
    nl: int
    intr: bool
    pend: int
    sent: int
    rej: int
    q: tuple[int, ...]
    hist: tuple[int, ...]
    nres: tuple[int, ...]
    calls: tuple[bool, ...]
    ress: tuple[bool, ...]


def steer_id(n: int) -> str:
    return f"s{n}"


def call_id(j: int) -> str:
    return f"call_{j}"
