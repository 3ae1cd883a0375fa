"""Liveness over an explored graph: leads-to under weak fairness, decided on flat arrays.

For one `Eventually` property the explorer hands over, per state, whether the goal is unmet, whether
the trigger holds, whether it is a dead end and which fair actors are enabled there, and the edges
between unmet states with the fair actor that took each. A violation is a trigger state from which the
unmet states lead either to a dead end or into a fair cycle: a strongly connected component in which
every fair actor that is enabled in all of its states also acts inside it (weak fairness). Components
come from scipy's compiled strongly-connected-components, so graphs of millions of edges fit; networkx
only draws the fair cycle inside the one component the counterexample needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

if TYPE_CHECKING:
    import networkx as nx

NO_CLASS = 0xFFFF


@dataclass(frozen=True)
class Lasso:
    """The states of a counterexample: `start` (a trigger state), `route` to the end of the stem, and a
    `cycle` through a fair component that starts and ends at the stem's end (None: the stem ends in a
    dead end)."""

    start: int
    route: list[int]
    cycle: list[int] | None


def find_lasso(unmet: np.ndarray, trigger: np.ndarray, terminal: np.ndarray, enabled: np.ndarray,
               depths: np.ndarray, src: np.ndarray, dst: np.ndarray, cls: np.ndarray) -> Lasso | None:
    """The shallowest violating trigger state and its lasso, or None when the property holds."""
    n = len(unmet)
    keep = unmet[src] & unmet[dst]
    src, dst, cls = src[keep], dst[keep], cls[keep]
    graph = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
    count, labels = connected_components(graph, directed=True, connection="strong")
    sizes = np.bincount(labels, minlength=count)
    nontrivial = sizes > 1
    nontrivial[labels[src[src == dst]]] = True
    inside = labels[src] == labels[dst]
    bits = np.where(cls == NO_CLASS, np.uint64(0), np.left_shift(np.uint64(1), cls.astype(np.uint64)))
    taken = np.zeros(count, dtype=np.uint64)
    np.bitwise_or.at(taken, labels[src[inside]], bits[inside])
    always = np.full(count, np.iinfo(np.uint64).max, dtype=np.uint64)
    unmet_nodes = np.nonzero(unmet)[0]
    np.bitwise_and.at(always, labels[unmet_nodes], enabled[unmet_nodes])
    fair = nontrivial & ((always & ~taken) == 0)
    bad = unmet & (terminal | fair[labels])
    if not bad.any():
        return None
    # breadth-first from every bad state at once, backwards, through a virtual source n
    bad_nodes = np.nonzero(bad)[0]
    rev_src = np.concatenate([dst, np.full(len(bad_nodes), n)])
    rev_dst = np.concatenate([src, bad_nodes])
    reverse = csr_matrix((np.ones(len(rev_src), dtype=np.int8), (rev_src, rev_dst)), shape=(n + 1, n + 1))
    order, towards_bad = breadth_first_order(reverse, n, directed=True, return_predecessors=True)
    reached = np.zeros(n + 1, dtype=bool)
    reached[order] = True
    candidates = np.nonzero(reached[:n] & trigger & unmet)[0]
    if not len(candidates):
        return None
    start = int(candidates[np.lexsort((candidates, depths[candidates]))[0]])
    route = []
    node = start
    while towards_bad[node] != n:
        node = int(towards_bad[node])
        route.append(node)
    if terminal[node] and not fair[labels[node]]:
        return Lasso(start, route, None)
    import networkx as nx  # only a fair cycle needs it, and importing it costs every check a tenth of a second

    members = labels[src] == labels[node]
    component = nx.DiGraph()
    for u, v, c in zip(src[members & inside].tolist(), dst[members & inside].tolist(),
                       cls[members & inside].tolist(), strict=True):
        if component.has_edge(u, v):
            component[u][v]["classes"].add(c)
        else:
            component.add_edge(u, v, classes={c})
    return Lasso(start, route, fair_cycle(component, node))


def fair_cycle(component: nx.DiGraph, node: int) -> list[int]:
    """A cycle from `node` back to itself through `component` that takes an edge of every fair actor
    acting inside it, so the printed lasso is itself fair."""
    import networkx as nx
    needed: dict[int, tuple[int, int]] = {}
    for u, v, data in sorted(component.edges(data=True)):
        for c in sorted(data["classes"]):
            if c != NO_CLASS and c not in needed:
                needed[c] = (u, v)
    cycle = [node]
    here = node
    for u, v in needed.values():
        cycle += [*nx.shortest_path(component, here, u)[1:], v]
        here = v
    if len(cycle) == 1:
        step = min(component.successors(node))
        cycle.append(step)
        here = step
    cycle += nx.shortest_path(component, here, node)[1:]
    return cycle
