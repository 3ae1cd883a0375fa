"""The Model API shared by the explorer and the simulator.

A model is a pure, finite transition system. Both engines drive it through the same five calls, so
that every simulated trace is a path of the explored graph by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, Literal, NamedTuple, Protocol, TypeVar

from sim.facts import Fact

S = TypeVar("S", bound=Hashable)


class Action(NamedTuple):
    """Something one participant does. `actor` is a lane of the timing diagram, `kind` the key of the
    timing profile, `args` hashable details that tell two actions of one kind apart. A named tuple, not
    a dataclass: both engines build, hash and compare actions on every step, and tuples do that in C."""

    actor: str
    kind: str
    args: tuple = ()

    def label(self) -> str:
        inner = ", ".join(repr(a) for a in self.args)
        return f"{self.actor}: {self.kind}({inner})"

    def to_json(self) -> dict[str, Any]:
        return {"actor": self.actor, "kind": self.kind, "args": _jsonable(self.args)}


class Event(NamedTuple):
    """What the real system would show, in its own vocabulary: `source -> target` draws an arrow.
    `data` is never mutated once built (it is shared, e.g. by the empty default)."""

    source: str
    target: str
    name: str
    data: Mapping[str, Any] = MappingProxyType({})

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "name": self.name, "data": _jsonable(self.data)}


def _jsonable(value: Any) -> Any:
    """Tuples become lists and mappings keep their insertion order: the JSON form is canonical because
    models build their payloads in a fixed order."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    return value


PropertyKind = Literal["always", "sometimes", "eventually"]


@dataclass(frozen=True)
class Always(Generic[S]):
    """A safety property. `state` judges each reachable state; `step` judges each transition
    (state, action, next), for rules such as "a launch never fires while a steer is pending"."""

    name: str
    state: Callable[[S], bool] | None = None
    step: Callable[[S, Action, S], bool] | None = None
    doc: str = ""
    kind: PropertyKind = "always"

    def __post_init__(self) -> None:
        if (self.state is None) == (self.step is None):
            raise ValueError(f"Always({self.name!r}) needs exactly one of state= or step=")


@dataclass(frozen=True)
class Sometimes(Generic[S]):
    """A vacuity guard: some reachable state satisfies `state`. Unreached is a failure, because a check
    that never reached the interesting situation proved nothing about it."""

    name: str
    state: Callable[[S], bool]
    doc: str = ""
    kind: PropertyKind = "sometimes"


@dataclass(frozen=True)
class Eventually(Generic[S]):
    """Leads-to under weak fairness: whenever `trigger` holds, `goal` holds later on every fair path.
    With no trigger the obligation starts in the initial states. A path that ends (no action enabled)
    with the goal unmet violates it, and so does a fair cycle on which the goal never holds."""

    name: str
    goal: Callable[[S], bool]
    trigger: Callable[[S], bool] | None = None
    doc: str = ""
    kind: PropertyKind = "eventually"


Property = Always | Sometimes | Eventually


class Model(Protocol[S]):
    """The calls both engines make. `actions` lists the enabled actions in a deterministic order (the
    simulator breaks timing ties by it); `next_state` returns None for an action that turns out to be a
    no-op, which both engines then ignore. `facts` maps one native event to the common vocabulary of
    `sim.facts`, so that the core monitors judge every model, and every recorded real trace, alike.
    `fair_actors` are fnmatch patterns of the actors under weak fairness (liveness assumes they are not
    starved); `default_timing` is the timing profile the simulator uses when the user gives none."""

    name: str
    fair_actors: Sequence[str]

    def init_states(self) -> Sequence[S]: ...

    def actions(self, state: S) -> Sequence[Action]: ...

    def next_state(self, state: S, action: Action) -> S | None: ...

    def observe(self, state: S, action: Action, next: S) -> Sequence[Event]: ...

    def facts(self, event: Event) -> Sequence[Fact]: ...

    def properties(self) -> Sequence[Property]: ...

    def default_timing(self) -> Mapping[str, Any]: ...
