"""The same bytes on every CPU: traces, sweep and check reports, and report artefacts do not depend on
which SIMD kernels numpy dispatches, which code paths the C library's maths functions take, which
BLAS kernels run, the thread count or the hash seed.

A machine cannot become another CPU, but it can refuse itself features: numpy's
NPY_DISABLE_CPU_FEATURES drops its AVX-512 (then also its AVX2 and FMA) kernels, glibc's hwcaps tunable
makes libm take its code for CPUs without FMA, and OPENBLAS_CORETYPE picks an older BLAS kernel. Each
setting runs `tests/portable_artefacts.py` in a fresh process and the folders must be identical.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from portable_artefacts import DISPATCH_FILE

introspect = pytest.importorskip("numpy.lib.introspect", reason="numpy 2 reports its CPU dispatch")

ROOT = Path(__file__).resolve().parents[1]

X86 = platform.machine().lower() in ("x86_64", "amd64")


def dispatch_targets() -> set[str]:
    """Every SIMD target this numpy build can dispatch to: the ufuncs' (their introspection) and the
    rest of numpy's (sorting, for one), as `numpy.show_runtime()` lists them. Not the baseline, which
    cannot be disabled."""
    from numpy._core import _multiarray_umath

    targets = set(_multiarray_umath.__cpu_dispatch__)
    for signatures in introspect.opt_func_info().values():
        for info in signatures.values():
            targets.update(t for t in info["available"].split() if not t.startswith("baseline"))
    return targets


AVX512 = sorted(t for t in dispatch_targets() if t == "X86_V4" or t.startswith("AVX512"))
AVX2 = sorted({*AVX512, *(t for t in dispatch_targets() if t == "X86_V3")})
SETTINGS: dict[str, dict[str, str]] = {
    "default": {"PYTHONHASHSEED": "0"},
    "no AVX-512": {"NPY_DISABLE_CPU_FEATURES": " ".join(AVX512), "PYTHONHASHSEED": "1",
                   "OPENBLAS_NUM_THREADS": "1", **({"OPENBLAS_CORETYPE": "Haswell"} if X86 else {})},
    "no AVX2, no FMA": {"NPY_DISABLE_CPU_FEATURES": " ".join(AVX2), "PYTHONHASHSEED": "2",
                        "OPENBLAS_NUM_THREADS": "2",
                        **({"OPENBLAS_CORETYPE": "Nehalem", "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4"}
                           if X86 else {})},
}


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != DISPATCH_FILE}


def first_difference(a: bytes, b: bytes) -> str:
    for number, (left, right) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False), 1):
        if left != right:
            return f"line {number}: {left[:300]!r} vs {right[:300]!r}"
    return "one is a prefix of the other"


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each setting's folder, written by processes run side by side."""
    root = tmp_path_factory.mktemp("portable")
    inherited = {k: v for k, v in os.environ.items()
                 if k not in ("NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES", "OPENBLAS_CORETYPE",
                              "GLIBC_TUNABLES")}
    folders = {name: root / f"setting{number}" for number, name in enumerate(SETTINGS)}
    children = {name: subprocess.Popen([sys.executable, str(ROOT / "tests" / "portable_artefacts.py"), str(folder)],
                                       env={**inherited, **SETTINGS[name]}, cwd=root, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True)
                for name, folder in folders.items()}
    for name, child in children.items():
        _, errors = child.communicate(timeout=300)
        assert child.returncode == 0, f"{name}: {errors.strip().splitlines()[-1:]}"
    return folders


def test_the_settings_change_numpy_dispatch(artefacts: dict[str, Path]) -> None:
    """Otherwise the comparison below would compare a setting with itself: `exp` over float64 is one
    of numpy's dispatched kernels, so a disabled target it ran on must make it run on another."""

    def current(name: str) -> str:
        info = json.loads((artefacts[name] / DISPATCH_FILE).read_text())
        return info["exp"]["dd"]["current"]

    default = current("default")
    for name in ("no AVX-512", "no AVX2, no FMA"):
        disabled = SETTINGS[name]["NPY_DISABLE_CPU_FEATURES"].split()
        assert current(name) not in disabled
        if default in disabled:
            assert current(name) != default


@pytest.mark.parametrize("name", [n for n in SETTINGS if n != "default"])
def test_every_artefact_has_the_same_bytes(artefacts: dict[str, Path], name: str) -> None:
    expected, got = files(artefacts["default"]), files(artefacts[name])
    assert len(expected) > 30 and sorted(got) == sorted(expected)
    differing = [path for path in expected if expected[path] != got[path]]
    assert not differing, (f"{len(differing)} of {len(expected)} files differ under {SETTINGS[name]}; first "
                           f"{differing[0]}, {first_difference(expected[differing[0]], got[differing[0]])}")
