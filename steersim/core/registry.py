"""Model specifications: names, documented parameters, named bug variants, and discovery.

Models register through the `steersim.models` entry point group, so the engine never imports a model
package (the layering rule `models -> sim`, never `sim -> models`), and a user's own package can add
models that the command line lists and checks like the built-in ones. A model is also found by
reference, without packaging: `path/to/file.py:SPEC` (a file, relative to the current directory) or
`package.module:SPEC` (importable, or found from the current directory), naming a ModelSpec. Every
command takes a reference wherever it takes a model name, and passes the reference on (to worker
processes, into trace headers), so that each place builds the same model.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from importlib.metadata import entry_points
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from steersim.core.model import Model, ModelBase, model_error
from steersim.errors import ModelError, UsageError

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

    def __post_init__(self) -> None:
        """A default the parameter itself refuses would make every run of the model fail: refuse it where
        the parameter is declared, in the model file's own line."""
        try:
            self.validate(self.default)
        except UsageError as refused:
            raise ValueError(f"Param {self.name!r} has default {self.default!r}, which it refuses: {refused}") from None

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
class Bug:
    """A named bug variant: one line of what goes wrong, the property that must catch it, and the
    parameters it needs to show at all (applied beneath the ones the user gives)."""

    name: str
    doc: str
    caught_by: str | None = None
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "doc": self.doc, "caught_by": self.caught_by, "params": dict(self.params)}


@dataclass(frozen=True)
class Reading:
    """A documented alternative to some of the defaults (another reading of what the system does, another
    setting its users choose), which `steersim check MODEL` explores after the defaults. One configuration
    runs only the code of its own reading; the readings bring the rest of the model's code, and what the
    properties say about it, into a user's first check. Each must pass and take seconds."""

    params: Mapping[str, Any]
    doc: str

    @property
    def assignments(self) -> tuple[str, ...]:
        """The reading as the `-p` assignments that check it alone, e.g. `mode=collect`, `routes=2`."""
        return tuple(f"{key}={_shown(value)}" for key, value in self.params.items())

    @property
    def label(self) -> str:
        return " ".join(self.assignments)

    def to_json(self) -> dict[str, Any]:
        return {"params": dict(self.params), "doc": self.doc}


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class ModelSpec:
    """How to build a model: its parameters with defaults, its named bug variants (`Bug` records) and a
    factory taking validated parameters and the bug variant (a ModelBase subclass is one). The records,
    given as `bugs`, are the one source of bug data and stay as `variants`; once built, `bugs` is the
    view name -> doc (what most callers ask: is there such a variant, what is it), and `bug_catchers`
    (name -> the property that catches it) and `bug_params` (name -> the parameters it needs) are
    views too."""

    name: str
    doc: str
    params: tuple[Param, ...]
    bugs: Sequence[Bug] | Mapping[str, str]  # given: the records; once built: the view name -> doc
    factory: Callable[[Mapping[str, Any], str | None], Model | ModelBase]
    readings: Sequence[Reading] = ()
    variants: tuple[Bug, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        variants = tuple(self.bugs)
        if not all(isinstance(bug, Bug) for bug in variants):
            raise ValueError(f"model {self.name!r}: bugs is a sequence of Bug(name, doc, caught_by, params)")
        names = [bug.name for bug in variants]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"model {self.name!r} names bug variant {twice[0]!r} twice")
        object.__setattr__(self, "variants", variants)
        object.__setattr__(self, "bugs", MappingProxyType({bug.name: bug.doc for bug in variants}))
        object.__setattr__(self, "readings", tuple(self.readings))
        for reading in self.readings:
            self._check_reading(reading)

    def _check_reading(self, reading: Reading) -> None:
        """A reading the parameters refuse would fail every default check: refuse it where it is declared."""
        if not isinstance(reading, Reading) or not reading.params:
            raise ValueError(f"model {self.name!r}: readings is a sequence of Reading(params, doc), each setting "
                             f"at least one parameter, not {reading!r}")
        try:
            resolved = self.resolve(reading.params)
        except UsageError as refused:
            raise ValueError(f"model {self.name!r}: reading {reading.label!r}: {refused}") from None
        if all(resolved[p.name] == p.default for p in self.params if p.name in reading.params):
            raise ValueError(f"model {self.name!r}: reading {reading.label!r} sets only defaults; the default "
                             "check runs them already")

    @property
    def bug_catchers(self) -> dict[str, str]:
        return {bug.name: bug.caught_by for bug in self.variants if bug.caught_by}

    @property
    def bug_params(self) -> dict[str, Mapping[str, Any]]:
        return {bug.name: bug.params for bug in self.variants if bug.params}

    def resolve(self, given: Mapping[str, Any], bug: str | None = None) -> dict[str, Any]:
        """Defaults, overlaid with the parameters a bug variant needs to show at all (`bug_params`),
        overlaid with `given`; each checked, and unknown names (and an unknown bug variant) refused with
        the known ones."""
        self._check_bug(bug)
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
        """The model at `params`, resolved here (`resolve`)."""
        return self.build_resolved(self.resolve(params or {}, bug), bug)

    def build_resolved(self, resolved: Mapping[str, Any], bug: str | None = None) -> Model:
        """The model at parameters `resolve` gave, which are not resolved again: a run resolves once, for
        its reports and its workers alike, and builds from what it resolved."""
        self._check_bug(bug)
        if set(resolved) != {p.name for p in self.params}:
            raise ValueError(f"model {self.name!r}: build_resolved takes the parameters resolve() gives, "
                             f"not {dict(resolved)}")
        try:
            return self.factory(resolved, bug)
        except UsageError:
            raise
        except Exception as broken:  # the model's own constructor: the user's code, reported as such
            raise model_error(broken, None, what=f"building model {self.name!r} with {resolved}") from broken

    def _check_bug(self, bug: str | None) -> None:
        if bug is not None and bug not in self.bugs:
            raise UsageError(
                f"model {self.name!r} has no bug variant {bug!r}; its bug variants are: " + ", ".join(self.bugs)
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "doc": self.doc,
            "params": [p.to_json() for p in self.params],
            "bugs": [bug.to_json() for bug in self.variants],
            "readings": [reading.to_json() for reading in self.readings],
        }


