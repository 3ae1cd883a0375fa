"""The one bounded breadth-first search: order, keys, bounds, and what a visitor can stop or prune."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from steersim import check
from steersim.checking.search import PRUNE, STOP, Control, Edges, Visitor, breadth_first, search_product, transitions_of
from steersim.core.product import Product
from steersim.core.registry import get_model_spec

# 0 -> 1, 2; 1 -> 3, 0; 2 -> 3, 4; 3 -> 5; 4 -> 5. Breadth-first finds 0, 1, 2, 3, 4, 5; depth-first would not.
GRAPH: Mapping[int, tuple[int, ...]] = {0: (1, 2), 1: (3, 0), 2: (3, 4), 3: (5,), 4: (5,), 5: ()}


def expand(node: int) -> list[tuple[str, int]]:
    return [(f"{node}>{target}", target) for target in GRAPH[node]]


class Recorder(Visitor[int, int, str]):
    """Logs every call; answers `controls[(hook, node or edge)]` where one is given."""

    def __init__(self, controls: Mapping[tuple[str, object], Control] | None = None) -> None:
        self.log: list[tuple] = []
        self.controls = dict(controls or {})

    def discovered(self, node: int, key: int, depth: int) -> Control | None:
        self.log.append(("discovered", node, depth))
        return self.controls.get(("discovered", node))

    def expanded(self, node: int, key: int, depth: int, edges: Edges) -> Control | None:
        self.log.append(("expanded", node, depth, tuple(edge for edge, _ in edges)))
        return self.controls.get(("expanded", node))

    def edge(self, source: int, edge: str, target: int, new: bool) -> Control | None:
        self.log.append(("edge", edge, new))
        return self.controls.get(("edge", edge))

    def calls(self, hook: str) -> list[tuple]:
        return [entry[1:] for entry in self.log if entry[0] == hook]


def test_first_in_first_out_each_state_once_at_its_least_depth() -> None:
    seen = Recorder()
    search = breadth_first([0], expand, visitor=seen)
    assert seen.calls("discovered") == [(0, 0), (1, 1), (2, 1), (3, 2), (4, 2), (5, 3)]
    assert [node for node, *_ in seen.calls("expanded")] == [0, 1, 2, 3, 4, 5]
    assert (search.states, search.complete, search.cut) == (6, True, None)


def test_every_followed_edge_is_seen_in_expand_order_after_its_new_target() -> None:
    seen = Recorder()
    breadth_first([0], expand, visitor=seen)
    assert seen.calls("edge") == [("0>1", True), ("0>2", True), ("1>3", True), ("1>0", False), ("2>3", False),
                                  ("2>4", True), ("3>5", True), ("4>5", False)]
    assert seen.log.index(("discovered", 3, 2)) == seen.log.index(("edge", "1>3", True)) - 1


def test_nodes_with_one_key_are_one_state_and_roots_are_deduplicated() -> None:
    seen = Recorder()
    search = breadth_first([0, 10, 0], lambda n: [("a", n + 1), ("b", n + 11)] if n % 10 < 2 else [],
                           key=lambda n: n % 10, visitor=seen)
    assert seen.calls("discovered") == [(0, 0), (1, 1), (2, 2)]
    assert seen.calls("edge") == [("a", True), ("b", False), ("a", True), ("b", False)]
    assert search.states == 3


def test_max_states_is_a_hard_bound_that_names_the_edge_it_cut() -> None:
    seen = Recorder()
    search = breadth_first([0], expand, visitor=seen, max_states=3)
    assert (search.states, search.complete, search.cut) == (3, False, "1>3")
    assert [node for node, _ in seen.calls("discovered")] == [0, 1, 2]
    assert ("edge", "1>3", True) not in seen.log  # the search ended at the cut, before the edge's visit
    assert ("expanded", 2, 1, ("2>3", "2>4")) not in seen.log


def test_max_states_reached_exactly_is_still_complete() -> None:
    search = breadth_first([0], expand, max_states=len(GRAPH))
    assert (search.states, search.complete, search.cut) == (6, True, None)


def test_roots_are_never_cut() -> None:
    search = breadth_first([3, 4, 5], expand, max_states=1)
    assert (search.states, search.complete) == (3, True)


@pytest.mark.parametrize(("budget", "expanded", "states"), [(4, [0, 1], 4), (2, [0], 3)])
def test_budget_stops_expanding_once_that_many_states_are_known(budget: int, expanded: list[int],
                                                                states: int) -> None:
    seen = Recorder()
    search = breadth_first([0], expand, visitor=seen, budget=budget)
    assert [node for node, *_ in seen.calls("expanded")] == expanded  # the last expansion may overshoot it
    assert (search.states, search.complete, search.cut) == (states, False, None)


def test_states_at_max_depth_are_kept_but_not_expanded() -> None:
    seen = Recorder()
    search = breadth_first([0], expand, visitor=seen, max_depth=1)
    assert seen.calls("discovered") == [(0, 0), (1, 1), (2, 1)]
    assert [node for node, *_ in seen.calls("expanded")] == [0]
    assert search.complete


@pytest.mark.parametrize(("control", "last"), [
    (("discovered", 3), ("discovered", 3, 2)),
    (("expanded", 1), ("expanded", 1, 1, ("1>3", "1>0"))),
    (("edge", "1>0"), ("edge", "1>0", False)),
])
def test_stop_ends_the_search_at_once(control: tuple[str, object], last: tuple) -> None:
    seen = Recorder({control: STOP})
    search = breadth_first([0], expand, visitor=seen)
    assert seen.log[-1] == last
    assert not search.complete and search.cut is None


def test_a_pruned_state_is_kept_but_never_expanded() -> None:
    seen = Recorder({("discovered", 2): PRUNE})
    search = breadth_first([0], expand, visitor=seen)
    assert [node for node, *_ in seen.calls("expanded")] == [0, 1, 3, 5]
    assert 4 not in [node for node, _ in seen.calls("discovered")]
    assert search.states == 5 and search.complete


def test_pruning_an_expansion_follows_none_of_its_edges() -> None:
    seen = Recorder({("expanded", 0): PRUNE})
    search = breadth_first([0], expand, visitor=seen)
    assert seen.calls("discovered") == [(0, 0)]
    assert seen.calls("edge") == []
    assert search.states == 1


def test_an_edge_without_target_is_offered_but_not_followed() -> None:
    seen = Recorder()
    breadth_first([0], lambda n: [(f"{n}>{t}", t if t != 2 else None) for t in GRAPH[n]], visitor=seen)
    assert seen.calls("expanded")[0] == (0, 0, ("0>1", "0>2"))
    assert [node for node, _ in seen.calls("discovered")] == [0, 1, 3, 5]
    assert ("edge", "0>2", True) not in seen.log


def test_paths_are_shortest_and_kept_only_when_asked_for() -> None:
    search = breadth_first([0], expand, paths=True)
    assert search.path(5) == ("0>1", "1>3", "3>5")
    assert search.path(4) == ("0>2", "2>4")
    assert search.path(0) == ()
    with pytest.raises(ValueError, match="paths=True"):
        breadth_first([0], expand).path(5)


def test_transitions_of_a_product_follows_every_transition_to_its_target() -> None:
    product = Product(get_model_spec("teaching").build({"K": 2, "N": 1, "P": 1}))
    init = product.init_states()[0]
    edges = transitions_of(product)(init)
    assert edges == [(t, t.target) for t in product.successors(init)] and edges


class EdgeCount(Visitor):
    def __init__(self) -> None:
        self.edges = 0

    def edge(self, source: int, edge: object, target: int, new: bool) -> None:
        self.edges += 1


def test_a_product_search_counts_states_and_transitions_as_the_explorer_does() -> None:
    model = get_model_spec("teaching").build({"K": 3, "N": 2, "P": 2})
    count = EdgeCount()
    search = search_product(Product(model), count)
    result = check(model)
    assert (search.states, count.edges, search.complete) == (result.states, result.transitions, True)
    assert search_product(Product(model), count, max_states=10).states == 10
