"""A model author's mistakes that raise nothing in the model's own code, caught where they are made: a state
that is not hashable, `actions()` returning something other than Actions, `step` returning a bare state
or events that are not Events, a step that is not deterministic or a state holding NaN. Left alone, each
surfaces deep in an engine (a visited set, a liveness re-execution) as an internal error that blames
steersim, or silently changes the counts. The audit steps the first `AUDIT_STATES` states a process meets
twice, so its cost is bounded and it runs on every engine (each goes through `Product`). Past them only
a `step` result of the wrong shape is still named (it fails to unpack, at no extra cost per step); a
state that first turns unhashable, or a step that first turns non-deterministic, deeper than the audited
states is not."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from steersim.core.model import Action, Event, ModelBase, model_error, state_text
from steersim.errors import ModelError

AUDIT_STATES = 300  # states per process whose every action is stepped twice and whose results are inspected


def defined_at(model: ModelBase, hook: str) -> str:
    """` (file:line, in hook)` of the model's own method `hook` (of its class, for an attribute such as
    `fair_actors`), so that a mistake found in what it returned points at the author's code, never
    steersim's; "" when the source cannot be found."""
    owner = type(getattr(model, "inner", model))
    found = inspect.getattr_static(owner, hook, None)
    method = found if inspect.isfunction(found) else None
    try:
        target = inspect.unwrap(method) if method is not None else owner
        _, line = inspect.getsourcelines(target)
        return f" ({inspect.getsourcefile(target)}:{line}, in {hook if method is not None else owner.__name__})"
    except (TypeError, OSError):
        return ""


def unhashable(value: Any) -> str | None:
    """Why `value` cannot be a state (it must be hashable and equal to itself), or None if it can."""
    try:
        hash(value)
    except TypeError as broken:
        return f"is not hashable ({broken}); use a frozen dataclass with tuple fields instead of lists or dicts"
    try:
        if value != value:
            return "is not equal to itself (a NaN in it?), so it is never found again among the states seen"
    except Exception as broken:  # an __eq__ of the model's that raises
        return f"cannot be compared ({type(broken).__name__}: {broken})"
    return None


