"""What the real server did to one thread, as the model's native events.

After every step of the loop the recorder reads the thread's records (runs, thread, checkpoints and
stream subscribers) and turns what changed into events; events the harness sees happen (a
creation's answer, a worker task's end) are queued when they happen. A step's events are recorded in
the order of `steersim.models.langgraph.facts.canonical`, the order the model gives the events of one step.
Real ids are renamed to the model's: runs by creation order (`r1`, `r2`, ...), checkpoints by their
run and their order (`r2.0`, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from steersim.core.model import Event
from steersim.models.langgraph.facts import canonical
from steersim.models.langgraph.harness.server import Checkpointer, database, get_stream_manager


@dataclass
class Observation:
    """An event at virtual time `t`, after `step` steps of the loop."""

    event: Event
    t: float
    step: int


@dataclass
class Snapshot:
    """A thread's records at one moment: its runs' statuses and strategies (by run name), the thread's
    status and values, its checkpoints (id -> the run that wrote it) and the runs with a stream client."""

    runs: dict[str, str] = field(default_factory=dict)
    thread: tuple[str, tuple[str, ...]] | None = None
    checkpoints: dict[str, str] = field(default_factory=dict)  # checkpoint id -> owner run name
    joined: frozenset[str] = frozenset()
    strategies: dict[str, str] = field(default_factory=dict)  # run name -> its multitask strategy


def values_of(channel_values: Any) -> tuple[str, ...]:
    items = (channel_values or {}).get("items") if isinstance(channel_values, dict) else None
    return tuple(items or ())


Describe = Callable[[str], tuple[tuple[str, ...], str | None]]  # checkpoint id -> (its values, its parent's id)


class Changes:
    """What changed between two snapshots of a thread's records, as the model's events. One mechanism for
    the recorder (snapshots of the live server) and the records reader (`records.py`, snapshots a log
    wrote): `describe` gives a new checkpoint's values and parent, which only its source knows."""

    def __init__(self, describe: Describe) -> None:
        self.describe = describe
        self.started: set[str] = set()
        self.checkpoint_names: dict[str, str] = {}
        self.written: dict[str, int] = {}

    def checkpoint_event(self, cid: str, owner: str) -> Event:
        values, parent_id = self.describe(cid)
        n = self.written.get(owner, 0)
        self.written[owner] = n + 1
        name = f"{owner}.{n}"
        self.checkpoint_names[cid] = name
        parent = None if parent_id is None else self.checkpoint_names.get(parent_id, "?")
        adds = values[-1] if n > 0 and values else ""
        return Event("worker", "store", "checkpoint",
                     {"run": owner, "name": name, "values": values, "parent": parent, "adds": adds})

    def diff(self, a: Snapshot, b: Snapshot) -> Iterable[Event]:
        for cid in sorted(set(b.checkpoints) - set(a.checkpoints)):
            yield self.checkpoint_event(cid, b.checkpoints[cid])
        gone = set(a.checkpoints) - set(b.checkpoints)
        for run in sorted({a.checkpoints[cid] for cid in gone}, key=_order):
            if not any(owner == run for owner in b.checkpoints.values()):
                yield Event("server", "store", "checkpoints.deleted", {"run": run})
        for run in sorted(b.runs, key=_order):
            status = b.runs[run]
            if run not in a.runs:
                yield Event("client", "server", "run.created", {"run": run, "strategy": b.strategies.get(run, "?")})
                if status == "pending":
                    continue
            if a.runs.get(run, "pending") != status:
                if status == "running":
                    self.started.add(run)
                yield Event("server", "client", "run.status",
                            {"run": run, "status": status, "started": run in self.started})
        for run in sorted(set(a.runs) - set(b.runs), key=_order):
            yield Event("server", "store", "run.deleted", {"run": run, "started": run in self.started,
                                                           "settled": a.runs[run] == "interrupted"})
        if b.thread is not None and a.thread is not None and b.thread != a.thread:
            yield Event("server", "client", "thread", {"status": b.thread[0], "values": b.thread[1]})
        for run in sorted(b.joined - a.joined, key=_order):
            yield Event("client", "server", "stream.joined", {"run": run})
        for run in sorted(a.joined - b.joined, key=_order):
            yield Event("server", "client", "stream.left", {"run": run})


