"""A Codex rollout file as the codex model's events: `--format codex-rollout`.

Codex writes each thread to `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`, one JSON
object a line, `{"timestamp", "type", "payload"}`. What it records of steering, and the model's event for
each (the app-server's notification of the same thing):

- `event_msg` `task_started`: a turn starts, `turn/started`;
- `event_msg` `task_complete`: the turn completes, `turn/completed` with status `completed`;
- `event_msg` `turn_aborted`: the turn ends early, `turn/completed` with its `reason` as status (`interrupted`);
- `event_msg` `item_completed` of a `UserMessage`, an `AgentMessage` or a `CommandExecution`: the item's
  `item/completed` (a user message written into the thread, the model's message, a command's end);
- `response_item` `function_call`: the model asked for a command, its `item/started`.

Everything else (the session's metadata, the turn's context and settings, the conversation as the model
sees it, token counts) is not a step of the model and is skipped. A rollout records neither the client's
requests nor the model requests, so those kinds are unobserved: a rollout cannot show that an acknowledged
steer was lost, only that what was written is in an order the model allows. Ids are the model's: turns
`t1, t2` by first sight, a user message by its `client_id` (or the `p1: `/`s1: ` its text starts with),
the harness's backend items `msg_0002`/`call_0002` as `a2`/`c2`; an id of another form is left out of
the record (any id matches it), so a production rollout is judged on the order of what it wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from steersim.core.model import Event
from steersim.harness.logs import Line, LogError, LogFormat, Record
from steersim.models.codex import protocol as P
from steersim.models.codex.harness.observe import MESSAGE_ID, Turns, backend_item

ITEM_KINDS = {"UserMessage": P.USER_MESSAGE, "AgentMessage": P.AGENT_MESSAGE, "CommandExecution": P.COMMAND}


def message_name(item: dict[str, Any]) -> str | None:
    """The model's name of a user message: its client id, or the id its text starts with."""
    if item.get("client_id"):
        return str(item["client_id"])
    for part in item.get("content") or []:
        found = MESSAGE_ID.match(str(part.get("text", ""))) if isinstance(part, dict) else None
        if found:
            return found.group(1)
    return None


def backend_name(ident: Any) -> str | None:
    """`call_0002` -> `c2`, `msg_0002` -> `a2`; None for an id the model does not name."""
    named = backend_item(str(ident))
    return None if named == str(ident) else named


class RolloutReader:
    """Reads one rollout: turns renamed by first sight, items placed in the turn that was last started."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.turns = Turns()
        self.turn = ""

    def event(self, obj: dict[str, Any], where: str) -> Event | None:
        payload = obj.get("payload")
        if not isinstance(payload, dict) or not isinstance(obj.get("type"), str):
            raise LogError(f"{where}: a rollout line is {{\"timestamp\", \"type\", \"payload\": {{...}}}}, as Codex "
                           "writes $CODEX_HOME/sessions/**/rollout-*.jsonl")
        kind = payload.get("type")
        if obj["type"] == "event_msg":
            return self._event_msg(kind, payload, where)
        if obj["type"] == "response_item" and kind == "function_call":
            data = {"type": P.COMMAND, "item": backend_name(payload.get("call_id")), "turn": self.turn or None}
            return P.event(P.CODEX, P.CLIENT, "item/started", **_known(data))
        return None

    def _event_msg(self, kind: Any, payload: dict[str, Any], where: str) -> Event | None:
        if kind in ("task_started", "task_complete", "turn_aborted"):
            if not payload.get("turn_id"):
                raise LogError(f"{where}: {kind} without a turn_id")
            turn = self.turns(str(payload["turn_id"]))
            if kind == "task_started":
                self.turn = turn
                return P.turn_started(turn)
            status = "completed" if kind == "task_complete" else str(payload.get("reason", "aborted"))
            return P.event(P.CODEX, P.CLIENT, "turn/completed", turn=turn, status=status)
        if kind == "item_completed":
            item = payload.get("item")
            if not isinstance(item, dict) or item.get("type") not in ITEM_KINDS:
                return None
            kind = ITEM_KINDS[item["type"]]
            ident = message_name(item) if kind == P.USER_MESSAGE else backend_name(item.get("id"))
            turn = self.turns(str(payload["turn_id"])) if payload.get("turn_id") else self.turn or None
            return P.event(P.CODEX, P.CLIENT, "item/completed", **_known({"type": kind, "item": ident, "turn": turn}))
        return None


def _known(data: dict[str, Any]) -> dict[str, Any]:
    """The fields the rollout told: one it did not is left out, and matches whatever the model says."""
    return {key: value for key, value in data.items() if value is not None}


def read_rollout(path: str, lines: Sequence[Line]) -> list[Record]:
    reader = RolloutReader(path)
    records = []
    for number, obj, text in lines:
        event = reader.event(obj, f"{path}:{number}")
        if event is not None:
            records.append(Record(path, number, event, text))
    return records


def record_kind(event: Event) -> str:
    """An item's kind is its event and its type: a rollout writes a command's start, not a message's."""
    return f"{event.name}:{event.data['type']}" if event.name.startswith("item/") else event.name


ROLLOUT_LOG = LogFormat("codex-rollout", "a Codex rollout file ($CODEX_HOME/sessions/**/rollout-*.jsonl)", "native",
                        read_lines=read_rollout, kind=record_kind)
