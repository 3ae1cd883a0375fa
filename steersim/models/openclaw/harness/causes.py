"""Root causes: what a problem seen in a real run comes from, in OpenClaw's vocabulary.

Several checks can fail for one cause (a steer dropped after a drain breaks both the core
`no-lost-steers` and the model's `drained-not-lost`), and one check can fail for several causes (a steer
left queued after an abort is kept for the next prompt by design; one dropped after its drain is lost).
`classify` gives each finding of one run its cause from what the run recorded, so a report lists one
entry per cause. Causes marked `by_design` are OpenClaw's documented behaviour: they are reported, as
such, and never fail a run. A defect names the standalone reproduction (`node/repro/`) that shows it
with the package's public exports alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steersim.core.model import Event

REPRO_DIR = Path(__file__).resolve().parent / "node" / "repro"


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    explanation: str
    by_design: bool = False
    repro: str = ""  # file name in REPRO_DIR


CAUSES = {cause.id: cause for cause in (
    Cause("abort-drops-drained-steer",
          "a steer drained at a checkpoint is lost when the run aborts before injecting it",
          "A checkpoint drained the steer into the loop's pendingMessages (at a tool launch checkpoint the "
          "unstarted calls are skipped for it), then stopIfAborted ended the run before the next turn "
          "appended it. The build does not restore in-flight steering (2026.8.1 and later call "
          "steeringQueue.restore() in finishRun), so the steer is neither in the transcript nor in "
          "Agent.steeringQueue: the next prompt never sees it.",
          repro="abort-drops-drained-steer.mjs"),
    Cause("parallel-steer-does-not-outrank-stop",
          "in parallel tool execution a steer accepted while the batch's calls run does not outrank "
          "shouldStopAfterTurn",
          "The parallel executor polls steering once, at its launch checkpoint. A steer accepted after it, "
          "while the launched calls run, is first seen at the turn boundary, where shouldStopAfterTurn is "
          "consulted before the poll and ends the run. The sequential executor keeps the guarantee with "
          "Checkpoint C (\"A steer accepted during the final call's awaited preflight or execution must "
          "outrank shouldStopAfterTurn even when there is no remaining tail\"). shouldStopAfterTurn is a "
          "runAgentLoop config option; AgentSession sets none. With one supplied, the bare Agent and "
          "runAgentLoop leave the steer queued; at the session layer the steer still reaches the model, "
          "but in a run AgentSession continues after the stop rather than before it.",
          repro="parallel-steer-does-not-outrank-stop.mjs"),
    Cause("stop-hook-first",
          "a steer accepted after the batch's last checkpoint waits behind shouldStopAfterTurn",
          "After sequential Checkpoint C, or in turn_end listeners, the documented order applies: "
          "shouldStopAfterTurn is consulted first and, when it stops the run, the steer stays in "
          "Agent.steeringQueue for whoever drives the Agent next.", by_design=True),
    Cause("kept-for-next-prompt",
          "a steer still queued when the run aborts is kept for the next prompt",
          "An aborted run leaves Agent.steeringQueue as it is; the next run's start checkpoint drains it "
          "and the steer is appended after that prompt. The session settles an aborted run without "
          "continuing and refuses new steers once the run is aborted.", by_design=True),
    Cause("left-for-the-caller",
          "a steer accepted while agent_end listeners run stays queued after the bare Agent's run",
          "The run already passed its end-of-run recheck; the Agent reports it with hasQueuedMessages(). "
          "Its caller continues: AgentSession.handlePostAgentRun calls Agent.continue(), which delivers it "
          "(judge at the session layer to see that).", by_design=True),
)}


@dataclass(frozen=True)
class RunFacts:
    """What one recorded run says about its steers."""

    aborted: bool
    accepted: tuple[str, ...]
    drained: frozenset[str]
    injected: frozenset[str]
    left_queued: frozenset[str]
    after_end: frozenset[str]  # accepted after the run's agent_end, before another run started

    @property
    def open(self) -> tuple[str, ...]:
        return tuple(item for item in self.accepted if item not in self.injected)


def run_facts(events: Sequence[Event]) -> RunFacts:
    accepted: list[str] = []
    drained: set[str] = set()
    injected: set[str] = set()
    left: set[str] = set()
    after_end: set[str] = set()
    ended = False
    for event in events:
        data = event.data
        if event.name in ("agent_end", "agent_start"):
            ended = event.name == "agent_end"
        elif event.name == "steer":
            accepted.append(data["id"])
            if ended:
                after_end.add(data["id"])
        elif event.name == "steering_poll":
            drained.update(data["drained"])
        elif event.name == "message_end" and data.get("role") == "user":
            injected.update(data["id"].split("+"))
        elif event.name == "run_settled":
            left = set(data["steeringQueue"])
    return RunFacts(any(e.name == "abort" for e in events), tuple(accepted), frozenset(drained),
                    frozenset(injected), frozenset(left), frozenset(after_end))


def cause_of(check: str, facts: RunFacts, context: dict[str, Any]) -> str:
    """The catalogued cause of one failed check in one run ("" when none applies). `context` holds the
    scenario's `layer`, `parallel`, `stop_after_turn` and the other checks that failed in the run."""
    if check == "drained-not-lost" and facts.aborted:
        return "abort-drops-drained-steer"
    if check == "steer-outranks-stop" and context["parallel"]:
        return "parallel-steer-does-not-outrank-stop"
    if check != "no-lost-steers":
        return ""
    open_items = facts.open
    if any(item in facts.drained and item not in facts.left_queued for item in open_items):
        return "abort-drops-drained-steer" if facts.aborted else ""
    if not open_items or not all(item in facts.left_queued for item in open_items):
        return ""
    if facts.aborted:
        return "kept-for-next-prompt"
    if all(item in facts.after_end for item in open_items):
        return "left-for-the-caller" if context["layer"] == "agent" else ""
    if context["stop_after_turn"]:
        return ("parallel-steer-does-not-outrank-stop" if "steer-outranks-stop" in context["failed"]
                else "stop-hook-first")
    return ""