class Recorder:
    """Records the thread `thread_id`; `names` maps real run ids (strings) to model names, which the
    driver gives each run in its config (`configurable.run_name`)."""

    def __init__(self, loop: Any, thread_id: str) -> None:
        self.loop = loop
        self.thread_id = thread_id
        self.names: dict[str, str] = {}
        self.observations: list[Observation] = []
        self.before = Snapshot()
        self.queued: list[Event] = []
        self.changes = Changes(self._describe)
        self.listeners: list[Any] = []
        self.log: list[dict[str, Any]] | None = None  # a list: the thread's records, each time they changed

    # ------------------------------------------------------------------ the harness's own sightings
    def note(self, name: str, **data: Any) -> None:
        self.queued.append(Event("server", "client", name, data))

    def task_ended(self, run_id: str) -> None:
        run = self.names.get(run_id)
        if run is None:
            return
        kept = any(owner == run and self.changes.checkpoint_names[cid] != f"{run}.0"
                   for cid, owner in self._checkpoints().items())
        self.note("task.ended", run=run, kept=kept)

    # ------------------------------------------------------------------ after every step
    def observe(self) -> None:
        now = self._snapshot()
        if self.log is not None and (now.runs, now.thread, now.checkpoints) != (
                self.before.runs, self.before.thread, self.before.checkpoints):
            self.log.append(self.records())
        events = canonical([*self.changes.diff(self.before, now), *self.queued])
        self.queued = []
        self.before = now
        for event in events:
            self.observations.append(Observation(event, self.loop.time(), self.loop.steps))
        if events:
            for listener in list(self.listeners):
                listener()

    @property
    def events(self) -> list[Event]:
        return [o.event for o in self.observations]

    def _snapshot(self) -> Snapshot:
        store = database.GLOBAL_STORE
        runs, strategies = {}, {}
        for r in store["runs"]:
            if str(r["thread_id"]) != self.thread_id:
                continue
            name = r["kwargs"].get("config", {}).get("configurable", {}).get("run_name")
            if name is not None:
                self.names[str(r["run_id"])] = name
                runs[name] = r["status"]
                strategies[name] = str(r["multitask_strategy"])
        thread = next((t for t in store["threads"] if str(t["thread_id"]) == self.thread_id), None)
        seen = None if thread is None else (thread["status"], values_of(thread.get("values")))
        queues = get_stream_manager().queues
        joined = frozenset(self.names[str(rid)] for tid, by_run in queues.items() if str(tid) == self.thread_id
                           for rid, subscribers in by_run.items() if subscribers and str(rid) in self.names)
        return Snapshot(runs, seen, self._checkpoints(), joined, strategies)

    def _checkpoints(self) -> dict[str, str]:
        saver = Checkpointer()
        out: dict[str, str] = {}
        for checkpoints in saver.storage.get(self.thread_id, {}).values():
            for cid, (_, metadata, _) in checkpoints.items():
                run = self.names.get(str(saver.serde.loads_typed(metadata).get("run_id")))
                out[cid] = run or "?"
        return out

    def records(self) -> dict[str, Any]:
        """The thread's records now, in the shape the API returns them, with the fields a records log keeps
        (`--format langgraph-records`, `records.py`)."""
        store = database.GLOBAL_STORE
        runs = [{"run_id": str(r["run_id"]), "status": r["status"], "multitask_strategy": r["multitask_strategy"],
                 "kwargs": {"config": {"configurable": {
                     "run_name": r["kwargs"].get("config", {}).get("configurable", {}).get("run_name")}}}}
                for r in store["runs"] if str(r["thread_id"]) == self.thread_id]
        thread = next((t for t in store["threads"] if str(t["thread_id"]) == self.thread_id), None)
        saver = Checkpointer()
        checkpoints = []
        for stored in saver.storage.get(self.thread_id, {}).values():
            for cid, (_, metadata, _) in stored.items():
                values, parent = self._describe(cid)
                checkpoints.append({"checkpoint_id": cid, "parent_checkpoint_id": parent,
                                    "run_id": str(saver.serde.loads_typed(metadata).get("run_id")),
                                    "values": {"items": list(values)}})
        return {"runs": runs, "checkpoints": checkpoints,
                "thread": None if thread is None else {"thread_id": str(thread["thread_id"]),
                                                       "status": thread["status"],
                                                       "values": {"items": list(values_of(thread.get("values")))}}}

    def _describe(self, cid: str) -> tuple[tuple[str, ...], str | None]:
        """A checkpoint's values and its parent's id, as the server's checkpointer holds them."""
        saver = Checkpointer()
        config = {"configurable": {"thread_id": self.thread_id, "checkpoint_ns": "", "checkpoint_id": cid}}
        found = saver.get_tuple(config)
        values = values_of(found.checkpoint.get("channel_values")) if found else ()
        parent_id = found.parent_config["configurable"]["checkpoint_id"] if found and found.parent_config else None
        return values, parent_id

    def start(self) -> None:
        """Take the thread as it is now as the starting point."""
        self.before = self._snapshot()


def _order(run: str) -> int:
    return int(run[1:]) if run[1:].isdigit() else 0
