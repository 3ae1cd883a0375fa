"""A steering queue that drops its oldest steer when full."""

from dataclasses import dataclass, replace

from steersim import Action, Always, Bug, Event, ModelBase, ModelSpec, Param, Reading, Sometimes

CHAIN = "chat"


@dataclass(frozen=True)
class State:
    sent: int = 0  # steers the user has sent
    queue: tuple[int, ...] = ()  # accepted steers not yet applied, oldest first
    turns: int = 0  # turns started
    phase: str = "idle"  # idle | calling | running | boundary
    mid_turn: bool = False  # some steer was applied at a boundary of a running turn


class DropOldest(ModelBase):
    """The user sends up to N steers into a queue of Q. An idle agent starts a turn with the queued
    steers; a turn makes a tool call, and at the boundary after it applies the steers that arrived
    meanwhile and calls again, or ends."""

    name = "drop-oldest"
    fair_actors = ("agent",)

    def init_states(self):
        return [State()]

    def actions(self, s):
        out = [Action("user", "user.steer", (s.sent + 1,))] if s.sent < self.params["N"] else []
        agent = {"idle": "agent.start" if s.queue else None, "calling": "agent.run_tool",
                 "running": "agent.collect", "boundary": "agent.apply" if s.queue else "agent.end"}[s.phase]
        return out + [Action("agent", agent)] if agent else out

    def step(self, s, a):
        turn, call = f"t{s.turns}", f"c{s.turns}"
        if a.kind == "user.steer":
            sid = f"s{a.args[0]}"
            events = [Event("user", "queue", "steer.submitted", {"id": sid, "target": CHAIN}),
                      Event("queue", "user", "steer.accepted", {"id": sid})]
            queue = (*s.queue, a.args[0])
            if len(queue) > self.params["Q"]:
                dropped, queue = queue[0], queue[1:]
                if self.bug != "silent-drop":
                    events.append(Event("queue", "user", "steer.failed", {"id": f"s{dropped}", "code": "dropped"}))
            return replace(s, sent=s.sent + 1, queue=queue), events
        if a.kind in ("agent.start", "agent.apply"):
            starting = a.kind == "agent.start"
            if starting:
                turn, call = f"t{s.turns + 1}", f"c{s.turns + 1}"
            events = [Event("agent", "model", "turn.started", {"turn": turn, "chain": CHAIN})] if starting else []
            for n in reversed(s.queue) if self.bug == "newest-first" else s.queue:
                events += [Event("queue", "agent", "steer.applied", {"id": f"s{n}", "turn": turn}),
                           Event("agent", "model", "history.appended", {"chain": CHAIN, "item": f"s{n}"})]
            events.append(Event("model", "agent", "tool.requested", {"call": call, "turn": turn}))
            return replace(s, queue=(), turns=s.turns + starting, phase="calling",
                           mid_turn=s.mid_turn or not starting), events
        if a.kind == "agent.run_tool":
            return replace(s, phase="running"), [Event("agent", "tool", "tool.started", {"call": call})]
        if a.kind == "agent.collect":
            return replace(s, phase="boundary"), [
                Event("tool", "agent", "tool.result", {"call": call, "synthetic": False})]
        return replace(s, phase="idle"), [Event("agent", "model", "turn.ended", {"turn": turn, "status": "done"})]

    def properties(self):
        return [Always("queue-bounded", state=lambda s: len(s.queue) <= self.params["Q"],
                       doc="the queue never holds more than Q steers"),
                Sometimes("steer-applied-mid-turn", state=lambda s: s.mid_turn,
                          doc="some steer is applied at a boundary of a running turn")]


SPEC = ModelSpec(
    name="drop-oldest",
    doc="a bounded steering queue that drops its oldest steer when full",
    params=(Param("N", 3, "steers the user sends", low=0, high=8), Param("Q", 2, "queue capacity", low=1, high=8)),
    bugs=(Bug("silent-drop", "the dropped steer is never reported as failed", "no-lost-steers", {"Q": 1}),
          Bug("newest-first", "queued steers are applied newest first", "ordered-history")),
    factory=DropOldest,
    readings=(Reading({"Q": 1}, "a queue of one, so that nearly every steer drops the one before it"),),
)