_DATACLASS_INIT = ModelSpec.__init__
_INIT_FIELDS = tuple(f.name for f in fields(ModelSpec) if f.init)


def _init_of_0_1_too(self: ModelSpec, *args: Any, bug_catchers: Mapping[str, str] | None = None,
                     bug_params: Mapping[str, Mapping[str, Any]] | None = None, **kwargs: Any) -> None:
    """ModelSpec's own __init__, which also takes a model file written for steersim 0.1 (until 0.3): `bugs`
    as a mapping of name to doc, with `bug_catchers` and `bug_params` beside it, each spelling warned of
    once and turned into the `Bug` records that are the one source of bug data now."""
    given = {**dict(zip(_INIT_FIELDS, args, strict=False)), **kwargs}
    bugs = given.get("bugs", ())
    old = [name for name, value in (("bugs={name: doc}", bugs if isinstance(bugs, Mapping) else None),
                                    ("bug_catchers=", bug_catchers), ("bug_params=", bug_params))
           if value is not None]
    for spelling in old:
        warnings.warn(f"ModelSpec({spelling}...) is deprecated and goes in steersim 0.3: give bugs as "
                      "Bug(name, doc, caught_by, params) records", DeprecationWarning, stacklevel=2)
    if old:
        records = tuple(Bug(name, doc) for name, doc in bugs.items()) if isinstance(bugs, Mapping) else tuple(bugs)
        names = {bug.name for bug in records if isinstance(bug, Bug)}
        for what, table in (("bug_catchers", bug_catchers or {}), ("bug_params", bug_params or {})):
            stray = [name for name in table if name not in names]
            if stray:
                raise ValueError(f"model {given.get('name')!r}: {what} names {stray[0]!r}, which is not in bugs")
        given["bugs"] = tuple(replace(bug, caught_by=(bug_catchers or {}).get(bug.name, bug.caught_by),
                                      params=(bug_params or {}).get(bug.name, bug.params))
                              if isinstance(bug, Bug) else bug for bug in records)
    _DATACLASS_INIT(self, **given)


