"""The conformance scenarios: where a queued message lands in a turn, with which priority, and where an
interrupt meets the queue.

A scenario is a list of harness steps, each named after the model action it makes happen: `start` (the
first message, which starts the first turn), `text`, `tool_use` and `tool_input` (the backend streams text,
the first half of a Bash tool_use, the rest of it: the CLI then runs the command), `end` (the text response
ends), `send` (a message of the given priority), `release` (the command ends), `interrupt` (with `cancel`: an
interrupt with `cancel_queued`), and `finish`
(answer every further model request with text until every message has been answered, then end stdin). A
step marked `hasty` does not wait for what it causes before the next step goes out: that is how a message
races the end of a turn.
"""

from __future__ import annotations

from dataclasses import dataclass

PRIORITIES = ("now", "next", "later", "default")


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

    def model_params(self) -> dict[str, object]:
        """The smallest model configuration that can take every step of this scenario."""
        sends = [step.arg for step in self.steps if step.kind == "send"]
        used = {"default", *sends}
        return {"messages": 1 + len(sends), "priorities": ",".join(p for p in PRIORITIES if p in used),
                "tool_calls": 1, "interrupts": sum(step.kind == "interrupt" for step in self.steps),
                "cancel_queued": any(step.kind == "interrupt" and step.arg == "cancel" for step in self.steps)}


def s(kind: str, arg: str = "", hasty: bool = False) -> Step:
    return Step(kind, arg, hasty)


START, FINISH = s("start"), s("finish")
# how the running turn gets to each place a message can land, and what lets it go on afterwards
PLACES: dict[str, tuple[Step, ...]] = {
    "text": (s("text"),),  # the model streams text
    "tool_use": (s("tool_use"),),  # the model streams a Bash tool_use block
    "tool": (s("tool_use"), s("tool_input")),  # the Bash command runs
    "ending": (s("text"), s("end", hasty=True)),  # the response ends while the message goes out
}
AFTER = {"tool_use": (s("tool_input"), s("release")), "tool": (s("release"),)}


def _send_at(place: str, priorities: tuple[str, ...], fast: bool = False) -> Scenario:
    name = f"{'+'.join(priorities)}@{place}"
    steps = (START, *PLACES[place], *(s("send", p) for p in priorities), *AFTER.get(place, ()), FINISH)
    return Scenario(name, steps, f"message(s) {', '.join(priorities)} while {place}: each is answered once, "
                    "joining the turn or in a turn of its own as its priority says", fast)


def _interrupt_at(place: str, priorities: tuple[str, ...], fast: bool = False, cancel: bool = False) -> Scenario:
    name = f"{'stop' if cancel else 'interrupt'}@{place}/after-{'+'.join(priorities)}"
    steps = (START, *PLACES[place], *(s("send", p) for p in priorities), s("interrupt", "cancel" if cancel else ""),
             FINISH)
    doc = ("an interrupt with cancel_queued after queued messages: the turn ends and the queued messages are "
           "cancelled, each reported cancelled and listed in the response" if cancel else
           "an interrupt after queued messages: the turn ends, the queued messages stay queued (still_queued) and "
           "are answered afterwards")
    return Scenario(name, steps, doc, fast)


def generate() -> tuple[Scenario, ...]:
    out = [_send_at(place, (p,), fast=(place, p) in (("tool", "next"), ("tool", "later"), ("text", "now")))
           for place in PLACES for p in PRIORITIES]
    out += [_send_at("tool", ("next", "later", "default")), _send_at("tool", ("later", "next")),
            _send_at("text", ("next", "next")), _send_at("text", ("later", "later")),
            _send_at("text", ("default", "next")), _send_at("text", ("next", "now")), _send_at("text", ("now", "now")),
            _send_at("tool", ("later", "now"))]
    out += [_interrupt_at("tool", ("next", "later"), fast=True), _interrupt_at("text", ("next",)),
            _interrupt_at("tool_use", ("later",)), _interrupt_at("tool", ("next", "later"), cancel=True)]
    joining = (START, *PLACES["tool"], s("send", "next"), s("release", hasty=True))
    out.append(Scenario("interrupt@joining/after-next", (*joining, s("interrupt"), FINISH),
                        "an interrupt as a next message joins the turn at the tool result: the message is "
                        "answered once, or reported cancelled before any request carried it"))
    out.append(Scenario("now@joining/after-next", (*joining, s("send", "now"), FINISH),
                        "a now message as a next message joins the turn at the tool result: the turn stops, the "
                        "next message is answered once or reported cancelled, the now message in a turn of its own"))
    return tuple(out)


SCENARIOS = generate()
NAMED = {scenario.name: scenario for scenario in SCENARIOS}
