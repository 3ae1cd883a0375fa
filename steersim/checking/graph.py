"""The explored state graph as a networkx DiGraph, for small configurations.

Nodes are numbered in breadth-first discovery order and carry the state's text, its depth and the
properties violated there; edges carry the action's label. The export refuses, with a clear message,
above a size bound: a graph that size is not something to look at or to load into a graph tool.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from steersim.checking.search import Edges, Visitor, search_product
from steersim.core.model import Model
from steersim.core.product import Product, PState, Transition
from steersim.errors import UsageError

EXPORT_BOUND = 20_000


def state_graph(model: Model, max_states: int = EXPORT_BOUND) -> nx.DiGraph:
    """Every reachable product state and transition; UsageError above `max_states` states."""
    product = Product(model)
    builder = _GraphBuilder(product)
    search = search_product(product, builder, max_states=max_states)
    if not search.complete:
        raise UsageError(f"the state graph has more than {max_states:,} states; export it for a smaller "
                         "configuration (fewer steers, calls or lanes)")
    return builder.graph


class _GraphBuilder(Visitor[PState, int, Transition]):
    """Nodes numbered in discovery order; a later transition between the same two states relabels the edge."""

    def __init__(self, product: Product) -> None:
        self.product = product
        self.graph = nx.DiGraph()
        self.index: dict[int, int] = {}

    def discovered(self, node: PState, key: int, depth: int) -> None:
        self.index[key] = len(self.index)
        self.graph.add_node(self.index[key], state=repr(node[0]), depth=depth, initial=depth == 0, violations="")

    def expanded(self, node: PState, key: int, depth: int, edges: Edges) -> None:
        if not edges:
            ends = self.product.end_violations(node)
            self.graph.nodes[self.index[key]]["violations"] = ",".join(v.property for v in ends)

    def edge(self, source: int, edge: Transition, target: int, new: bool) -> None:
        self.graph.add_edge(self.index[source], self.index[target], action=edge.action.label(),
                            violations=",".join(v.property for v in edge.violations))


def check_graph_path(path: str | Path) -> None:
    """Refuse a file name whose format `write_graph` does not know, before the graph is built."""
    if Path(path).suffix.lower() not in (".graphml", ".dot", ".gv"):
        raise UsageError(f"--graph {str(path)!r}: use a .graphml or .dot file name")


def write_graph(graph: nx.DiGraph, path: str | Path) -> None:
    """GraphML (`.graphml`) or Graphviz DOT (`.dot`, `.gv`)."""
    check_graph_path(path)
    if Path(path).suffix.lower() == ".graphml":
        nx.write_graphml(graph, path)
    else:
        Path(path).write_text(_dot(graph))


def _dot(graph: nx.DiGraph) -> str:
    """DOT text with quoted labels (networkx's DOT writer needs pydot or pygraphviz; this needs neither)."""

    def quote(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["digraph steersim {", "  node [shape=box, fontsize=9];"]
    for node, data in graph.nodes(data=True):
        style = ', color="red"' if data["violations"] else ""
        lines.append(f"  {node} [label={quote(str(node) + ': ' + data['state'])}{style}];")
    for u, v, data in graph.edges(data=True):
        style = ', color="red"' if data["violations"] else ""
        lines.append(f"  {u} -> {v} [label={quote(data['action'])}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
