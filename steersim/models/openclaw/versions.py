"""What differs between the published OpenClaw builds, as model parameters with one preset per build.

The model describes one build at a time. Each behaviour that changed between published builds is a
parameter of its own (so a reader can turn it on and off and see what it guards), and the `version`
parameter names the build whose values those parameters take unless they are set explicitly.
`steersim conform openclaw` picks the preset of the build it drives.

`restore_on_abort`
    2026.8.1-beta.3: off, drained steers and follow-ups not yet injected are dropped with an aborted run.
    2026.9.6: on, `Agent.finishRun` calls `steeringQueue.restore()` and `followUpQueue.restore()`, which put
    the in-flight messages back at the front of their queues (`PendingMessageQueue.inFlight`, since 2026.8.1).
`skip_text` (`STEERING_TOOL_SKIP_MESSAGE`, changed in 2026.9.5)
    2026.8.1-beta.3: `Skipped due to queued user message.`
    2026.9.6: `Skipped to process an incoming message.`

Both builds share the end-of-run steering recheck after the follow-up drain (the model's
`no-final-recheck` bug variant removes it) and the single launch checkpoint of a parallel batch. The
streamed tool batches of 2026.9.6 (`streamAgentResponse` running calls while the response streams)
need a provider stream that emits tool calls before `done`; the scripted model emits only `done`, so
every batch of both builds runs after the stream and the model has no parameter for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from steersim.errors import UsageError

PRESET = "preset"
SKIP_TEXTS = {
    "queued-user-message": "Skipped due to queued user message.",
    "incoming-message": "Skipped to process an incoming message.",
}


@dataclass(frozen=True)
class Preset:
    """The version-dependent behaviour of one published build."""

    restore_on_abort: bool
    skip_text: str  # a key of SKIP_TEXTS


VERSIONS: dict[str, Preset] = {
    "2026.8.1-beta.3": Preset(restore_on_abort=False, skip_text="queued-user-message"),
    "2026.9.6": Preset(restore_on_abort=True, skip_text="incoming-message"),
}
REFERENCE_VERSION = "2026.8.1-beta.3"


def preset_for(version: str) -> Preset:
    """The preset of a published build, or a usage error naming the builds that have one."""
    try:
        return VERSIONS[version]
    except KeyError:
        known = ", ".join(VERSIONS)
        raise UsageError(f"no model preset for openclaw@{version}; known builds: {known} "
                         "(pass --preset with the nearest one)") from None
