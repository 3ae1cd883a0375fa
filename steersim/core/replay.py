"""The fact monitors over facts that were recorded, not generated: what every judge of a recorded run
asks of them (a harness judging a real implementation, the cause of a counterexample in a trace).

The monitors see the facts exactly as the product feeds them while it steps (`steersim.core.product`): in
order, each fact to every monitor that watches it, in the monitors' order, and a monitor that raises
keeps the state it had and goes on. So a recorded run of the model itself is judged here as the
engines judged it, and a run of a real system is judged by the same rules.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from steersim.core.facts import Fact
from steersim.core.monitors import CORE_MONITORS, Monitor, MonitorViolation


class Breach(NamedTuple):
    """A monitor broken by a recorded fact (`position` is the index of the group of facts it was in:
    the event or step that emitted it), or by the state it ended in (`position` and `fact` are None)."""

    monitor: Monitor
    message: str
    position: int | None
    fact: Fact | None
    subjects: tuple[str, ...]


@dataclass(frozen=True)
class MonitorReplay:
    """`breaches`: every violation, in the order the monitors raised them; `final`: each monitor's
    state after the last fact, in the monitors' order."""

    monitors: tuple[Monitor, ...]
    breaches: tuple[Breach, ...]
    final: tuple[Hashable, ...]

    def first_breaches(self, ended: bool = True) -> list[Breach]:
        """Each monitor's first violation, in the order they were raised; then, if the run `ended` (the
        system could do nothing more), what each monitor never broken says of its last state. What
        follows a monitor's first violation depends on it, so a judge reports that one."""
        out: list[Breach] = []
        broken: set[str] = set()
        for breach in self.breaches:
            if breach.monitor.name not in broken:
                broken.add(breach.monitor.name)
                out.append(breach)
        if ended:
            for monitor, state in zip(self.monitors, self.final, strict=True):
                message = None if monitor.name in broken else monitor.at_end(state)
                if message:
                    out.append(Breach(monitor, message, None, None, monitor.open_subjects(state)))
        return out


def replay_monitors(recorded: Iterable[Iterable[Fact]],
                    monitors: Sequence[Monitor] = CORE_MONITORS) -> MonitorReplay:
    """Feed each group of recorded facts (one per event or step, in order) to the monitors."""
    monitors = tuple(monitors)
    states: list[Hashable] = [m.initial() for m in monitors]
    breaches: list[Breach] = []
    for position, facts in enumerate(recorded):
        for fact in facts:
            for index, monitor in enumerate(monitors):
                if fact.name not in monitor.watches:
                    continue
                try:
                    states[index] = monitor.step(states[index], fact)
                except MonitorViolation as broken:
                    breaches.append(Breach(monitor, str(broken), position, fact, broken.subjects))
    return MonitorReplay(monitors, tuple(breaches), tuple(states))
