"""A model state as a small, stable JSON object, and the change from one state to the next.

A counterexample reads as a story only when each step says what it changed. The view is taken from the
state's own fields (a dataclass, a named tuple or a mapping) unless the model names them itself through
the optional `render_state(state)` hook (say `queue: ["s1"]` where the state holds `q: (1,)`). Values
are made JSON in a fixed way (tuples become lists, sets are sorted), so the same state always gives the
same bytes, whatever the hash seed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence, Set
from enum import Enum
from typing import Any

View = dict[str, Any]


def state_view(model: Any, state: Any) -> View:
    """The view of a model state: the model's `render_state` hook when it has one, else its fields."""
    render = getattr(model, "render_state", None)
    raw = render(state) if render is not None else default_view(state)
    if not isinstance(raw, Mapping):
        raise TypeError(f"render_state returned {type(raw).__name__}, not a mapping of names to values")
    return {str(key): jsonable(value) for key, value in raw.items()}


def default_view(state: Any) -> Mapping[str, Any]:
    """The state's fields in declaration order; a state without named fields is shown whole."""
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    if isinstance(state, tuple) and hasattr(state, "_asdict"):
        return state._asdict()
    if isinstance(state, Mapping):
        return state
    return {"state": state}


def jsonable(value: Any) -> Any:
    """`value` as JSON: containers recursively, sets in sorted order, anything else unknown as its repr."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, Set):
        return sorted((jsonable(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(default_view(value))
    if isinstance(value, Sequence):
        return [jsonable(v) for v in value]
    return repr(value)


def view_changes(before: View, after: View) -> View:
    """The entries of `after` that differ from `before`, in `after`'s order; a name `after` no longer
    has maps to None."""
    changed = {key: value for key, value in after.items() if key not in before or before[key] != value}
    changed.update({key: None for key in before if key not in after})
    return changed


def apply_changes(view: View, changes: Mapping[str, Any]) -> View:
    """The view after `changes` (the inverse of `view_changes`)."""
    out = dict(view)
    out.update(changes)
    return out


def changes_text(changes: Mapping[str, Any], width: int = 0) -> str:
    """`name=value` pairs, the values as compact JSON; cut to `width` characters when given."""
    text = ", ".join(f"{key}={json.dumps(value, separators=(',', ':'))}" for key, value in changes.items())
    return text if not width or len(text) <= width else text[: width - 1] + "…"


def mentions(value: Any, wanted: str) -> bool:
    """Whether `wanted` is one of the string values of a view. Keys do not count: a table keyed by
    every call (`results: {"call_0": 0}`) holds the call whether or not it is still open."""
    if isinstance(value, str):
        return value == wanted
    if isinstance(value, dict):
        return any(mentions(v, wanted) for v in value.values())
    if isinstance(value, list):
        return any(mentions(v, wanted) for v in value)
    return False


def path_views(model: Any, path: Any) -> list[View]:
    """The view of each state of an explorer path (`steersim.core.paths.Path`): the initial one, then one per step."""
    from steersim.core.model import as_model_base

    base = as_model_base(model)
    return [state_view(base, state[0]) for state in path.states]
