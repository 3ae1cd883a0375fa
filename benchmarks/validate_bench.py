"""How fast `steersim validate` reads and judges one long facts log: records per second.

The log is one run of a small endless steering loop (below: the user steers, an agent starts a turn with
the queued steers, calls a tool, applies what arrived meanwhile at the boundary, and ends), walked with a
seeded random choice among the enabled actions until it has written `--records` facts. It is validated
twice: with every fact recorded, and with only steers and turns recorded (partial observation: the tool
steps are unobserved and free). Each line gives records, configurations searched, seconds and records/s.

    python benchmarks/validate_bench.py                     # 100,000 records
    python benchmarks/validate_bench.py --records 10000     # a quick look
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from steersim.core.model import Action, Event, ModelBase
from steersim.core.product import Product
from steersim.harness.logcheck import check_log
from steersim.harness.logs import FORMATS, read_log

CHAT = "chat"


@dataclass(frozen=True)
class LoopState:
    sent: int = 0  # steers sent so far (the next one is s{sent + 1})
    queue: tuple[int, ...] = ()
    turns: int = 0
    phase: str = "idle"  # idle | calling | running | boundary


class SteeringLoop(ModelBase):
    """Endless: at most two steers wait at once, so each log position has few configurations."""

    name = "steering-loop"

    def init_states(self) -> list[LoopState]:
        return [LoopState()]

    def actions(self, s: LoopState) -> list[Action]:
        out = [Action("user", "user.steer")] if len(s.queue) < 2 else []
        agent = {"idle": "agent.start" if s.queue else None, "calling": "agent.run_tool",
                 "running": "agent.collect", "boundary": "agent.apply" if s.queue else "agent.end"}[s.phase]
        return out + [Action("agent", agent)] if agent else out

    def step(self, s: LoopState, a: Action) -> tuple[LoopState, list[Event]]:
        turn, call = f"t{s.turns}", f"c{s.turns}"
        if a.kind == "user.steer":
            sid = f"s{s.sent + 1}"
            return replace(s, sent=s.sent + 1, queue=(*s.queue, s.sent + 1)), [
                Event("user", "queue", "steer.submitted", {"id": sid, "target": CHAT}),
                Event("queue", "user", "steer.accepted", {"id": sid})]
        if a.kind in ("agent.start", "agent.apply"):
            starting = a.kind == "agent.start"
            turns = s.turns + starting
            turn, call = f"t{turns}", f"c{turns}"
            events = [Event("agent", "model", "turn.started", {"turn": turn, "chain": CHAT})] if starting else []
            for n in s.queue:
                events += [Event("queue", "agent", "steer.applied", {"id": f"s{n}", "turn": turn}),
                           Event("agent", "model", "history.appended", {"chain": CHAT, "item": f"s{n}"})]
            events.append(Event("model", "agent", "tool.requested", {"call": call, "turn": turn}))
            return replace(s, queue=(), turns=turns, phase="calling"), events
        if a.kind == "agent.run_tool":
            return replace(s, phase="running"), [Event("agent", "tool", "tool.started", {"call": call})]
        if a.kind == "agent.collect":
            return replace(s, phase="boundary"), [
                Event("tool", "agent", "tool.result", {"call": call, "synthetic": False})]
        return replace(s, phase="idle"), [Event("agent", "model", "turn.ended", {"turn": turn, "status": "done"})]


def facts_log(records: int, seed: int) -> list[dict]:
    """One seeded random run of the loop, as its facts, until `records` are written."""
    product, rng = Product(SteeringLoop(), monitors=()), random.Random(seed)  # the log, not a judgement of it
    pstate, facts = product.init_states()[0], []
    while len(facts) < records:
        transition = rng.choice(product.successors(pstate))
        facts.extend(fact.to_json() for fact in transition.facts)
        pstate = transition.target
    return facts[:records]


def measure(name: str, facts: list[dict], folder: Path) -> None:
    path = folder / f"{name}.log"
    path.write_text("".join(json.dumps(f) + "\n" for f in facts))
    started = time.perf_counter()
    records = read_log(str(path), FORMATS["facts"])
    read = time.perf_counter() - started
    verdict = check_log(SteeringLoop(), str(path), records, "facts", max_states=10_000_000)
    seconds = time.perf_counter() - started
    print(f"{name:>8}: {len(records):>9,} records  {verdict.verdict:<9} {verdict.configurations:>10,} configurations"
          f"  {seconds:6.2f} s (reading {read:.2f} s)  {len(records) / seconds:>9,.0f} records/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    facts = facts_log(args.records, args.seed)
    with tempfile.TemporaryDirectory() as folder:
        measure("full", facts, Path(folder))
        partial = [f for f in facts if f["fact"].startswith(("steer.", "turn."))]
        measure("partial", partial, Path(folder))


if __name__ == "__main__":
    main()
