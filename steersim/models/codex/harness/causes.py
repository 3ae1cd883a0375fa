"""The root causes found in Codex app-server 0.171.0, in its own vocabulary, each with the documented
contract it breaks and the standalone script that reproduces it (`repro/`, exit 1 while it reproduces).

A cause is keyed by the model's bug variant that explains the recorded runs; the harness reports a
variant without an entry here under the variant's own words, and a divergence no variant explains as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPRO_DIR = Path(__file__).resolve().parent / "repro"


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    explanation: str
    contract: str  # what Codex's own documentation says, quoted
    repro: str  # file name under REPRO_DIR


CAUSES = {
    "drop-pending-on-interrupt": Cause(
        "interrupt-drops-acknowledged-steer",
        "turn/interrupt discards a steer that turn/steer already acknowledged",
        "turn/steer returns {turnId} while exec_command runs (or after the agent message completed, before the "
        "response did); turn/interrupt then ends the turn `interrupted` and the steer has no userMessage item, "
        "is not in thread/read and is not in the next turn's model request. Nothing tells the client: "
        "turn/completed carries no error. A steer acknowledged while the agent message streams races the same "
        "way: Codex samples again at once, and when it wrote the steer before the interrupt landed the steer "
        "is kept (in the interrupted turn, and carried by the next turn's request).",
        "README, API overview: \"turn/steer — add user input to an already in-flight regular turn without "
        "starting a new turn; returns the active turnId that accepted the input\"; Core primitives: items "
        "(user inputs among them) are \"persisted and used as the context for future conversations\".",
        "interrupt_drops_acknowledged_steer.py"),
    "abandon-streaming-item": Cause(
        "steer-leaves-streaming-item-open",
        "an abandoned model stream leaves its agentMessage item started and never completed",
        "a turn/steer while the agent message streams makes Codex abandon that model request and sample again "
        "with the steer; the agentMessage item of the abandoned response got item/started and never gets "
        "item/completed, not even when its stream ends, and thread/read does not have it. A turn/interrupt "
        "while the agent message streams leaves it open the same way.",
        "README, Turn events: \"The per-item lifecycle is always: item/started → zero or more item-specific "
        "deltas → item/completed\"; Items: \"All items emit shared lifecycle events ... item/completed — sends "
        "the final item once that work itself finishes\".",
        "steer_leaves_streaming_item_open.py"),
}
