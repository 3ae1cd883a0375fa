"""A diagram cut down to some of its lanes, for a slide that tells one part of the story.

A message between a kept lane and a dropped one has nowhere honest to go (an arrow into the margin would
look like a message from outside the system), so it is left out and the caption says how many were, and
from which lanes; messages among dropped lanes and their turns and tool calls go with them. Steer tracks
and violation bands belong to no lane and stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fnmatch import fnmatchcase

from steersim.draw.layout import Layout
from steersim.errors import UsageError


def kept_lanes(lanes: Sequence[str], wanted: Sequence[str]) -> list[str]:
    """The lanes that `wanted` names (exact names or shell patterns such as `tool:*`), in drawing order.
    A name that matches no lane is a mistake, refused with the lanes there are."""
    for name in wanted:
        if not any(fnmatchcase(lane, name) for lane in lanes):
            raise UsageError(f"lanes: no lane {name!r} in this diagram; its lanes are {', '.join(lanes)}")
    return [lane for lane in lanes if any(fnmatchcase(lane, name) for name in wanted)]


def keep_lanes(plan: Layout, wanted: Sequence[str]) -> Layout:
    """`plan` with only the lanes `wanted` names; the caption notes the messages to or from the others."""
    kept = kept_lanes(plan.lanes, wanted)
    inside = set(kept)
    dropped = [lane for lane in plan.lanes if lane not in inside]
    if not dropped:
        return plan
    crossing = [a for a in plan.arrows if (a.source in inside) != (a.target in inside)]
    note = f"lanes {', '.join(kept)} only"
    if crossing:
        note += (f"; {len(crossing)} message{'s' if len(crossing) != 1 else ''} to or from "
                 f"{', '.join(lane for lane in dropped if any(lane in (a.source, a.target) for a in crossing))} "
                 "not drawn")
    return replace(plan, title=f"{plan.title}  ·  {note}", lanes=kept,
                   arrows=[a for a in plan.arrows if a.source in inside and a.target in inside],
                   spans=[s for s in plan.spans if s.lane in inside])
