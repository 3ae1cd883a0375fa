"""How states cross between the processes of a partitioned search: pickled, with the two shapes models
build their states from reduced to their field values and rebuilt without calling back into Python.

A worker sends each state it meets first and does not own to its owner, so the time a state takes to
pickle and unpickle is spent once per state of the check. Pickle's own way with a frozen slotted
dataclass, the shape `steersim.core.model` asks for, goes through the dataclass's `__getstate__` and
`__setstate__`, Python functions that look up the fields and set them one call at a time; a named tuple
is rebuilt through its Python `__new__`. Here a dataclass leaves as its class and the tuple of its field
values, read in one C call (`operator.attrgetter`), and is rebuilt by setting its slots directly; a named
tuple is rebuilt by `tuple.__new__`. A class that says how it pickles (its own `__reduce__`,
`__reduce_ex__`, `__getstate__` or `__setstate__`), one whose instances keep a `__dict__`, and every
other object keep pickle's own way, so what arrives equals what left whatever the model built.
"""

from __future__ import annotations

import dataclasses
import inspect
import io
import operator
import pickle
import types
from collections.abc import Callable
from typing import Any

_new = object.__new__
_tuple_new = tuple.__new__
_OWN = ("__reduce__", "__reduce_ex__", "__getstate__", "__setstate__")
_GENERATED = ("_dataclass_getstate", "_dataclass_setstate")  # what `dataclass(slots=True)` adds

PROTOCOL = pickle.HIGHEST_PROTOCOL
_OWN_WAY = operator.methodcaller("__reduce_ex__", PROTOCOL)  # what pickle asks an object it has no rule for
# per slotted dataclass: the setters of its slots in field order, in the process that rebuilds
_setters: dict[type, tuple[Callable[[Any, Any], None], ...]] = {}


class _Reductions(dict):
    """The pickler's dispatch table: per class met, the function that reduces its instances, made the
    first time the class is met. Pickle looks a class up here in C for every object it does not write
    itself (not None, bools, exact ints, floats, strings, bytes, tuples, lists, dicts, sets, classes
    or functions); a class left to pickle's own way gets `__reduce_ex__` called from C too, so it costs
    no Python call more than pickle itself."""

    def __missing__(self, cls: type) -> Callable[[Any], Any]:
        reduce = self[cls] = _reduction_of(cls)
        return reduce


def dumps(objects: Any) -> bytes:
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=PROTOCOL)
    pickler.dispatch_table = _REDUCTIONS
    pickler.dump(objects)
    return out.getvalue()


def loads(blob: bytes) -> Any:
    return pickle.loads(blob)


def _reduction_of(cls: type) -> Callable[[Any], Any]:
    if _says_how_it_pickles(cls) or cls.__dictoffset__ != 0:  # a __dict__ is pickle's to write
        return _OWN_WAY
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):  # a named tuple
        return lambda obj: (_tuple_new, (cls, tuple(obj)))
    if dataclasses.is_dataclass(cls):
        names = [f.name for f in dataclasses.fields(cls)]
        if names and all(isinstance(inspect.getattr_static(cls, n), types.MemberDescriptorType) for n in names):
            values = operator.attrgetter(*names)
            if len(names) == 1:  # `attrgetter` of one name gives the value itself
                return lambda obj: (_rebuild, (cls, (values(obj),)))
            return lambda obj: (_rebuild, (cls, values(obj)))
    return _OWN_WAY


_REDUCTIONS = _Reductions()


def _says_how_it_pickles(cls: type) -> bool:
    for name in _OWN:
        for klass in cls.__mro__:
            if name in vars(klass):
                if klass in (object, tuple):
                    break
                if getattr(vars(klass)[name], "__name__", "") in _GENERATED:
                    break
                return True
    return False


def _rebuild(cls: type, values: tuple) -> Any:
    """A slotted dataclass from its field values, each slot set as `__setstate__` would set it."""
    obj = _new(cls)
    try:
        setters = _setters[cls]
    except KeyError:
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        setters = _setters[cls] = tuple(inspect.getattr_static(cls, n).__set__ for n in names)
    for setter, value in zip(setters, values, strict=True):
        setter(obj, value)
    return obj
