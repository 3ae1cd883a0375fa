"""A recording as the model's events: real ids renamed, requests paired with replies, model requests placed.

Codex's stdout is one ordered channel, so a reply stands where Codex answered (an event about a request is
placed at its reply, not where the harness wrote it: the harness's writes race Codex's output). Codex
answers a request on one task and reports what the request caused on another, so a reply can also come
after the first notification its request caused (`turn/started` before the `turn/start` reply, seen on a
loaded machine): a request's event then stands just before that notification. A model
request travels on another channel (HTTP), so its place among the notifications is what caused it: after
the `userMessage` items of the messages it is the first to carry, the tool output it carries, or the reply
that started its turn. Turns become `t1, t2` in the order they started, user messages are named by the
`clientUserMessageId` the harness gave them (or the id that starts their text), the backend's items by
the model request they answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from steersim.core.model import Event
from steersim.models.codex import protocol as P
from steersim.models.codex.harness.runner import Recording
from steersim.models.codex.state import EMPTY_INPUT, NO_ACTIVE_TURN, TURN_MISMATCH

MESSAGE_ID = re.compile(r"^([ps]\d+): ")
INVALID_REQUEST = -32600
ERRORS = (("no active turn", NO_ACTIVE_TURN), ("expected active turn id", TURN_MISMATCH),
          ("must not be empty", EMPTY_INPUT))


def error_code(error: dict[str, Any]) -> str:
    """A JSON-RPC error in the model's words. The documented ones are invalid requests (-32600); another
    code or message is kept as it is, which the model does not produce."""
    message = str(error.get("message", ""))
    for text, code in ERRORS:
        if text in message and error.get("code") == INVALID_REQUEST:
            return code
    return f"error {error.get('code')}: {message[:80]}"


def message_of(item: dict[str, Any]) -> str:
    """The model id of a userMessage item: its clientId, or the id its text starts with."""
    if item.get("clientId"):
        return str(item["clientId"])
    for part in item.get("content", []):
        found = MESSAGE_ID.match(str(part.get("text", "")))
        if found:
            return found.group(1)
    return "?"


def backend_item(ident: str) -> str:
    """`msg_0002` -> `a2`, `call_0002` -> `c2`; another id is kept (the model will not know it)."""
    for prefix, short in (("msg_", "a"), ("call_", "c")):
        if ident.startswith(prefix) and ident[len(prefix):].isdigit():
            return f"{short}{int(ident[len(prefix):])}"
    return ident


def carried(body: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The user messages a model request carries (in order) and the tool calls whose output it carries."""
    messages: list[str] = []
    outputs: list[str] = []
    for entry in body.get("input", []):
        if entry.get("type") == "function_call_output":
            outputs.append(backend_item(str(entry.get("call_id", ""))))
        elif entry.get("role") == "user":
            for part in entry.get("content", []):
                found = MESSAGE_ID.match(str(part.get("text", "")))
                if found:  # a message carried twice stays twice: the model never does that
                    messages.append(found.group(1))
    return tuple(messages), tuple(outputs)


