"""The graph the conformance harness serves: `NODES` nodes in a row, no model, no network.

Each node waits `CONTROL.duration` virtual seconds and adds one item, `<run>.<node>`, to the thread's
`items`; when its run is cancelled while it waits, it first runs a clean-up that waits
`CONTROL.cleanup` seconds (a connection closed, a partial result saved), then lets the cancellation
through. A run named in `CONTROL.fail` raises at the node given there. The run's name comes with the
run's config (`configurable.run_name`), so the scenario decides every step, await and clean-up.
"""

from __future__ import annotations

import asyncio
import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

NODES = 2


class NodeFailure(RuntimeError):
    """What a node raises when the scenario says its run fails there."""


@dataclass
class Control:
    duration: float = 1.0
    cleanup: float = 0.0
    fail: dict[str, int] = field(default_factory=dict)


CONTROL = Control()


class Items(TypedDict):
    items: Annotated[list[str], operator.add]


def _node(index: int) -> Any:
    async def node(state: Items, config: RunnableConfig) -> dict:
        run = config["configurable"].get("run_name", "?")
        try:
            await asyncio.sleep(CONTROL.duration)
        except asyncio.CancelledError:
            if CONTROL.cleanup:
                await asyncio.sleep(CONTROL.cleanup)
            raise
        if CONTROL.fail.get(run) == index:
            raise NodeFailure(f"{run} fails at node {index}")
        return {"items": [f"{run}.{index}"]}

    node.__name__ = f"node{index}"
    return node


def build() -> Any:
    builder = StateGraph(Items)
    previous = START
    for index in range(1, NODES + 1):
        builder.add_node(f"node{index}", _node(index))
        builder.add_edge(previous, f"node{index}")
        previous = f"node{index}"
    builder.add_edge(previous, END)
    return builder.compile()


graph = build()
