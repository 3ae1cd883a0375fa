"""What a search asks of the product: every step once, the step's events handed to the properties that
read them, facts without events where the model gives them, monitor vectors that keep their hash and
fingerprints that do not depend on how a state is held."""

from __future__ import annotations

import pickle
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import pytest

from steersim import CheckOptions, check
from steersim.core import facts as F
from steersim.core import mistakes
from steersim.core.fingerprint import fingerprint
from steersim.core.model import Action, Always, Event, ModelBase
from steersim.core.product import MonitorStates, Product, Violation
from steersim.errors import ModelError
from steersim.models.teaching import SPEC as TEACHING
from steersim.models.teaching.model import TeachingModel, _facts_key
from tests.checking import breadth_first


class Counter(ModelBase):
    """Two steers, each submitted and accepted in one step; counts how often it is stepped."""

    def __init__(self, params=None, bug=None) -> None:
        super().__init__(params, bug)
        self.stepped = 0
        self.seen: list[tuple] = []

    def init_states(self):
        return [0]

    def actions(self, state):
        return [Action("user", "user.steer", (state + 1,))] if state < 2 else []

    def step(self, state, action):
        self.stepped += 1
        sid = f"s{action.args[0]}"
        return state + 1, (Event("user", "queue", "steer.submitted", {"id": sid, "target": "c"}),
                           Event("queue", "user", "steer.accepted", {"id": sid}),
                           Event("queue", "user", "steer.unknown", {"id": sid}))

    def properties(self):
        def sees(s, a, t, events):
            self.seen.append((s, a, t, events))
            return len(events) == 3

        return [Always("three-events", step=sees, with_events=True, doc="each step shows three events")]


def test_a_step_property_gets_the_steps_events_and_the_model_is_stepped_once_per_transition(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mistakes, "AUDIT_STATES", 0)  # the audit of a model's first states steps them again
    model = Counter()
    result = check(model, CheckOptions(engine="generic"))
    assert result.status == "ok" and result.transitions == 2
    assert model.stepped == 2  # no property stepped the model again
    assert [(s, t, len(events)) for s, _, t, events in model.seen] == [(0, 1, 3), (1, 2, 3)]
    assert all(events[0].data["id"] == f"s{t}" for _, _, t, events in model.seen)


def test_a_step_property_without_events_is_called_with_three_arguments() -> None:
    calls = []

    class Plain(Counter):
        def properties(self):
            return [Always("plain", step=lambda s, a, t: calls.append((s, t)) or True)]

    assert check(Plain(), CheckOptions(engine="generic")).status == "ok"
    assert calls == [(0, 1), (1, 2)]


def _transitions(model: TeachingModel):
    """Every (state, action) of the model's reachable graph, breadth-first."""
    init = model.init_states()[0]
    seen, queue = {init}, deque([init])
    while queue:
        state = queue.popleft()
        for action in model.actions(state):
            yield state, action
            nxt = model.next_state(state, action)
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)


def disagreements(model: TeachingModel) -> list[tuple]:
    """The steps where `step_facts` differs from the next state and the facts of `observe`'s events."""
    out = []
    for state, action in _transitions(model):
        nxt = model.next_state(state, action)
        expected = tuple(f for e in model.observe(state, action, nxt) for f in model.facts(e))
        if model.step_facts(state, action) != (nxt, expected):
            out.append((state, action))
    return out


@pytest.mark.parametrize("bug", [None, *TEACHING.bugs])
def test_teaching_step_facts_agree_with_its_events(bug: str | None) -> None:
    assert disagreements(TEACHING.build({"K": 3, "N": 3, "Q": 2, "P": 2}, bug)) == []


def test_the_agreement_check_sees_a_facts_key_that_misses_what_the_facts_depend_on(monkeypatch) -> None:
    """A key that forgets the queue a delivery appends reuses one delivery's facts for another."""
    import steersim.models.teaching.model as teaching

    monkeypatch.setattr(teaching, "_facts_key", lambda s, a, t: None if a.kind != "user.steer" else _facts_key(s, a, t))
    assert disagreements(TEACHING.build({"K": 3, "N": 3, "Q": 2, "P": 2}))


def successor_disagreements(model: TeachingModel) -> list:
    """The states where `successor_facts` differs from every action's next state and the facts of its
    events, in the order of `actions`."""
    out = []
    for state in dict.fromkeys(state for state, _ in _transitions(model)):
        expected = []
        for action in model.actions(state):
            nxt = model.next_state(state, action)
            expected.append((action, nxt, tuple(f for e in model.observe(state, action, nxt) for f in model.facts(e))))
        if model.successor_facts(state) != expected:
            out.append(state)
    return out


