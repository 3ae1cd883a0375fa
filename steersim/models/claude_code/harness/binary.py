"""The pinned Claude Code build: `@anthropic-ai/claude-code` from `node/package-lock.json`, whose platform
package ships the native `claude` binary the harness runs (the wrapper package's postinstall only copies it
over its `bin/claude.exe` placeholder, so the platform package's copy is the one that is always there)."""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass
from pathlib import Path

from steersim.errors import UsageError

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE_MODULES = NODE_DIR / "node_modules"
INSTALL_HINT = "install the pinned build with `npm ci --prefix steersim/models/claude_code/harness/node`"
PACKAGES = {"x86_64": "claude-code-linux-x64", "aarch64": "claude-code-linux-arm64"}


@dataclass(frozen=True)
class Build:
    """An installed Claude Code: the binary and the version its package declares."""

    binary: Path
    version: str

    def to_json(self) -> dict[str, str]:
        return {"package": "@anthropic-ai/claude-code", "version": self.version, "binary": str(self.binary)}


def binary_path(modules: Path = NODE_MODULES) -> Path:
    """Where the platform package puts the binary on this machine (it may be absent)."""
    machine = platform.machine()
    if platform.system() != "Linux" or machine not in PACKAGES:
        raise UsageError(f"the Claude Code harness runs on Linux x86-64 or arm64, not {platform.system()} {machine}")
    return modules / "@anthropic-ai" / PACKAGES[machine] / "claude"


def find_build(modules: Path = NODE_MODULES) -> Build:
    """The installed pinned build, or one line saying how to install it."""
    manifest = modules / "@anthropic-ai" / "claude-code" / "package.json"
    binary = binary_path(modules)
    if not manifest.exists() or not binary.exists():
        raise UsageError(f"Claude Code is not installed under {modules}; {INSTALL_HINT}")
    return Build(binary, json.loads(manifest.read_text())["version"])


def installed() -> bool:
    """Whether the pinned build is present (tests that need it skip, saying how to install it, if not)."""
    try:
        find_build()
    except UsageError:
        return False
    return True
