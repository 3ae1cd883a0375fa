"""The teaching model's parameters, its seeded bug variants (each with the property that catches it)
and its default timing: steers every few seconds, model calls of about three, tools of one and a half
with a long tail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.core.registry import Bug, Param, Reading

PARAMS = (
    Param("K", 3, "tool calls per turn", low=1, high=15),
    Param("N", 3, "steers the user sends", low=0, high=15),
    Param("Q", 2, "steer queue capacity (a steer that finds it full is rejected)", low=1, high=7),
    Param("P", 3, "calls in flight at most (1: sequential, K: parallel)", low=1, high=15),
)

BUGS = (
    Bug("lost-at-boundary", "a steer that arrives between reading the queue into the history and clearing it is lost",
        "no-lost-steers"),
    Bug("no-skip-result", "calls skipped because of a pending steer get no result", "results-recorded"),
    Bug("launch-after-steer", "the launch does not check the queue, so calls launch with a steer pending",
        "steer-before-launch"),
    Bug("completed-turn-reported-steered", "a turn whose calls all ran ends 'steered' when steers were delivered at "
        "its boundary", "status-tells-steered"),
    Bug("turn-left-open", "a turn that delivered steers is not ended before the next model call starts a turn",
        "one-active-turn"),
    Bug("steer-id-reused-after-rejection", "steers are numbered by the steers accepted so far, so the steer sent "
        "after a rejected one takes the rejected one's id", "steers-as-sent", {"Q": 1}),
)

DEFAULT_TIMING: Mapping[str, Any] = {
    "default": {"dist": "exponential", "mean": 0.2},
    "user.steer": {"dist": "exponential", "mean": 3.0},
    "agent.model_call": {"dist": "lognormal", "median": 3.0, "sigma": 0.5},
    "tool.finish": {"dist": "lognormal", "median": 1.5, "sigma": 1.0},
}

READINGS = (
    Reading({"P": 1}, "calls run one at a time (a sequential tool runner), so a steer can skip calls not yet begun"),
    Reading({"Q": 1}, "a queue of one: the second steer of a turn finds it full and is rejected"),
)
