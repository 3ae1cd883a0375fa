"""`Always(step=..., kinds=...)`: a step property judged only on steps of the action kinds it names, and
`Always(step=..., with_events=True, events=...)`: one judged only on steps that send events of the names
it gives. The engines skip it on every other step, so a declaration must be true: every built-in model's
is checked here against the property itself on the steps it is not judged on."""

from __future__ import annotations

from collections import deque

import pytest
from test_authoring import readme_model

from steersim import CheckOptions, check
from steersim.cli import main
from steersim.core.model import Action, Always, Event, ModelBase
from steersim.core.product import Product
from steersim.core.registry import get_model_spec
from steersim.errors import EXIT_USAGE, ModelError

BUILT_IN = ("teaching", "openai-ws", "foundry", "openclaw", "codex", "langgraph", "pydantic-ai")
STATES_PER_VARIANT = 1500


class TwoKinds(ModelBase):
    """A counter stepped by `tick` and, once, by `tock`; each step sends `ticked` or `tocked`."""

    action_kinds = ("tick", "tock")

    def __init__(self, props: list, params=None, bug=None) -> None:
        super().__init__(params, bug)
        self.props = props

    def init_states(self):
        return [0]

    def actions(self, state):
        return [Action("clock", "tick"), Action("clock", "tock")] if state < 3 else []

    def step(self, state, action):
        return state + 1, (Event("clock", "clock", action.kind + "ed"),)

    def facts(self, event):
        return ()

    def properties(self):
        return self.props


def statuses(props: list) -> dict[str, str]:
    result = check(TwoKinds(props), CheckOptions(liveness=False, keep_going=True))
    names = {prop.name for prop in props}
    return {p.name: p.status for p in result.properties if p.name in names}


def test_a_step_property_is_judged_on_the_kinds_it_names_alone() -> None:
    never_a_tick = Always("never-a-tick", step=lambda s, a, t: a.kind != "tick", kinds=("tock",))
    never_a_tock = Always("never-a-tock", step=lambda s, a, t: a.kind != "tock", kinds=("tock",))
    everywhere = Always("never-a-tick-anywhere", step=lambda s, a, t: a.kind != "tick")
    assert statuses([never_a_tick, never_a_tock, everywhere]) == {
        "never-a-tick": "holds", "never-a-tock": "violated", "never-a-tick-anywhere": "violated"}


def test_an_event_property_is_judged_on_the_steps_that_send_its_events_alone() -> None:
    never_a_tick = Always("never-a-tick", step=lambda s, a, t, e: a.kind != "tick", with_events=True,
                          events=("tocked",))
    never_a_tock = Always("never-a-tock", step=lambda s, a, t, e: a.kind != "tock", with_events=True,
                          events=("tocked", "rang"))
    or_its_kinds = Always("never-a-tick-or-tocked", step=lambda s, a, t, e: a.kind != "tick", with_events=True,
                          events=("tocked",), kinds=("tick",))
    assert statuses([never_a_tick, never_a_tock, or_its_kinds]) == {
        "never-a-tick": "holds", "never-a-tock": "violated", "never-a-tick-or-tocked": "violated"}


def test_a_counterexample_of_a_routed_property_is_the_shortest_one() -> None:
    prop = Always("no-late-tock", step=lambda s, a, t: s < 1, kinds=("tock",))
    result = check(TwoKinds([prop]), CheckOptions(liveness=False))
    found = next(p for p in result.properties if p.name == "no-late-tock")
    assert found.status == "violated" and len(found.counterexample.steps) == 2