@pytest.mark.parametrize("bug", [None, *TEACHING.bugs])
def test_teaching_successor_facts_agree_with_its_actions_and_events(bug: str | None) -> None:
    assert successor_disagreements(TEACHING.build({"K": 3, "N": 3, "Q": 2, "P": 2}, bug)) == []


def test_the_agreement_check_sees_finishing_steps_remembered_by_the_running_calls_alone(monkeypatch) -> None:
    """Finishing steps kept per running calls, forgetting the finished results, reuse one state's for another."""
    model = TEACHING.build({"K": 3, "N": 3, "Q": 2, "P": 2})
    monkeypatch.setattr(model, "_finish_steps", _KeyedByCalls())
    assert successor_disagreements(model)


class _KeyedByCalls(dict):
    def get(self, key, default=None):
        return super().get(key[0], default)

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key[0], value)


def test_the_teaching_check_is_the_same_with_and_without_step_facts_and_successor_facts() -> None:
    class StepByStep(TeachingModel):
        successor_facts = None

    class EventsOnly(StepByStep):
        step_facts = None

    reports = [check(model(3, 3, 2, 3), CheckOptions(engine="generic")) for model in (TeachingModel, StepByStep,
                                                                                      EventsOnly)]
    summaries = [(r.states, r.transitions, [(p.name, p.status) for p in r.properties]) for r in reports]
    assert summaries[0] == summaries[1] == summaries[2]


def test_a_subclass_that_changes_the_steps_below_the_hooks_is_stepped_the_plain_way() -> None:
    class NoSteers(TeachingModel):  # overrides `actions` under teaching's successor_facts
        def actions(self, s):
            return [a for a in super().actions(s) if a.kind != "user.steer"]

    class Plain(NoSteers):
        successor_facts = step_facts = None

    def summary(model):
        r = check(model(3, 3, 2, 3), CheckOptions(engine="generic"))
        return r.states, r.transitions, r.coverage.fired

    assert summary(NoSteers) == summary(Plain)
    assert summary(NoSteers) != summary(TeachingModel)
    assert ("user.steer", 0) in summary(NoSteers)[2]


def test_a_successor_facts_that_raises_is_named_with_the_state() -> None:
    class Broken(TeachingModel):
        def successor_facts(self, s):
            if s.sent == 2:
                raise RuntimeError("no successors")
            return super().successor_facts(s)

    with pytest.raises(ModelError, match=r"successor_facts\(\) raised RuntimeError: no successors"):
        check(Broken(2, 3, 2, 2), CheckOptions(engine="generic", liveness=False))


def test_monitor_states_keep_their_hash_equal_a_plain_tuple_and_pickle_as_one() -> None:
    states = ((("s1", "accepted"),), (), False)
    vector = MonitorStates(states)
    assert vector == states and hash(vector) == hash(states) and {states: 1}[vector] == 1
    assert pickle.loads(pickle.dumps(vector)) == states
    assert pickle.dumps(vector).count(b"hash") == 0  # the hash depends on the process's seed: not saved
    assert type(pickle.loads(pickle.dumps(vector))) is MonitorStates


def test_a_monitor_vector_is_one_object_per_value_made_again_or_arriving_pickled() -> None:
    """So a search compares the monitor part of a state it meets again by identity."""
    vector = MonitorStates(((("s2", "accepted"),), ("c1",), True))
    assert MonitorStates(list(vector)) is vector and pickle.loads(pickle.dumps(vector)) is vector


@dataclass(frozen=True)
class AsDataclass:
    q: tuple
    n: int


class AsNamedTuple(NamedTuple):
    q: tuple
    n: int


def test_a_states_fingerprint_does_not_depend_on_its_container() -> None:
    """Traces record fingerprints: a state class that becomes a named tuple, or monitor states held as
    MonitorStates, keep them."""
    AsNamedTuple.__name__ = AsDataclass.__name__
    mstates = ((("s1", "accepted"),), ())
    expected = fingerprint((AsDataclass((1, 2), 3), mstates))
    assert fingerprint((AsNamedTuple((1, 2), 3), mstates)) == expected
    assert fingerprint((AsDataclass((1, 2), 3), MonitorStates(mstates))) == expected
    assert fingerprint((AsDataclass((1, 2), 4), mstates)) != expected


