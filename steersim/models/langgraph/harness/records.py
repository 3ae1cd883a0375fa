"""A log of a LangGraph thread's run and thread records as the langgraph model's events:
`--format langgraph-records`.

Each line is the thread's records at one moment, as the LangGraph server stores them and its API returns
them (`GET /threads/{id}/runs`, `GET /threads/{id}`, `GET /threads/{id}/history`), written whenever they
changed:

    {"runs": [{"run_id": ..., "status": ..., "multitask_strategy": ...,
               "kwargs": {"config": {"configurable": {"run_name": "r1"}}}}, ...],
     "thread": {"status": ..., "values": {"items": [...]}},
     "checkpoints": [{"checkpoint_id": ..., "parent_checkpoint_id": ..., "run_id": ..., "values": {...}}, ...]}

What changed from one line to the next becomes the model's events by the conform harness's own mechanism
(`recorder.Changes`, which turns the live server's records into events): a run created, a run's status,
a run deleted, a checkpoint written or deleted, the thread's status and values. The log starts at the
thread's creation (idle, no values); runs are named by their `run_name` (the harness's `r1, r2, ...`),
else `r1, r2, ...` in the order the log first shows them (list runs in creation order). What a log of
records cannot show is unobserved: the client's answers (a creation's 409), stream clients, task ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from steersim.harness.logs import Line, LogError, LogFormat, Record
from steersim.models.langgraph.facts import canonical
from steersim.models.langgraph.harness.recorder import Changes, Snapshot, values_of

START = Snapshot(thread=("idle", ()))  # a thread as created: the model's first state


class RecordsReader:
    """Snapshots from lines; run names by `run_name` or first sight; checkpoints described by their line."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.checkpoints: dict[str, tuple[tuple[str, ...], str | None]] = {}
        self.changes = Changes(lambda cid: self.checkpoints[cid])

    def _name(self, run: dict[str, Any]) -> str:
        real = str(run["run_id"])
        if real not in self.names:
            given = (run.get("kwargs") or {}).get("config", {}).get("configurable", {}).get("run_name")
            self.names[real] = str(given) if given else f"r{len(self.names) + 1}"
        return self.names[real]

    def snapshot(self, obj: dict[str, Any], where: str) -> Snapshot:
        runs, strategies, checkpoints = {}, {}, {}
        try:
            for run in obj.get("runs") or []:
                name = self._name(run)
                runs[name] = str(run["status"])
                strategies[name] = str(run.get("multitask_strategy", "?"))
            for checkpoint in obj.get("checkpoints") or []:
                cid = str(checkpoint["checkpoint_id"])
                parent = checkpoint.get("parent_checkpoint_id")
                self.checkpoints.setdefault(cid, (values_of(checkpoint.get("values")),
                                                  None if parent is None else str(parent)))
                checkpoints[cid] = self.names.get(str(checkpoint.get("run_id")), "?")
            thread = obj.get("thread")
            seen = None if thread is None else (str(thread["status"]), values_of(thread.get("values")))
        except (KeyError, TypeError, AttributeError) as bad:
            raise LogError(f"{where}: a records line is {{\"runs\": [...], \"thread\": {{...}}, \"checkpoints\": "
                           f"[...]}} as the LangGraph API returns them; this one lacks {bad}") from None
        return Snapshot(runs, seen, checkpoints, frozenset(), strategies)


def read_records(path: str, lines: Sequence[Line]) -> list[Record]:
    reader = RecordsReader()
    before = START
    records = []
    for number, obj, text in lines:
        now = reader.snapshot(obj, f"{path}:{number}")
        records += [Record(path, number, event, text) for event in canonical(list(reader.changes.diff(before, now)))]
        before = now
    return records


RECORDS_LOG = LogFormat("langgraph-records", "a LangGraph thread's run, thread and checkpoint records, a line "
                        "each time they changed", "native", read_lines=read_records)
