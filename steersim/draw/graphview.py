"""Pictures of a model's state space: the whole graph for small configurations, with a counterexample
path highlighted, and a summary (states per depth, transitions by action kind) for large ones.

The graph is enumerated here, breadth-first through `Product.successors` with the same fingerprints as
the explorer, and bounded: drawing tens of thousands of nodes helps nobody, so above the bound the
enumeration stops with `GraphTooLarge` and the caller draws the summary instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import networkx as nx
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from steersim.checking.search import Edges, Visitor, search_product
from steersim.core.fingerprint import fingerprint
from steersim.core.model import Model
from steersim.core.paths import Path
from steersim.core.product import Product, PState, Transition
from steersim.draw.style import COLORS, new_figure

GRAPH_LIMIT = 800  # states drawn as a graph at most
SUMMARY_LIMIT = 200_000  # states counted for a summary at most


class GraphTooLarge(ValueError):
    """The state space has more states than a readable picture can show."""


def explore_graph(model: Model, max_states: int = GRAPH_LIMIT) -> nx.DiGraph:
    """Every reachable product state as a node (its fingerprint) with `depth`, `init` and `violated`
    (a property broke on arriving there, or the run can end there with an obligation open)
    attributes, and every transition as an edge with its action `kind` and `label`."""
    product = Product(model)
    picture = _Picture(product)
    search = search_product(product, picture, max_states=max_states)
    if not search.complete:
        raise GraphTooLarge(f"model {model.name!r} has more than {max_states} states; "
                            "draw its summary (summary_figure) instead")
    return picture.graph


class _Picture(Visitor[PState, int, Transition]):
    """The graph `explore_graph` draws: of several transitions between two states, the first is drawn."""

    def __init__(self, product: Product) -> None:
        self.product = product
        self.graph = nx.DiGraph()

    def discovered(self, node: PState, key: int, depth: int) -> None:
        violated = depth == 0 and bool(self.product.state_violations(node))
        self.graph.add_node(key, depth=depth, init=depth == 0, violated=violated)

    def expanded(self, node: PState, key: int, depth: int, edges: Edges) -> None:
        if not edges and self.product.end_violations(node):
            self.graph.nodes[key]["violated"] = True

    def edge(self, source: int, edge: Transition, target: int, new: bool) -> None:
        if edge.violations:
            self.graph.nodes[target]["violated"] = True
        if not self.graph.has_edge(source, target):
            self.graph.add_edge(source, target, kind=edge.action.kind, label=edge.action.label())


def path_nodes(path: Path) -> list[int]:
    """The fingerprints of the states a path visits, initial state first."""
    return [fingerprint(state) for state in path.states]


def layered_positions(graph: nx.DiGraph) -> dict[int, tuple[float, float]]:
    """Depth left to right; within a depth, states ordered by the mean position of their parents (one
    barycentre sweep), which untangles most edges of a BFS layering."""
    layers: dict[int, list[int]] = {}
    for node, depth in graph.nodes(data="depth"):
        layers.setdefault(depth, []).append(node)
    rank: dict[int, float] = {}
    for depth in sorted(layers):
        nodes = layers[depth]
        if depth > 0:
            def barycentre(n: int) -> float:
                parents = [rank[p] for p in graph.predecessors(n) if p in rank]
                return sum(parents) / len(parents) if parents else 0.0

            nodes.sort(key=barycentre)
        offset = (len(nodes) - 1) / 2
        for k, node in enumerate(nodes):
            rank[node] = k - offset
    return {node: (float(graph.nodes[node]["depth"]), rank[node]) for node in graph.nodes}


def graph_figure(graph: nx.DiGraph, path: Sequence[int] = (), title: str = "") -> Figure:
    """The explored graph, with `path` (fingerprints, e.g. from `path_nodes`) drawn in red and its
    steps numbered."""
    pos = layered_positions(graph)
    depth = max((x for x, _ in pos.values()), default=0.0)
    spread = max((abs(y) for _, y in pos.values()), default=0.0)
    figure = new_figure(max(6.0, 1.0 + 0.45 * (depth + 1)), max(3.0, 1.2 + 0.16 * (2 * spread + 1)))
    ax = figure.add_axes((0.02, 0.04, 0.96, 0.86))
    ax.axis("off")
    ax.set_xlim(-0.6, depth + 0.6)
    ax.set_ylim(spread + 0.8, -spread - 0.8)
    on_path = set(pairwise(path))
    plain = [(pos[u], pos[v]) for u, v in graph.edges if (u, v) not in on_path]
    ax.add_collection(LineCollection(plain, colors=COLORS["lifeline"], linewidths=0.4, zorder=0))
    if on_path:
        ax.add_collection(LineCollection([(pos[u], pos[v]) for u, v in on_path], colors=COLORS["path"],
                                         linewidths=1.8, zorder=2))
    groups: dict[str, list[int]] = {}
    for node, data in graph.nodes(data=True):
        colour = "#2ca02c" if data["init"] else COLORS["violation"] if data["violated"] else "#8c8c8c"
        groups.setdefault(colour, []).append(node)
    for colour, members in sorted(groups.items()):  # one marker line per colour: small, fast SVG
        ax.plot([pos[n][0] for n in members], [pos[n][1] for n in members], ls="none", marker="o", ms=3,
                mew=0, color=colour, zorder=3)
    if path:
        ax.plot([pos[n][0] for n in path], [pos[n][1] for n in path], ls="none", marker="o", ms=5.5, mfc="none",
                mec=COLORS["path"], mew=1.2, zorder=4)
    for step, node in enumerate(path):
        ax.annotate(str(step), pos[node], xytext=(0, 4), textcoords="offset points", ha="center", va="bottom",
                    fontsize=6.5, color=COLORS["path"], zorder=5)
    summary = f"{graph.number_of_nodes()} states, {graph.number_of_edges()} transitions, depth {int(depth)}"
    figure.text(0.01, 0.985, title or summary, fontsize=9.5, weight="bold", va="top")
    legend = "green: initial state · red dot: a property broke there · red line: the counterexample, states numbered"
    figure.text(0.01, 0.94, f"{summary} · depth runs left to right · {legend}" if title else legend,
                fontsize=7, va="top", color=COLORS["muted"])
    return figure


@dataclass(frozen=True)
class Summary:
    """States first reached at each depth and transitions by action kind."""

    per_depth: tuple[int, ...]
    by_kind: tuple[tuple[str, int], ...]
    states: int
    transitions: int
    complete: bool


def state_summary(model: Model, max_states: int = SUMMARY_LIMIT) -> Summary:
    """Count the state space breadth-first, stopping (complete=False) after `max_states` states."""
    product = Product(model)
    census = _Census()
    search = search_product(product, census, max_states=max_states)
    if search.cut is not None:  # the transition that found one state too many was counted too
        census.count(search.cut)
    per_depth = census.per_depth
    ordered = tuple(sorted(census.kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    return Summary(tuple(per_depth[d] for d in range(max(per_depth) + 1)), ordered, search.states,
                   census.transitions, search.complete)


class _Census(Visitor[PState, int, Transition]):
    """States first reached per depth, and transitions by action kind."""

    def __init__(self) -> None:
        self.per_depth: Counter = Counter()
        self.kinds: Counter = Counter()
        self.transitions = 0

    def discovered(self, node: PState, key: int, depth: int) -> None:
        self.per_depth[depth] += 1

    def edge(self, source: int, edge: Transition, target: int, new: bool) -> None:
        self.count(edge)

    def count(self, transition: Transition) -> None:
        self.transitions += 1
        self.kinds[transition.action.kind] += 1


def summary_figure(summary: Summary, title: str = "") -> Figure:
    figure = new_figure(10.0, max(3.2, 1.2 + 0.2 * len(summary.by_kind)))
    left = figure.add_axes((0.07, 0.15, 0.38, 0.68))
    left.bar(range(len(summary.per_depth)), summary.per_depth, color=COLORS["turn"])
    left.set_xlabel("depth (steps from the initial state)", fontsize=8)
    left.set_ylabel("states first reached", fontsize=8)
    left.tick_params(labelsize=7)
    right = figure.add_axes((0.66, 0.15, 0.31, 0.68))
    names = [kind for kind, _ in summary.by_kind]
    right.barh(range(len(names)), [n for _, n in summary.by_kind], color=COLORS["tool"])
    right.set_yticks(range(len(names)), names, fontsize=7)
    right.invert_yaxis()
    right.set_xlabel("transitions", fontsize=8)
    right.tick_params(labelsize=7)
    counted = "" if summary.complete else f" (counting stopped at {summary.states:,} states)"
    figure.text(0.01, 0.97, title or "state space", fontsize=9.5, weight="bold", va="top")
    figure.text(0.01, 0.9, f"{summary.states:,} states, {summary.transitions:,} transitions{counted}", fontsize=8,
                va="top", color=COLORS["muted"])
    return figure
