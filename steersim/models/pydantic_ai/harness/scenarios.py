"""Scenarios: messages enqueued into an agent run at points of its life, the ways a user runs an agent,
cancellations, and a run that continues a cancelled one.

A point names a moment the harness controls, as the recorder sees it: `model` (the model is answering the
first request: its function awaits), `stream` (the final response is being streamed, between two of its
chunks), `tool` (the first tool call runs: it awaits), `tools` (every tool call of the response is
running), `returned` (the first tool call has returned, the others still run), `final` (the final response
has been recorded; the run goes on to its end), `after` (the run has ended).

An arrival enqueues one message at a point, with a priority, from the run's own task (`loop`:
`AgentRun.enqueue` under `iter`, else the run's `RunContext.enqueue`), from a thread started and joined
there (`thread`), or through the first tool call's own `RunContext` (`tool`: its content goes next to that
call's result); arrivals at the same point are back to back, and an arrival at a point a cancelled run never
passed comes after the runs. A scenario may `dequeue` its first
message, or change its priority (`promote`: `set_enqueue_priority` to the other one), at the point of its
second arrival, and may cancel the run at a point, after which a second run continues the cancelled run's
history (`message_history`).
"""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("run", "iter", "run_stream", "run_stream_events")
POINTS = ("model", "stream", "tool", "tools", "returned", "final", "after")
PRIORITIES = ("asap", "when_idle")


@dataclass(frozen=True)
class Arrival:
    point: str
    priority: str
    via: str = "loop"

    def label(self) -> str:
        return f"{self.priority}@{self.point}{'' if self.via == 'loop' else '+' + self.via}"


@dataclass(frozen=True)
class Scenario:
    mode: str
    arrivals: tuple[Arrival, ...]
    calls: int = 1
    cancel: str = ""  # the point the run is cancelled at ("": not cancelled)
    dequeue: bool = False
    promote: bool = False

    @property
    def name(self) -> str:
        parts = [self.mode, f"calls={self.calls}", *(a.label() for a in self.arrivals)]
        if self.dequeue:
            parts.append("dequeue")
        if self.promote:
            parts.append("promote")
        if self.cancel:
            parts.append(f"cancel@{self.cancel}")
        return ",".join(parts)

    @property
    def runs(self) -> int:
        return 2 if self.cancel else 1


def parse(name: str) -> Scenario:
    """A scenario from its name (`iter,calls=2,asap@tool,when_idle@model+thread,dequeue,cancel@tools`)."""
    parts = name.split(",")
    if not parts or parts[0] not in MODES:
        raise ValueError(f"{name!r} must start with a mode: {', '.join(MODES)}")
    calls, cancel, dequeue, promote, arrivals = 1, "", False, False, []
    for part in parts[1:]:
        if part.startswith("calls="):
            calls = int(part.removeprefix("calls="))
            if not 0 <= calls <= 3:
                raise ValueError(f"{part!r}: calls are 0 to 3")
        elif part == "dequeue":
            dequeue = True
        elif part == "promote":
            promote = True
        elif part.startswith("cancel@"):
            cancel = part.removeprefix("cancel@")
            if cancel not in POINTS[:-1]:
                raise ValueError(f"{part!r}: a run is cancelled at one of {', '.join(POINTS[:-1])}")
        else:
            priority, _, rest = part.partition("@")
            point, _, via = rest.partition("+")
            if priority not in PRIORITIES or point not in POINTS or via not in ("", "thread", "tool"):
                raise ValueError(f"{part!r} is not PRIORITY@POINT[+thread|+tool]")
            if via == "tool" and point not in ("tool", "tools", "returned"):
                raise ValueError(f"{part!r}: a tool's own context enqueues while tools run (tool, tools, returned)")
            arrivals.append(Arrival(point, priority, via or "loop"))
    if not arrivals:
        raise ValueError(f"{name!r} enqueues nothing")
    if (dequeue or promote) and len(arrivals) < 2:
        raise ValueError(f"{name!r}: dequeue and promote need two arrivals (they act on the first at the second's "
                         "point)")
    if dequeue and promote:
        raise ValueError(f"{name!r}: dequeue or promote, not both")
    scenario = Scenario(parts[0], tuple(arrivals), calls, cancel, dequeue, promote)
    if not all(applies(a.point, scenario.mode, calls) for a in arrivals) or (cancel and not applies(
            cancel, scenario.mode, calls)):
        raise ValueError(f"{name!r} names a point a {scenario.mode} run with {calls} calls does not pass")
    return scenario


def applies(point: str, mode: str, calls: int) -> bool:
    """Whether a run in `mode` whose first response makes `calls` calls passes through `point`."""
    if point in ("tool", "tools", "returned"):
        return calls >= (1 if point == "tool" else 2)
    if point == "stream":
        return mode in ("run_stream", "run_stream_events")
    return True


def plan(name: str) -> list[Scenario]:
    """The fast plan: each priority at each point and each mode with one and two tool calls; back to back,
    from a thread, a dequeue, and cancellations at each point followed by a continuing run. The full plan
    adds three calls, both priorities mixed at every pair of points, and threads everywhere."""
    out: list[Scenario] = []
    call_counts = (1, 2) if name == "fast" else (0, 1, 2, 3)
    for mode in MODES:
        for calls in call_counts:
            for point in POINTS:
                if not applies(point, mode, calls):
                    continue
                for priority in PRIORITIES:
                    out.append(Scenario(mode, (Arrival(point, priority),), calls))
                    if name == "full":
                        out.append(Scenario(mode, (Arrival(point, priority, "thread"),), calls))
        out.append(Scenario(mode, (Arrival("tool", "asap"), Arrival("tool", "when_idle"), Arrival("tool", "asap")),
                            2))
        out.append(Scenario(mode, (Arrival("model", "asap", "thread"), Arrival("tools", "when_idle", "thread")), 2))
        out.append(Scenario(mode, (Arrival("model", "when_idle"), Arrival("tool", "asap")), 2, dequeue=True))
        out.append(Scenario(mode, (Arrival("model", "when_idle"), Arrival("tools", "asap")), 2, promote=True))
        out.append(Scenario(mode, (Arrival("model", "asap"), Arrival("tool", "when_idle")), 2, promote=True))
        for point in ("tool", "tools", "returned"):
            for priority in PRIORITIES:
                out.append(Scenario(mode, (Arrival(point, priority, "tool"), Arrival(point, "asap")), 2))
        for cancel in POINTS[:-1]:
            if applies(cancel, mode, 2):
                out.append(Scenario(mode, (Arrival("model", "when_idle"), Arrival(cancel, "asap")), 2, cancel))
        if name == "full":
            points = [p for p in POINTS if applies(p, mode, 2)]
            for first in points:
                for second in points:
                    if POINTS.index(second) >= POINTS.index(first):
                        out.append(Scenario(mode, (Arrival(first, "when_idle"), Arrival(second, "asap")), 2))
                        out.append(Scenario(mode, (Arrival(first, "asap"), Arrival(second, "when_idle")), 2))
    return out
