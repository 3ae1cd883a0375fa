"""A recording as the model's events: the real ids renamed, every line placed where the model puts it.

Message uuids become `m<k>` (the harness made them from k), `toolu_000k` becomes `c<k>`, turns are counted
from the `started` line that begins each (one that comes while no turn runs). A model request stands right
after the `system/status requesting` line Claude Code printed for it; it carries the user messages whose
text the harness wrote (each starts with its id), and reaches those no earlier request carried. A user
message stands just before its `queued` line. A `result` says how its turn ended from the last lifecycle
state of the turn's messages (`completed`: the model ended it; `cancelled`: an interrupt, when one was
answered in the turn, else a `now` message). A harness move stands where the harness made it, after the
request it answers, and a move on a response whose turn had already ended is left out (Claude Code no
longer read that stream).
"""

from __future__ import annotations

import re
from typing import Any

from steersim.core.model import Event
from steersim.models.claude_code import protocol as P
from steersim.models.claude_code.harness.cli import message_uuid
from steersim.models.claude_code.harness.runner import Recording
from steersim.models.claude_code.state import ENDED, INTERRUPTED, STOPPED

MENTION = re.compile(r"(?m)^(m\d+): ")
TERMINAL = (P.COMPLETED, P.CANCELLED)


def carried(body: dict[str, Any]) -> tuple[str, ...]:
    """The harness's user messages a model request carries, in order."""
    out: list[str] = []
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = [content] if isinstance(content, str) else [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        for text in blocks:
            out += [m for m in MENTION.findall(text) if m not in out]
    return tuple(out)


def _call_of(tool_id: str) -> str:
    match = re.fullmatch(r"toolu_(\d+)", tool_id)
    return P.call_id(int(match.group(1))) if match else tool_id


def observe(rec: Recording) -> list[Event]:
    names = {message_uuid(ident): ident for ident in rec.priorities}
    lines = rec.lines
    keyed: list[tuple[tuple[int, int], int, Event]] = []
    seq = 0

    def put(key: tuple[int, int], event: Event) -> None:
        nonlocal seq
        keyed.append((key, seq, event))
        seq += 1

    requests = sorted(rec.requests, key=lambda r: r.index)
    status = [i for i, line in enumerate(lines) if not line.out and line.type == "system"
              and line.body.get("subtype") == "status" and line.body.get("status") == "requesting"]
    request_at = _announcements(requests, status, lines, names)
    results = [i for i, line in enumerate(lines) if not line.out and line.type == "result"]

    # the lines, in order, with the turn each belongs to
    turns = 0
    running = False
    turn_messages: list[str] = []
    terminal: dict[str, Event] = {}
    for line in lines:
        if not line.out and line.type == "command_lifecycle" and line.body["state"] in TERMINAL:
            ident = names.get(line.body["command_uuid"], line.body["command_uuid"])
            terminal.setdefault(ident, P.lifecycle(ident, line.body["state"]))
    interrupted = False
    finished_calls: set[str] = set()
    moves = sorted(rec.moves, key=lambda m: m.at)
    for r in requests:
        put((request_at[r.index], 1), P.request(r.index, "", carried(r.body), ()))
    for i, line in enumerate(lines):
        finished_calls.update(P.call_id(m.index) for m in moves if m.name == P.TOOL_FINISHED and m.at <= i)
        if line.out:
            continue
        body = line.body
        if line.type == "command_lifecycle":
            ident = names.get(body["command_uuid"], body["command_uuid"])
            if body["state"] in TERMINAL:
                put((i, 0), P.lifecycle(ident, body["state"]))
            elif body["state"] == P.QUEUED:
                put((i, 0), P.user(ident, rec.priorities.get(ident, "default")))
                put((i, 0), P.lifecycle(ident, P.QUEUED))
            elif body["state"] == P.STARTED:
                turn = ""
                if not running:
                    turns, running, turn_messages, interrupted = turns + 1, True, [], False
                    turn = P.turn_id(turns)
                turn_messages.append(ident)
                put((i, 0), P.lifecycle(ident, P.STARTED, turn))
        elif line.type == "control_response" and isinstance(body.get("response", {}).get("response"), dict):
            listed = body["response"]["response"]
            put((i, 0), P.interrupt(tuple(names.get(u, u) for u in listed.get("still_queued", [])),
                                    tuple(names.get(u, u) for u in listed.get("cancelled", []))))
            interrupted = True
        elif line.type == "assistant":
            for block in body["message"]["content"]:
                if block.get("type") == "tool_use":
                    put((i, 0), P.tool_start(_call_of(block["id"]), P.turn_id(turns)))
        elif line.type == "user":
            for block in body["message"]["content"] if isinstance(body["message"]["content"], list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    call = _call_of(str(block.get("tool_use_id")))
                    put((i, 0), P.tool_result(call, call not in finished_calls))
        elif line.type == "result":
            states = [terminal[m].data["state"] for m in turn_messages if m in terminal]
            how = ENDED if P.COMPLETED in states else INTERRUPTED if interrupted else STOPPED
            put((i, 0), P.result(P.turn_id(turns), how))
            running = False
    for move in moves:
        if any(request_at.get(move.index, -1) < j < move.at for j in results):
            continue  # the turn of this response had ended: Claude Code no longer read it
        key = max((move.at, -1), (request_at.get(move.index, -1), 2))
        if move.name == P.TOOL_FINISHED:
            put(key, P.tool_finished(P.call_id(move.index)))
        else:
            put(key, P.backend(move.name, move.index))
    events = [event for _, _, event in sorted(keyed, key=lambda item: (item[0], item[1]))]
    return _resolve(events)


def _announcements(requests: list[Any], status: list[int], lines: list[Any], names: dict[str, str]) -> dict[int, int]:
    """Where each request stands: at the first `requesting` line after the previous request's whose
    messages name the last message this request is the first to carry (any, when it carries none anew: a
    request after a tool result). A turn stopped before its request went out printed one with no request
    behind it; it is passed over. A request with no such line stands where the harness took it."""
    out: dict[int, int] = {}
    position, before = 0, set()
    for request in requests:
        fresh = [m for m in carried(request.body) if m not in before]
        before.update(fresh)
        found = [i for i in status if i >= position and (not fresh or fresh[-1] in {
            names.get(u, u) for u in lines[i].body.get("user_message_uuids", [])})]
        out[request.index] = found[0] if found else request.at
        position = out[request.index] + 1
    return out


def _resolve(events: list[Event]) -> list[Event]:
    """Now that the events are in order: each request names the turn running when it went out and reaches
    the messages no earlier request carried; a message `cancelled` before any request carried it is
    `unsent`, and no later request counts as reaching it."""
    out: list[Event] = []
    turn = ""
    seen: set[str] = set()
    for event in events:
        data = event.data
        if event.name == P.LIFECYCLE and data["turn"]:
            turn = data["turn"]
        if event.name == P.REQUEST:
            reached = tuple(m for m in data["carries"] if m not in seen)
            seen.update(reached)
            event = P.request(data["index"], turn, data["carries"], reached)
        if event.name == P.LIFECYCLE and data["state"] == P.CANCELLED and data["message"] not in seen:
            seen.add(data["message"])
            event = P.lifecycle(data["message"], P.CANCELLED, unsent=True)
        out.append(event)
    return out
