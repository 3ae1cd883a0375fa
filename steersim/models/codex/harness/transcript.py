"""An app-server JSON-RPC transcript as the codex model's events: `--format codex-appserver`.

The transcript is the one `steersim conform codex --report DIR` writes for each run (`DIR/runs/*.jsonl`,
`normalise.write`): a head line naming the scenario, then one line per JSON-RPC message, `{"out": ...}`
from the client and `{"in": ...}` from Codex, with the harness's moves (`{"move": ..., "index": ...}`)
and the model requests the backend received (`{"model_request": N, "body": ...}`) at the places they
happened. A client's own transcript in the same shape is read the same way (without moves or model
requests, those kinds are unobserved). The transcript becomes a recording again and is read by the
conform harness's own `observe`, so a transcript is judged exactly as a conform run is; each event keeps
the line it came from (a request's event, the line of the request the client sent).

User messages are named by their `clientUserMessageId` (the harness names them `p1, s1, ...` as the model
does); a turn/steer's `expectedTurnId` is `active` when it names the newest turn the transcript showed so
far, `stale` when it names an earlier one and `bogus` otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from steersim.harness.logs import Line, LogError, LogFormat, Record
from steersim.models.codex import protocol as P
from steersim.models.codex.harness.appserver import Message
from steersim.models.codex.harness.observe import MESSAGE_ID, observe_origins
from steersim.models.codex.harness.runner import Move, Recording, Request

HEAD_KEYS = frozenset({"scenario", "codex", "end"})


def recording_of(path: str, lines: Sequence[Line]) -> tuple[Recording, dict[tuple[str, int], int]]:
    """The recording a transcript holds, and the line of each message, move and model request."""
    rec = Recording(scenario=path)
    where: dict[tuple[str, int], int] = {}
    turns: list[str] = []  # real turn ids, in the order the transcript showed them
    for number, obj, _ in lines:
        if "out" in obj or "in" in obj:
            body = obj.get("out", obj.get("in"))
            if not isinstance(body, dict):
                raise LogError(f"{path}:{number}: a JSON-RPC message is a JSON object, not {type(body).__name__}")
            out = "out" in obj
            where[("message", len(rec.messages))] = number
            rec.messages.append(Message(out, body))
            if out and body.get("method") in ("turn/start", "turn/steer") and "id" in body:
                rec.sent_kinds[body["id"]] = _sent_kind(path, number, body, turns)
            else:
                _note_turn(body, turns)
        elif "move" in obj:
            where[("move", len(rec.moves))] = number
            rec.moves.append(Move(str(obj["move"]), obj.get("index", 0), len(rec.messages)))
        elif "model_request" in obj:
            if not isinstance(obj["model_request"], int) or not isinstance(obj.get("body"), dict):
                raise LogError(f"{path}:{number}: a model request line is {{\"model_request\": N, \"body\": {{...}}}}")
            where[("request", len(rec.requests))] = number
            rec.requests.append(Request(obj["model_request"], obj["body"], len(rec.messages)))
        elif set(obj) <= HEAD_KEYS:
            continue
        else:
            raise LogError(f"{path}:{number}: an app-server transcript line is {{\"out\": MESSAGE}} (sent by the "
                           "client), {\"in\": MESSAGE} (from Codex), a move or a model request, as "
                           "`steersim conform codex --report` writes them")
    return rec, where


def _note_turn(body: dict[str, Any], turns: list[str]) -> None:
    """A turn id the client has seen: the result of turn/start, or turn/started."""
    result = body.get("result")
    turn = result.get("turn") if isinstance(result, dict) else None
    if body.get("method") == "turn/started":
        turn = body.get("params", {}).get("turn")
    if isinstance(turn, dict) and "id" in turn and turn["id"] not in turns:
        turns.append(str(turn["id"]))


def _sent_kind(path: str, number: int, body: dict[str, Any], turns: list[str]) -> tuple[str, str, bool]:
    params = body.get("params")
    if not isinstance(params, dict):
        raise LogError(f"{path}:{number}: {body.get('method')} without params")
    inputs = params.get("input") or []
    ident = params.get("clientUserMessageId")
    if not ident:
        found = [MESSAGE_ID.match(str(part.get("text", ""))) for part in inputs if isinstance(part, dict)]
        ident = next((f.group(1) for f in found if f), None)
    if not ident:
        raise LogError(f"{path}:{number}: {body.get('method')} names no message; give it a clientUserMessageId "
                       "(the model's names: p1, p2, ... for turn/start, s1, s2, ... for turn/steer)")
    if body.get("method") == "turn/start":
        return str(ident), P.ACTIVE, False
    expected = params.get("expectedTurnId")
    kind = P.ACTIVE if turns and expected == turns[-1] else P.STALE if expected in turns else P.BOGUS
    return str(ident), kind, not inputs


def read_transcript(path: str, lines: Sequence[Line]) -> list[Record]:
    rec, where = recording_of(path, lines)
    texts = {number: text for number, _, text in lines}
    try:
        observed = observe_origins(rec)
    except (KeyError, TypeError, ValueError) as bad:
        raise LogError(f"{path}: the transcript is not one the app-server could have written ({type(bad).__name__}: "
                       f"{bad}); each reply needs its request, each notification its params") from None
    return [Record(path, where[origin], event, texts[where[origin]]) for event, origin in observed]


APPSERVER_LOG = LogFormat(
    "codex-appserver", "a Codex app-server JSON-RPC transcript, as `steersim conform codex --report` records it",
    "native", read_lines=read_transcript)
