"""Client obligations (spec invariant 22), written once and applied to the model's client and to real
clients alike.

A rule judges one client frame against a `ClientView`: what the client had been told when the frame
reached the server. The model builds the view from its state (`view_of_state`); a harness that records
a real client builds it from the wire (`WireTracker`). Because judging happens at the server's end of
the socket, a frame that arrives after the server sent X counts as sent after the client saw X.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

CLIENT_RULES: Mapping[str, str] = {
    "client-no-resend-accepted": "the client never resends accepted steering input while it is unresolved",
    "client-no-stream-id-on-steer": "the client never sends stream_id on response.steer",
    "client-no-automatic-continuation": "the client never sends response.create for a parent whose queued steers "
                                        "continue automatically",
    "client-one-continuation-per-parent": "the client sends at most one explicit continuation per parent with "
                                          "pending steers",
    "client-continuation-on-parent-lane": "an explicit continuation of a parent with pending steers uses the "
                                          "parent's lane",
    "client-steer-newest-response": "the client never steers a response after it has used that response's "
                                    "successor",
}

# The type of the one client frame each rule judges (`judge` reads no other frame for it).
RULE_FRAMES: Mapping[str, str] = {
    "client-no-resend-accepted": "response.steer",
    "client-no-stream-id-on-steer": "response.steer",
    "client-no-automatic-continuation": "response.create",
    "client-one-continuation-per-parent": "response.create",
    "client-continuation-on-parent-lane": "response.create",
    "client-steer-newest-response": "response.steer",
}

# The fields of a `ClientView` that `judge` reads for each type of frame: a view made for frames of some
# types needs only theirs.
VIEW_FIELDS: Mapping[str, tuple[str, ...]] = {
    "response.steer": ("unresolved", "superseded"),
    "response.create": ("lanes", "automatic", "awaiting", "continued"),
}

# The documented sentence each obligation comes from (seed page "Mid-turn steering", SDK 3.51.0 docstrings).
RULE_SOURCES: Mapping[str, str] = {
    "client-no-resend-accepted": "Do not resend already accepted steering. [seed page, too_many_pending_steers]; "
                                 "The server still owns the input. Do not resend it. [SDK, response.steer.pending]",
    "client-no-stream-id-on-steer": "Do not send `stream_id`; the target response determines the WebSocket lane. "
                                    "[SDK, response.steer]",
    "client-no-automatic-continuation": "Keep reading events to receive the response with your update; do not send "
                                        "another `response.create`. [seed page]",
    "client-one-continuation-per-parent": "submit one continuation per parent with the same `previous_response_id` "
                                          "and WebSocket lane [SDK, response.steer.pending]",
    "client-continuation-on-parent-lane": "submit one continuation per parent with the same `previous_response_id` "
                                          "and WebSocket lane [SDK, response.steer.pending]",
    "client-steer-newest-response": "Use the continuation's ID for new steering once its `response.created` event "
                                    "arrives. [seed page]",
    "client-returns-required-input": "Return the required input with `response.create` on the same connection, "
                                     "setting `previous_response_id` to `resp_1`. [seed page]",
}

# Judged by a serving session only, on how long a client leaves a documented request unanswered (the
# model's client always answers, so in the model this could never fail).
SESSION_RULES: Mapping[str, str] = {
    "client-returns-required-input": "after response.steer.pending, the client returns the required input "
                                     "within the server's announced tool-output timeout",
}


def rule_text(rule: str) -> str:
    """An obligation as a finding states it: the rule, then the documented sentence it comes from."""
    return f"{(CLIENT_RULES | SESSION_RULES)[rule]}; the docs: {RULE_SOURCES[rule]}"


def canonical_input(value: Any) -> str:
    """Steer inputs compare by their canonical JSON, so a resend is recognised whatever its key order."""
    if isinstance(value, str):
        return _canonical_text(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@lru_cache(maxsize=1024)
def _canonical_text(text: str) -> str:
    """A text input's canonical JSON: a check judges the same few texts on every steer it takes."""
    return json.dumps(text)


@dataclass(frozen=True)
class ClientView:
    """`unresolved` the canonical inputs of accepted, unresolved steers on this connection; `lanes` each
    known response's stream_id; `automatic` parents whose queued steers continue (or continued) without
    the client;
    `awaiting` parents whose queued steers wait for required input; `continued` parents with steers that
    already got an explicit continuation; `superseded` responses whose successor the client has already
    named in a frame of its own (proof that it saw the successor's `response.created`: frames on one
    socket arrive in the order they were sent, so a steer that was in flight when the successor was
    created is never counted)."""

    unresolved: tuple[str, ...] = ()
    lanes: tuple[tuple[str, str | None], ...] = ()
    automatic: tuple[str, ...] = ()
    awaiting: tuple[str, ...] = ()
    continued: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()

    def lane_of(self, response_id: str) -> str | None:
        return dict(self.lanes).get(response_id)


