"""The gateway queue against OpenClaw's own code: settings resolution, enqueue with cap and drop policy,
and the drain after a run (collect coalescing by route, overflow summaries).

`node/gateway_probe.mjs` runs the build's `resolveQueueSettingsCore`, `enqueueFollowupRun` and
`scheduleFollowupDrain` (private dist modules, imported by path) on the cases below; the model answers
the same cases with `queue_settings.py` and `gateway.py` (`enqueue`, `drain`). Each case where the two
differ is a divergence. The cases fix the debounce at 0: the quiet window is a timer the model leaves to
the checker (`followup-waits-debounce`), and the probe drains once the run it stands for has ended.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steersim.errors import UsageError
from steersim.models.openclaw import SPEC, gateway
from steersim.models.openclaw.config import route_of
from steersim.models.openclaw.harness.driver import NODE_DIR, Target, node_binary
from steersim.models.openclaw.queue_settings import QueueDirective, resolve_mode, resolve_options
from steersim.models.openclaw.state import Step

OVERFLOW_PROMPT = "[Queue overflow]"
MESSAGE_ID = re.compile(r"\bm\d+\b")

# Settings cases in resolveQueueSettingsCore's own parameter shape (channel "telegram").
_SESSIONS: tuple[dict[str, Any] | None, ...] = (
    None, {"queueMode": "collect"}, {"queueMode": "queue"}, {"queueMode": "queued"},
    {"queueMode": "steer-backlog"}, {"queueMode": "Steer+Backlog"}, {"queueMode": "steer_backlog"},
    {"queueMode": "bogus"}, {"queueDebounceMs": 250, "queueCap": 3.7, "queueDrop": "old"})
_QUEUE_CONFIGS: tuple[dict[str, Any] | None, ...] = (
    None, {"mode": "interrupt"}, {"mode": "steer-backlog"}, {"mode": "Coalesce", "byChannel": {"telegram": "followup"}},
    {"byChannel": {"discord": "collect"}, "debounceMsByChannel": {"telegram": 1200}, "cap": 0, "drop": "newest"},
    {"debounceMs": 900, "cap": 5, "drop": "summary"})
SETTINGS_CASES: tuple[dict[str, Any], ...] = tuple(
    {"channel": "telegram", "cfg": {"messages": {"queue": queue}} if queue else {},
     **({"sessionEntry": session} if session else {}), **({"inlineMode": inline} if inline else {}),
     **({"pluginDebounceMs": plugin} if plugin is not None else {})}
    for inline, session, queue, plugin in itertools.product(
        (None, "followup"), _SESSIONS, _QUEUE_CONFIGS, (None, 700)))

QUEUE_CASES: tuple[dict[str, Any], ...] = tuple(
    {"mode": mode, "cap": cap, "drop": drop, "routes": routes,
     "messages": [{"id": f"m{n}", "route": route_of(f"m{n}", routes)} for n in range(1, count + 1)]}
    for mode, cap, drop, routes, count in itertools.product(
        ("followup", "collect"), (1, 2, 20), ("summarize", "old", "new"), (1, 2), (3, 4)))


@dataclass(frozen=True)
class Divergence:
    """One case where the build's gateway code and the model answer differently."""

    part: str  # "settings" or "queue"
    case: dict[str, Any]
    real: Any
    model: Any

    def to_json(self) -> dict[str, Any]:
        return {"part": self.part, "case": self.case, "real": self.real, "model": self.model}


