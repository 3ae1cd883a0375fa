"""The conformance scenarios: where a steer lands in a turn, and what the client does next.

A scenario is a list of harness steps, each named after the model action it makes happen (`turn_start`,
`text_delta`, `steer`, ...), plus `finish` (answer every model request with text until the turn
completes) and `written` (wait for the last steer's `userMessage` item). A step marked `hasty` does not
wait for what it causes before the next step goes out: that is how a steer races the end of a turn, or an
interrupt races the steer. The scenarios are generated from the places a steer can land and the points at
which an interrupt can meet an accepted steer on its way to the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from steersim.models.codex import protocol as P


@dataclass(frozen=True)
class Step:
    kind: str
    arg: str = ""
    hasty: bool = False

    def label(self) -> str:
        return f"{self.kind}{'(' + self.arg + ')' if self.arg else ''}{'!' if self.hasty else ''}"


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]
    doc: str
    fast: bool = False

    def count(self, kind: str) -> int:
        return sum(step.kind == kind for step in self.steps)

    def model_params(self) -> dict[str, object]:
        """The smallest model configuration that can take every step of this scenario."""
        return {"turns": max(1, self.count("turn_start")), "steers": self.count("steer"),
                "tool_calls": max(self.count("tool_call"), 1), "interrupts": self.count("interrupt"),
                "bad_steers": self.count("bad_steer") > 0}


def s(kind: str, arg: str = "", hasty: bool = False) -> Step:
    return Step(kind, arg, hasty)


START, FINISH, READ = s("turn_start"), s("finish"), s("read")
# how the active turn gets to each place a steer can land
PLACES: dict[str, tuple[Step, ...]] = {
    "text": (s("text_delta"),),  # the agent message streams
    "said": (s("text_delta"), s("text_done")),  # the message is complete, the response is not
    "tool": (s("tool_call"),),  # exec_command runs
}
# what releases a tool call in the prefix before the turn can finish
RELEASE = {"tool": (s("tool_finish"),)}


def _steer_at(place: str, steers: int) -> Scenario:
    name = f"steer@{place}" if steers == 1 else f"steer-x{steers}@{place}"
    steps = (START, *PLACES[place], *(s("steer") for _ in range(steers)), *RELEASE.get(place, ()), FINISH, READ)
    return Scenario(name, steps, f"{steers} steer(s) while {place}: each must be written and reach the next request",
                    fast=steers == 1 and place in ("text", "tool"))


def _interrupt_at(place: str, point: str) -> Scenario:
    """An interrupt after a steer was `accepted` (its reply), `written` (its userMessage completed) or `sent`
    (the model request carrying it arrived)."""
    if point == "accepted":
        middle = (s("steer", hasty=True), s("interrupt"))
    elif point == "written":
        middle = (s("steer", hasty=True), *((s("tool_finish", hasty=True),) if place == "tool" else ()),
                  s("written"), s("interrupt"))
    else:
        middle = (s("steer"), *RELEASE.get(place, ()), s("interrupt"))
    tail = (s("tool_finish"),) if place == "tool" and point == "accepted" else ()  # the command ran on
    steps = (START, *PLACES[place], *middle, *tail, START, FINISH, READ)
    return Scenario(f"interrupt@{place}/{point}", steps,
                    f"turn/interrupt after a steer at {place} was {point}: the steer must be in the thread and reach "
                    "the model exactly once, or the client must learn that it did not",
                    fast=(place, point) == ("tool", "accepted"))


def generate() -> tuple[Scenario, ...]:
    out = [_steer_at(place, 1) for place in PLACES]
    out += [_steer_at(place, 2) for place in ("text", "tool")]
    out.append(Scenario("steer@ending", (START, s("text_delta"), s("text_done"), s("complete", hasty=True), s("steer"),
                                         FINISH, READ),
                        "a steer racing the end of the turn: accepted and carried, or refused no-active-turn"))
    out.append(Scenario("steer@ended", (START, s("text_delta"), s("text_done"), s("complete"), s("steer"), READ),
                        "a steer after turn/completed is refused: no active turn"))
    out.append(Scenario("malformed-steers", (START, FINISH, START, s("text_delta"), s("bad_steer", P.STALE),
                                             s("bad_steer", P.BOGUS), s("bad_steer", "empty"), FINISH, READ),
                        "stale and bogus expectedTurnId and empty input are refused, the turn goes on", fast=True))
    for place in ("text", "tool"):
        out.append(Scenario(f"start-while-active@{place}", (START, *PLACES[place], START, *RELEASE.get(place, ()),
                                                            FINISH, READ),
                            "turn/start while a turn is active adds its input to that turn"))
    out += [_interrupt_at(place, point) for place in PLACES for point in ("accepted", "written", "sent")]
    out.append(Scenario("interrupt@text/no-steer", (START, s("text_delta"), s("interrupt"), START, FINISH, READ),
                        "an interrupt while the agent message streams, with no steer: its item must complete"))
    return tuple(out)


SCENARIOS = generate()
NAMED = {scenario.name: scenario for scenario in SCENARIOS}
