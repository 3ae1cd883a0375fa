"""Fingerprints are stable across processes and PYTHONHASHSEED values, and refuse non-canonical states."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from steersim.core.fingerprint import check_canonical, fingerprint

PROGRAM = """
from steersim.models.teaching import SPEC
from steersim.core.product import Product
from steersim.core.fingerprint import fingerprint
p = Product(SPEC.build({}))
s = p.init_states()[0]
out = []
for _ in range(12):
    t = p.successors(s)
    s = t[-1].target
    out.append(f"{fingerprint(s):016x}")
print(",".join(out))
"""


def test_fingerprints_do_not_depend_on_the_hash_seed():
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outputs.add(subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True,
                                   check=True).stdout)
    assert len(outputs) == 1


@dataclass(frozen=True)
class Good:
    a: tuple
    b: str


@dataclass
class Mutable:
    a: int


def test_equal_values_have_equal_fingerprints_whatever_their_identity():
    x = ("a" * 3, (1, 2))
    y = ("".join(["a", "aa"]), tuple([1, 2]))
    assert x is not y and fingerprint(x) == fingerprint(y)
    assert fingerprint((Good((1,), "s"), ())) == fingerprint((Good(tuple([1]), "s"), ()))
    assert fingerprint((1, 2)) != fingerprint((2, 1))


def test_check_canonical_names_the_offending_part():
    check_canonical(Good((1, ("x", None)), "s"))
    with pytest.raises(TypeError, match=r"state\.a\[0\] is a frozenset"):
        check_canonical(Good((frozenset({1}),), "s"))
    with pytest.raises(TypeError, match="not frozen"):
        check_canonical(Mutable(1))
