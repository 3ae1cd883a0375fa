"""Mid-turn steering over the Responses API WebSocket (`response.steer`), as an executable model.

Participants: a client, one WebSocket connection at a time (ordered, can drop; the client reconnects
onto a fresh one), and the server with lanes (`stream_id`), responses and their lifecycle, hosted tool
work (web search), client-owned function calls, per-response steer queues with a bound, automatic and
explicit successors, and the commit point (the successor's `response.created`).

Observation point: the model is observed at the server's end of the socket. A client action is the
*arrival* of a client frame, so a frame the client may have sent earlier can arrive at any later point;
that covers every uplink delay, including the central race of a steer that reaches a response after it
finished. The client steers only responses whose `response.created` it has seen (the two newest on its
lane, so stale and cross-connection aims are covered, less those whose successor it already used),
returns the output of every client-owned call, may start a new request on a lane whose chain ended
(`followups`, e.g. carrying a failed steer's input), may declare its function tool or not
(`client_tools` 2), never resends accepted input and reconnects after a drop. The connection drops
only while a steer is queued (only then is steering input lost), and after a reconnect the client starts
a one-message chain anew: both keep the state space small without losing a steering race.

Each native event's `data` is the JSON object exactly as it travels on the wire (`steersim.models.openai_ws.wire`).
Three kinds of event are the server's own bookkeeping (source and target `server`), because the wire
does not carry them (A11): `steer.committed` (a steer became part of a successor's input at its
`response.created`), and, when a connection drops, `steer.lost` and `response.lost` / `tool.abandoned`
(the fate is unknowable, the chain is gone).

The spec's ambiguities (A1-A21 of `openai-responses-ws.md`) that the model covers are parameters with
the spec's default; those it fixes: A6 (a client-owned call item finishes and the response completes),
A8 (the client sends no mismatched continuation: a served client that does breaks an obligation),
A9/A12/A19 (one chain per lane: a new request that arrives while its lane is busy waits in the
lane's FIFO queue, behind an automatic successor that is due, and starts without `response.queued`;
no 16-response cap), A11 (a successor commits exactly its parent's queue), A13 and A20 (no stored or
warm-up responses), A17 (no early continuation).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from steersim.core import facts as F
from steersim.core.identity import ByIdentity
from steersim.core.model import Action, Event, ModelBase, Property
from steersim.models.openai_ws import wire
from steersim.models.openai_ws.facts import facts
from steersim.models.openai_ws.matching import frame_matches
from steersim.models.openai_ws.spec import ACTION_KINDS, DEFAULT_TIMING, kinds_not_enabled
from steersim.models.openai_ws.state import (
    ACCEPTED,
    AUTO,
    COMMITTED,
    COMPLETED,
    DEFAULT_CHAIN,
    ENDED,
    FAILED,
    FAILED_WITH_ID,
    IN_PROGRESS,
    INCOMPLETE,
    LOST,
    PENDING,
    REJECTED,
    UNKNOWN,
    UNRESOLVED,
    WAITING,
    Response,
    Steer,
    WsState,
    lane_stream_id,
    later_on_lane,
)

CLIENT, SERVER, CONNECTION = "client", "server", "connection"
CONTINUATION_BUGS = ("continue-automatic-parent", "continue-twice")  # `_buggy_continuations`
REMEMBERED_STEPS_LIMIT = 1 << 16  # steps remembered (`_remembered_steps`); a larger check starts again from none
Footprint = tuple[tuple[int, ...], tuple[int, ...]]  # response indices and steer numbers
# What a remembered step does: the responses and steers of its footprint it changed (position, new
# value), those it appends, the state's other fields after it, and its events.
StepChange = tuple[tuple[tuple[int, Response], ...], tuple[Response, ...], tuple[tuple[int, Steer], ...],
                   tuple[Steer, ...], tuple[int, bool, tuple[bool, ...], tuple[int, ...], int, tuple[int, ...]],
                   tuple[Event, ...]]
INTERNAL = "server"  # internal bookkeeping events go from the server to itself
_event_facts: ByIdentity[Event, list[F.Fact]] = ByIdentity(facts)  # a remembered step's events recur


class OpenAIWsModel(ModelBase):
    """The model for one parameter set (see `steersim.models.openai_ws.spec.PARAMS`) and an optional bug."""

    name = "openai-ws"
    fair_actors = ("client", "server", "tool:*")
    action_kinds = ACTION_KINDS

    def __init__(self, params: Mapping[str, Any], bug: str | None = None) -> None:
        super().__init__(params, bug)
        self.p = self.params
        self.lanes = self.p["lanes"]
        self._remembered_steps: dict[tuple, StepChange] = {}
        self._creates_of: dict[tuple[bool, ...], tuple[Action, ...]] = {}

    def kinds_not_enabled(self) -> Mapping[str, str]:
        return kinds_not_enabled(self.params)

    # ------------------------------------------------------------------ naming helpers
    def stream_id(self, lane: int) -> str | None:
        return lane_stream_id(self.p["stream_ids"], lane)

    def chain(self, lane: int) -> str:
        return self.stream_id(lane) or DEFAULT_CHAIN

    def root_plan(self, conn: int, tools: bool) -> tuple[str, ...]:
        """A first-connection root runs its hosted tools, then ends with a call of the client's function
        tool (when its create declared one) or a message; every other response writes one message."""
        if conn > 0:
            return ("message",)
        last = ("function_call",) if tools else ("message",)
        return ("web_search_call",) * self.p["hosted_tools"] + last

    def tool_choices(self) -> tuple[bool, ...]:
        """Whether a root's create declares the client's function tool: client_tools 0 never, 1 always,
        2 as the client chooses (a served real client)."""
        return ((False,), (True,), (False, True))[self.p["client_tools"]]

    # ------------------------------------------------------------------ Model API
    def init_states(self) -> Sequence[WsState]:
        return [WsState(conn=0, connected=True, rooted=(False,) * self.lanes)]

    def actions(self, s: WsState) -> list[Action]:
        """The client's actions, then the server's on each response of this connection, then a drop: in
        one pass over the responses, which every state of a check pays for."""
        if not s.connected:
            return [Action(CLIENT, "client.reconnect", (s.conn + 1,))]
        out = self._client_actions(s)
        server: list[Action] = []
        conn, queued = s.conn, False
        for index, r in enumerate(s.responses):
            if r.conn != conn:
                continue
            if r.next == WAITING and not r.answered:
                out.append(Action(CLIENT, "client.tool_output", (index,)))
            if r.status == IN_PROGRESS or r.next != ENDED:  # an ended response offers the server nothing
                server.extend(self._server_actions(s, index, r))
            queued = queued or bool(r.queue)
        if self.bug in CONTINUATION_BUGS:
            out.extend(self._buggy_continuations(s))
        out.extend(server)
        out.extend(self._queued_starts(s))
        if conn < self.p["reconnects"] and queued:  # only then does a drop lose steering input (R14)
            out.append(Action(CONNECTION, "fault.disconnect"))
        return out

    def step(self, s: WsState, a: Action) -> tuple[WsState, tuple[Event, ...]]:
        footprint = FOOTPRINTS.get(a.kind)
        if footprint is None:
            return self._built_step(s, a)
        return self._remembered_step(s, a, footprint(s, a))

    def _built_step(self, s: WsState, a: Action) -> tuple[WsState, tuple[Event, ...]]:
        """The step as `_Step` takes it, part by part."""
        step = _Step(self, s)
        handler = getattr(step, a.kind.replace(".", "_"), None)
        if handler is None:
            raise ValueError(f"openai-ws model has no action kind {a.kind!r}")
        handler(*a.args)
        return step.state(), tuple(step.events)

    def _remembered_step(self, s: WsState, a: Action, footprint: Footprint) -> tuple[WsState, tuple[Event, ...]]:
        """A step from what the action did before in a state that agreed with `s` on the responses and
        steers of the step's footprint (`FOOTPRINTS`), the numbers of responses and steers and every
        other field: most steps of a check meet such a state, and building the events costs more than
        the whole rest of the step. The events are shared, as events may be (`Event.data` is never
        changed once built); a response the step leaves alone stays the same object."""
        indices, numbers = footprint
        key = (a, footprint, s.conn, s.connected, s.rooted, s.carry, s.conn_seq, s.queued, len(s.responses),
               len(s.steers),
               tuple(map(s.responses.__getitem__, indices)), tuple(map(s.steers.__getitem__, numbers)))
        done = self._remembered_steps.get(key)
        if done is None:
            if len(self._remembered_steps) >= REMEMBERED_STEPS_LIMIT:
                self._remembered_steps.clear()
            done = self._remembered_steps[key] = self._change_of(s, a, footprint)
        changed, added, changed_steers, added_steers, rest, events = done
        conn, connected, rooted, carry, conn_seq, queued = rest
        responses, steers = _changed(s.responses, changed, added), _changed(s.steers, changed_steers, added_steers)
        return WsState(conn, connected, rooted, responses, steers, carry, conn_seq, queued), events

    def _change_of(self, s: WsState, a: Action, footprint: Footprint) -> StepChange:
        """What the step does, as `_remembered_step` keeps it (the step changes nothing off its footprint)."""
        t, events = self._built_step(s, a)
        indices, numbers = footprint
        changed = tuple((i, t.responses[i]) for i in dict.fromkeys(indices) if t.responses[i] is not s.responses[i])
        changed_steers = tuple((n, t.steers[n]) for n in dict.fromkeys(numbers) if t.steers[n] is not s.steers[n])
        return (changed, t.responses[len(s.responses) :], changed_steers, t.steers[len(s.steers) :],
                (t.conn, t.connected, t.rooted, t.carry, t.conn_seq, t.queued), events)

    def events(self, s: WsState, a: Action) -> tuple[Event, ...]:
        """The events of a transition (what a served session compares a real client's frame with)."""
        return self.step(s, a)[1]

    def match_event(self, expected: Event, observed: Event) -> bool:
        """A recorded client frame matches the model's by structure (`matching.frame_matches`)."""
        return frame_matches(expected, observed)

    def render_state(self, s: WsState) -> dict[str, Any]:
        """The state's fields, each response and steer as the mapping of its own fields (as named
        tuples they would show as bare lists of values)."""
        view = s._asdict()
        view["responses"] = tuple(r._asdict() for r in s.responses)
        view["steers"] = tuple(st._asdict() for st in s.steers)
        return view

    def facts(self, event: Event) -> list[F.Fact]:
        """The event's facts (`steersim.models.openai_ws.facts`), read once per event object (`_event_facts`)."""
        return _event_facts(event)

    def judge_recorded(self, trace: Any) -> list[Any]:
        """`steersim replay` of a served session: judge the real client's recorded frames again, as the
        server did (`steersim.models.openai_ws.harness.session.rejudge`); other traces have nothing more to judge."""
        from steersim.models.openai_ws.harness.session import rejudge

        return rejudge(trace)

    def properties(self) -> list[Property]:
        from steersim.models.openai_ws.properties import properties

        return properties(self.params, self.bug)

    def default_timing(self) -> Mapping[str, Any]:
        return DEFAULT_TIMING

    # ------------------------------------------------------------------ enabled actions
    def _client_actions(self, s: WsState) -> list[Action]:
        """The client's creates, followups and steers on the open connection (`actions` adds its tool
        outputs)."""
        out = list(self._creates(s.rooted))
        if self.p["followups"]:
            out.extend(Action(CLIENT, "client.followup", (parent,)) for parent in self.followup_parents(s))
        if len(s.steers) < self.p["steers"]:
            validity = (True, False) if self.p["invalid_input"] else (True,)
            for target in self.steer_targets(s):
                for text in self._texts(s):
                    for valid in validity:
                        out.append(Action(CLIENT, "client.steer", (target, text, valid)))
        return out

    def _creates(self, rooted: tuple[bool, ...]) -> tuple[Action, ...]:
        """The roots the client may create: the same few for every state with the same rooted lanes."""
        creates = self._creates_of.get(rooted)
        if creates is None:
            creates = self._creates_of[rooted] = tuple(
                Action(CLIENT, "client.create", (lane, tools)) for lane in range(self.lanes) if not rooted[lane]
                for tools in self.tool_choices())
        return creates

    def _buggy_continuations(self, s: WsState) -> list[Action]:
        """The continuations the client sends under a continuation bug, beside those of the parents that
        wait for its tool output: bug `continue-automatic-parent` also continues a parent whose queued
        steers the server continues itself; bug `continue-twice` retries a continuation it already sent
        (once, so the state space stays finite)."""
        out = []
        for index, r in enumerate(s.responses):
            if r.conn != s.conn:
                continue
            if self.bug == "continue-automatic-parent":
                again = r.next == AUTO and bool(r.queue)
            else:
                again = r.answered and sum(1 for x in s.responses if x.parent == index) == 1
            if again:
                out.append(Action(CLIENT, "client.tool_output", (index,)))
        return out

    def followup_parents(self, s: WsState) -> list[int]:
        """A new request continuing a lane's finished chain (carrying, say, a failed steer's input, as
        `response.steer.failed` invites): its newest response on this connection ended and nothing
        follows it, or a response the client already sent a new request for (a client sends the next one
        before the first one's `response.created` reaches it: the lane queues it, "Requests with the same
        `stream_id` are processed FIFO" [SDK, response.create stream_id]); `followups` bounds them in the
        whole run, queued ones included."""
        if sum(1 for r in s.responses if r.origin == "followup") + len(s.queued) >= self.p["followups"]:
            return []
        out: set[int] = set()
        for lane in range(self.lanes):
            on_lane = [i for i, r in enumerate(s.responses) if r.lane == lane and r.conn == s.conn]
            if on_lane:
                newest = s.responses[on_lane[-1]]
                if newest.terminal and newest.next == ENDED and newest.successor < 0:
                    out.add(on_lane[-1])
            out.update(i for i in on_lane if s.responses[i].next == ENDED and s.responses[i].terminal
                       and s.responses[i].successor >= 0 and s.responses[s.responses[i].successor].origin == "followup")
        return sorted(out)

    def lane_busy(self, s: WsState, lane: int) -> bool:
        """A response of the lane runs, or its automatic successor is due (A9: it runs ahead of queued
        requests), or a request waits in the lane's queue: "The server executes requests on each lane
        FIFO without overlap" [SDK-README]."""
        return any(s.responses[p].lane == lane for p in s.queued) or self.lane_running(s, lane)

    @staticmethod
    def lane_running(s: WsState, lane: int) -> bool:
        return any(r.lane == lane and r.conn == s.conn and (r.status == IN_PROGRESS or r.next == AUTO)
                   for r in s.responses)

    def _queued_starts(self, s: WsState) -> list[Action]:
        """The oldest queued request of each lane starts once nothing else runs or is due there (bug
        `queued-request-never-starts`: none does; `queued-requests-lifo`: the newest does)."""
        waiting = (() if self.bug == "queued-request-never-starts"
                   else tuple(reversed(s.queued)) if self.bug == "queued-requests-lifo" else s.queued)
        out, lanes = [], set()
        for parent in waiting:
            lane = s.responses[parent].lane
            if lane in lanes:
                continue
            lanes.add(lane)
            if not self.lane_running(s, lane):
                out.append(Action(SERVER, "server.start_queued", (parent,)))
        return out

    def steer_targets(self, s: WsState) -> list[int]:
        """The two newest responses of each lane whose `response.created` the client has seen, less those
        whose successor it already used (bug `steer-stale-parent`: not less them)."""
        from steersim.models.openai_ws.properties import named_responses

        named = named_responses(s)
        out: list[int] = []
        for lane in range(self.lanes):
            on_lane = [i for i, r in enumerate(s.responses) if r.lane == lane
                       and (self.bug == "steer-stale-parent" or r.successor not in named)]
            out.extend(sorted(on_lane[-2:]))
        return out

    def _texts(self, s: WsState) -> list[int]:
        """A fresh input, and (bug `resend-accepted`) the input of any steer still queued."""
        texts = [len(s.steers)]
        if self.bug == "resend-accepted":
            texts.extend(st.text for st in s.steers if st.status in UNRESOLVED)
        return texts

    def _server_actions(self, s: WsState, index: int, r: Response) -> list[Action]:
        args = (index,)
        if r.status == IN_PROGRESS:
            return self._running_actions(s, index, r)
        out = []
        if r.next == AUTO:
            out.append(Action(SERVER, "server.successor", args))
            if self.p["successor_failures"]:
                out.append(Action(SERVER, "server.successor_fails", args))
        if r.next == WAITING and self._pending_due(s, r):
            out.append(Action(SERVER, "server.pending", args))
        return out

    def _running_actions(self, s: WsState, index: int, r: Response) -> list[Action]:
        args = (index,)
        out = []
        if r.open:
            if r.current_kind == "web_search_call":
                out = [Action(f"tool:{wire.item_id('web_search_call', index)}", "tool.finish", args)]
                if self.bug == "interrupt-hosted-tool" and r.queue:
                    out.append(Action(SERVER, "server.interrupt", args))
                return out
            return [Action(SERVER, "server.item_done", args)]
        interrupt = self._interruptible(s, r) and self.p["interruption"] != "finish" and not r.client_call_done
        if interrupt:
            out.append(Action(SERVER, "server.interrupt", args))
        if not (interrupt and self.p["interruption"] == "eager"):
            more = r.done < len(r.kinds)
            out.append(Action(SERVER, "server.item" if more else "server.complete", args))
        if self.p["response_failures"] and not r.client_call_done:
            out.append(Action(SERVER, "server.fail", args))
        if self.bug == "successor-before-terminal" and r.queue and r.successor < 0:
            out.append(Action(SERVER, "server.successor", args))
        if self.bug == "pending-before-completed" and r.client_call_done and self._pending_due(s, r):
            out.append(Action(SERVER, "server.pending", args))
        return out

    def _interruptible(self, s: WsState, r: Response) -> bool:
        """A steer is queued; bug `steered-without-steer`: the root's first successor also counts the
        steers it already committed, so it can end incomplete(steered) with none queued."""
        if self.bug == "steered-without-steer" and r.origin == "auto" and s.responses[r.parent].origin == "root":
            return True
        return bool(r.queue)

    def _pending_due(self, s: WsState, r: Response) -> bool:
        """Some queued steer has not had its one pending notification yet (R10)."""
        return not r.answered and any(s.steers[n].status == ACCEPTED for n in r.queue)


def _target(s: WsState, a: Action) -> Footprint:
    """The response the action names: all that a step of its kind reads and changes of the responses
    and steers, besides a steer it appends."""
    return (a.args[0],), ()


def _steer_target(s: WsState, a: Action) -> Footprint:
    """The targeted response and the newer ones of its lane, which decide whether a completed target
    may still be restarted (A4)."""
    return (a.args[0], *later_on_lane(s.responses, a.args[0])), ()


def _queue(s: WsState, a: Action) -> Footprint:
    """The response the action names and the steers queued at it, which the step commits or notifies."""
    return (a.args[0],), s.responses[a.args[0]].queue


def _queue_targets(s: WsState, a: Action) -> Footprint:
    """`_queue`, and the responses those steers were aimed at: their failures are numbered in the
    sequence scope of each (A10)."""
    queue = s.responses[a.args[0]].queue
    return (a.args[0], *(s.steers[n].target for n in queue)), queue


def _connection(s: WsState, a: Action) -> Footprint:
    """Every response of the connection and the steers queued at them: a drop ends them all."""
    indices = tuple(i for i, r in enumerate(s.responses) if r.conn == s.conn)
    return indices, tuple(n for i in indices for n in s.responses[i].queue)


# Per kind of action, the responses and steers its step reads and changes (the step adds responses and
# steers after them and reads the state's other fields, but touches no other response or steer): its
# steps are remembered by them (`OpenAIWsModel._remembered_step`). The kinds left out are rare.
FOOTPRINTS: Mapping[str, Callable[[WsState, Action], Footprint]] = {
    "client.steer": _steer_target,
    "client.tool_output": _queue,
    "server.item": _target,
    "server.item_done": _target,
    "tool.finish": _target,
    "server.complete": _target,
    "server.interrupt": _target,
    "server.fail": _queue_targets,
    "server.successor": _queue,
    "server.successor_fails": _queue_targets,
    "server.pending": _queue,
    "fault.disconnect": _connection,
}


def _changed(values: tuple, changed: tuple[tuple[int, Any], ...], added: tuple) -> tuple:
    """`values` with the changed positions replaced and `added` appended: the same tuple when neither."""
    if changed:
        out = list(values)
        for position, value in changed:
            out[position] = value
        return (*out, *added)
    return values + added if added else values


RESPONSE_FIELD = {name: k for k, name in enumerate(Response._fields)}


class _Step:
    """One transition under construction: mutable copies of the state's parts, and the events it emits
    in wire order. Sequence numbers are taken as the events are built, so they can never disagree."""

    def __init__(self, model: OpenAIWsModel, s: WsState) -> None:
        self.m = model
        self.bug = model.bug
        self.s = s
        self.conn = s.conn
        self.connected = s.connected
        self.rooted = s.rooted
        self.responses = list(s.responses)
        self.steers = list(s.steers)
        self.carry = s.carry
        self.conn_seq = s.conn_seq
        self.queued = s.queued
        self.events: list[Event] = []

    def state(self) -> WsState:
        return WsState(self.conn, self.connected, self.rooted, tuple(self.responses), tuple(self.steers),
                       self.carry, self.conn_seq, self.queued)

    # ------------------------------------------------------------------ helpers
    def update(self, index: int, **changes: Any) -> Response:
        values = list(self.responses[index])
        for name, value in changes.items():
            values[RESPONSE_FIELD[name]] = value
        self.responses[index] = Response._make(values)
        return self.responses[index]

    def seq(self, index: int | None) -> int:
        """The next sequence number in the scope of response `index` (A10); a failure that names no
        available response takes the connection's."""
        if index is None or self.m.p["sequence_scope"] == "connection":
            self.conn_seq += 1
            return self.conn_seq - 1
        r = self.responses[index]
        self.update(index, seq=r.seq + 1)
        return r.seq

    def stream(self, index: int) -> str | None:
        return self.m.stream_id(self.responses[index].lane)

    def send(self, data: dict[str, Any]) -> None:
        self.events.append(Event(SERVER, CLIENT, data["type"], data))

    def receive(self, data: dict[str, Any]) -> None:
        self.events.append(Event(CLIENT, SERVER, data["type"], data))

    def note(self, name: str, data: dict[str, Any]) -> None:
        self.events.append(Event(INTERNAL, INTERNAL, name, data))

    def response_json(self, index: int, reason: str | None = None) -> dict[str, Any]:
        r = self.responses[index]
        finished = len(r.kinds) if self.bug == "pad-interrupted-output" and reason else r.done
        output = [wire.output_item(kind, index, True) for kind in r.kinds[:finished]]
        previous = r.parent if r.parent >= 0 else None
        return wire.response_object(index, r.status, output, previous, r.kinds, reason)

    def lifecycle(self, kind: str, index: int, reason: str | None = None) -> None:
        body = self.response_json(index, reason)
        self.send(wire.response_event(kind, self.seq(index), body, self.stream(index)))

    def set_steer(self, number: int, status: str, code: str = "") -> None:
        st = self.steers[number]
        self.steers[number] = Steer(st.target, st.conn, st.text, st.valid, status, code)

    # ------------------------------------------------------------------ responses
    def start(self, lane: int, parent: int, origin: str, kinds: tuple[str, ...], steerable: bool,
              commits: tuple[int, ...]) -> int:
        """Create a response; its `response.created` is the commit point of `commits` (R2)."""
        index = len(self.responses)
        self.responses.append(Response(lane, self.conn, parent, origin, kinds, steerable))
        self.lifecycle("created", index)
        chain = DEFAULT_CHAIN if self.bug == "history-on-default-lane" else self.m.chain(lane)
        for number in commits:
            st = self.steers[number]
            self.note("steer.committed", {"steer": {"id": wire.steer_id(number),
                                                    "previous_response_id": wire.response_id(st.target)},
                                          "response_id": wire.response_id(index), "chain": chain})
            self.set_steer(number, COMMITTED)
        self.lifecycle("in_progress", index)
        return index

    def commit_from(self, parent: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Split a parent's queue into the steers its successor commits and those it inherits (A1)."""
        held = self.responses[parent].queue
        queue = tuple(reversed(held)) if self.bug == "reorder-steers" else held
        if self.m.p["batching"] == "one":
            return queue[:1], queue[1:]
        return queue, ()

    def successor(self, parent: int, origin: str) -> None:
        p = self.responses[parent]
        commits, inherited = self.commit_from(parent)
        if self.bug == "commit-twice" and p.origin == "root":
            inherited = commits + inherited
        next_state = p.next if p.status == IN_PROGRESS else ENDED
        if self.bug == "duplicate-successor" and origin == "auto" and p.origin == "root" and p.successor < 0:
            next_state = AUTO
        if self.bug == "repeat-terminal-on-successor" and p.status == COMPLETED:
            self.lifecycle("completed", parent)
        self.update(parent, queue=(), next=next_state)
        index = self.start(p.lane, parent, origin, ("message",), p.steerable, commits)
        self.update(index, queue=inherited)
        self.update(parent, successor=index)

    # ------------------------------------------------------------------ client actions
    def client_create(self, lane: int, tools: bool) -> None:
        steerable = self.m.p["steerable"]
        self.receive(wire.client_create(self.m.stream_id(lane), steerable, tools))
        self.rooted = (*self.rooted[:lane], True, *self.rooted[lane + 1 :])
        carried, self.carry = self.carry, ()
        self.start(lane, -1, "root", self.m.root_plan(self.conn, tools), steerable, carried)

    def client_followup(self, parent: int) -> None:
        """A new request after the parent's chain ended: one message, on the parent's lane; it waits in
        the lane's queue while the lane is busy ("The service ... queues additional creates" [SDK-README])."""
        self.receive(wire.client_followup(parent, self.stream(parent)))
        if self.m.lane_busy(self.s, self.responses[parent].lane):
            self.queued = (*self.queued, parent)
        else:
            self.start_followup(parent)

    def server_start_queued(self, parent: int) -> None:
        """The lane is free: its oldest queued request starts."""
        position = self.queued.index(parent)
        self.queued = self.queued[:position] + self.queued[position + 1 :]
        self.start_followup(parent)

    def start_followup(self, parent: int) -> None:
        """A new request's response; the parent's `successor` stays the first response that continued it."""
        p = self.responses[parent]
        index = self.start(p.lane, parent, "followup", ("message",), p.steerable, ())
        if p.successor < 0:
            self.update(parent, successor=index)

    def client_reconnect(self, conn: int) -> None:
        """A fresh connection: nothing of the old one's cache or queues carries over (R14)."""
        self.conn, self.connected = conn, True
        self.rooted = (False,) * self.m.lanes
        self.events.append(Event(CLIENT, SERVER, "websocket.open", {"path": "/v1/responses", "connection": conn}))

    def client_tool_output(self, parent: int) -> None:
        stream = None if self.bug == "continue-on-default-lane" else self.stream(parent)
        self.receive(wire.client_tool_output(parent, stream))
        self.update(parent, answered=True)
        self.successor(parent, "explicit")

    def client_steer(self, target: int, text: int, valid: bool) -> None:
        number = len(self.steers)
        steer_input = wire.steer_text(text) if valid else wire.invalid_steer_input(target)
        frame = wire.client_steer(target, steer_input)
        if self.bug == "stream-id-on-steer":
            frame.update(wire.lane_field(self.stream(target)))
            valid = valid and "stream_id" not in frame  # A16: the event accepts only its three fields
        self.receive(frame)
        self.steers.append(Steer(target, self.conn, text, valid, REJECTED))
        code = self.refusal(target, valid)
        if code is None:
            self.accept(number, target)
            return
        r = self.responses[target]
        available = r.conn == self.conn
        seq = self.seq(target if available else None)
        if self.bug == "restart-sequence-on-refusal":
            seq = 0
        elif self.bug == "skip-sequence-on-refusal":
            seq = self.seq(target if available else None)
        stream = self.stream(target) if available else None
        self.send(wire.steer_failed(seq, code, None, target, steer_input, stream))
        self.set_steer(number, REJECTED, code)
        if (self.bug == "refused-steer-schedules-successor"
                and code == "response_already_completed" and r.next == ENDED and r.successor < 0):
            self.update(target, next=AUTO)

    def refusal(self, target: int, valid: bool) -> str | None:
        """The error code that refuses a steer before acceptance, or None to accept it (spec 3.5)."""
        r = self.responses[target]
        p = self.m.p
        if r.conn != self.conn:
            return "response_not_found"
        if not r.steerable and self.bug != "accept-unsteerable":
            return "steering_not_supported"
        if not valid:
            return "invalid_input"
        joinable = ((r.status == IN_PROGRESS and r.successor < 0)
                    or (r.next == AUTO and p["late_steer"] == "join")
                    or (r.next == WAITING and p["waiting_steer"] == "queue")
                    or self.restartable(target))
        if not joinable:
            if r.status == COMPLETED:
                return "response_already_completed"
            return "response_not_active"
        if len(r.queue) >= p["pending_limit"] and self.bug != "ignore-pending-limit":
            return "too_many_pending_steers"
        return None

    def restartable(self, index: int) -> bool:
        """A4 alternative: a normally completed response without a successor takes a steer and starts an
        automatic successor, if it is still its lane's newest response (`later_on_lane`): its successor
        then runs next on the lane (A9), and no newer request of the lane runs beside it or ahead of it."""
        r = self.responses[index]
        return (self.m.p["completed_steer"] == "successor" and r.status == COMPLETED and r.next == ENDED
                and r.successor < 0 and not later_on_lane(self.responses, index))

    def accept(self, number: int, target: int) -> None:
        r = self.responses[target]
        if self.restartable(target):
            r = self.update(target, next=AUTO)
        self.update(target, queue=(*r.queue, number))
        self.set_steer(number, ACCEPTED)
        wire_number = len(r.queue) if self.bug == "reuse-steer-id" else number
        stream = None if self.bug == "no-stream-id-echo" else self.stream(target)
        self.send(wire.steer_accepted(self.seq(target), wire_number, target, stream))

    # ------------------------------------------------------------------ server actions
    def server_item(self, index: int) -> None:
        r = self.update(index, open=True)
        kind = r.current_kind
        stream = self.stream(index)
        self.send(wire.item_event("added", self.seq(index), r.done, wire.output_item(kind, index, False), stream))
        if (kind == "web_search_call") != (self.bug == "progress-for-wrong-item"):
            ident = wire.item_id(kind, index)
            self.send(wire.web_search_event("in_progress", self.seq(index), r.done, ident, stream))

    def server_item_done(self, index: int) -> None:
        r = self.responses[index]
        finished = wire.output_item(r.current_kind, index, self.bug != "item-done-in-progress")
        self.send(wire.item_event("done", self.seq(index), r.done, finished, self.stream(index)))
        self.update(index, open=False, done=r.done + 1)

    def tool_finish(self, index: int) -> None:
        r = self.responses[index]
        self.send(wire.web_search_event("completed", self.seq(index), r.done, wire.item_id(r.current_kind, index),
                                        self.stream(index)))
        self.server_item_done(index)

    def server_complete(self, index: int) -> None:
        """R4/R7: a normal completion still leads to a successor if steers are queued, an explicit one
        if the output holds a client-owned call."""
        r = self.update(index, status=COMPLETED)
        skip_input = bool(r.queue) and self.bug == "successor-without-tool-output"
        if r.successor >= 0:
            follow = ENDED
        elif r.client_call_done and not skip_input:
            follow = WAITING
        elif r.queue and self.bug != "drop-on-normal-completion":
            follow = AUTO
        else:
            follow = ENDED
        self.update(index, next=follow)
        self.lifecycle("completed", index)

    def server_interrupt(self, index: int) -> None:
        self.update(index, status=INCOMPLETE, next=AUTO)
        self.lifecycle("incomplete", index, "steered")

    def server_fail(self, index: int) -> None:
        self.update(index, status=FAILED, next=ENDED)
        self.lifecycle("failed", index)
        self.fail_queue(index, self.m.p["failed_parent_code"])

    def fail_queue(self, index: int, code: str) -> None:
        """Return every queued steer with its id (R12): the failures after acceptance, numbered in the
        scope of the response each steer targeted (A10)."""
        for number in self.responses[index].queue:
            st = self.steers[number]
            steer_input = "" if self.bug == "drop-input-on-failure" else wire.steer_text(st.text)
            self.send(wire.steer_failed(self.seq(st.target), code, number, st.target, steer_input,
                                        self.stream(st.target)))
            self.set_steer(number, FAILED_WITH_ID, code)
        self.update(index, queue=())

    def server_successor(self, index: int) -> None:
        self.successor(index, "auto")

    def server_successor_fails(self, index: int) -> None:
        self.fail_queue(index, "successor_creation_failed")
        self.update(index, next=ENDED)

    def server_pending(self, index: int) -> None:
        r = self.responses[index]
        for number in r.queue:
            if self.steers[number].status == ACCEPTED:
                pending = wire.steer_pending(self.seq(index), number, index, self.stream(index))
                if self.bug == "pending-stub-item-id":
                    pending["required_input"][0]["call_id"] = wire.item_id("function_call", index)
                if self.bug != "silent-pending":
                    self.send(pending)
                self.set_steer(number, PENDING)

    # ------------------------------------------------------------------ faults
    def fault_disconnect(self) -> None:
        """The socket drops: every queued steer's fate becomes unknown (R14) and the connection's
        responses, with their open calls, are gone. What is left of a response is its id, its lane and
        the fact that it is unreachable: all a later steer at it can observe."""
        self.send_close()
        self.connected = False
        self.queued = ()  # requests still waiting in a lane's queue die with the connection
        carried: list[int] = []
        for index, r in enumerate(self.responses):
            if r.conn != self.conn:
                continue
            chain = self.m.chain(r.lane)
            for number in r.queue:
                if self.bug == "commit-across-reconnect":
                    carried.append(number)
                    continue
                self.note("steer.lost", {"steer": {"id": wire.steer_id(number)}, "chain": chain})
                self.set_steer(number, UNKNOWN)
            if r.status == IN_PROGRESS and r.open and r.current_kind == "web_search_call":
                self.note("tool.abandoned", {"call_id": wire.item_id("web_search_call", index), "chain": chain})
            if r.client_call_done and not r.answered:
                self.note("tool.abandoned", {"call_id": wire.call_id(index), "chain": chain})
            if r.status == IN_PROGRESS:
                self.note("response.lost", {"response_id": wire.response_id(index), "chain": chain})
            self.responses[index] = Response(r.lane, r.conn, -1, "lost", (), r.steerable, LOST, next=ENDED)
        self.carry = tuple(carried)

    def send_close(self) -> None:
        """The close frame that tells the client its connection dropped (bug `silent-drop`: none)."""
        if self.bug != "silent-drop":
            self.events.append(Event(SERVER, CLIENT, "websocket.close", wire.close_frame(1011, "connection lost")))


__all__ = ["OpenAIWsModel"]
