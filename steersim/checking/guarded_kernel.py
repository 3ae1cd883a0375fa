"""A model's vector kernel with what its code raises turned into a model error. The kernel is the
author's code like `step`: an index out of range in it is their mistake, to be reported as one line
naming the kernel's method and the line that raised, never as an internal error of steersim's. A batch
step covers many states and actions at once, so no single action or path can be named."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from steersim.core.model import model_error

GUARDED = ("encode", "decode", "steps", "predicates")  # the kernel's methods an engine calls


class GuardedKernel:
    """`kernel` with its GUARDED methods raising ModelError; its other attributes passed on as they are."""

    def __init__(self, kernel: Any) -> None:
        self._kernel = kernel
        for name in GUARDED:
            setattr(self, name, _guard(getattr(kernel, name), name))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kernel, name)


def _guard(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    def guarded(*args: Any) -> Any:
        try:
            return method(*args)
        except Exception as broken:
            raise model_error(broken, None, what=f"the vector kernel's {name}()") from broken
    return guarded