def judge(view: ClientView, frame: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The rules `frame` breaks, each as (rule name, what happened)."""
    broken: list[tuple[str, str]] = []
    kind = frame.get("type")
    if kind == "response.steer":
        if "stream_id" in frame:
            broken.append(("client-no-stream-id-on-steer", f"steer carries stream_id {frame['stream_id']!r}"))
        if canonical_input(frame.get("input")) in view.unresolved:
            broken.append(("client-no-resend-accepted",
                           f"steer resends input that was accepted and is still queued: {frame.get('input')!r}"))
        if frame.get("previous_response_id") in view.superseded:
            broken.append(("client-steer-newest-response",
                           f"steer at {frame['previous_response_id']}, whose successor the client already used"))
    elif kind == "response.create" and frame.get("previous_response_id"):
        parent = frame["previous_response_id"]
        if parent in view.automatic:
            broken.append(("client-no-automatic-continuation",
                           f"response.create continues {parent}, whose queued steers continue automatically"))
        if parent in view.continued:
            broken.append(("client-one-continuation-per-parent",
                           f"second explicit continuation of {parent}"))
        if parent in view.awaiting and frame.get("stream_id") != view.lane_of(parent):
            broken.append(("client-continuation-on-parent-lane",
                           f"continuation of {parent} on lane {frame.get('stream_id')!r}, the parent's lane is "
                           f"{view.lane_of(parent)!r}"))
    return broken


@dataclass
class WireTracker:
    """Builds a `ClientView` from the wire events of one session, in the order the server saw them."""

    lanes: dict[str, str | None] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)  # steer id -> canonical input, while unresolved
    queued: dict[str, list[str]] = field(default_factory=dict)  # response id -> queued steer ids
    outcome: dict[str, str] = field(default_factory=dict)  # terminal response id -> "auto" | "input"
    continued: set[str] = field(default_factory=set)
    successors: dict[str, str] = field(default_factory=dict)  # parent id -> its first successor's id
    auto_continued: set[str] = field(default_factory=set)  # parents whose queued steers continued automatically
    named: set[str] = field(default_factory=set)  # response ids the client's own frames referred to
    last_steer_input: str = ""
    violations: list[tuple[str, str]] = field(default_factory=list)

    def view(self) -> ClientView:
        automatic = tuple(sorted({r for r, ids in self.queued.items() if ids and self.outcome.get(r) == "auto"}
                                 | self.auto_continued))
        awaiting = tuple(sorted(r for r, ids in self.queued.items() if ids and self.outcome.get(r) == "input"))
        superseded = tuple(sorted(p for p, s in self.successors.items() if s in self.named))
        return ClientView(tuple(sorted(self.inputs.values())), tuple(sorted(self.lanes.items())), automatic,
                          awaiting, tuple(sorted(self.continued)), superseded)

    def client_frame(self, frame: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Judge a client frame, then learn from it."""
        broken = judge(self.view(), frame)
        self.violations.extend(broken)
        if isinstance(frame.get("previous_response_id"), str):
            self.named.add(frame["previous_response_id"])
        if frame.get("type") == "response.steer":
            self.last_steer_input = canonical_input(frame.get("input"))
        elif frame.get("type") == "response.create":
            parent = frame.get("previous_response_id")
            if parent and self.queued.get(parent):
                self.continued.add(parent)
        return broken

    def server_event(self, data: Mapping[str, Any]) -> None:
        kind = data.get("type")
        if kind == "response.created":
            response = data["response"]
            self.lanes[response["id"]] = data.get("stream_id")
            parent = response.get("previous_response_id")
            if parent:  # the first response that continued it, as the model keeps (a second new request may follow)
                self.successors.setdefault(parent, response["id"])
                if self.queued.get(parent) and self.outcome.get(parent) == "auto":
                    self.auto_continued.add(parent)
            self._resolve(self.queued.pop(parent or "", []))
        elif kind == "response.steer.accepted":
            sid, target = data["steer"]["id"], data["steer"]["previous_response_id"]
            self.inputs[sid] = self.last_steer_input
            self.queued.setdefault(target, []).append(sid)
        elif kind == "response.steer.failed" and data["steer"].get("id"):
            sid = data["steer"]["id"]
            self._resolve([sid])
            for ids in self.queued.values():
                if sid in ids:
                    ids.remove(sid)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = data["response"]
            calls = any(item.get("type") == "function_call" for item in response.get("output", []))
            self.outcome[response["id"]] = "input" if calls and kind == "response.completed" else "auto"

    def closed(self) -> None:
        """The connection dropped: queued steers' fates are unknown, and the new connection starts clean."""
        self._resolve(list(self.inputs))
        self.queued.clear()
        self.successors.clear()
        self.auto_continued.clear()
        self.named.clear()

    def _resolve(self, ids: Iterable[str]) -> None:
        for sid in ids:
            self.inputs.pop(sid, None)