class Auditor:
    """Checks what a model's `init_states`, `actions` and `step` return, naming the method at fault."""

    def __init__(self, model: ModelBase) -> None:
        self.model = model
        self.left = AUDIT_STATES

    def mistake(self, hook: str, problem: str, state: Any = None, action: Any = None) -> ModelError:
        label = action.label() if isinstance(action, Action) else None
        return ModelError(f"{hook}() {problem}{defined_at(self.model, hook)}", label,
                          None if state is None else state_text(state))

    def declarations(self, properties: Sequence[Any], kinds: tuple[type, ...]) -> None:
        """The model's declared actors, action kinds and properties are of the types the engines read."""
        for name in ("fair_actors", "action_kinds"):
            value = getattr(self.model, name)
            if isinstance(value, str) or not all(isinstance(item, str) for item in value):
                raise ModelError(f"{name} is {_short(value)}; it is a tuple of strings, as in "
                                 f"{name} = ('agent',){defined_at(self.model, name)}")
        for prop in properties:
            if not isinstance(prop, kinds):
                raise self.mistake("properties", f"returned {_short(prop)}, which is not an Always, Sometimes "
                                                 "or Eventually")

    def init_states(self, states: Any) -> list[Any]:
        try:
            states = list(states)
        except TypeError:
            raise self.mistake("init_states", f"returned {_short(states)}, which is not a list of states") from None
        if not states:
            raise self.mistake("init_states", "returned no states, so there is nothing to check; return at least one")
        for state in states:
            problem = unhashable(state)
            if problem is not None:
                raise self.mistake("init_states", f"returned a state that {problem}", state)
        return states

    def actions(self, state: Any, actions: Any) -> Sequence[Action]:
        if actions is None or isinstance(actions, (str, bytes)) or not hasattr(actions, "__iter__"):
            raise self.mistake("actions", f"returned {_short(actions)}, not a list of Actions", state)
        try:
            actions = list(actions)
        except Exception as broken:  # a generator of the model's that raises
            raise model_error(broken, state, what="actions()") from broken
        for action in actions:
            if not isinstance(action, Action):
                raise self.mistake("actions", f"returned {_short(action)}, not an Action(actor, kind, args)", state)
            try:
                hash(action)
            except TypeError:
                raise self.mistake("actions", f"returned {action!r}, whose args are not hashable (use tuples)",
                                   state) from None
        return actions

    def taken(self, state: Any, action: Action, taken: Any, events: bool = True) -> tuple[Any, tuple[Any, ...]]:
        """The `(next, events)` that `step` returned (`(next, facts)` from `step_facts`: not `events`),
        checked."""
        hook = "step" if events else "step_facts"
        if not (isinstance(taken, tuple) and len(taken) == 2):
            raise self.mistake(hook, f"returned {_short(taken)}; it returns (next_state, "
                                     f"{'events' if events else 'facts'}), or None for a no-op", state, action)
        nxt, sent = taken
        problem = unhashable(nxt)
        if problem is not None:
            raise self.mistake(hook, f"returned a next state that {problem}: {_short(nxt)}", state, action)
        try:
            sent = tuple(sent)
        except TypeError:
            raise self.mistake(hook, f"returned {_short(sent)}, not a list of {'Events' if events else 'Facts'}",
                               state, action) from None
        for event in sent if events else ():
            if not isinstance(event, Event):
                raise self.mistake(hook, f"returned {_short(event)} among its events, not an Event", state, action)
        return nxt, sent

    def again(self, state: Any, action: Action, first: Any, step: Callable[[Any, Action], Any],
              events: bool = True) -> None:
        """Check what `step` returned for `action` at `state` (`first`, None for a no-op) and step it a
        second time: the two must be equal, so a step that reads a clock, a random number or a mutable
        global is named."""
        hook = "step" if events else "step_facts"
        try:
            second = step(state, action)
        except Exception as broken:
            raise model_error(broken, state, action) from broken
        if first is None or second is None:
            if first is not second:
                raise self.mistake(hook, f"is not deterministic: stepped twice it returned {_short(first)} "
                                         f"then {_short(second)}", state, action)
            return
        first, second = self.taken(state, action, first, events), self.taken(state, action, second, events)
        if first != second:
            raise self.mistake(hook, f"is not deterministic: {_difference(first, second)}", state, action)

    def audit(self, state: Any, actions: Callable[[Any], Any], step: Callable[[Any, Action], Any]) -> None:
        """Step every action of `state` twice (`again`), for an engine that takes its steps from a batch
        of the model's (`successor_facts`) rather than from `step`."""
        self.left -= 1
        try:
            offered = actions(state)
        except Exception as broken:
            raise model_error(broken, state, what="actions()") from broken
        for action in self.actions(state, offered):
            try:
                first = step(state, action)
            except Exception as broken:
                raise model_error(broken, state, action) from broken
            self.again(state, action, first, step)


    def agrees(self, hook: str, state: Any, batch: Sequence[tuple[Action, Any, Sequence[Any]]],
               step: Callable[[Any, Action], Any], to_facts: Callable[[Event], Sequence[Any]],
               step_facts: Callable[[Any, Action], Any] | None = None) -> None:
        """The `(action, next, facts)` steps a shortcut gave for `state` agree with `step`, as the hooks'
        contract says: `successor_facts(state)` one per action of `actions(state)`, in that order, and each
        of its or `step_facts`'s with `step`'s next state and the facts of `step`'s events (`step_facts` is
        compared too where the model offers both). A shortcut that drifts from `step` would otherwise change
        what a check judges, with nothing to show for it."""
        if hook == "successor_facts":
            try:
                offered = self.model.actions(state)
            except Exception as broken:
                raise model_error(broken, state, what="actions()") from broken
            if [entry[0] for entry in batch] != list(offered):
                raise self.mistake(hook, f"returned the actions {_short([e[0] for e in batch])}, not those of "
                                         f"actions() in its order, {_short(list(offered))}", state)
        for action, nxt, facts in batch:
            taken = step(state, action)
            expected = (None, ()) if taken is None else (taken[0], tuple(f for e in taken[1] for f in to_facts(e)))
            got = (nxt, self._facts(hook, facts, state, action))
            if got != expected:
                raise self.mistake(hook, f"disagrees with step(): {_disagreement(got, expected)}", state, action)
            if step_facts is not None:
                fast = step_facts(state, action)
                got = (None, ()) if fast is None else (fast[0], self._facts("step_facts", fast[1], state, action))
                if got != expected:
                    raise self.mistake("step_facts", f"disagrees with step(): {_disagreement(got, expected)}",
                                       state, action)

    def _facts(self, hook: str, facts: Any, state: Any, action: Action) -> tuple[Any, ...]:
        try:
            return tuple(facts)
        except TypeError:
            raise self.mistake(hook, f"returned {_short(facts)}, not a list of Facts", state, action) from None


def _disagreement(got: tuple[Any, Any], expected: tuple[Any, Any]) -> str:
    """Which half of a `(next, facts)` differs from `step`'s, in words."""
    if got[0] != expected[0]:
        return f"next state {_short(got[0])}, where step() gives {_short(expected[0])}"
    return f"facts {_short(got[1])}, where step()'s events give {_short(expected[1])}"


def _difference(first: tuple[Any, tuple[Event, ...]], second: tuple[Any, tuple[Event, ...]]) -> str:
    """What differed between two results of one step, in words: the next states, or the first event
    that differs."""
    if first[0] != second[0]:
        what, one, other = "the next states", first[0], second[0]
    else:
        at = next((k for k, (a, b) in enumerate(zip(first[1], second[1], strict=False)) if a != b),
                  min(len(first[1]), len(second[1])))
        what = f"event {at + 1}"
        one, other = [(sent[at] if at < len(sent) else "no event") for sent in (first[1], second[1])]
    if _short(one) == _short(other):
        return (f"stepped twice, {what} look alike but are not equal, {_short(one)} (a NaN in them? NaN never "
                "equals itself, so such a state is never found again among the states seen)")
    return (f"stepped twice, {what} differ, {_short(one)} then {_short(other)} (a clock, random number or "
            "shared mutable value?)")


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

