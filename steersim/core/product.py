"""The product of a model with the fact monitors: the one system both engines run.

A product state is `(model_state, monitor_states)`. Stepping it runs the model, maps the native events
to facts, feeds the facts to every monitor and judges the model's own safety properties. The explorer
and the simulator both step through here, so they see exactly the same transitions, violations and
verdicts: a simulated trace is a path of the explored graph by construction.

`step` gives a whole transition, with its native events, for traces and counterexamples; `moves` gives
what a search needs of every step of a state, once per state: the target and the violations; `search`
looks each target up in the explorer's visited set in the same pass, and hands back only the steps that
reach a new state or break a property. It asks the model for facts without native events where the
model offers that (`ModelBase.successor_facts` for every step of a state in one call,
`ModelBase.step_facts` for one) and no step property reads events, steps each monitor once per (monitor
state, fact) pair (`steersim.core.monitors.StepMemo`, which the vector engine reads too) and remembers the
whole monitor vector's step per (monitor states, facts), so that a step whose facts met the same monitor
states before costs one lookup; step properties get the transition's events, so no property has to step
the model again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

from steersim.core.facts import Fact, FactError, fact_problem
from steersim.core.mistakes import Auditor, defined_at
from steersim.core.model import (
    Action,
    AdaptedModel,
    Always,
    Event,
    Eventually,
    Model,
    ModelBase,
    Property,
    Sometimes,
    as_model_base,
    model_error,
)
from steersim.core.monitors import CORE_MONITORS, MEMO_LIMIT, Monitor, StepMemo
from steersim.errors import ModelError

PState = tuple[Hashable, tuple]
_tuple = tuple.__new__  # builds a named tuple from its fields in C, as the hot path does once per step
ADMITTED_LIMIT = 100_000  # facts remembered as checked; past it the memo starts again
EVENTED_LIMIT = 4096  # (kind, event names) pairs remembered with the event properties they concern
_UNSTEPPED = object()  # what `step` returned, before it returned
SETTLED_LIMIT = 100_000  # monitor states remembered with the liveness bits of the monitors (`liveness_bits`)


class MonitorStates(tuple):
    """The monitor part of a product state: a tuple that computes its hash once, and of which a process
    holds one object per value. A search hashes every state it reaches, and the monitors' open
    obligations are often the larger part of a state, while the distinct monitor vectors are few; and it
    compares every state it meets again with the one it keeps, monitor part too, which for one object
    is an identity check where two equal objects would be compared field by field (two steps can reach
    one vector from different ones, and a state that crossed from another worker arrives as a copy).
    Equal to, and hashed like, the plain tuple of the same states; pickled as one, without the hash
    (which depends on the process's hash seed), and made the one object of its value again on arrival."""

    hash: int

    def __new__(cls, states: Iterable[Hashable]) -> MonitorStates:
        self = tuple.__new__(cls, states)
        self.hash = tuple.__hash__(self)
        held = _ONE_OF_EACH.get(self)
        if held is not None:
            return held
        if len(_ONE_OF_EACH) >= SETTLED_LIMIT:  # past it, a value may have two objects: slower, never wrong
            _ONE_OF_EACH.clear()
        _ONE_OF_EACH[self] = self
        return self

    def __hash__(self) -> int:
        return self.hash

    def __reduce__(self) -> tuple[Any, tuple[tuple, ...]]:
        return (MonitorStates, (tuple(self),))


_ONE_OF_EACH: dict[MonitorStates, MonitorStates] = {}  # the object of each monitor vector made in this process


class Violation(NamedTuple):
    """A property broken by a step, or by a state in which nothing more can happen."""

    property: str
    message: str


class Transition(NamedTuple):
    """One step of the product: named tuples, because both engines make one per transition."""

    action: Action
    target: PState
    events: tuple[Event, ...]
    facts: tuple[Fact, ...]
    violations: tuple[Violation, ...]


class Move(NamedTuple):
    """What a search needs of one step: the action's position in `actions()`, the action, the product
    state reached and the properties the step breaks."""

    position: int
    action: Action
    target: PState
    violations: tuple[Violation, ...]


@dataclass(frozen=True)
class PropertyInfo:
    """A row of the verdict table: a property's name, kind and one line of meaning."""

    name: str
    kind: str
    doc: str


class Product:
    """A model composed with the core monitors (and any extra fact monitors the model declares). Every
    call into model code goes through here and is guarded: an exception there, or a fact outside the
    vocabulary, becomes a `ModelError` naming the action and the state (the engines add the path)."""

    def __init__(self, model: Model | ModelBase, monitors: Sequence[Monitor] = CORE_MONITORS) -> None:
        self.model = model = as_model_base(model)
        self._auditor = Auditor(model)
        try:
            extra, own = tuple(model.monitors()), tuple(model.properties())
        except Exception as broken:
            raise model_error(broken, None, what="properties() or monitors()") from broken
        self._auditor.declarations(own, (Always, Sometimes, Eventually))
        self.monitors = tuple(monitors) + extra
        props: Sequence[Property] = tuple(_guarded(p) for p in own)
        self.state_props = tuple(p for p in props if isinstance(p, Always) and p.state is not None)
        self.step_props = tuple(p for p in props if isinstance(p, Always) and p.step is not None)
        self.sometimes = tuple(p for p in props if isinstance(p, Sometimes))
        self.eventually = tuple(p for p in props if isinstance(p, Eventually))
        self.liveness = tuple(_on_model_state(p) for p in self.eventually) + tuple(
            Eventually(f"{m.name}.eventually", goal=_settled(i, m), trigger=_unsettled(i, m),
                       doc=f"eventually: {m.doc}")
            for i, m in enumerate(self.monitors)
            if type(m).settled is not Monitor.settled
        )
        # per monitor states, the bits of the monitors' liveness properties that are unsettled (`liveness_bits`)
        self._settled_monitors = tuple((len(self.eventually) + k, i, m) for k, (i, m) in enumerate(
            (i, m) for i, m in enumerate(self.monitors) if type(m).settled is not Monitor.settled))
        self._unsettled: dict[tuple, int] = {}
        # the model's own `actions` where the adapter would only pass the call on: it runs for every state
        self._actions = model.inner.actions if type(model) is AdaptedModel else model.actions
        self.fair_patterns = tuple(model.fair_actors)
        self._fair_cache: dict[str, str | None] = {}
        self._admitted: set[Fact] = set()
        self._routes: dict[str, tuple[int, ...]] = {}
        for index, monitor in enumerate(self.monitors):
            for name in sorted(monitor.watches):
                self._routes[name] = (*self._routes.get(name, ()), index)
        self.monitor_steps = tuple(StepMemo(m) for m in self.monitors)
        self._followed: dict[tuple[tuple, tuple[Fact, ...]], tuple[tuple, tuple[Violation, ...]]] = {}
        # the hot path judges the model's predicates unwrapped, converting what they raise as `_guarded` does
        raw = [p for p in own if isinstance(p, Always)]
        self._step_props = tuple(p for p in raw if p.step is not None)
        self._check_kinds(model)
        self._state_judges = tuple((p.name, p.state, p.doc or f"{p.name} does not hold")
                                   for p in raw if p.state is not None)
        self.state_predicates = tuple(judge for _, judge, _ in self._state_judges)
        # each sometimes-property with its predicate unwrapped, for a search that judges every new state
        self.sometimes_predicates = {p.name: p.state for p in own if isinstance(p, Sometimes)}
        # per action kind met, the step properties that judge its steps (`_judges_of`), and per kind and
        # names of the events sent, the event properties that judge such a step (`_evented_of`)
        self._judges: dict[str, tuple[tuple, tuple | None] | tuple[()]] = {}
        self._evented: dict[tuple[str, tuple[str, ...]], tuple] = {}
        wants_events = any(p.with_events for p in self._step_props)
        self._step_facts = None if wants_events else _standing(model, "step_facts")
        self._successor_facts = None if wants_events else _standing(model, "successor_facts")
        names = [info.name for info in self.property_infos()]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ModelError(f"model {model.name!r} declares property names twice: {', '.join(duplicates)}; "
                             "give each property a name of its own (the core monitors' names are taken)"
                             f"{defined_at(model, 'properties')}")

    def liveness_bits(self, pstate: PState) -> tuple[int, int]:
        """Over `liveness`: bit k of the first set when goal k does not hold in `pstate`, of the second
        when trigger k holds (an obligation without a trigger starts in the initial states, which the
        search marks). A search asks it of every state; the monitors' goals depend on their own states
        alone, of which a search meets few, so their bits are remembered per monitor states."""
        state, mstates = pstate
        unmet = self._unsettled.get(mstates)
        if unmet is None:
            unmet = self._unsettled_bits(mstates)
        trig = unmet  # a monitor's obligation: triggered exactly where it is unsettled
        for bit, prop in enumerate(self.eventually):
            if not prop.goal(state):
                unmet |= 1 << bit
            if prop.trigger is not None and prop.trigger(state):
                trig |= 1 << bit
        return unmet, trig

    def _unsettled_bits(self, mstates: tuple) -> int:
        if len(self._unsettled) >= SETTLED_LIMIT:
            self._unsettled.clear()
        bits = self._unsettled[mstates] = sum(1 << bit for bit, i, monitor in self._settled_monitors
                                              if not monitor.settled(mstates[i]))
        return bits

    def property_infos(self) -> list[PropertyInfo]:
        infos = [PropertyInfo(m.name, "always", m.doc) for m in self.monitors]
        infos += [PropertyInfo(p.name, p.kind, p.doc) for p in self.state_props + self.step_props]
        infos += [PropertyInfo(p.name, p.kind, p.doc) for p in self.sometimes]
        infos += [PropertyInfo(p.name, p.kind, p.doc) for p in self.liveness]
        return infos

    def init_states(self) -> list[PState]:
        initial = MonitorStates(m.initial() for m in self.monitors)
        try:
            states = self.model.init_states()
        except Exception as broken:
            raise model_error(broken, None, what="init_states()") from broken
        return [(s, initial) for s in self._auditor.init_states(states)]

    def state_violations(self, pstate: PState) -> tuple[Violation, ...]:
        """The state properties `pstate` breaks: all judged in one pass first, and only a state that breaks
        one (or raises) judged again, property by property, to name what it broke."""
        state = pstate[0]
        try:
            for judge in self.state_predicates:
                if not judge(state):
                    break
            else:
                return ()
        except Exception:
            pass
        return tuple(self._state_broken(state))

    def _check_kinds(self, model: ModelBase) -> None:
        declared = set(model.action_kinds)
        for prop in self._step_props:
            unknown = [k for k in prop.kinds or () if declared and k not in declared]
            if unknown:
                raise ModelError(f"property {prop.name!r} names action kinds the model {model.name!r} does not "
                                 f"declare: {', '.join(unknown)}; its action_kinds are {', '.join(sorted(declared))}")

    def _judges_of(self, kind: str) -> tuple[tuple, tuple | None] | tuple[()]:
        """The step properties that judge a step of `kind`: the predicates that take no events and those
        that take them, each in the properties' order, or None for the latter when a property that names
        events may judge it too (then the events sent say which do: `_evented_of`); () when none may."""
        props = self._props_of(kind)
        routed = any(p.events is not None and not p.judges(kind, ()) for p in self._step_props)
        evented = None if routed else tuple(p.step for p in props if p.with_events)
        judges = self._judges[kind] = (tuple(p.step for p in props if not p.with_events),
                                       evented) if props or routed else ()
        return judges

    def _evented_of(self, kind: str, names: tuple[str, ...]) -> tuple:
        """The event predicates that judge a step of `kind` sending events named `names`, in the properties'
        order (the steps of a check send few distinct sequences of names, so this is remembered)."""
        if len(self._evented) >= EVENTED_LIMIT:
            self._evented.clear()
        judges = self._evented[kind, names] = tuple(p.step for p in self._props_of(kind, names) if p.with_events)
        return judges

    def _props_of(self, kind: str, names: Collection[str] = ()) -> list[Always]:
        return [p for p in self._step_props if p.judges(kind, names)]

    def _step_broken(self, state: Hashable, action: Action, nxt: Hashable, events: tuple[Event, ...]
                     ) -> list[Violation]:
        found = []
        name = None
        try:
            for prop in self._props_of(action.kind, [event.name for event in events]):
                name, judge = prop.name, prop.step
                if not (judge(state, action, nxt, events) if prop.with_events else judge(state, action, nxt)):
                    found.append(Violation(name, prop.doc or f"{name} broken by {action.label()}"))
        except Exception as broken:
            raise model_error(broken, state, action, what=f"property {name!r}") from broken
        return found

    def _state_broken(self, state: Hashable) -> list[Violation]:
        found = []
        name = None
        try:
            for name, judge, message in self._state_judges:
                if not judge(state):
                    found.append(Violation(name, message))
        except Exception as broken:
            raise model_error(broken, state, None, what=f"property {name!r}") from broken
        return found

    def end_violations(self, pstate: PState) -> tuple[Violation, ...]:
        """What the monitors say of a state in which the system can do nothing more."""
        found = []
        for monitor, mstate in zip(self.monitors, pstate[1], strict=True):
            message = monitor.at_end(mstate)
            if message:
                found.append(Violation(monitor.name, message))
        return tuple(found)

    def actions(self, pstate: PState) -> Sequence[Action]:
        return self._actions_of(pstate[0])

    def _actions_of(self, state: Hashable) -> Sequence[Action]:
        try:
            actions = self._actions(state)
        except Exception as broken:
            raise model_error(broken, state, what="actions()") from broken
        return self._auditor.actions(state, actions) if self._auditor.left > 0 else actions

    def step(self, pstate: PState, action: Action) -> Transition | None:
        """The whole transition, native events included."""
        out = self._steps(pstate, (action,), whole=True)
        return out[0] if out else None

    def next_states(self, state: Hashable) -> list[Hashable]:
        """The model states the model's steps from `state` reach, in the order of its actions (no-ops left
        out): the model's part of a search alone, with no monitor or property in it, for a caller that
        looks at how states change (`steersim.checking.ownership`)."""
        return [nxt for _, nxt, _ in self._all_successors(state)[0] if nxt is not None]

    def moves(self, pstate: PState) -> list[Move]:
        """Every step enabled in `pstate`, as a search needs it (no native events where the model can
        give its facts without them)."""
        return self._steps(pstate, None, whole=False)

    def search(self, pstate: PState, seen: dict[Hashable, int], fired: dict[str, int], *,
               key: Callable[[PState], Hashable] | None = None, judge_every: bool = False,
               every: list | None = None) -> tuple[int, list[tuple[int, int, PState | None, tuple[Violation, ...]]]]:
        """The steps of `pstate` as a search takes them, looked up in the same pass that steps them:
        each target is looked up in `seen`, the search's visited set (the target itself, or `key(target)`,
        maps to its code), and a target it lacks is entered with the next code, `len(seen)`; `fired`
        counts the steps per action kind, and `every`, when given, gets `(position, action, code)` of
        each step (the liveness graph's edges, a worker's rows). Returns how many steps there are and,
        in their order, those that reach a new state or break a property: `(position, code, target,
        violations)`, target None when it was seen before. A search meets most targets again, so most
        steps cost it one lookup and build nothing. The states reached are judged by the state
        properties here only when `judge_every` (under symmetry `seen` holds a representative, and each
        state reached must be judged); otherwise the search judges each new state once.

        Both engines' searches spend most of their time in this loop, so it is written for them alone:
        `step` and `moves`, which build whole steps, have their own (`_steps`)."""
        state, mstates = pstate
        steps, events_at = self._all_successors(state)
        followed, judges = self._followed, self._judges
        out: list = []
        append, enter = out.append, seen.setdefault
        count, fresh = 0, len(seen)  # `fresh`: the code a new target gets
        for position, (action, nxt, facts) in enumerate(steps):
            if nxt is None:
                continue
            if facts:  # `_after`, written out: a call per step costs this loop a few percent
                if type(facts) is not tuple:
                    facts = tuple(facts)
                try:
                    hit = followed.get((mstates, facts))
                except TypeError:  # an unhashable fact: `_follow` says so
                    hit = None
                if hit is None:
                    hit = self._follow(mstates, facts, state, action)
                target, violations = (nxt, hit[0]), hit[1]
            else:
                target, violations = (nxt, mstates), ()
            kind = action.kind
            try:
                due = judges[kind]
            except KeyError:
                due = self._judges_of(kind)
            if due or judge_every:  # most steps of a search: no property judges their kind
                events = () if events_at is None else events_at[position]
                violations = self._verdicts(state, action, nxt, events, due, violations, judge_every)
            count += 1
            try:
                fired[kind] += 1
            except KeyError:
                fired[kind] = 1
            code = enter(target if key is None else key(target), fresh)  # one hash of the state, new or not
            if every is not None:
                every.append((position, action, code))
            if code == fresh:
                fresh += 1
                append((position, code, target, violations))
            elif violations:
                append((position, code, None, violations))
        return count, out

    def _all_successors(self, state: Hashable) -> tuple[Sequence[tuple[Action, Any, tuple[Fact, ...]]],
                                                        list[tuple[Event, ...]] | None]:
        """Every step of `state` as `_successors` gives them: from the model's `successor_facts` in one
        call where it may stand in (most of a search's cost), else step by step."""
        batch = self._successor_facts
        if batch is None:
            return self._successors(state, None, False)
        auditing = self._auditor.left > 0
        if auditing:
            self._auditor.audit(state, self._actions, self.model.step)
        try:
            steps = batch(state)
        except Exception as broken:
            raise model_error(broken, state, what="successor_facts()") from broken
        if auditing:
            self._auditor.agrees("successor_facts", state, steps, self.model.step, self.model.facts,
                                 self._step_facts)
        return steps, None

    def _verdicts(self, state: Hashable, action: Action, nxt: Hashable, events: tuple[Event, ...],
                  due: tuple[tuple, tuple | None] | tuple[()], violations: tuple[Violation, ...],
                  judge_state: bool) -> tuple[Violation, ...]:
        """`violations` (the monitors') with those of the step properties `due` (`_judges_of`) and, when
        `judge_state`, of the state properties on `nxt`: every property is first judged in one pass, and
        only a step that breaks one (or raises) is judged again, property by property, to name what it
        broke in the properties' order."""
        plain, evented = due or ((), ())
        if evented is None:
            names = tuple([event.name for event in events])
            evented = self._evented.get((action.kind, names))
            if evented is None:
                evented = self._evented_of(action.kind, names)
        try:
            for judge in plain:
                if not judge(state, action, nxt):
                    break
            else:
                for judge in evented:
                    if not judge(state, action, nxt, events):
                        break
                else:
                    if not judge_state or all(judge(nxt) for judge in self.state_predicates):
                        return violations
        except Exception:
            pass
        found = [*violations, *self._step_broken(state, action, nxt, events)]
        if judge_state:
            found += self._state_broken(nxt)
        return tuple(found)

    def _successors(self, state: Hashable, actions: Sequence[Action] | None, whole: bool
                    ) -> tuple[Sequence[tuple[Action, Any, tuple[Fact, ...]]], list[tuple[Event, ...]] | None]:
        """`(action, next, facts)` per action of `actions` (None: every action enabled in `state`), next
        None for a no-op, and the native events of each when they were built (None when not), step by step:
        from `step_facts` where it may stand in, else (for a whole transition or a step property that
        reads events) from `step`."""
        if actions is None:
            actions = self._actions_of(state)
        fast = None if whole else self._step_facts
        stepper, to_facts = fast or self.model.step, self.model.facts
        steps: list[tuple[Action, Any, tuple[Fact, ...]]] = []
        auditor = self._auditor if self._auditor.left > 0 else None
        if auditor is not None:
            auditor.left -= 1
        events_at: list[tuple[Event, ...]] | None = None if fast else []
        for action in actions:
            taken: Any = _UNSTEPPED
            try:
                taken = stepper(state, action)
                if taken is None:
                    nxt, facts, events = None, (), ()
                elif fast is None:
                    nxt, events = taken
                    events = tuple(events)
                    taken = nxt, events  # a generator of events is read once, here
                    facts = tuple([f for e in events for f in to_facts(e)])
                else:
                    nxt, facts = taken
                    facts = tuple(facts)
                    taken = nxt, facts
            except Exception as broken:
                if taken is not _UNSTEPPED:  # what step returned has the wrong shape: say so
                    self._auditor.taken(state, action, taken, events=fast is None)
                raise model_error(broken, state, action) from broken
            if auditor is not None:
                auditor.again(state, action, taken, stepper, events=fast is None)
            steps.append((action, nxt, facts))
            if events_at is not None:
                events_at.append(events)
        if auditor is not None and fast is not None:
            auditor.agrees("step_facts", state, steps, self.model.step, self.model.facts)
        return steps, events_at

    def _steps(self, pstate: PState, actions: Sequence[Action] | None, whole: bool) -> list:
        """The steps of `actions` from `pstate` (None: of every action enabled there; no-ops left out),
        each judged by the step properties and, on the state it reaches, by the state properties:
        Transitions when `whole`, else Moves."""
        state, mstates = pstate
        if actions is None and not whole:
            steps, events_at = self._all_successors(state)
        else:
            steps, events_at = self._successors(state, actions, whole)
        out: list = []
        for position, (action, nxt, facts) in enumerate(steps):
            if nxt is None:
                continue
            facts = tuple(facts)
            target_mstates, violations = self._after(mstates, facts, state, action) if facts else (mstates, ())
            due = self._judges.get(action.kind)
            if due is None:
                due = self._judges_of(action.kind)
            events = () if events_at is None else events_at[position]  # none where facts stand in
            if due or self.state_predicates:
                violations = self._verdicts(state, action, nxt, events, due, violations, True)
            target = (nxt, target_mstates)
            if whole:
                out.append(_tuple(Transition, (action, target, events, facts, violations)))
            else:
                out.append(_tuple(Move, (position, action, target, violations)))
        return out

    def _after(self, mstates: tuple, facts: tuple[Fact, ...], state: Hashable, action: Action
               ) -> tuple[tuple, tuple[Violation, ...]]:
        """The monitor states after `facts` and the violations they raise: remembered (`_follow`)."""
        try:
            hit = self._followed.get((mstates, facts))
        except TypeError:  # an unhashable fact: `_follow` says so
            hit = None
        return self._follow(mstates, facts, state, action) if hit is None else hit

    def _follow(self, mstates: tuple, facts: tuple[Fact, ...], state: Hashable, action: Action
                ) -> tuple[tuple, tuple[Violation, ...]]:
        """The monitor states after `facts` and the violations they raise, each fact checked against the
        vocabulary the first time it is met and each monitor stepped through its memo; remembered per
        (monitor states, facts), which a search meets again and again."""
        new_mstates = list(mstates)
        violations = []
        admitted, routes = self._admitted, self._routes
        for fact in facts:
            try:
                checked = fact in admitted
            except TypeError:  # an unhashable field: `_admit` says so
                checked = False
            if not checked:
                self._admit(fact, state, action)
            for index in routes.get(fact.name, ()):
                new_mstates[index], broken = self.monitor_steps[index].follow(new_mstates[index], fact)
                if broken is not None:
                    violations.append(Violation(self.monitors[index].name, broken))
        hit = (MonitorStates(new_mstates), tuple(violations))
        if len(self._followed) >= MEMO_LIMIT:
            self._followed.clear()
        self._followed[(mstates, facts)] = hit
        return hit

    def _admit(self, fact: Any, state: Hashable, action: Action) -> None:
        """Check a fact not met before against the vocabulary (the facts met are few, so each is checked
        once), or raise the ModelError that names the action that emitted it."""
        try:
            hash(fact)
        except TypeError:
            raise model_error(FactError(f"{fact!r}, which is not hashable (a fact's fields are strings, "
                                        "numbers or booleans)"), state, action) from None
        problem = fact_problem(fact)
        if problem is not None:
            raise model_error(FactError(problem), state, action)
        if len(self._admitted) >= ADMITTED_LIMIT:
            self._admitted.clear()
        self._admitted.add(fact)

    def successors(self, pstate: PState) -> list[Transition]:
        out = []
        for action in self.actions(pstate):
            transition = self.step(pstate, action)
            if transition is not None:
                out.append(transition)
        return out

    def fairness_class(self, action: Action) -> str | None:
        """The weak-fairness class of an action: its actor, if the model declares that actor fair."""
        actor = action.actor
        if actor not in self._fair_cache:
            fair = any(fnmatchcase(actor, pattern) for pattern in self.fair_patterns)
            self._fair_cache[actor] = actor if fair else None
        return self._fair_cache[actor]


# what each fast-path hook must agree with: a subclass that overrides one of these below the class that
# defines the hook (a test's model with an action switched off, say) has changed what the hook would have
# to give, so the hook no longer speaks for the model and the search steps it the plain way
_STANDS_IN_FOR = {"step_facts": ("step", "next_state", "observe", "facts"),
                  "successor_facts": ("actions", "step", "next_state", "observe", "facts", "step_facts")}


def _standing(model: Any, hook: str) -> Any:
    """The model's `hook`, or None when it has none or a subclass below its definition overrides
    what it stands in for (the model's own: an adapted model's classes are its inner model's). A hook set
    on the instance itself is its author's word and stands."""
    found = getattr(model, hook, None)
    if found is None:
        return None
    mro = type(model.inner if type(model) is AdaptedModel else model).__mro__
    depth = {name: next((at for at, cls in enumerate(mro) if name in vars(cls)), len(mro))
             for name in (hook, *_STANDS_IN_FOR[hook])}
    if depth[hook] < len(mro) and any(depth[name] < depth[hook] for name in _STANDS_IN_FOR[hook]):
        return None
    return found


def _guarded(prop: Property) -> Property:
    """`prop` with its predicates raising a ModelError that names the property, when they raise (a property
    of another type than these three was refused before: `Auditor.declarations`)."""

    def guard(judge: Any) -> Any:
        if judge is None:
            return None

        def judged(state: Any, *rest: Any) -> bool:
            try:
                return judge(state, *rest)
            except Exception as broken:
                action = rest[0] if rest else None
                raise model_error(broken, state, action, what=f"property {prop.name!r}") from broken

        return judged

    if isinstance(prop, Always):
        return replace(prop, state=guard(prop.state), step=guard(prop.step))
    if isinstance(prop, Sometimes):
        return replace(prop, state=guard(prop.state))
    return replace(prop, goal=guard(prop.goal), trigger=guard(prop.trigger))  # an Eventually: types are checked


def _unsettled(index: int, monitor: Monitor) -> Any:
    def trigger(pstate: PState) -> bool:
        return not monitor.settled(pstate[1][index])

    return trigger


def _settled(index: int, monitor: Monitor) -> Any:
    def goal(pstate: PState) -> bool:
        return monitor.settled(pstate[1][index])

    goal.__name__ = f"{monitor.name}_settled"
    return goal


def _on_model_state(prop: Eventually) -> Eventually:
    """A model's leads-to property, restated over product states like the monitors' own."""
    goal, trigger = prop.goal, prop.trigger
    return Eventually(
        prop.name,
        goal=lambda pstate: goal(pstate[0]),
        trigger=None if trigger is None else (lambda pstate: trigger(pstate[0])),
        doc=prop.doc,
    )
