"""The vector engine: a kernel agrees with its model on every transition, and both engines give the
same report, byte for byte (but for the seconds), for every bug variant and every way a run can end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from steersim import CheckOptions, check
from steersim.checking.vector import MonitorTable, SortedVisited, VectorExplorer, fingerprints
from steersim.cli import main
from steersim.core.product import Product
from steersim.errors import UsageError
from steersim.models.teaching import SPEC as TEACHING
from steersim.report.formats import check_json
from tests.checking import breadth_first

SIZES = [{"K": 3, "N": 3, "Q": 2, "P": 3}, {"K": 2, "N": 3, "Q": 1, "P": 1}, {"K": 4, "N": 2, "Q": 2, "P": 2}]
BUGS = [None, *TEACHING.bugs]


def reachable(product: Product) -> list:
    return breadth_first(product.init_states(), lambda p: (t.target for t in product.successors(p)))


@pytest.mark.parametrize("bug", BUGS)
@pytest.mark.parametrize("params", SIZES, ids=lambda p: "-".join(f"{k}{v}" for k, v in p.items()))
def test_kernel_takes_every_step_the_model_takes(params, bug):
    """For every reachable product state: the same actions at the same positions, the same target
    states, the same facts in the same order, the same broken step properties and the same state
    predicates."""
    model = TEACHING.build(params, bug)
    product = Product(model)
    kernel = model.vector_kernel()
    explorer = VectorExplorer(model, CheckOptions())
    states = reachable(product)
    rows = np.stack([explorer._encode(state)[0] for state in states])
    for state, row in zip(states, rows, strict=True):
        assert kernel.decode(row) == state[0]
    got: dict[int, list] = {k: [] for k in range(len(states))}
    for batch in kernel.steps(rows):
        for n, source in enumerate(batch.source.tolist()):
            facts = [kernel.facts[code] for code in batch.facts[n].tolist() if code >= 0]
            broken = sorted(name for name, where in batch.broken.items() if where[n])
            got[source].append((int(batch.position[n]), batch.actor, kernel.decode(batch.targets[n]), facts, broken))
    step_props = {p.name for p in product.step_props}
    for k, state in enumerate(states):
        expected = []
        for position, action in enumerate(product.actions(state)):
            transition = product.step(state, action)
            broken = sorted(v.property for v in transition.violations if v.property in step_props)
            expected.append((position, action.actor, transition.target[0], list(transition.facts), broken))
        assert sorted(got[k], key=lambda step: step[0]) == expected, state[0]
    holds = kernel.predicates(rows)
    for prop in product.sometimes:
        assert holds[prop.name].tolist() == [prop.state(state[0]) for state in states]


def report(params, bug, engine, **options):
    model = TEACHING.build(params, bug)
    data = check_json(check(model, CheckOptions(engine=engine, **options)), params, bug)
    data.pop("seconds")
    return json.dumps(data, sort_keys=True)


@pytest.mark.parametrize("options", [{}, {"keep_going": True}, {"liveness": False}, {"max_states": 50},
                                     {"max_states": 400, "keep_going": True}, {"liveness_limit": 100}],
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
@pytest.mark.parametrize("bug", BUGS)
@pytest.mark.parametrize("params", SIZES, ids=lambda p: "-".join(f"{k}{v}" for k, v in p.items()))
def test_both_engines_write_the_same_report(params, bug, options):
    """Same verdicts, counts, depth, notes and counterexample paths (lassos included)."""
    assert report(params, bug, "vector", **options) == report(params, bug, "generic", **options)


def test_a_violation_report_names_the_same_shortest_path():
    vector = check(TEACHING.build({"K": 4, "N": 3, "Q": 1, "P": 4}, "lost-at-boundary"), CheckOptions(engine="vector"))
    generic = check(TEACHING.build({"K": 4, "N": 3, "Q": 1, "P": 4}, "lost-at-boundary"),
                    CheckOptions(engine="generic"))
    found = [(p.name, p.counterexample.actions) for p in vector.properties if p.status == "violated"]
    assert found and found == [(p.name, p.counterexample.actions) for p in generic.properties
                               if p.status == "violated"]


@pytest.mark.parametrize(("options", "reason"), [
    ({"strategy": "dfs"}, "breadth-first only"),
    ({"max_depth": 5}, "no depth limit"),
    ({"por": True}, "no reductions"),
    ({"checkpoint": "x.ckpt"}, "does not checkpoint"),
])
def test_vector_engine_says_why_it_cannot_run(options, reason):
    model = TEACHING.build({"K": 2, "N": 1, "Q": 1, "P": 2})
    with pytest.raises(UsageError, match=reason):
        check(model, CheckOptions(engine="vector", **options))
    if "checkpoint" not in options:  # auto takes the generic engine instead
        assert check(model, CheckOptions(engine="auto", **options)).states > 0


def test_engine_names_are_checked():
    with pytest.raises(UsageError, match="unknown engine 'fast'"):
        check(TEACHING.build({}), CheckOptions(engine="fast"))


def test_cli_engine_flag(capsys):
    assert main(["check", "teaching", "--engine", "vector", "--quiet"]) == 0
    assert "ok: 405 distinct states" in capsys.readouterr().out
    assert main(["check", "teaching", "--engine", "vector", "--strategy", "dfs", "--quiet"]) == 2
    assert "breadth-first only" in capsys.readouterr().err


def test_monitor_table_is_the_monitor_tabulated():
    from steersim.core import facts as F
    from steersim.core.monitors import OneActiveTurn, StepMemo

    alphabet = [F.turn_started("t1", "c"), F.turn_ended("t1", "completed")]
    table = MonitorTable(StepMemo(OneActiveTurn()), alphabet)
    empty = table.intern(OneActiveTurn().initial())
    ids, broken = table.step(np.array([empty, empty]), np.array([0, 1]))
    assert broken.tolist() == [False, True]  # ending a turn that is not active breaks the invariant
    assert table.states[ids[0]] == (("c", "t1"),) and ids[1] == empty
    again, broken = table.step(ids[:1], np.array([0]))
    assert broken.tolist() == [True] and again[0] == ids[0]


def test_sorted_visited_and_fingerprints():
    rows = np.zeros((3, 8), dtype=np.uint8)
    rows[1, 7] = 1  # the highest byte of the word must matter too
    rows[2, 0] = 1
    fps = fingerprints(rows, np.zeros((3, 4), dtype=np.int32))
    assert len(set(fps.tolist())) == 3
    assert fingerprints(rows, np.ones((3, 4), dtype=np.int32)).tolist() != fps.tolist()
    seen = SortedVisited()
    assert seen.lookup(fps).tolist() == [-1, -1, -1]
    seen.add(fps[:2], np.array([7, 8]))
    assert seen.lookup(fps).tolist() == [7, 8, -1]


@pytest.mark.parametrize("options", [{}, {"max_states": 300}, {"keep_going": True}],
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
@pytest.mark.parametrize("bug", BUGS)
def test_levels_split_into_chunks_change_nothing(monkeypatch, bug, options):
    """A level is expanded in chunks to bound memory; with tiny chunks the report is still the same."""
    import steersim.checking.vector

    params = {"K": 3, "N": 3, "Q": 2, "P": 3}
    whole = report(params, bug, "vector", **options)
    monkeypatch.setattr(steersim.checking.vector, "CHUNK", 5)
    assert report(params, bug, "vector", **options) == whole == report(params, bug, "generic", **options)
