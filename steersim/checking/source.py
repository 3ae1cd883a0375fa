"""A digest of a model's source code, part of what a checkpoint must match to be resumed.

A checkpoint holds states of the model that was checked; the same name, parameters and options say
nothing of whether its code is still the same. Resumed after the model file changed, a search would mix
the states of two models into one verdict, so the run's identity includes the source: the file of a
`path/to/file.py:SPEC` model, and every Python file of the package that defines the model's factory (for
a built-in or entry-point model, its spec, state, properties and model modules together).
"""

from __future__ import annotations

import sys
from hashlib import blake2b
from pathlib import Path

from steersim.argtypes import model_source
from steersim.core.registry import get_model_spec


def source_files(reference: str) -> list[tuple[str, Path]]:
    """The files whose text makes up the model `reference` names, each with a name that does not depend
    on where the project lies, in a fixed order."""
    files: dict[str, Path] = {}
    named = model_source(reference)
    if named is not None:
        files[f"model:{Path(named).name}"] = Path(named)
    factory = get_model_spec(reference).factory
    module = sys.modules.get(getattr(factory, "__module__", None) or "")
    spec = getattr(module, "__spec__", None)
    package = sys.modules.get(spec.parent) if spec is not None and spec.parent else None
    for folder in getattr(package, "__path__", None) or ():
        for path in Path(folder).rglob("*.py"):
            files[f"{package.__name__}:{path.relative_to(folder).as_posix()}"] = path
    if module is not None and getattr(module, "__file__", None) and package is None:
        files[f"module:{Path(module.__file__).name}"] = Path(module.__file__)
    return sorted(files.items())


def source_digest(reference: str) -> str:
    """BLAKE2b-128 over the model's source files, each by its name and its bytes."""
    digest = blake2b(digest_size=16)
    for name, path in source_files(reference):
        digest.update(name.encode() + b"\0" + blake2b(path.read_bytes(), digest_size=16).digest())
    return digest.hexdigest()