def test_monitors_are_stepped_once_per_monitor_state_and_fact() -> None:
    product = Product(Counter())
    init = product.init_states()[0]
    first = product.moves(init)
    assert len(first) == 1 and first[0].violations == ()
    sizes = [len(steps.memo) for steps in product.monitor_steps]
    assert product.moves(init) == first  # the same step again is answered from the memo
    assert [len(steps.memo) for steps in product.monitor_steps] == sizes
    fact = F.steer_submitted("s1", "c")
    monitor = product.monitor_steps[0]
    assert monitor.follow(init[1][0], fact) is monitor.follow(init[1][0], fact)


def test_with_events_is_refused_for_a_state_property() -> None:
    with pytest.raises(ValueError, match="with_events=True is for a step= property"):
        Always("x", state=lambda s: True, with_events=True)


class Forked(ModelBase):
    """From 0, three steps: two reach 1 and 2, one (a no-op) does nothing; from 1, one step to 2 that
    breaks `no-step-into-2`."""

    def init_states(self):
        return [0]

    def actions(self, state):
        return [Action("a", "go", (1,)), Action("a", "stay"), Action("b", "go", (2,))] if state == 0 else (
            [Action("a", "go", (2,))] if state == 1 else [])

    def step(self, state, action):
        return None if action.kind == "stay" else (action.args[0], ())

    def properties(self):
        return [Always("no-step-into-2", step=lambda s, a, t: not (s == 1 and t == 2), doc="1 never steps to 2")]


def test_search_enters_new_targets_with_the_next_codes_and_hands_back_only_new_or_breaking_steps() -> None:
    product = Product(Forked())
    init = product.init_states()[0]
    seen = {init: 0}
    fired: dict[str, int] = {}
    every: list = []
    count, found = product.search(init, seen, fired, every=every)
    one, two = (1, init[1]), (2, init[1])
    assert count == 2 and fired == {"go": 2}  # the no-op is no step
    assert found == [(0, 1, one, ()), (2, 2, two, ())] and seen == {init: 0, one: 1, two: 2}
    assert [(position, action.actor, code) for position, action, code in every] == [(0, "a", 1), (2, "b", 2)]
    count, found = product.search(one, seen, fired)  # its target is known: only the breaking step is back
    assert count == 1 and fired == {"go": 3} and len(seen) == 3
    assert found == [(0, 2, None, (Violation("no-step-into-2", "1 never steps to 2"),))]
    assert product.search(two, seen, fired) == (0, [])
    assert [(t.action, t.target, t.violations) for t in product.successors(one)] == [
        (Action("a", "go", (2,)), two, (Violation("no-step-into-2", "1 never steps to 2"),))]


def _product_states(product: Product, limit: int = 3000) -> list:
    """The product states a search reaches first, breadth-first, up to `limit`."""
    return breadth_first(product.init_states(), lambda p: (m.target for m in product.moves(p)), limit)


def _bits_one_by_one(product: Product, pstate) -> tuple[int, int]:
    unmet = sum(1 << bit for bit, prop in enumerate(product.liveness) if not prop.goal(pstate))
    trig = sum(1 << bit for bit, prop in enumerate(product.liveness)
               if prop.trigger is not None and prop.trigger(pstate))
    return unmet, trig


@pytest.mark.parametrize(("name", "params", "bug"), [("teaching", {"K": 2, "N": 2}, "turn-left-open"),
                                                     ("foundry", {"callers": 2}, None),
                                                     ("openai-ws", {"steers": 2}, None)])
def test_liveness_bits_are_each_propertys_goal_and_trigger(name: str, params: dict, bug: str | None) -> None:
    """The monitors' bits, remembered per monitor states, and the model's own, read per state, are the
    goals and triggers of `Product.liveness` judged one by one."""
    from steersim.core.registry import get_model_spec

    spec = get_model_spec(name)
    product = Product(spec.build(spec.resolve(params, bug), bug))
    assert product.liveness
    states = _product_states(product)
    assert len({pstate[1] for pstate in states}) < len(states)  # monitor states recur: the memo is used
    assert [product.liveness_bits(p) for p in states] == [_bits_one_by_one(product, p) for p in states]
    assert any(unmet for unmet, _ in map(product.liveness_bits, states))


def test_liveness_bits_of_a_monitor_are_remembered_per_monitor_states() -> None:
    product = Product(TEACHING.build({"K": 2, "N": 2}, None))
    states = _product_states(product, 200)
    for pstate in states:
        product.liveness_bits(pstate)
    assert set(product._unsettled) == {pstate[1] for pstate in states}
