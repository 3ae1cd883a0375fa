"""The explored state graph as a networkx DiGraph, for small configurations.

Nodes are numbered in breadth-first discovery order and carry the state's text, its depth and the
properties violated there; edges carry the action's label. The export refuses, with a clear message,
above a size bound: a graph that size is not something to look at or to load into a graph tool.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import networkx as nx

from sim.core.fingerprint import fingerprint
from sim.core.model import Model
from sim.core.product import Product
from sim.errors import UsageError

EXPORT_BOUND = 20_000


def state_graph(model: Model, max_states: int = EXPORT_BOUND) -> nx.DiGraph:
    """Every reachable product state and transition; UsageError above `max_states` states."""
    product = Product(model)
    graph = nx.DiGraph()
    index: dict[int, int] = {}
    queue: deque = deque()
    for init in product.init_states():
        fp = fingerprint(init)
        if fp not in index:
            index[fp] = len(index)
            graph.add_node(index[fp], state=repr(init[0]), depth=0, initial=True, violations="")
            queue.append((init, 0))
    while queue:
        state, depth = queue.popleft()
        source = index[fingerprint(state)]
        transitions = product.successors(state)
        if not transitions:
            ends = product.end_violations(state)
            graph.nodes[source]["violations"] = ",".join(v.property for v in ends)
        for t in transitions:
            fp = fingerprint(t.target)
            if fp not in index:
                if len(index) >= max_states:
                    raise UsageError(f"the state graph has more than {max_states:,} states; export it for a smaller "
                                     "configuration (fewer steers, calls or lanes)")
                index[fp] = len(index)
                graph.add_node(index[fp], state=repr(t.target[0]), depth=depth + 1, initial=False, violations="")
                queue.append((t.target, depth + 1))
            graph.add_edge(source, index[fp], action=t.action.label(),
                           violations=",".join(v.property for v in t.violations))
    return graph


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
