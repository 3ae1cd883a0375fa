"""Model specifications: names, documented parameters, named bug variants, and discovery.

Models register through the `steersim.models` entry point group, so the engine never imports a model
package (the layering rule `models -> sim`, never `sim -> models`), and a user's own package can add
models that the command line lists and checks like the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from sim.errors import UsageError
from sim.model import Model

ENTRY_POINT_GROUP = "steersim.models"


@dataclass(frozen=True)
class Param:
    """One documented parameter. `choices` restricts a string; `low`/`high` bound an int."""

    name: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    low: int | None = None
    high: int | None = None

    def parse(self, text: str) -> Any:
        """Turn a command-line value into this parameter's type, or say what is allowed."""
        if isinstance(self.default, bool):
            lowered = text.lower()
            if lowered in ("true", "1", "yes", "on"):
                return True
            if lowered in ("false", "0", "no", "off"):
                return False
            raise UsageError(f"parameter {self.name} takes true or false, not {text!r}")
        if isinstance(self.default, int):
            try:
                return int(text)
            except ValueError:
                raise UsageError(f"parameter {self.name} takes a whole number, not {text!r}") from None
        if isinstance(self.default, float):
            try:
                return float(text)
            except ValueError:
                raise UsageError(f"parameter {self.name} takes a number, not {text!r}") from None
        return text

    def validate(self, value: Any) -> Any:
        if isinstance(self.default, bool) and not isinstance(value, bool):
            raise UsageError(f"parameter {self.name} takes true or false, not {value!r}")
        if isinstance(self.default, str) and not isinstance(value, str):
            raise UsageError(f"parameter {self.name} takes a string, not {value!r}")
        if isinstance(self.default, int) and not isinstance(self.default, bool):
            if isinstance(value, bool) or not isinstance(value, int):
                raise UsageError(f"parameter {self.name} takes a whole number, not {value!r}")
            if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
                raise UsageError(f"parameter {self.name}={value} is out of range; use {self.low}..{self.high}")
        if self.choices and value not in self.choices:
            raise UsageError(f"parameter {self.name}={value!r} is not one of: {', '.join(self.choices)}")
        return value

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "default": self.default, "doc": self.doc}
        if self.choices:
            out["choices"] = list(self.choices)
        if self.low is not None or self.high is not None:
            out["range"] = [self.low, self.high]
        return out


@dataclass(frozen=True)
class ModelSpec:
    """How to build a model: its parameters with defaults, its named bug variants (name -> the property
    that catches it and one line of what goes wrong) and a factory taking validated parameters."""

    name: str
    doc: str
    params: tuple[Param, ...]
    bugs: Mapping[str, str]
    factory: Callable[[Mapping[str, Any], str | None], Model]
    bug_catchers: Mapping[str, str] = field(default_factory=dict)
    bug_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def resolve(self, given: Mapping[str, Any], bug: str | None = None) -> dict[str, Any]:
        """Defaults, overlaid with the parameters a bug variant needs to show at all (`bug_params`),
        overlaid with `given`; each checked, and unknown names refused with the known ones."""
        known = {p.name: p for p in self.params}
        for key in given:
            if key not in known:
                raise UsageError(
                    f"model {self.name!r} has no parameter {key!r}; its parameters are: "
                    + ", ".join(known)
                )
        chosen = {**self.bug_params.get(bug or "", {}), **given}
        return {p.name: p.validate(chosen.get(p.name, p.default)) for p in self.params}

    def parse_assignments(self, assignments: Sequence[str]) -> dict[str, Any]:
        """Parse `-p KEY=VALUE` strings into typed values."""
        known = {p.name: p for p in self.params}
        out: dict[str, Any] = {}
        for text in assignments:
            key, sep, value = text.partition("=")
            if not sep:
                raise UsageError(f"parameter {text!r} should be KEY=VALUE, for example -p {self.params[0].name}=2")
            if key not in known:
                raise UsageError(
                    f"model {self.name!r} has no parameter {key!r}; its parameters are: " + ", ".join(known)
                )
            out[key] = known[key].validate(known[key].parse(value))  # each, though a later one may win
        return out

    def build(self, params: Mapping[str, Any] | None = None, bug: str | None = None) -> Model:
        if bug is not None and bug not in self.bugs:
            raise UsageError(
                f"model {self.name!r} has no bug variant {bug!r}; its bug variants are: " + ", ".join(self.bugs)
            )
        return self.factory(self.resolve(params or {}, bug), bug)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "doc": self.doc,
            "params": [p.to_json() for p in self.params],
            "bugs": [
                {"name": name, "doc": doc, "caught_by": self.bug_catchers.get(name),
                 "params": dict(self.bug_params.get(name, {}))}
                for name, doc in self.bugs.items()
            ],
        }


def available_models() -> dict[str, ModelSpec]:
    """Every registered model spec, by name, in name order."""
    found: dict[str, ModelSpec] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        found[ep.name] = get_model_spec(ep.name)
    return found


def plugin(group: str, name: str) -> Any:
    """The object registered as `name` in entry point group `group` (conformance harnesses, servers)."""
    points = {ep.name: ep for ep in entry_points(group=group)}
    if name not in points:
        known = ", ".join(sorted(points)) or "none"
        raise UsageError(f"unknown system {name!r}; known: {known}")
    return _load(points[name])


def _load(ep: Any) -> Any:
    try:
        return ep.load()
    except Exception as broken:  # an entry point's import failing is the user's install problem
        raise UsageError(
            f"cannot load {ep.group} entry point {ep.name!r} ({ep.value}): {type(broken).__name__}: {broken}; "
            "reinstall with `pip install -e .`"
        ) from None


def get_model_spec(name: str) -> ModelSpec:
    """The spec registered as `name`; only that entry point is loaded."""
    points = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if name not in points:
        known = ", ".join(sorted(points)) or "none (is steersim installed with `pip install -e .`?)"
        raise UsageError(f"unknown model {name!r}; known models: {known}")
    spec = _load(points[name])
    if not isinstance(spec, ModelSpec):
        raise UsageError(f"entry point {name!r} is not a ModelSpec; fix the package that declares it")
    return spec