def model_settings(params: dict[str, Any]) -> dict[str, Any]:
    """The model's answer to one settings case, in resolveQueueSettingsCore's result shape."""
    queue = params.get("cfg", {}).get("messages", {}).get("queue", {})
    entry = params.get("sessionEntry", {})
    session = QueueDirective(debounce_ms=entry.get("queueDebounceMs"), cap=entry.get("queueCap"),
                             drop=entry.get("queueDrop"))
    mode = resolve_mode(inline=params.get("inlineMode"), session=entry.get("queueMode"),
                        channel=params.get("channel"), by_channel=queue.get("byChannel"), config=queue.get("mode"))
    options = resolve_options(session=session, channel=params.get("channel"),
                              debounce_by_channel=queue.get("debounceMsByChannel"),
                              plugin_debounce_ms=params.get("pluginDebounceMs"), cap=queue.get("cap"),
                              drop=queue.get("drop"))
    return {"mode": mode, "debounceMs": options.debounce_ms, "cap": options.cap, "dropPolicy": options.drop}


def model_queue(case: dict[str, Any], bug: str | None = None) -> dict[str, Any]:
    """The model's answer to one queue case: every message enqueued while a run is active, then one drain
    per follow-up run until the queue is empty. A run is named by its items (`overflow:mN` for a
    summarised one) and the route it is delivered to."""
    model = SPEC.build({"mode": case["mode"], "cap": case["cap"], "drop": case["drop"], "routes": case["routes"],
                        "messages": len(case["messages"]), "debounce_ms": 0}, bug)
    st = Step(model.init_states()[0])
    accepted = []
    for message in case["messages"]:
        before = len(st.events)
        gateway.enqueue(model.cfg, st, message["id"])
        accepted.append(not any(e.name == "followup_rejected" for e in st.events[before:]))
    runs = []
    while st.fq or st.dropped:
        gateway.drain(model.cfg, st)
        items = st.prompts[0].split("+")
        runs.append({"items": items, "route": route_of(items[0].removeprefix("overflow:"), case["routes"])})
    return {"accepted": accepted, "runs": runs}


def real_run(run: dict[str, Any]) -> dict[str, Any]:
    """A follow-up run the build started, named as the model names runs."""
    prompt = run["prompt"]
    prefix = "overflow:" if prompt.startswith(OVERFLOW_PROMPT) else ""
    return {"items": [prefix + item for item in MESSAGE_ID.findall(prompt)], "route": run["route"]}


def probe(target: Target, timeout: float = 300.0) -> dict[str, Any]:
    """Run the build's gateway code on every case, in one Node process."""
    cases = {"settings": list(SETTINGS_CASES), "queues": list(QUEUE_CASES)}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(cases, handle)
        path = Path(handle.name)
    try:
        completed = subprocess.run(
            [str(node_binary()), str(NODE_DIR / "gateway_probe.mjs"), "--package-dir", str(target.directory),
             "--cases", str(path)], capture_output=True, text=True, timeout=timeout, check=False)
    finally:
        path.unlink(missing_ok=True)
    if completed.returncode != 0:
        raise UsageError(f"the gateway probe failed on {target.package}@{target.version}: "
                         f"{completed.stderr.strip().splitlines()[-1:] or ['no output']}")
    return json.loads(completed.stdout)


def compare(real: dict[str, Any], settings: Callable[[dict[str, Any]], dict[str, Any]] = model_settings,
            queue: Callable[[dict[str, Any]], dict[str, Any]] = model_queue) -> list[Divergence]:
    """Every case where the build's answer (from `probe`) and the model's differ."""
    out = [Divergence("settings", case, got, want) for case, got in zip(SETTINGS_CASES, real["settings"], strict=True)
           if got != (want := settings(case))]
    for case, got in zip(QUEUE_CASES, real["queues"], strict=True):
        seen = {"accepted": got["accepted"], "runs": [real_run(run) for run in got["runs"]]}
        if seen != (want := queue(case)):
            out.append(Divergence("queue", case, seen, want))
    return out


def summary(divergences: Sequence[Divergence]) -> dict[str, Any]:
    """The report's gateway section: how many cases ran and the divergences (the first few in full)."""
    return {"settings_cases": len(SETTINGS_CASES), "queue_cases": len(QUEUE_CASES),
            "divergences": len(divergences), "examples": [d.to_json() for d in divergences[:5]]}
