"""The teaching model's own properties, built from its parameters: the steering rules its design
promises (a pending steer suppresses a launch; a boundary that delivered steers calls the model again),
the steering situations a check must reach to prove anything, and one guard per behaviour the
parameters enable (the vector kernel judges the same predicates)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.core.model import Always, Property, Sometimes
from steersim.models.teaching.state import CLEAR, IDLE, LAUNCH, MODEL


def properties(params: Mapping[str, Any], bug: str | None = None) -> list[Property]:
    return [
        Always(
            "steer-before-launch",
            step=lambda s, a, t: not (a.kind == "agent.launch" and s.q), kinds=("agent.launch",),
            doc="a steer pending at a launch checkpoint suppresses that launch",
        ),
        Always(
            "delivered-steers-called",
            step=lambda s, a, t: not (a.kind == "agent.clear" and s.pend and t.phase != MODEL),
            kinds=("agent.clear",),
            doc="a boundary that delivered steers makes another model call with them",
        ),
        Sometimes(
            "steer-skips-a-call",
            state=lambda s: s.intr and s.phase == LAUNCH,
            doc="some turn is cut short by a steer (a steer lands while calls are unlaunched): seen while the "
                "turn runs, where the skip leaves it",
        ),
        Sometimes(
            "steer-delivered-mid-run",
            state=lambda s: s.phase == CLEAR and s.pend > 0,
            doc="some steer is delivered at a batch boundary of a running turn",
        ),
        Always(
            "results-recorded",
            step=lambda s, a, t: a.kind != "agent.deliver" or all(n == 1 for n in s.nres), kinds=("agent.deliver",),
            doc="a batch boundary comes once every call of the turn has exactly one result, collected or skipped "
                "(the `results` a trace shows)",
        ),
        *behaviour_guards(params),
        Always(
            "within-parameters",
            state=lambda s: s.sent <= params["N"],
            doc="the user sends at most N steers: the check explores the environment its parameters name",
        ),
    ]


def behaviour_guards(params: Mapping[str, Any]) -> list[Property]:
    """One guard per behaviour the parameters enable, besides the steering guards above: a check whose
    parameters allow it but which never reaches it proved nothing about it."""
    K, N, Q, P = params["K"], params["N"], params["Q"], params["P"]
    guards: list[Property] = [
        Sometimes("turn-completes", state=lambda s: s.phase == CLEAR and not s.intr,
                  doc="some turn runs every call and ends completed"),
    ]
    if N > 0:
        guards.append(Sometimes("steer-wakes-idle-agent", state=lambda s: s.phase == IDLE and bool(s.q),
                                doc="a steer arrives while the agent is idle and starts a new run"))
    if N > Q:
        guards.append(Sometimes("steer-rejected", state=lambda s: s.rej > 0,
                                doc="a steer finds the queue full and is rejected"))
    if P > 1 and K > 1:
        guards.append(Sometimes("calls-in-parallel", state=lambda s: s.nl - s.c > 1,
                                doc="two calls are in flight at once (launched, not yet collected: the agent's "
                                    "own view, which a tool finishing does not change, so the reduction keeps it)"))
    return guards
