"""The pinned Codex build: `@openai/codex` from `node/package-lock.json`, whose platform package ships the
static `codex` binary the harness runs (without Node: `bin/codex.js` only finds and execs it)."""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass
from pathlib import Path

from steersim.errors import UsageError

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE_MODULES = NODE_DIR / "node_modules"
INSTALL_HINT = "install the pinned build with `npm ci --prefix steersim/models/codex/harness/node`"
# platform.machine() -> the platform package and the target triple bin/codex.js picks on Linux
TARGETS = {"x86_64": ("linux-x64", "x86_64-unknown-linux-musl"),
           "aarch64": ("linux-arm64", "aarch64-unknown-linux-musl")}


@dataclass(frozen=True)
class Build:
    """An installed Codex: the binary and the version its package declares."""

    binary: Path
    version: str

    def to_json(self) -> dict[str, str]:
        return {"package": "@openai/codex", "version": self.version, "binary": str(self.binary)}


def binary_path(modules: Path = NODE_MODULES) -> Path:
    """Where the platform package puts the binary on this machine (it may be absent)."""
    machine = platform.machine()
    if platform.system() != "Linux" or machine not in TARGETS:
        raise UsageError(f"the Codex harness runs on Linux x86-64 or arm64, not {platform.system()} {machine}")
    package, triple = TARGETS[machine]
    return modules / "@openai" / f"codex-{package}" / "vendor" / triple / "bin" / "codex"


def find_build(modules: Path = NODE_MODULES) -> Build:
    """The installed pinned build, or one line saying how to install it."""
    manifest = modules / "@openai" / "codex" / "package.json"
    binary = binary_path(modules)
    if not manifest.exists() or not binary.exists():
        raise UsageError(f"Codex is not installed under {modules}; {INSTALL_HINT}")
    return Build(binary, json.loads(manifest.read_text())["version"])


def installed() -> bool:
    """Whether the pinned build is present (tests that need it skip, saying how to install it, if not)."""
    try:
        find_build()
    except UsageError:
        return False
    return True