@pytest.mark.parametrize(("how", "message"), [
    (dict(state=lambda s: True, kinds=("tick",)), "kinds= is for a step= property"),
    (dict(step=lambda s, a, t: True, kinds="tick"), "kinds= takes a non-empty tuple of action kinds"),
    (dict(step=lambda s, a, t: True, kinds=()), "kinds= takes a non-empty tuple of action kinds"),
    (dict(step=lambda s, a, t: True, kinds=("tick", 3)), "kinds= takes a non-empty tuple of action kinds"),
])
def test_a_malformed_kinds_is_refused_with_the_fix(how: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Always("x", **how)


@pytest.mark.parametrize(("how", "message"), [
    (dict(step=lambda s, a, t: True, events=("ticked",)), "events= is for a step= property with with_events=True"),
    (dict(state=lambda s: True, events=("ticked",)), "events= is for a step= property with with_events=True"),
    (dict(step=lambda s, a, t, e: True, with_events=True, events="ticked"), "events= takes a non-empty tuple"),
    (dict(step=lambda s, a, t, e: True, with_events=True, events=()), "events= takes a non-empty tuple"),
])
def test_a_malformed_events_is_refused_with_the_fix(how: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Always("x", **how)


def test_kinds_given_as_a_list_are_kept_as_a_tuple() -> None:
    assert Always("x", step=lambda s, a, t: True, kinds=["tick"]).kinds == ("tick",)


def test_a_kind_the_model_does_not_declare_is_refused_naming_the_property() -> None:
    typo = Always("late-tock", step=lambda s, a, t: True, kinds=("tok",))
    with pytest.raises(ModelError, match=r"property 'late-tock' names action kinds .* does not declare: tok"):
        Product(TwoKinds([typo]))


@pytest.mark.parametrize(("mistake", "message"), [
    ('Always("routed", step=lambda s, a, t: True, kinds=("agent.strat",))',
     "names action kinds the model 'drop-oldest' does not declare: agent.strat"),
    ('Always("routed", step=lambda s, a, t: True, kinds="agent.start")', "kinds= takes a non-empty tuple"),
    ('Always("routed", step=lambda s, a, t: True, events=("agent.started",))', "events= is for a step= property"),
    ('Always("queue-bounded", state=lambda s: True)', "declares property names twice: queue-bounded"),
])
def test_a_property_mistake_in_a_model_file_is_one_line_and_exit_2(tmp_path, capsys, mistake, message) -> None:
    """The README's model by path, with a property declared wrong: a usage error that says what is
    wrong, never an internal error."""
    source = readme_model().replace('    fair_actors = ("agent",)', '    fair_actors = ("agent",)\n    action_kinds = ('
                                    '"user.steer", "agent.start", "agent.run_tool", "agent.collect", "agent.apply", '
                                    '"agent.end")')
    source = source.replace('return [Always("queue-bounded",',
                            f'return [{mistake}, Always("queue-bounded",')
    (tmp_path / "routed.py").write_text(source)
    assert main(["check", str(tmp_path / "routed.py") + ":SPEC", "--quiet"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "internal error" not in err, err


def _routed(model: ModelBase) -> list[Always]:
    return [p for p in model.properties() if isinstance(p, Always) and (p.kinds is not None or p.events is not None)]


def _variants():
    """Every variant of a built-in model whose properties declare kinds."""
    for name in BUILT_IN:
        spec = get_model_spec(name)
        for bug in (None, *sorted(spec.bugs)):
            if _routed(spec.build(spec.resolve({}, bug), bug)):
                yield pytest.param(name, bug, id=f"{name}-{bug or 'default'}")


def test_the_built_in_models_declare_kinds() -> None:
    assert {param.values[0] for param in _variants()} == {"teaching", "openai-ws", "foundry", "openclaw", "codex",
                                                         "langgraph", "pydantic-ai"}


@pytest.mark.parametrize(("name", "bug"), list(_variants()))
def test_every_built_in_kinds_declaration_holds_on_the_steps_it_is_not_judged_on(name: str, bug: str | None) -> None:
    """A breadth-first walk of the first states of each variant: on a step a property is not routed to (of
    no kind it names, sending no event it names), the property itself (with the step's events) holds."""
    spec = get_model_spec(name)
    model = spec.build(spec.resolve({}, bug), bug)
    routed = _routed(model)
    product = Product(model)
    start = product.init_states()
    seen, queue, judged = set(start), deque(start), 0
    while queue and len(seen) < STATES_PER_VARIANT:
        pstate = queue.popleft()
        for action in product.actions(pstate):
            step = product.step(pstate, action)
            if step is None:
                continue
            before, after = pstate[0], step.target[0]
            names = [event.name for event in step.events]
            for prop in routed:
                if not prop.judges(action.kind, names):
                    rest = (step.events,) if prop.with_events else ()
                    assert prop.step(before, action, after, *rest), (prop.name, action)
                    judged += 1
            if step.target not in seen:
                seen.add(step.target)
                queue.append(step.target)
    assert judged
