"""Which worker of a partitioned search owns a state: a hash of the fields of its model state that steps
change least.

A worker that meets a state another worker owns, for the first time, sends it to that owner, pickled
(`steersim.checking.partition`), and the owner looks it up again: the dearest thing a partitioned search
does that one process does not. An owner drawn from a hash of the whole state sends about half of all
the states a search meets across, since a step changes the state and with it, by chance, the owner.
An owner drawn from the fields that few steps change keeps most steps with the worker that took them:
a distribution policy that trades cross transitions for a modest imbalance between workers, as Orzan,
van de Pol and Valero Espada's does from an abstraction of the state space (ENTCS 128, 2005). Left
out, the fields most steps change, such as a queue's contents or a per-call status, make it a coarser
partition: more states share one value of what is kept, and the workers' shares of a level grow less
even. So it keeps a field when few steps change it, and keeps enough of them to tell many states apart:

- a breadth-first search of the model's first `SAMPLE` states (`steersim.checking.search`; the model's
  steps alone, no monitor or property) counts, for each field of the model state (a named tuple's, a
  dataclass's, a plain tuple's items), the share of its steps that change it;
- the fields more than `CHANGING` of those steps change are left out, the most changed first, as long
  as what is kept still tells apart `DISTINCT` sampled states per worker; else fewer are left out;
- a model state of no such shape, a model that breaks in the sample (the search itself then reports
  it, in search order) or a sample that leaves nothing out: the whole state is hashed.

Which worker owns what changes where a state is expanded and what crosses, never the report: the
coordinator numbers states by the order one process meets them (`steersim.checking.parallel`). Workers forked
from the command share its hash seed, so Python's own hash places a kept part the same way in each;
workers started elsewhere (Dask) agree only on the fingerprint (`steersim.core.fingerprint`).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from steersim.checking.search import Visitor, breadth_first
from steersim.core.fingerprint import fingerprint
from steersim.core.product import Product
from steersim.errors import ModelError

SAMPLE = 2_000  # states searched to count how often steps change each field
CHANGING = 0.1  # a field more of the sampled steps change than this is left out of the owner's hash
DISTINCT = 64  # sampled states the kept fields must tell apart, per worker


@dataclass(frozen=True)
class Ownership:
    """How owners are drawn: from `fields`, the fields of a model state of class `shape`, read by `part`
    (an `operator.itemgetter` or `attrgetter`, which pickle, so that a Dask worker reads the same), or
    from the whole key (its monitor states too) where `fields` is None or a state is of another class;
    `forked` says whether Python's hash may stand for the fingerprint."""

    fields: tuple[str, ...] | None = None
    shape: type | None = None
    part: Callable[[Any], Hashable] | None = None
    forked: bool = True

    def owners(self, keys: Sequence[Hashable], workers: int) -> np.ndarray:
        """The worker that owns each state, by its key (the state, or its symmetry representative)."""
        part, shape = self.part, self.shape
        values = keys if part is None else [part(key[0]) if type(key[0]) is shape else key  # type: ignore[index]
                                            for key in keys]
        place = hash if self.forked else fingerprint
        return np.array([place(value) % workers for value in values], dtype=np.int64)


WHOLE = Ownership()  # owners by the whole state, with Python's hash


def choose(product: Product, workers: int, forked: bool) -> Ownership:
    """The ownership of a search of `product` by `workers` workers (see the module's docstring)."""
    whole = Ownership(forked=forked)
    initial = product.init_states()
    shape = _fields(initial[0][0]) if initial else None
    if shape is None:
        return whole
    names, read = shape
    sample = _Sample(read, len(names))
    try:
        breadth_first([state for state, _ in initial], lambda s: [(None, t) for t in product.next_states(s)],
                      visitor=sample, budget=SAMPLE)
    except ModelError:
        return whole
    if not sample.steps:
        return whole
    rates = [changed / sample.steps for changed in sample.changed]
    changing = sorted((k for k in range(len(names)) if rates[k] > CHANGING), key=lambda k: (-rates[k], k))
    needed = min(DISTINCT * workers, len(sample.values))
    for drop in range(min(len(changing), len(names) - 1), 0, -1):
        kept = tuple(k for k in range(len(names)) if k not in changing[:drop])
        if len({tuple(values[k] for k in kept) for values in sample.values}) >= needed:
            state = initial[0][0]
            return Ownership(tuple(names[k] for k in kept), type(state), _getter(state, names, kept), forked)
    return whole


class _Sample(Visitor[Hashable, Hashable, None]):
    """The sampled states' field values, and per field how many sampled steps change it."""

    def __init__(self, read: Callable[[Any], tuple], fields: int) -> None:
        self.read = read
        self.values: list[tuple] = []
        self.steps = 0
        self.changed = [0] * fields

    def discovered(self, node: Hashable, key: Hashable, depth: int) -> None:
        self.values.append(self.read(node))

    def expanded(self, node: Hashable, key: Hashable, depth: int, edges: Sequence[tuple[None, Hashable]]) -> None:
        source = self.read(node)
        for _, target in edges:
            self.steps += 1
            for k, (before, after) in enumerate(zip(source, self.read(target), strict=True)):
                if before != after:
                    self.changed[k] += 1


def _fields(state: Any) -> tuple[tuple[str, ...], Callable[[Any], tuple]] | None:
    """The names of a model state's fields and how to read all of them, or None for a state of no
    such shape (it is then hashed whole)."""
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        names = tuple(field.name for field in dataclasses.fields(state))
        return (names, lambda s: tuple(getattr(s, name) for name in names)) if len(names) > 1 else None
    if isinstance(state, tuple) and len(state) > 1:
        names = tuple(getattr(state, "_fields", ())) or tuple(str(k) for k in range(len(state)))
        return names, tuple
    return None


def _getter(state: Any, names: tuple[str, ...], kept: tuple[int, ...]) -> Callable[[Any], Hashable]:
    if isinstance(state, tuple):
        return operator.itemgetter(*kept)
    return operator.attrgetter(*(names[k] for k in kept))
