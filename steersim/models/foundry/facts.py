"""The Foundry model's events read as facts (design section 3, spec section 5), a function of one event:
every start() that does not return a fresh or resumed turn is a steer (queued: accepted; refused:
rejected with its code); an input's first entry appends it to the history and, if it was queued,
applies it; a queued input cancelled before its first entry failed loudly; a crash ends the running
turn."""

from __future__ import annotations

from steersim.core import facts as F
from steersim.core.facts import Fact
from steersim.core.model import Event
from steersim.models.foundry.events import CHAIN, HOW_STATUS, REJECTION_EVENTS
from steersim.models.foundry.state import CANCELLED


def facts(event: Event) -> list[Fact]:
    name, d = event.name, event.data
    if name == "TaskRun":
        return [F.steer_submitted(d["caller"], CHAIN), F.steer_accepted(d["caller"])] if d["is_queued"] else []
    if name in REJECTION_EVENTS:
        return [F.steer_submitted(d["caller"], CHAIN), F.steer_rejected(d["caller"], name)]
    if name == "http.response":
        if d["status"] == 200:
            queued = d.get("response_status") == "queued"
            return [F.steer_submitted(d["caller"], CHAIN), F.steer_accepted(d["caller"])] if queued else []
        return [F.steer_submitted(d["caller"], CHAIN), F.steer_rejected(d["caller"], d["code"])]
    if name == "handler.enter":
        out = [F.turn_started(d["input"], CHAIN)]
        if d["first"]:
            out.append(F.history_appended(CHAIN, d["input"]))
            if d["queued"]:
                out.append(F.steer_applied(d["input"], d["input"]))
        return out
    if name == "handler.exit":
        return [F.turn_ended(d["input"], HOW_STATUS[d["how"]])]
    if name == "process.crash":
        return [F.turn_ended(d["turn"], "crashed")] if d["turn"] else []
    if name == "TaskRun.result" and d["outcome"] == CANCELLED and d["queued"] and not d["entered"]:
        return [F.steer_failed(d["caller"], CANCELLED)]
    return []
