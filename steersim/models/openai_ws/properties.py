"""The spec's invariants (section 6 of `openai-responses-ws.md`) as properties of the model, named
`invNN-…` after them, the client obligations (invariant 22) as the `client-…` group, and vacuity guards.

Step properties read the transition's wire events, which the engine hands them (`Always(with_events=True)`),
so they judge what the client would see, not the model's bookkeeping. They are built from the
configuration (parameters and bug variant) alone. Invariants 1-21 are all expressed; 7's liveness half
("afterwards a successor or a failure") and 1's are the core `no-lost-steers` with its eventually form.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from steersim.core.identity import ByIdentity
from steersim.core.model import Action, Always, Event, Eventually, Property, Sometimes
from steersim.models.openai_ws import wire
from steersim.models.openai_ws.client import CLIENT_RULES, RULE_FRAMES, VIEW_FIELDS, ClientView, canonical_input, judge
from steersim.models.openai_ws.facts import facts
from steersim.models.openai_ws.state import (
    ACCEPTED,
    AUTO,
    COMMITTED,
    COMPLETED,
    DEFAULT_CHAIN,
    FAILED,
    FAILED_WITH_ID,
    IN_PROGRESS,
    INCOMPLETE,
    PENDING,
    REJECTED,
    UNKNOWN,
    UNRESOLVED,
    WAITING,
    WsState,
    lane_stream_id,
    later_on_lane,
)

Params = Mapping[str, Any]

TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")
RESOLVING_EVENTS = ("steer.committed", "response.steer.failed")
STEER_EVENTS = ("steer.committed", "response.steer.pending", "response.steer.failed")
LIFECYCLE_EVENTS = ("response.created", "response.in_progress", *TERMINAL_EVENTS)  # those whose data has "response"
# the server events that carry a sequence_number: every wire event the server sends but the close frame
SEQUENCED_EVENTS = (*LIFECYCLE_EVENTS, "response.output_item.added", "response.output_item.done",
                    "response.web_search_call.in_progress", "response.web_search_call.completed",
                    "response.steer.accepted", "response.steer.pending", "response.steer.failed")
RESULT_EVENTS = ("response.web_search_call.completed", "response.create", "tool.abandoned")  # tool.result facts
_UNNAMED = object()  # a lane beyond the configured ones, whose stream id is not in the table
Trigger = tuple[tuple[str, ...], tuple[str, ...]]  # event names, and action kinds


@cache
def steer_number(steer_id: str) -> int:
    """The steer a wire id names (few ids, read again on every step that mentions them)."""
    return int(steer_id.removeprefix("steer_"), 16) - 1


@cache
def response_index(response_id: str) -> int:
    """The response a wire id names (few ids, read again on every step that mentions them)."""
    return int(response_id.removeprefix("resp_")) - 1


Events = tuple[Event, ...]


def _grouped(events: Events) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for event in events:
        group = groups.get(event.name)
        if group is None:
            groups[event.name] = [event.data]
        else:
            group.append(event.data)
    return groups


# The payloads of a step's events grouped by name, each group in wire order (read, never changed). Every
# step property of a step is handed the same events tuple, and a remembered step hands out the same one
# again, so the grouping is made once per tuple instead of each property scanning the events again.
_groups: ByIdentity[Events, dict[str, list[Mapping[str, Any]]]] = ByIdentity(_grouped)


def _sent(events: Events, names: tuple[str, ...]) -> Sequence[Mapping[str, Any]]:
    """The payloads of the step's events named `names`, in wire order (read, never changed)."""
    groups = _groups(events)
    present = [name for name in names if name in groups]
    if len(present) > 1:
        return [event.data for event in events if event.name in names]
    return groups[present[0]] if present else ()


def _numbered_of(events: Events) -> tuple[tuple[str, Mapping[str, Any], int | None], ...]:
    """The step's events sent to the client with a sequence number, each as its source, its payload
    and the response the payload names (None: it names none, so it is about the action's)."""
    return tuple((event.source, event.data, _named_response(event.data)) for event in events
                 if event.target == "client" and "sequence_number" in event.data)


def _named_response(data: Mapping[str, Any]) -> int | None:
    if "response" in data:
        return response_index(data["response"]["id"])
    if "steer" in data:
        return response_index(data["steer"]["previous_response_id"])
    return None


_numbered = ByIdentity(_numbered_of)  # read by two properties on each step, and again on a remembered one


def _queued_steers(s: WsState) -> list[int]:
    return [n for r in s.responses for n in r.queue] + list(s.carry)


# ------------------------------------------------------------------------------------ state invariants
def every_steer_can_resolve(s: WsState) -> bool:
    """inv01: each accepted, unresolved steer sits in exactly one queue, of a response that can still
    commit or fail it; nothing resolved sits in a queue."""
    queued = _queued_steers(s)
    for number, st in enumerate(s.steers):
        if queued.count(number) != (1 if st.status in UNRESOLVED else 0):
            return False
    return all(r.status == IN_PROGRESS or r.next in (AUTO, WAITING) for r in s.responses if r.queue)


def one_active_per_lane(s: WsState) -> bool:
    active = [(r.conn, r.lane) for r in s.responses if r.status == IN_PROGRESS]
    return len(active) == len(set(active))


