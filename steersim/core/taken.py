"""The events of the steps a model took last, from one state, for its step properties to read.

A search takes every step of a state (`successor_facts`) and judges each right after, so a step
property that reads a step's events finds them built a moment before, by the step itself: a model
that keeps them here hands them over instead of observing the step again. What a search asks of a
model is its facts alone, so the events stay the model's business, and the engine builds none.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from steersim.core.model import Action, Event


class StepsTaken:
    """Per action, the events of the steps taken from the state stepped last. It holds that state, so
    no other state can take its identity while its steps are kept."""

    __slots__ = ("events", "state")

    def __init__(self) -> None:
        self.state: Hashable | None = None
        self.events: dict[Action, Sequence[Event]] = {}

    def of(self, state: Hashable) -> dict[Action, Sequence[Event]]:
        """The events kept of the steps of `state`: those taken since it became the state stepped last
        (a state stepped for the first time starts with none)."""
        if self.state is not state:
            self.state, self.events = state, {}
        return self.events

    def events_of(self, state: Hashable, action: Action, observe: Callable[..., Sequence[Event]],
                  *args: object) -> Sequence[Event]:
        """The events of the step (state, action): those kept, else `observe(state, action, *args)`'s,
        kept for the next property that asks."""
        kept = self.of(state)
        events = kept.get(action)
        if events is None:
            events = kept[action] = observe(state, action, *args)
        return events