class Turns:
    """Real turn ids to `t1, t2, ...`, by first sight."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def __call__(self, real: str) -> str:
        if real not in self.names:
            self.names[real] = P.turn_id(len(self.names) + 1)
        return self.names[real]


Origin = tuple[str, int]  # what an event was read from: ("message", i), ("move", i) or ("request", i)
Timeline = list[tuple[float, int, Event, Origin]]


def observe(rec: Recording) -> list[Event]:
    return [event for event, _ in observe_origins(rec)]


def observe_origins(rec: Recording) -> list[tuple[Event, Origin]]:
    """The recording's events in the order the model sees them, each with what it was read from: a
    message of `rec.messages` (a request's event, from the request the client sent), one of `rec.moves` or
    a model request of `rec.requests` (by its position there), so that a reader of a recorded transcript
    can name the line each event came from."""
    turns = Turns()
    timeline: Timeline = []
    replies = {m.body["id"]: (i, m.body) for i, m in enumerate(rec.messages)
               if not m.out and "id" in m.body and "method" not in m.body}
    accepted_by: dict[str, str] = {}  # steer -> the turn that accepted it
    completed_user: dict[str, int] = {}  # message -> position of its userMessage item/completed
    completed_call: dict[str, int] = {}
    turn_replies: dict[str, float] = {}  # turn -> where the turn/start that started it stands
    first_caused = _first_caused(rec)

    for i, m in enumerate(rec.messages):
        if m.out:
            _request_event(i, m.body, replies, first_caused, rec, turns, accepted_by, turn_replies, timeline)
            continue
        method, params = m.method, m.body.get("params", {})
        if method == "turn/started":
            timeline.append((i, 0, P.turn_started(turns(params["turn"]["id"])), ("message", i)))
        elif method == "turn/completed":
            turn = params["turn"]
            timeline.append((i, 0, P.turn_completed(turns(turn["id"]), turn["status"], ()), ("message", i)))
        elif method in ("item/started", "item/completed") and params.get("item", {}).get("type") in P.ITEM_TYPES:
            item = params["item"]
            kind = item["type"]
            ident = message_of(item) if kind == P.USER_MESSAGE else backend_item(str(item["id"]))
            phase = method.split("/")[1]
            timeline.append((i, 0, P.item(phase, kind, ident, turns(params["turnId"])), ("message", i)))
            if phase == "completed":
                (completed_user if kind == P.USER_MESSAGE else completed_call).setdefault(ident, i)
    for number, move in enumerate(rec.moves):
        index = move.index if move.name != P.TOOL_FINISHED else backend_item(str(move.index))
        event = P.tool_finished(str(index)) if move.name == P.TOOL_FINISHED else P.backend(move.name, int(index))
        timeline.append((move.at - 0.5, 0, event, ("move", number)))
    _place_requests(rec, turns, accepted_by, completed_user, completed_call, turn_replies, timeline)
    timeline.sort(key=lambda entry: (entry[0], entry[1]))
    return _with_cuts([(event, origin) for _, _, event, origin in timeline], accepted_by)


def _first_caused(rec: Recording) -> dict[tuple[str, str], int]:
    """Where the first notification about each real turn (`("turn", id)`) and each user message's first
    `userMessage` item (`("message", id)`) stand: what a `turn/start` or an accepted steer caused."""
    first: dict[tuple[str, str], int] = {}
    for i, m in enumerate(rec.messages):
        if m.method not in ("turn/started", "item/started", "item/completed"):
            continue
        params = m.body.get("params", {})
        turn = params.get("turnId") or params.get("turn", {}).get("id")
        if turn:
            first.setdefault(("turn", str(turn)), i)
        item = params.get("item", {})
        if m.method == "item/started" and item.get("type") == P.USER_MESSAGE:
            first.setdefault(("message", message_of(item)), i)
    return first


def _request_event(sent: int, body: dict[str, Any], replies: dict[int, tuple[int, dict[str, Any]]],
                   first_caused: dict[tuple[str, str], int], rec: Recording, turns: Turns,
                   accepted_by: dict[str, str], turn_replies: dict[str, float], timeline: Timeline) -> None:
    """The event of the request the client sent at message `sent`, placed where Codex answered it."""
    method = body.get("method")
    origin = ("message", sent)
    if method not in ("turn/start", "turn/steer", "turn/interrupt", "thread/read") or body["id"] not in replies:
        return
    at, reply = replies[body["id"]]
    result, params = reply.get("result"), body["params"]
    if method == "thread/read":
        items = [i for t in (result or {}).get("thread", {}).get("turns", []) for i in t.get("items", [])]
        timeline.append((at, 0, P.thread_read(tuple(message_of(i) for i in items if i["type"] == P.USER_MESSAGE)),
                         origin))
        return
    if method == "turn/interrupt":
        event = P.turn_interrupt(turns(params["turnId"]))
        if result is None:
            event = P.event(P.CLIENT, P.CODEX, method, turn=turns(params["turnId"]), outcome=error_code(reply["error"]))
        timeline.append((at, 0, event, origin))
        return
    ident, expected, empty = rec.sent_kinds[body["id"]]
    if method == "turn/start":
        if result is None:
            timeline.append((at, 0, P.turn_start(ident, error_code(reply["error"]), ""), origin))
            return
        real = result["turn"]["id"]
        new = real not in turns.names
        turn = turns(real)
        placed = _standing(at, first_caused.get(("turn", real) if new else ("message", ident)))
        if new:
            turn_replies[turn] = placed
        else:
            accepted_by[ident] = turn
        timeline.append((placed, 0, P.turn_start(ident, P.STARTED if new else P.STEERED, turn), origin))
        return
    if result is None:
        timeline.append((at, 0, P.turn_steer(ident, expected, empty, error_code(reply["error"]), ""), origin))
        return
    turn = turns(result["turnId"])
    accepted_by[ident] = turn
    placed = _standing(at, first_caused.get(("message", ident)))
    timeline.append((placed, 0, P.turn_steer(ident, expected, empty, P.ACCEPTED, turn), origin))


def _standing(reply: float, caused: int | None) -> float:
    """Where a request's event stands: at its reply, or just before the first notification it caused."""
    return reply if caused is None else min(reply, caused - 0.25)


def _place_requests(rec: Recording, turns: Turns, accepted_by: dict[str, str], completed_user: dict[str, int],
                    completed_call: dict[str, int], turn_replies: dict[str, float], timeline: Timeline) -> None:
    seen: set[str] = set()
    reached_in: dict[str, set[str]] = {}
    seen_outputs: set[str] = set()
    for number, request in sorted(enumerate(rec.requests), key=lambda entry: entry[1].index):
        messages, outputs = carried(request.body)
        real_turn = str(request.body.get("client_metadata", {}).get("turn_id", ""))
        turn = turns(real_turn) if real_turn else "?"
        new = [m for m in messages if m not in seen]
        new_outputs = [c for c in outputs if c not in seen_outputs]
        causes = [completed_user[m] for m in new if m in completed_user]
        causes += [completed_call[c] for c in new_outputs if c in completed_call]
        if turn in turn_replies and not reached_in.get(turn):
            causes.append(turn_replies[turn])
        at = max(causes) + 0.25 if causes else request.at - 0.25
        already = reached_in.setdefault(turn, set())
        reached = tuple(m for m in messages if accepted_by.get(m) == turn and m not in already)
        already.update(messages)
        seen.update(messages)
        seen_outputs.update(outputs)
        timeline.append((at, request.index, P.request(request.index, turn, messages, reached), ("request", number)))


def _with_cuts(events: Iterable[tuple[Event, Origin]], accepted_by: dict[str, str]) -> list[tuple[Event, Origin]]:
    """An interrupted turn/completed names the steers its turn accepted that none of its requests carried."""
    out: list[tuple[Event, Origin]] = []
    reached: set[str] = set()
    for event, origin in events:
        if event.name == P.REQUEST:
            reached.update(event.data["reached"])
        if event.name == "turn/completed" and event.data["status"] == "interrupted":
            turn = event.data["turn"]
            cut = tuple(m for m, t in accepted_by.items() if t == turn and m not in reached)
            event = P.turn_completed(turn, event.data["status"], cut)
        out.append((event, origin))
    return out