# ------------------------------------------------------------------------------------- step invariants
class Judge:
    """The step invariants for one configuration: each a method of (s, a, t, events), the transition's
    wire events as the engine computed them."""

    def __init__(self, params: Params) -> None:
        self.p = params
        self._streams = {lane: lane_stream_id(params["stream_ids"], lane) for lane in range(params["lanes"])}
        self._findings: tuple[tuple[Event, ...], WsState | None, list[str]] = ((), None, [])
        self._view: tuple[tuple[WsState, tuple[str, ...]] | None, ClientView | None] = (None, None)

    def stream_id(self, lane: int) -> str | None:
        stream = self._streams.get(lane, _UNNAMED)
        return lane_stream_id(self.p["stream_ids"], lane) if stream is _UNNAMED else stream

    def no_double_application(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        for data in _sent(events, RESOLVING_EVENTS):
            sid = data["steer"].get("id")
            if sid is not None and s.steers[steer_number(sid)].status not in UNRESOLVED:
                return False
        return True

    def failure_id_after_acceptance(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        for data in _groups(events).get("response.steer.failed", ()):
            sid = data["steer"].get("id")
            if sid is None and a.kind != "client.steer":
                return False
            if sid is not None and s.steers[steer_number(sid)].status not in UNRESOLVED:
                return False
        return True

    def unique_ids(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        return all(steer_number(d["steer"]["id"]) >= len(s.steers)
                   for d in _groups(events).get("response.steer.accepted", ()))

    def submission_order(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        committed: dict[str, list[int]] = {}
        for data in _groups(events).get("steer.committed", ()):
            committed.setdefault(data["response_id"], []).append(steer_number(data["steer"]["id"]))
        for successor, numbers in committed.items():
            parent = t.responses[response_index(successor)].parent
            queue = s.responses[parent].queue if parent >= 0 else ()
            if tuple(numbers) != queue[: len(numbers)]:
                return False
        return True

    def commit_after_parent_terminal(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        for data in _groups(events).get("response.created", ()):
            previous = data["response"]["previous_response_id"]
            if previous is None:
                continue
            parent = s.responses[response_index(previous)]
            if parent.status == IN_PROGRESS or data.get("stream_id") != self.stream_id(parent.lane):
                return False
        return True

    def steered_has_accepted_steer(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        for data in _groups(events).get("response.incomplete", ()):
            steered = data["response"]["incomplete_details"]["reason"] == "steered"
            if steered and not s.responses[response_index(data["response"]["id"])].queue:
                return False
        return True

    def no_successor_while_input_required(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        groups = _groups(events)
        created = groups.get("response.created", ())
        if not created:
            return True
        answered = {item["call_id"] for d in groups.get("response.create", ()) if isinstance(d["input"], list)
                    for item in d["input"] if item.get("type") == "function_call_output"}
        for data in created:
            previous = data["response"]["previous_response_id"]
            if previous is None:
                continue
            index = response_index(previous)
            if s.responses[index].client_call_done and wire.call_id(index) not in answered:
                return False
        return True

    def tool_completeness(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        groups = _groups(events)
        for data in groups.get("response.create", ()):
            previous = data.get("previous_response_id")
            if previous is None:
                continue
            index = response_index(previous)
            outputs = [item["call_id"] for item in data["input"] if item.get("type") == "function_call_output"]
            continues_call = s.responses[index].next == WAITING
            if outputs != ([wire.call_id(index)] if continues_call else []):
                return False
        for data in groups.get("response.steer.pending", ()):
            index = response_index(data["steer"]["previous_response_id"])
            stubs = [stub["call_id"] for stub in data["required_input"]]
            r = s.responses[index]
            if stubs != [wire.call_id(index)] or not r.client_call_done or r.answered:
                return False
        return True

    def pending_discipline(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        for data in _groups(events).get("response.steer.pending", ()):
            target = s.responses[response_index(data["steer"]["previous_response_id"])]
            if s.steers[steer_number(data["steer"]["id"])].status != ACCEPTED:
                return False
            if target.status != COMPLETED or not data["required_input"]:
                return False
        return True

    def one_continuation_per_parent(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        if a.kind in NEW_REQUESTS:  # a new request after an ended chain continues no queued steering
            return True
        for data in _groups(events).get("response.created", ()):
            previous = data["response"]["previous_response_id"]
            if previous is not None and s.responses[response_index(previous)].successor >= 0:
                return False
        return True

    def connection_locality(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        for data in _sent(events, STEER_EVENTS):
            sid = data["steer"].get("id")
            if sid is not None and s.steers[steer_number(sid)].conn != s.conn:
                return False
        if a.kind == "client.steer" and s.responses[a.args[0]].conn != s.conn:
            codes = [d["error"]["code"] for d in _groups(events).get("response.steer.failed", ())]
            return codes == ["response_not_found"]
        return True

    def stream_id_echo(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        for source, data, named in _numbered(events):
            if source != "server":
                continue
            index = a.args[0] if named is None else named
            expected = None
            if index is not None and t.responses[index].conn == s.conn:
                expected = self.stream_id(t.responses[index].lane)
            if data.get("stream_id") != expected:
                return False
        return True

    def eligibility(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        if a.kind != "client.steer":
            return True
        target = s.responses[a.args[0]]
        if target.steerable or target.conn != s.conn:
            return True
        failed = _groups(events).get("response.steer.failed", ())
        return [(d["error"]["code"], "id" in d["steer"]) for d in failed] == [("steering_not_supported", False)]

    def rejected_has_no_effect(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        if a.kind != "client.steer" or t.steers[-1].status == ACCEPTED:
            return True
        before, after = s.responses, t.responses
        # a response the step left alone is the same object in both states
        return len(before) == len(after) and all(
            x is y or x._replace(seq=y.seq) == y for x, y in zip(before, after, strict=True))

    def refusal_names_the_parent(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        """A steer refused for its parent's state says which one: response_already_completed for a parent
        that completed (A4, A5), response_not_active for any other (A3)."""
        if a.kind != "client.steer":
            return True
        for data in _groups(events).get("response.steer.failed", ()):
            code = data["error"]["code"]
            if "id" in data["steer"] or code not in ("response_already_completed", "response_not_active"):
                continue
            completed = s.responses[response_index(data["steer"]["previous_response_id"])].status == COMPLETED
            if completed != (code == "response_already_completed"):
                return False
        return True

    def input_round_trip(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        groups = _groups(events)
        failed = groups.get("response.steer.failed", ())
        if not failed:
            return True
        sent = {d["previous_response_id"]: d["input"] for d in groups.get("response.steer", ())}
        for data in failed:
            steer = data["steer"]
            if "id" in steer:
                st = s.steers[steer_number(steer["id"])]
                expected = (wire.response_id(st.target), wire.steer_text(st.text))
            else:
                expected = (steer["previous_response_id"], sent.get(steer["previous_response_id"]))
            if (steer["previous_response_id"], steer["input"]) != expected:
                return False
        return True

    def output_never_rewritten(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        for data in _sent(events, TERMINAL_EVENTS):
            index = response_index(data["response"]["id"])
            r = s.responses[index]
            finished = [wire.output_item(kind, index, True) for kind in r.kinds[: r.done]]
            if data["response"]["output"] != finished:
                return False
        return True

    def safe_output_boundary(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        for data in _groups(events).get("response.incomplete", ()):
            if s.responses[response_index(data["response"]["id"])].open:
                return False
        return True

    def lifecycle_well_formed(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        created = 0
        known = len(s.responses)
        for event in events:
            data = event.data
            if event.name == "response.created":
                created += 1
                if response_index(data["response"]["id"]) != known + created - 1:
                    return False
                continue
            if event.source != "server" or "response" not in data:
                continue
            index = response_index(data["response"]["id"])
            if index < known and s.responses[index].status != IN_PROGRESS:
                return False
            body = data["response"]
            if (body["incomplete_details"] is not None) != (body["status"] == INCOMPLETE):
                return False
        return True

    def sequence_numbers_increase(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        per_scope = self.p["sequence_scope"] == "response"
        last: dict[Any, int] = {}
        for _, data, named in _numbered(events):
            index = a.args[0] if named is None else named
            available = index is not None and t.responses[index].conn == s.conn
            scope = index if per_scope and available else "connection"
            floor = s.conn_seq if scope == "connection" else (
                s.responses[index].seq if index < len(s.responses) else 0)
            seq = data["sequence_number"]
            if seq < max(floor, last.get(scope, -1) + 1):
                return False
            last[scope] = seq
        return True

    def sequence_numbers_consecutive(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        """Each numbered event takes the next number of its scope: a response's stream counts 0, 1, 2, …
        from its response.created, the connection's from its opening, with no number skipped or repeated
        (A10: "steer events take the next number in the target response's sequence", "SSE-style, starting
        at 0"). The scopes are inv20's; the next number of each is the count the state keeps of the numbers
        its scope handed out (a response's `seq`, the connection's `conn_seq`)."""
        per_scope = self.p["sequence_scope"] == "response"
        following: dict[Any, int] = {}
        for _, data, named in _numbered(events):
            index = a.args[0] if named is None else named
            available = index is not None and t.responses[index].conn == s.conn
            scope = index if per_scope and available else "connection"
            expected = following.get(scope)
            if expected is None:
                expected = s.conn_seq if scope == "connection" else (
                    s.responses[index].seq if index < len(s.responses) else 0)
            if data["sequence_number"] != expected:
                return False
            following[scope] = expected + 1
        return True

    def history_on_own_lane(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        """A committed steer joins the history of the lane it was submitted on: the chain its
        response.steer.accepted named (the target's stream_id, or the default lane's), which its successor
        continues."""
        for data in _groups(events).get("steer.committed", ()):
            target = s.steers[steer_number(data["steer"]["id"])].target
            successor = t.responses[response_index(data["response_id"])]
            lane = s.responses[target].lane
            if successor.lane != lane or data["chain"] != (self.stream_id(lane) or DEFAULT_CHAIN):
                return False
        return True

    def lane_fifo(self, s: WsState, a: Action, t: WsState, events: Events) -> bool:
        """A request that waited in its lane's queue starts only when no older one of the lane waits."""
        if a.kind != "server.start_queued":
            return True
        lane = s.responses[a.args[0]].lane
        return next(p for p in s.queued if s.responses[p].lane == lane) == a.args[0]

    def client_rule(self, rule: str) -> Callable[[WsState, Action, WsState, Events], bool]:
        def holds(s: WsState, a: Action, t: WsState, events: Events) -> bool:
            if not a.kind.startswith("client."):
                return True
            return rule not in self._broken_rules(s, events)

        return holds

    def _broken_rules(self, s: WsState, events: Events) -> list[str]:
        """The client rules the transition's frames break, judged once per transition for all the
        rules (the engine hands every property of one step the same events). The client's view is made
        once per state and types of frames: a search takes every client step of a state one after the
        other."""
        findings = self._findings
        if findings[0] is not events or findings[1] is not s:
            frames = [e.data for e in events if e.source == "client" and "type" in e.data]
            broken: list[str] = []
            if frames:
                types = tuple(sorted({frame["type"] for frame in frames}))
                seen, view = self._view
                if seen is None or seen[0] is not s or seen[1] != types or view is None:
                    view = view_of_state(self.p, s, types)
                    self._view = ((s, types), view)
                broken = [name for frame in frames for name, _ in judge(view, frame)]
            findings = self._findings = (events, s, broken)
        return findings[2]


@cache
def _steer_input_key(text: int) -> str:
    """The canonical input of steer text `text` (few texts, met in every client step)."""
    return canonical_input(wire.steer_text(text))


def view_of_state(params: Params, s: WsState, frames: Collection[str] | None = None) -> ClientView:
    """What the client had been told in state `s` (the model's side of the client obligations): all of
    it, or as far as `judge` reads it for client frames of the types `frames` (`VIEW_FIELDS`; the other
    fields empty)."""
    wanted = _VIEW_PARTS if frames is None else {name for frame in frames for name in VIEW_FIELDS.get(frame, ())}
    return ClientView(**{name: _VIEW_PARTS[name](params, s) for name in wanted})


def _unresolved(params: Params, s: WsState) -> tuple[str, ...]:
    return tuple(sorted(_steer_input_key(st.text) for st in s.steers if st.status in UNRESOLVED and st.conn == s.conn))


def _lanes(params: Params, s: WsState) -> tuple[tuple[str, str | None], ...]:
    return tuple(sorted((wire.response_id(i), lane_stream_id(params["stream_ids"], r.lane))
                        for i, r in enumerate(s.responses)))


def _automatic(params: Params, s: WsState) -> tuple[str, ...]:
    return tuple(wire.response_id(i) for i, r in enumerate(s.responses) if (r.queue and r.next == AUTO)
                 or (r.successor >= 0 and s.responses[r.successor].origin == "auto"))


def _awaiting(params: Params, s: WsState) -> tuple[str, ...]:
    return tuple(wire.response_id(i) for i, r in enumerate(s.responses) if r.queue and r.next == WAITING)


def _continued(params: Params, s: WsState) -> tuple[str, ...]:
    return tuple(sorted({wire.response_id(st.target) for st in s.steers
                         if st.status == COMMITTED and s.responses[st.target].answered}))


def _superseded(params: Params, s: WsState) -> tuple[str, ...]:
    """The responses whose successor the client named, each successor read as the client reads it (as
    `client.WireTracker` does): the first response whose response.created names it as previous_response_id."""
    named = named_responses(s)
    first: dict[int, int] = {}
    for index, r in enumerate(s.responses):
        if r.parent >= 0:
            first.setdefault(r.parent, index)
    return tuple(sorted(wire.response_id(parent) for parent, successor in first.items() if successor in named))


_VIEW_PARTS: Mapping[str, Callable[[Params, WsState], Any]] = {
    "unresolved": _unresolved, "lanes": _lanes, "automatic": _automatic, "awaiting": _awaiting,
    "continued": _continued, "superseded": _superseded,
}


def named_responses(s: WsState) -> set[int]:
    """The responses the client's own frames referred to: steer targets and continued parents."""
    return {st.target for st in s.steers} | {r.parent for r in s.responses if r.origin in ("explicit", "followup")}


# ------------------------------------------------------------------------------------------ the list
INVARIANT_DOCS = {
    "inv01-exactly-one-resolution": "every accepted steer sits in one queue that can still commit or fail it",
    "inv02-no-double-application": "no steer is committed or failed after it was resolved",
    "inv03-failure-id-after-acceptance": "a failure without steer.id answers a fresh submission; one with an id "
                                         "follows its acceptance",
    "inv04-unique-steer-ids": "steer.id values are never reused",
    "inv05-submission-order": "a successor commits its parent's steers in acceptance order",
    "inv06-commit-after-parent-terminal": "a successor is created only after its parent's terminal event, on the "
                                          "parent's lane",
    "inv07-steered-has-accepted-steer": "a response ends incomplete(steered) only with an accepted steer queued",
    "inv08-no-successor-while-input-required": "no successor of a response with a client-owned call exists "
                                               "before the client returns its output",
    "inv09-tool-completeness": "continuations answer exactly the outstanding calls (none for a finished chain); "
                               "pending stubs list exactly them",
    "inv10-pending-discipline": "steer.pending comes at most once per steer, after response.completed, with "
                                "required input",
    "inv11-one-continuation-per-parent": "a parent is continued at most once",
    "inv12-lane-exclusivity": "at most one response per lane is in progress",
    "inv13-connection-locality": "steer events never cross connections; a steer at another connection's "
                                 "response fails response_not_found",
    "inv14-stream-id-echo": "events carry the target's stream_id iff its lane is named and it is available",
    "inv15-eligibility": "a steer at a non-steerable response fails steering_not_supported without an id",
    "inv16-rejected-steer-no-effect": "a refused steer changes no response",
    "inv17-input-round-trip": "steer.failed returns the submitted input and target",
    "inv18-output-never-rewritten": "a terminal response's output is exactly the items it finished",
    "inv19-response-lifecycle": "created first, one terminal event, nothing after it, incomplete_details iff "
                                "incomplete",
    "inv20-sequence-numbers-increase": "sequence numbers strictly increase within their scope (A10)",
    "sequence-numbers-consecutive": "each numbered event takes the next number of its scope, from 0 with no gap "
                                    "(A10: the next number in the target response's sequence)",
    "inv21-bounded-queue": "no response holds more queued steers than pending_limit (A14)",
    "inv22-refusal-names-the-parent": "a steer refused for its parent's state says response_already_completed "
                                      "exactly when the parent completed (A3-A5)",
    "safe-output-boundary": "a steer interrupts only between output items, never during hosted tool work",
    "history-on-own-lane": "a committed steer joins the history of the lane it was submitted on, which its "
                           "successor continues (\"the target response determines the WebSocket lane\" [SDK])",
    "lane-fifo": "new requests waiting in a lane's queue start in the order they arrived (\"Requests with the same "
                 "stream_id are processed FIFO\" [SDK, response.create stream_id])",
}


def properties(params: Params, bug: str | None = None) -> list[Property]:
    """The invariants, client obligations and vacuity guards of one configuration (the bug variant
    changes the model, not what it must satisfy)."""
    limit = params["pending_limit"]
    states = {
        "inv01-exactly-one-resolution": every_steer_can_resolve,
        "inv12-lane-exclusivity": one_active_per_lane,
        "inv21-bounded-queue": lambda s: all(len(r.queue) <= limit for r in s.responses),
    }
    props: list[Property] = [Always(name, state=fn, doc=INVARIANT_DOCS[name]) for name, fn in states.items()]
    invariants = [_routed(p) for p in step_invariants(params)]
    readings = [_routed(p) for p in reading_properties(params)]
    return props + invariants + vacuity_guards(params) + readings + behaviour_guards(params)


def step_invariants(params: Params) -> list[Always]:
    """The step invariants and client obligations, each judging a step on its own."""
    j = Judge(params)
    steps = {
        "inv02-no-double-application": j.no_double_application,
        "inv03-failure-id-after-acceptance": j.failure_id_after_acceptance,
        "inv04-unique-steer-ids": j.unique_ids,
        "inv05-submission-order": j.submission_order,
        "inv06-commit-after-parent-terminal": j.commit_after_parent_terminal,
        "inv07-steered-has-accepted-steer": j.steered_has_accepted_steer,
        "inv08-no-successor-while-input-required": j.no_successor_while_input_required,
        "inv09-tool-completeness": j.tool_completeness,
        "inv10-pending-discipline": j.pending_discipline,
        "inv11-one-continuation-per-parent": j.one_continuation_per_parent,
        "inv13-connection-locality": j.connection_locality,
        "inv14-stream-id-echo": j.stream_id_echo,
        "inv15-eligibility": j.eligibility,
        "inv16-rejected-steer-no-effect": j.rejected_has_no_effect,
        "inv17-input-round-trip": j.input_round_trip,
        "inv18-output-never-rewritten": j.output_never_rewritten,
        "inv19-response-lifecycle": j.lifecycle_well_formed,
        "inv20-sequence-numbers-increase": j.sequence_numbers_increase,
        "sequence-numbers-consecutive": j.sequence_numbers_consecutive,
        "safe-output-boundary": j.safe_output_boundary,
        "inv22-refusal-names-the-parent": j.refusal_names_the_parent,
        "history-on-own-lane": j.history_on_own_lane,
        "lane-fifo": j.lane_fifo,
    }
    props = [Always(name, step=fn, doc=INVARIANT_DOCS[name], with_events=True) for name, fn in steps.items()]
    return props + [Always(rule, step=j.client_rule(rule), doc=doc, with_events=True)
                    for rule, doc in CLIENT_RULES.items()]


# The actions that start a new request's response (at once, or from its lane's queue).
NEW_REQUESTS = ("client.followup", "server.start_queued")


# What each step property reads, where it is not every step: the names of the events it judges (any of
# them sent makes the step its concern) and the kinds of action it judges; on any other step it holds.
_STEER = ("client.steer",)
STEP_TRIGGERS: Mapping[str, Trigger] = {
    "inv02-no-double-application": (RESOLVING_EVENTS, ()),
    "inv03-failure-id-after-acceptance": (("response.steer.failed",), ()),
    "inv04-unique-steer-ids": (("response.steer.accepted",), ()),
    "inv05-submission-order": (("steer.committed",), ()),
    "inv06-commit-after-parent-terminal": (("response.created",), ()),
    "inv07-steered-has-accepted-steer": (("response.incomplete",), ()),
    "inv08-no-successor-while-input-required": (("response.created",), ()),
    "inv09-tool-completeness": (("response.create", "response.steer.pending"), ()),
    "inv10-pending-discipline": (("response.steer.pending",), ()),
    "inv11-one-continuation-per-parent": (("response.created",), ()),
    "inv13-connection-locality": (STEER_EVENTS, _STEER),
    "inv14-stream-id-echo": (SEQUENCED_EVENTS, ()),
    "inv15-eligibility": ((), _STEER),
    "inv16-rejected-steer-no-effect": ((), _STEER),
    "inv17-input-round-trip": (("response.steer.failed",), ()),
    "inv18-output-never-rewritten": (TERMINAL_EVENTS, ()),
    "inv19-response-lifecycle": (LIFECYCLE_EVENTS, ()),
    "inv20-sequence-numbers-increase": (SEQUENCED_EVENTS, ()),
    "sequence-numbers-consecutive": (SEQUENCED_EVENTS, ()),
    "safe-output-boundary": (("response.incomplete",), ()),
    "inv22-refusal-names-the-parent": ((), _STEER),
    "history-on-own-lane": (("steer.committed",), ()),
    "lane-fifo": ((), ("server.start_queued",)),
    "steer-admission-readings": ((), _STEER),
    "batch-readings": ((), ("server.successor", "client.tool_output")),
    "response-lineage": (("response.created",), ("server.successor", "client.tool_output", "client.followup",
                                                  "server.start_queued")),
    "result-facts": (RESULT_EVENTS, ()),
    "connection-events": (("websocket.close", "websocket.open"), ("fault.disconnect", "client.reconnect")),
    "item-events": (("response.output_item.added", "response.output_item.done",
                            "response.web_search_call.in_progress", "response.web_search_call.completed"), ()),
    "terminal-events": ((), ("server.complete", "server.interrupt", "server.fail")),
    "steer-events": ((), ("client.steer", "client.create", "client.tool_output", "server.successor",
                          "server.successor_fails", "server.fail", "server.pending", "fault.disconnect")),
    **{rule: ((RULE_FRAMES[rule],), ()) for rule in CLIENT_RULES},
}


def _routed(prop: Always) -> Always:
    """The step property as its trigger routes it: judged by the engines on the steps that send an event
    of the trigger's names or are of its kinds, and on no other step (where it holds)."""
    trigger = STEP_TRIGGERS.get(prop.name)
    if trigger is None:
        return prop
    names, kinds = trigger
    return replace(prop, events=names or None, kinds=kinds or None)


def vacuity_guards(p: Params) -> list[Property]:
    """The situations a check must reach to prove anything about steering, for the configurations that
    can reach them."""
    if not (p["steerable"] and p["steers"]):
        return []
    guards: list[Property] = []
    if p["interruption"] != "finish":
        guards.append(Sometimes(
            "sometimes-steered-interrupt",
            state=lambda s: any(r.status == INCOMPLETE and r.successor >= 0 for r in s.responses),
            doc="a steer interrupts a response and its successor is created"))
    if p["interruption"] != "eager":
        guards.append(Sometimes(
            "sometimes-completed-then-successor",
            state=lambda s: any(r.origin == "auto" and s.responses[r.parent].status == COMPLETED
                                for r in s.responses),
            doc="a response completes normally with a steer queued and still gets an automatic successor"))
    if p["client_tools"]:
        guards.append(Sometimes(
            "sometimes-steer-pending", state=lambda s: any(st.status == PENDING for st in s.steers),
            doc="a steer waits for a client tool result (response.steer.pending)"))
        guards.append(Sometimes(
            "sometimes-explicit-commit",
            state=lambda s: any(st.status == COMMITTED and s.responses[st.target].answered for st in s.steers),
            doc="an explicit continuation carrying the tool output commits a queued steer"))
    return guards


# ------------------------------------------------------------------------- the readings and the guards
READING_DOCS = {
    "steer-admission-readings": "a steer at a steerable response of this connection is accepted or refused as "
                                "the configured readings say: in progress: accepted; terminal with an automatic "
                                "successor due: late_steer (A3); waiting for tool output: waiting_steer (A5); "
                                "completed with nothing after it: completed_steer (A4); otherwise refused",
    "batch-readings": "a successor commits its parent's whole queue (batching=all) or its head alone (one) (A1)",
    "response-lineage": "every successor's response.created names the response it continues as "
                        "previous_response_id, a root names none, and nothing else creates a response",
    "terminal-events": "a response that ends in a step is announced in it by its terminal event with its status "
                       "(response.completed, .incomplete or .failed)",
    "steer-events": "a steer whose fate changes in a step is told in it: accepted by response.steer.accepted, "
                    "waiting for tool output by response.steer.pending (R7), failed by response.steer.failed, "
                    "committed with its successor's response.created, lost with the connection",
    "connection-events": "a connection that drops is told by its close frame, with a code the SDK reconnects on "
                         "(1001, 1005, 1006, 1011, 1012, 1013 or 1015: \"With on_reconnecting, codes ... trigger a "
                         "transparent reconnect\"; the model's client reconnects after a drop, R14), and a reconnect "
                         "by the new socket's opening; no other step closes or opens one",
    "item-events": "an output item is added in progress and done completed; a web_search_call item is announced "
                   "in progress as it is added and completed as it is done, and no other item gets a "
                   "web_search_call event",
    "result-facts": "a hosted call's completion and the client's function_call_output are real tool results; "
                    "only a call abandoned by a drop gets a synthetic one",
}


# The close codes after which the SDK reconnects (spec, "Close handling"; 1000 ends the iteration normally).
RECONNECT_CODES = frozenset((1001, 1005, 1006, 1011, 1012, 1013, 1015))

# The event that tells the client (or, for a commit and a loss, the trace) each fate a steer can take.
STEER_TOLD_BY = {ACCEPTED: "response.steer.accepted", PENDING: "response.steer.pending",
                 REJECTED: "response.steer.failed", FAILED_WITH_ID: "response.steer.failed",
                 COMMITTED: "steer.committed", UNKNOWN: "steer.lost"}
STEER_TELLING = frozenset(STEER_TOLD_BY.values())


def reading_properties(p: Params) -> list[Always]:
    """Properties that tell the values of each admission and batching ambiguity apart, by what the server
    answers: a model that silently follows the other reading emits other replies."""

    def admission(s: WsState, a: Action, t: WsState, events: tuple[Event, ...]) -> bool:
        if a.kind != "client.steer":
            return True
        target, _, valid = a.args
        r = s.responses[target]
        if r.conn != s.conn or not r.steerable or not valid:
            return True
        replies = [(e.name, e.data.get("error", {}).get("code")) for e in events
                   if e.name in ("response.steer.accepted", "response.steer.failed")]
        if r.status == IN_PROGRESS and r.successor < 0:
            joins = True
        elif r.next == AUTO:
            joins = p["late_steer"] == "join"
        elif r.next == WAITING:
            joins = p["waiting_steer"] == "queue"
        else:
            joins = (p["completed_steer"] == "successor" and r.status == COMPLETED and r.successor < 0
                     and not later_on_lane(s.responses, target))
        if not joins:
            refused = "response_already_completed" if r.status == COMPLETED else "response_not_active"
            return replies == [("response.steer.failed", refused)]
        full = len(r.queue) >= p["pending_limit"]
        return replies == ([("response.steer.failed", "too_many_pending_steers")] if full
                           else [("response.steer.accepted", None)])

    def batching(s: WsState, a: Action, t: WsState, events: tuple[Event, ...]) -> bool:
        if a.kind not in ("server.successor", "client.tool_output"):
            return True
        queue = s.responses[a.args[0]].queue
        committed = [steer_number(d["steer"]["id"]) for d in _groups(events).get("steer.committed", ())]
        return len(committed) == (len(queue) if p["batching"] == "all" else min(1, len(queue)))

    def lineage(s: WsState, a: Action, t: WsState, events: tuple[Event, ...]) -> bool:
        created = [d["response"]["previous_response_id"] for d in _groups(events).get("response.created", ())]
        if a.kind == "client.followup" and not created:
            return a.args[0] in t.queued  # it waits in its lane's queue
        if a.kind in ("server.successor", "client.tool_output", *NEW_REQUESTS):
            return created == [wire.response_id(a.args[0])]
        return all(previous is None for previous in created) if a.kind == "client.create" else not created

    def terminal_events(s: WsState, a: Action, t: WsState, events: tuple[Event, ...]) -> bool:
        before = s.responses  # a response the step left alone is the same object in both states
        ended = {wire.response_id(i): r.status for i, r in enumerate(t.responses[: len(before)])
                 if r is not before[i] and before[i].status == IN_PROGRESS
                 and r.status in (COMPLETED, INCOMPLETE, FAILED)}
        if not ended:
            return True
        sent = {d["response"]["id"]: d["response"]["status"] for d in _sent(events, TERMINAL_EVENTS)}
        return all(sent.get(rid) == status for rid, status in ended.items())

    def result_facts(s: WsState, a: Action, t: WsState, events: tuple[Event, ...]) -> bool:
        for event in events:
            synthetic = event.name == "tool.abandoned"
            for fact in facts(event):
                if fact.name == "tool.result" and fact.get("synthetic") != synthetic:
                    return False
        return True

    def steer_events(s: WsState, a: Action, t: WsState, events: tuple[Event, ...]) -> bool:
        told = [(e.name, e.data.get("steer", {}).get("id")) for e in events if e.name in STEER_TELLING]
        for number in range(len(t.steers)):
            before = s.steers[number] if number < len(s.steers) else None
            after = t.steers[number]
            if after is before or (before is not None and after.status == before.status):
                continue
            steer_id = None if after.status == REJECTED else wire.steer_id(number)  # a refusal names no steer
            if (STEER_TOLD_BY.get(after.status), steer_id) not in told:
                return False
        return True

    def item_events(s: WsState, a: Action, t: WsState, events: tuple[Event, ...]) -> bool:
        groups = _groups(events)
        if any(d["item"]["status"] != "in_progress" for d in groups.get("response.output_item.added", ())) or \
                any(d["item"]["status"] != "completed" for d in groups.get("response.output_item.done", ())):
            return False

        def searches(name: str) -> list[str]:
            return [d["item"]["id"] for d in groups.get(name, ()) if d["item"]["type"] == "web_search_call"]

        progress = [d["item_id"] for d in groups.get("response.web_search_call.in_progress", ())]
        completed = [d["item_id"] for d in groups.get("response.web_search_call.completed", ())]
        return (progress == searches("response.output_item.added")
                and completed == searches("response.output_item.done"))

    def connection_events(s: WsState, a: Action, t: WsState, events: tuple[Event, ...]) -> bool:
        closes = [e.data for e in events if e.name == "websocket.close"]
        opens = [e.data.get("connection") for e in events if e.name == "websocket.open"]
        dropped = s.connected and not t.connected
        opened = t.connected and (not s.connected or t.conn != s.conn)
        return (len(closes) == dropped and opens == ([t.conn] if opened else [])
                and all(close["code"] in RECONNECT_CODES for close in closes))

    checks = {"steer-admission-readings": admission, "batch-readings": batching, "response-lineage": lineage,
              "result-facts": result_facts, "terminal-events": terminal_events, "steer-events": steer_events,
              "connection-events": connection_events, "item-events": item_events}
    return [Always(name, step=check, with_events=True, doc=READING_DOCS[name]) for name, check in checks.items()]


def behaviour_guards(p: Params) -> list[Property]:
    """One guard per behaviour a parameter enables, besides the steering guards of `vacuity_guards`, and
    the liveness of the requests a lane queues."""
    steering = p["steerable"] and p["steers"] > 0
    guards: list[Property] = [
        Sometimes("sometimes-completed", state=lambda s: any(r.status == COMPLETED for r in s.responses),
                  doc="a response completes"),
    ]
    if steering and p["reconnects"]:  # the connection drops only while a steer is queued
        guards += [
            Sometimes("sometimes-steer-lost-to-drop", state=lambda s: any(st.status == UNKNOWN for st in s.steers),
                      doc="the connection drops with a steer queued, whose fate becomes unknown"),
            Sometimes("sometimes-reconnected",
                      state=lambda s: s.conn > 0 and bool(s.responses) and s.responses[-1].conn == s.conn,
                      doc="after a drop the client creates a response on a fresh connection"),
        ]
    if p["hosted_tools"]:
        guards.append(Sometimes("sometimes-hosted-tool-finishes",
                                state=lambda s: any("web_search_call" in r.kinds[: r.done] for r in s.responses),
                                doc="a hosted tool call (web search) finishes"))
    if p["followups"]:
        guards.append(Sometimes("sometimes-followup", state=lambda s: any(r.origin == "followup" for r in s.responses),
                                doc="the client sends a new request after a chain ended"))
    if p["followups"] > 1:  # a second new request may wait in its lane's queue
        guards.append(Sometimes(
            "sometimes-request-queued", state=lambda s: bool(s.queued),
            doc="a response.create arrives while its lane is busy and waits in the lane's queue (\"Requests with "
                "the same stream_id are processed FIFO\"): without it queued-requests-start has nothing to judge"))
        guards.append(Eventually(
            "queued-requests-start", trigger=lambda s: bool(s.queued), goal=lambda s: not s.queued,
            doc="a response.create waiting in its lane's queue is served once the lane is free (\"Requests "
                "with the same stream_id are processed FIFO\"): its response.created follows, unless the "
                "connection drops first"))
    if p["response_failures"]:
        guards.append(Sometimes("sometimes-response-failed",
                                state=lambda s: any(r.status == FAILED for r in s.responses),
                                doc="a response ends response.failed"))
    if p["steers"] and not p["steerable"]:
        guards.append(Sometimes("sometimes-steering-not-supported",
                                state=lambda s: any(st.status == REJECTED for st in s.steers),
                                doc="a steer at a conversation-bound response is refused (steering_not_supported, "
                                    "which inv15 judges, is then the only refusal)"))
    if steering and p["invalid_input"]:
        guards.append(Sometimes("sometimes-invalid-input",
                                state=lambda s: any(st.status == REJECTED and not st.valid for st in s.steers),
                                doc="a steer carrying a tool output is refused"))
    if steering and p["successor_failures"]:
        guards.append(_steer_ends(FAILED_WITH_ID, "successor_creation_failed", "a queued steer fails because its "
                                  "automatic successor cannot be created"))
    if steering and p["response_failures"]:
        guards.append(Sometimes("sometimes-steer-fails-with-parent", state=lambda s: any(
            st.status == FAILED_WITH_ID and st.code == p["failed_parent_code"] and s.responses[st.target].status
            == FAILED for st in s.steers), doc="a queued steer fails with its failed parent (failed_parent_code)"))
    if steering and p["steers"] > 1 and p["pending_limit"] > 1:
        guards.append(Sometimes("sometimes-batch-of-two",
                                state=lambda s: any(r.terminal and r.next == AUTO and len(r.queue) > 1
                                                    for r in s.responses),
                                doc="two steers wait for one successor (batching decides how many it commits)"))
    return guards


def _steer_ends(status: str, code: str, doc: str) -> Property:
    return Sometimes(f"sometimes-{code.replace('_', '-')}",
                     state=lambda s: any(st.status == status and st.code == code for st in s.steers), doc=doc)
