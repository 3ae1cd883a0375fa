"""The Model API shared by the explorer and the simulator.

A model is a pure, finite transition system. Both engines drive it through the same calls, so that
every simulated trace is a path of the explored graph by construction. A model is written against
`ModelBase` (three required methods, everything else defaulted, the optional hooks declared), or
against the older two-call protocol `Model` (`next_state` and `observe`), which the engines see
through `AdaptedModel`.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, Literal, NamedTuple, Protocol, TypeVar

from steersim.core.facts import FACT_FIELDS, FACT_NAMES, Fact, FactError
from steersim.errors import ModelError

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
    (state, action, next), for rules such as "a launch never fires while a steer is pending". With
    `with_events=True`, `step` is called as step(state, action, next, events) with the transition's
    native events as the engine computed them, for a rule about what the system shows: a property
    never steps the model again to learn them. `kinds`, for a step property that only a step of
    some action kinds can break ("a launch never fires ..." holds of every step that is no launch):
    those kinds, and the engines judge it on their steps alone, which spares the call on every other
    step of a search. A kind it names must be one the model declares in `action_kinds`, if it
    declares any. `events`, for a `with_events` property that only steps sending some native events
    can break ("a steer is failed only after it was accepted" reads `steer.failed` events alone): their
    names, and the engines judge it on the steps that send one of them, or whose action is of one of
    its `kinds` when it names kinds too, and on no other step."""

    name: str
    state: Callable[[S], bool] | None = None
    step: Callable[..., bool] | None = None
    doc: str = ""
    kind: PropertyKind = "always"
    with_events: bool = False
    kinds: tuple[str, ...] | None = None
    events: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if (self.state is None) == (self.step is None):
            raise ValueError(f"Always({self.name!r}) needs exactly one of state= or step=")
        if self.with_events and self.step is None:
            raise ValueError(f"Always({self.name!r}): with_events=True is for a step= property, which it hands "
                             "the step's events")
        if self.kinds is not None:
            if self.step is None:
                raise ValueError(f"Always({self.name!r}): kinds= is for a step= property, which it judges on "
                                 "steps of those action kinds alone")
            self._keep_names("kinds", "action kinds", "agent.launch")
        if self.events is not None:
            if not self.with_events:
                raise ValueError(f"Always({self.name!r}): events= is for a step= property with with_events=True, "
                                 "which it judges on steps that send those events alone")
            self._keep_names("events", "event names", "steer.failed")

    def _keep_names(self, field: str, what: str, example: str) -> None:
        """`field` (kinds or events) kept as a tuple, once it is seen to be a non-empty collection of names."""
        names = getattr(self, field)
        if isinstance(names, str) or not names or not all(isinstance(name, str) for name in names):
            raise ValueError(f"Always({self.name!r}): {field}= takes a non-empty tuple of {what}, such as "
                             f"{field}=(\"{example}\",); got {names!r}")
        object.__setattr__(self, field, tuple(names))

    def judges(self, kind: str, names: Collection[str]) -> bool:
        """Whether this step property judges a step of action kind `kind` that sends events named `names`."""
        if self.kinds is None and self.events is None:
            return True
        return (self.kinds is not None and kind in self.kinds) or (
            self.events is not None and any(name in self.events for name in names))


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
    """The two-call protocol, which the engines see through `AdaptedModel` (a new model subclasses
    `ModelBase` instead). `actions` lists the enabled actions in a deterministic order (the
    simulator breaks timing ties by it); `next_state` returns None for an action that turns out to be a
    no-op, which both engines then ignore. `facts` maps one native event to the common vocabulary of
    `steersim.core.facts`, so that the core monitors judge every model, and every recorded real trace, alike.
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


DEFAULT_TIMING: Mapping[str, Any] = MappingProxyType({"default": {"dist": "exponential", "mean": 1.0}})
OPTIONAL_HOOKS = ("is_local", "symmetry", "vector_kernel", "match_event", "render_state", "judge_recorded",
                  "step_facts", "successor_facts")


class ModelBase(ABC, Generic[S]):
    """The base of a model: write `init_states`, `actions` and `step`; everything else has a default.

    `step(state, action)` returns `(next_state, events)`, or None when the action turns out to be a
    no-op there: one call, so that a model computes a step's events where it computes the step. The
    default `__init__` keeps the spec's resolved `params` and the `bug` variant, so the class itself can
    be a `ModelSpec` factory. The defaults: `name` is the class name; no actor is assumed fair
    (`fair_actors`: fnmatch patterns of the actors liveness may assume are not starved); every event is
    read as a fact (`facts`); no properties of the model's own beyond the core monitors; no extra
    monitors; one exponential timing of mean 1 for every kind. The optional hooks are declared here as
    None, and a model that offers one defines it as a method (see the README, "Contracts beyond the
    design card"): `is_local(action)`, `symmetry(state)`, `vector_kernel()`, `match_event(expected,
    observed)`, `render_state(state)` (the state as a mapping of names in the system's own vocabulary,
    shown at every step of a trace; by default the state's fields, see `steersim.core.stateview`).
    `action_kinds` names every kind of action the model can take, so that a check can name the ones
    that never fired (`steersim.checking.coverage`); empty, the default, means only the kinds seen count.
    `kinds_not_enabled()` names the declared kinds that these parameters cannot fire (a mode not chosen, a
    feature left off), each with the parameters that enable it, so that a check reports them as "not
    enabled by these parameters" rather than as unfired; a kind named there that fires anyway fails
    `check --require-coverage`, so the declaration cannot hide a reachable kind.
    `judge_recorded(trace)`: a model whose traces record a real peer's messages judges them again on
    replay (its findings). `step_facts(state, action)`: the step with the facts of its events, `(next,
    facts)` or None, without building the native events, which a check never shows unless a trace or a
    counterexample needs them; a model whose events are costly to build (payloads, formatted ids)
    offers it, and it must give exactly `step`'s next state and the facts of `step`'s events.
    `successor_facts(state)`: every step of `state` with its facts at once, one `(action, next, facts)`
    per action of `actions(state)` in that order (next None for a no-op), for a model whose steps of one
    state share work; it must agree with `actions` and `step_facts`, and a search calls it in their
    place. A subclass that overrides what a hook stands in for, below the class that defines the hook,
    is stepped without it (`steersim.core.product`). The engines call both when no step property reads
    events (`Always(with_events=True)`)."""

    #: the model's name in reports and traces (default: the class name)
    name: str = ""
    #: fnmatch patterns of the system's own actors assumed not to starve (weak fairness) in liveness checks
    fair_actors: Sequence[str] = ()
    #: every kind of action the model can take, so that a check names the kinds that never fired
    action_kinds: Sequence[str] = ()
    is_local: Callable[[Action], bool] | None = None
    symmetry: Callable[[Any], tuple[Any, Mapping[str, str]]] | None = None
    vector_kernel: Callable[[], Any] | None = None
    match_event: Callable[[Event, Event], bool] | None = None
    render_state: Callable[[Any], Mapping[str, Any]] | None = None
    # a model whose traces record a real peer's messages judges them again on replay (its findings)
    judge_recorded: Callable[[Any], Sequence[Any]] | None = None
    step_facts: Callable[[Any, Action], tuple[Any, Sequence[Fact]] | None] | None = None
    successor_facts: Callable[[Any], Sequence[tuple[Action, Any, Sequence[Fact]]]] | None = None

    def __init__(self, params: Mapping[str, Any] | None = None, bug: str | None = None) -> None:
        self.params = dict(params or {})
        self.bug = bug

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.name:
            cls.name = cls.__name__

    def kinds_not_enabled(self) -> Mapping[str, str]:
        """Declared kinds these parameters cannot fire, each with the parameters that enable it."""
        return {}

    @abstractmethod
    def init_states(self) -> Sequence[S]:
        """The initial states, in a fixed order."""

    @abstractmethod
    def actions(self, state: S) -> Sequence[Action]:
        """The actions enabled in `state`, in a fixed order (the simulator breaks timing ties by it)."""

    @abstractmethod
    def step(self, state: S, action: Action) -> tuple[S, Sequence[Event]] | None:
        """The next state and the events the real system would show, or None for a no-op."""

    def facts(self, event: Event) -> Sequence[Fact]:
        """By default every event is a fact of the vocabulary: its name is a fact's name, and its data has
        that fact's fields (other entries are details for the diagram). A model whose events speak their
        own vocabulary maps them here instead, as the harnesses of real systems do."""
        wanted = FACT_FIELDS.get(event.name)
        if wanted is None:
            raise FactError(f"event {event.name!r}, which is not a fact of the vocabulary (the default facts() "
                            f"reads every event as one): name it after one of {', '.join(FACT_NAMES)}, or "
                            "define facts(event) to map the model's own events")
        data = event.data
        missing = [key for key in wanted if key not in data]
        if missing:
            raise FactError(f"event {event.name!r} without field {missing[0]!r} (the fact takes "
                            f"{', '.join(wanted)})")
        return (Fact(event.name, tuple((key, data[key]) for key in wanted)),)

    def properties(self) -> Sequence[Property]:
        """The model's own properties, judged besides the core monitors."""
        return ()

    def monitors(self) -> Sequence[Any]:
        """Extra fact monitors (`steersim.core.monitors.Monitor`), run besides the core ones."""
        return ()

    def default_timing(self) -> Mapping[str, Any]:
        """The timing profile the simulator uses when the user gives none (see `steersim.simulate.timing`)."""
        return DEFAULT_TIMING

    def next_state(self, state: S, action: Action) -> S | None:
        """The two-call protocol, for code written against it; the engines call `step` once instead."""
        out = self.step(state, action)
        return None if out is None else out[0]

    def observe(self, state: S, action: Action, next: S) -> Sequence[Event]:
        out = self.step(state, action)
        return () if out is None else tuple(out[1])


class AdaptedModel(ModelBase):
    """Any model seen as a ModelBase: one written against the two-call protocol gets `step` from
    `next_state` and `observe`, and its optional methods, where it has them, as the declared hooks (the
    one place that looks for them). Subclasses change one aspect of a model they wrap (see
    `steersim.simulate.executors.SwarmModel`)."""

    def __init__(self, inner: Model | ModelBase) -> None:
        super().__init__(getattr(inner, "params", None), getattr(inner, "bug", None))
        self.inner = inner
        self.name = inner.name
        self.fair_actors = tuple(getattr(inner, "fair_actors", ()))
        self.action_kinds = tuple(getattr(inner, "action_kinds", ()))
        if hasattr(inner, "kinds_not_enabled"):
            self.kinds_not_enabled = inner.kinds_not_enabled  # type: ignore[method-assign]
        for hook in OPTIONAL_HOOKS:
            setattr(self, hook, getattr(inner, hook, None))
        if isinstance(inner, ModelBase):
            self.step = inner.step  # type: ignore[method-assign]  # no layer in between on the hot path

    def init_states(self) -> Sequence[Any]:
        return self.inner.init_states()

    def actions(self, state: Any) -> Sequence[Action]:
        return self.inner.actions(state)

    def step(self, state: Any, action: Action) -> tuple[Any, Sequence[Event]] | None:
        inner = self.inner
        nxt = inner.next_state(state, action)
        if nxt is None:
            return None
        return nxt, inner.observe(state, action, nxt)

    def facts(self, event: Event) -> Sequence[Fact]:
        return self.inner.facts(event)

    def properties(self) -> Sequence[Property]:
        return self.inner.properties()

    def monitors(self) -> Sequence[Any]:
        return tuple(getattr(self.inner, "monitors", tuple)())

    def default_timing(self) -> Mapping[str, Any]:
        return self.inner.default_timing()


def as_model_base(model: Model | ModelBase) -> ModelBase:
    """`model` itself when it is a ModelBase, else seen through `AdaptedModel`."""
    return model if isinstance(model, ModelBase) else AdaptedModel(model)


STATE_TEXT_LIMIT = 400


def model_error(broken: BaseException, state: Any, action: Action | None = None, what: str = "") -> ModelError:
    """A ModelError for an exception raised by model code (`what` says which part, when not a step):
    its type, message and the line that raised, with the action and the state (None: no state is
    involved). A fact outside the vocabulary says so alone."""
    if isinstance(broken, ModelError):
        return broken
    label = None if action is None else action.label()
    shown = None if state is None else state_text(state)
    if isinstance(broken, FactError):
        return ModelError(f"{label} emitted {broken}", label, shown)
    text = f"{type(broken).__name__}: {broken}{_raised_at(broken)}"
    return ModelError(f"{what} raised {text}" if what else text, label, shown)


def _raised_at(broken: BaseException) -> str:
    """Where the model's code raised: the innermost line of the traceback outside Python's own library
    and steersim's engine (the innermost line at all when there is none)."""
    engine = os.path.dirname(__file__) + os.sep
    library = sysconfig.get_paths()["stdlib"] + os.sep
    frames = list(traceback.walk_tb(broken.__traceback__))
    ours = [(f, n) for f, n in frames if not f.f_code.co_filename.startswith((engine, library, "<"))]
    if not (ours or frames):
        return ""
    frame, line = (ours or frames)[-1]
    return f" ({frame.f_code.co_filename}:{line}, in {frame.f_code.co_name})"


def state_text(state: Any) -> str:
    text = repr(state)
    return text if len(text) <= STATE_TEXT_LIMIT else text[: STATE_TEXT_LIMIT - 3] + "..."