ModelSpec.__init__ = _init_of_0_1_too  # type: ignore[method-assign]


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


def get_model_spec(reference: str) -> ModelSpec:
    """The spec a reference names: a registered name (only that entry point is loaded),
    `path/to/file.py:ATTR` or `package.module:ATTR`. Anything else is refused with one line."""
    if ":" not in reference:
        if reference.endswith(".py"):
            raise UsageError(f"model {reference!r}: a model file needs the name of its spec, as in {reference}:SPEC")
        return _registered(reference)
    where, _, attr = reference.rpartition(":")
    if not where or not attr.isidentifier():
        raise UsageError(f"model {reference!r}: expected NAME, path/to/file.py:SPEC or package.module:SPEC")
    module = _file_module(reference, where) if _is_file(where) else _import_module(reference, where)
    if not hasattr(module, attr):
        specs = sorted(k for k, v in vars(module).items() if isinstance(v, ModelSpec))
        defined = f"; it defines: {', '.join(specs)}" if specs else "; it defines no ModelSpec"
        raise UsageError(f"model {reference!r}: {where} has no attribute {attr!r}{defined}")
    spec = getattr(module, attr)
    if not isinstance(spec, ModelSpec):
        raise UsageError(f"model {reference!r}: {attr} is a {type(spec).__name__}, not a steersim.ModelSpec")
    return spec


def _registered(name: str) -> ModelSpec:
    points = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if name not in points:
        known = ", ".join(sorted(points)) or "none (is steersim installed with `pip install -e .`?)"
        raise UsageError(f"unknown model {name!r}; known models: {known} (or give path/to/file.py:SPEC)")
    spec = _load(points[name])
    if not isinstance(spec, ModelSpec):
        raise UsageError(f"entry point {name!r} is not a ModelSpec; fix the package that declares it")
    return spec


def _is_file(where: str) -> bool:
    return where.endswith(".py") or "/" in where or os.sep in where


def _file_module(reference: str, where: str) -> ModuleType:
    """The module of a model file, loaded once per process and again when the file changes. Its module
    name is derived from the file's absolute path (never the file's stem, which may shadow a standard
    module such as `queue`), so that every process loading the file gives its classes the same name
    and states pickle between the processes of one run."""
    path = Path(where).resolve()
    if not path.is_file():
        raise UsageError(f"model {reference!r}: no file {where}")
    stat = path.stat()
    name = "steersim_model_" + hashlib.blake2b(str(path).encode(), digest_size=6).hexdigest()
    version = (stat.st_mtime_ns, stat.st_size)
    module = sys.modules.get(name)
    if module is not None and getattr(module, "__steersim_version__", None) == version:
        return module
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise UsageError(f"model {reference!r}: {where} is not a Python file")
    module = importlib.util.module_from_spec(loader_spec)
    module.__steersim_version__ = version  # type: ignore[attr-defined]
    sys.modules[name] = module  # before running it: dataclasses and pickle look the module up by name
    try:
        loader_spec.loader.exec_module(module)
    except Exception as broken:
        del sys.modules[name]
        raise _load_error(reference, broken) from None
    return module


def _import_module(reference: str, where: str) -> ModuleType:
    """An importable module; one that is not installed is also looked for from the current directory,
    as `python -m` would."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.append(here)
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as missing:
        if missing.name and (where == missing.name or where.startswith(missing.name + ".")):
            raise UsageError(f"cannot load model {reference!r}: no module {missing.name!r} (not installed, and "
                             f"not found from {here}); give a model name, path/to/file.py:SPEC or "
                             "package.module:SPEC") from None
        raise _load_error(reference, missing) from None
    except Exception as broken:
        raise _load_error(reference, broken) from None


def _load_error(reference: str, broken: BaseException) -> ModelError:
    """Running the model's module raised: the user's code, reported with the line that raised."""
    if isinstance(broken, SyntaxError):
        return ModelError(f"loading model {reference!r}: SyntaxError: {broken.msg} ({broken.filename}:{broken.lineno})")
    return model_error(broken, None, what=f"loading model {reference!r}")
