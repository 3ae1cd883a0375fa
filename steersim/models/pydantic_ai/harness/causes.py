"""The root causes behind the findings, each recognised by its mechanism in the recorded events, with what
Pydantic AI documents about it and the standalone script that reproduces it (`repro/`).

A recording's findings are explained by the causes whose evidence it shows; a finding no known cause
explains is reported as `unexplained` with the recording, for a person to read. `documented` says whether
the behaviour contradicts Pydantic AI's own documentation (a defect) or only the model's stricter reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from steersim.harness.finding import Finding
from steersim.models.pydantic_ai.harness.runner import Recording

REPRO = Path(__file__).parent / "repro"
UNEXPLAINED = "unexplained"
SYSTEM = "Pydantic AI"  # whose documentation a cause's verdict cites


@dataclass(frozen=True)
class Cause:
    name: str
    title: str
    mechanism: str
    documented: bool
    contract: str
    script: str

    @property
    def repro(self) -> Path:
        return REPRO / self.script


CAUSES = (
    Cause("run-stream-drops-queued-messages",
          "`run_stream` drops the messages still queued when its final result ends the run",
          "`run_stream` ends the run by advancing a `SetFinalResult` node; the pending-message capability's "
          "`drain_at_end` pops every queued message (`asap` and `when_idle`) into a redirect `ModelRequestNode`, "
          "which `run_stream` discards: the messages are in no request, not in `all_messages()`, not on "
          "`pending_messages` and in no `EnqueuedMessagesEvent`, though `enqueue` returned their `enqueue_id`",
          True,
          "`AgentRun.enqueue`/`RunContext.enqueue`: `asap` is delivered 'at the earliest opportunity ... or, if "
          "the agent would otherwise terminate, used to redirect the run into one more request'; `when_idle` "
          "'only when the agent would otherwise terminate'; `enqueue` raises `UserError` 'if the run has ended, "
          "since there'd be nowhere to deliver the message'; a run that stops early leaves what it did not "
          "deliver on `pending_messages`. `run_stream`'s docstring says it stops at the first final output, "
          "which explains the missing redirect but not the lost message",
          "run_stream_drops_queued.py"),
)
BY_NAME = {c.name: c for c in CAUSES}


def attribute(rec: Recording, findings: list[Finding]) -> dict[str, list[Finding]]:
    """The findings of `rec` grouped by the cause that explains them (`unexplained`: none does)."""
    if not findings:
        return {}
    if rec.scenario.mode == "run_stream" and _dropped_at_end(rec):
        return {"run-stream-drops-queued-messages": findings}
    return {UNEXPLAINED: findings}


def _dropped_at_end(rec: Recording) -> bool:
    """The run ended normally with accepted messages that no request, dequeue or cancel accounts for."""
    accepted, settled = set(), set()
    for event in rec.events:
        d = event.data
        if event.name == "enqueue" and d["accepted"]:
            accepted.add(d["msg"])
        elif event.name in ("request", "redirect"):
            settled |= set(d["delivered"])
        elif event.name == "dequeue" and d["removed"]:
            settled.add(d["msg"])
        elif event.name == "stopped":
            settled |= set(d["stranded"])
    return bool(accepted - settled) and any(e.name == "run.ended" for e in rec.events)
