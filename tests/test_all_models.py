"""Every registered model: its default configuration holds every property, and every bug variant is
caught by the property it names, with a shortest counterexample (compared with an independent BFS)."""

from __future__ import annotations

import pytest
from test_explorer import shortest_violation_depth

from steersim import CheckOptions, check
from steersim.core.fingerprint import fingerprint
from steersim.core.product import Product
from steersim.core.registry import available_models
from steersim.simulate.simulator import Simulator

SPECS = available_models()
BUGS = [(name, bug) for name, spec in SPECS.items() for bug in spec.bugs]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_default_configuration_holds(name):
    spec = SPECS[name]
    result = check(spec.build({}), CheckOptions())
    bad = [(p.name, p.status, p.note) for p in result.properties if p.status not in ("holds", "reached")
           and not (p.kind == "eventually" and p.status == "unknown")]
    assert result.status == "ok", bad
    assert spec.params and all(p.doc for p in spec.params)


READINGS = [pytest.param(name, reading, id=f"{name}-{reading.label}") for name, spec in SPECS.items()
            for reading in spec.readings]


@pytest.mark.parametrize(("name", "reading"), READINGS)
def test_each_reading_the_default_check_explores_holds(name, reading):
    """`steersim check MODEL` explores the readings after the defaults: each must pass there too."""
    spec = SPECS[name]
    result = check(spec.build(reading.params), CheckOptions())
    bad = [(p.name, p.status, p.note) for p in result.properties if p.status not in ("holds", "reached")
           and not (p.kind == "eventually" and p.status == "unknown")]
    assert result.status == "ok", bad


def maybe_slow(name: str, bug: str):
    """The teaching model's bugs run by default; the real systems' larger ones run in the slow set (their
    own test modules already catch each bug on a small configuration by default)."""
    marks = () if name == "teaching" else (pytest.mark.slow,)
    return pytest.param(name, bug, marks=marks, id=f"{name}-{bug}")


@pytest.mark.parametrize(("name", "bug"), [maybe_slow(name, bug) for name, bug in BUGS])
def test_bug_variant_is_caught_by_its_property_with_a_shortest_counterexample(name, bug):
    spec = SPECS[name]
    catcher = spec.bug_catchers.get(bug)
    assert catcher, f"{name} bug {bug} names no catching property in bug_catchers"
    model = spec.build({}, bug)
    kinds = {info.name: info.kind for info in Product(model).property_infos()}
    assert catcher in kinds, f"{catcher} is not a property of {name}"
    result = check(model, CheckOptions(keep_going=True, liveness=kinds[catcher] == "eventually"))
    assert result.exit_code == 1
    prop = next(p for p in result.properties if p.name == catcher)
    assert prop.status == "violated", f"{catcher}: {prop.status}"
    if prop.kind != "eventually":
        assert len(prop.counterexample.steps) == shortest_violation_depth(model, catcher)


def reachable(model, bound: int = 80_000) -> set[int] | None:
    """Fingerprints of every reachable product state, or None above `bound`."""
    product = Product(model)
    frontier = list(product.init_states())
    seen = {fingerprint(s) for s in frontier}
    while frontier:
        for t in product.successors(frontier.pop()):
            fp = fingerprint(t.target)
            if fp not in seen:
                if len(seen) >= bound:
                    return None
                seen.add(fp)
                frontier.append(t.target)
    return seen


@pytest.mark.parametrize("name", sorted(SPECS))
def test_simulated_runs_stay_inside_the_explored_graph(name):
    model = SPECS[name].build({})
    states = reachable(model)
    if states is None:
        pytest.skip(f"{name}'s default configuration is too large to enumerate here")
    simulator = Simulator(model)
    for seed in range(25):
        run = simulator.run(seed, record=True)
        assert run.steps, "a run of the default configuration does something"
        assert all(fingerprint(step.transition.target) in states for step in run.steps)
