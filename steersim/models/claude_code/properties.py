"""Claude Code's own promises about its queue, as properties over the model's state and the events a run
shows, and vacuity guards.

The SDK documents a user message's priority in one sentence: "'now' interrupts the session's current
turn, 'next' joins it without stopping it, 'later' waits for its end" (and the CLI's own instructions to
the model: a message sent mid-turn is surfaced "within the running turn, often alongside the next tool
result"). The core invariants already demand that every queued message reaches the model exactly once or
is reported otherwise (`no-lost-steers`), first-in first-out order within a priority and a history that
takes each message once (`ordered-history`), one running turn and a tool_result for every Bash call.

The readings the docs leave open (`cancel_queued`, `batch_turn_start`, `now_during_tool`) are judged in both
directions: the behaviour a run shows is the one its parameter names, and not the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from steersim.core.model import Action, Always, Event, Property, Sometimes
from steersim.models.claude_code import protocol as P
from steersim.models.claude_code.spec import kinds_not_enabled, priorities
from steersim.models.claude_code.state import ENDED, TOOL, ClaudeCodeState

S = ClaudeCodeState
RANK = {"now": 0, "next": 1, "later": 2}


def joins_at_tool_result(priority: str, joins: bool) -> Callable[..., bool]:
    """At the model request after a tool result, the waiting messages of `priority` all join the running
    turn (`joins`) or all stay waiting: judged on `cli.request` steps alone (kinds), so any other step holds."""
    def fits(s: S, a: Action, t: S) -> bool:
        if a.kind != "cli.request":
            return True
        waiting = [entry for entry in s.queue if entry[1] == priority]
        left = [entry for entry in t.queue if entry[1] == priority]
        return left == ([] if joins else waiting)
    return fits


def queued_as_sent(default_priority: str) -> Callable[..., bool]:
    """A message is queued, behind those waiting, with the priority it was sent with, and one sent without a
    priority field with the session's own default (default_priority)."""
    def fits(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        sent = [e.data for e in events if e.name == P.USER]
        expected = tuple((d["message"], default_priority if d["priority"] == "default" else d["priority"])
                         for d in sent)
        return t.queue == (*s.queue, *expected)
    return fits


def interrupt_fits(cancel_queued: bool) -> Callable[..., bool]:
    """An interrupt's response lists the waiting messages as `cancelled` (each also reported `cancelled`
    unsent, and the queue left empty) exactly when the client set cancel_queued (the SDK's Stop); else it
    lists them as `still_queued` and they stay queued, none cancelled."""
    def fits(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        waiting = tuple(m for m, _ in s.queue)
        answers = [e for e in events if e.name == P.INTERRUPT]
        cancelled = tuple(e.data["message"] for e in events
                          if e.name == P.LIFECYCLE and e.data["state"] == P.CANCELLED and e.data["message"] in waiting)
        if len(answers) != 1:
            return False
        listed = (answers[0].data["cancelled"], answers[0].data["still_queued"])
        if cancel_queued:
            return listed == (waiting, ()) and cancelled == waiting and not t.queue
        return listed == ((), waiting) and not cancelled and t.queue == s.queue
    return fits


def synthetic_iff_ended(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
    """A tool_result is synthetic exactly when Claude Code ended the command (it still ran); the result of a
    command that finished on its own is its own output."""
    return all(e.data["synthetic"] == (s.phase == TOOL) for e in events if e.name == P.TOOL_RESULT)


def turn_start_fits(batch: bool) -> Callable[..., bool]:
    """A starting turn takes the oldest waiting message of the highest priority waiting and, under
    batch_turn_start, every other waiting message of that priority with it (one prompt), else none."""
    def fits(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        best = min((RANK[p] for _, p in s.queue), default=None)
        eligible = tuple(m for m, p in s.queue if RANK[p] == best)
        taken = tuple(e.data["message"] for e in events if e.name == P.LIFECYCLE and e.data["state"] == P.STARTED)
        return taken == (eligible if batch else eligible[:1])
    return fits


def turn_messages_settled(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
    """When a turn ends, each message it took in is reported once: `completed` when it ended on its own,
    `cancelled` when it was stopped or interrupted. The pinned build prints the messages that joined at a
    tool result before the turn's `result` and those it started with after it; a cancelled turn's all after."""
    results = [i for i, e in enumerate(events) if e.name == P.RESULT]
    if not results:
        return True
    at = results[0]
    ended = events[at].data["how"] == ENDED
    settled = [(i, e.data["message"], e.data["state"]) for i, e in enumerate(events)
               if e.name == P.LIFECYCLE and e.data["message"] in s.turn_messages
               and e.data["state"] in (P.COMPLETED, P.CANCELLED)]
    if sorted(m for _, m, _ in settled) != sorted(s.turn_messages):
        return False
    state = P.COMPLETED if ended else P.CANCELLED
    return all(how == state and (i < at) == (ended and m in s.joined_in) for i, m, how in settled)


def ids_in_order(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
    """The ids a run shows are the harness's renaming: the k-th message sent is m<k>, the k-th turn
    started t<k>, the k-th model request has index k (of the running turn) and its Bash call is c<k>; the
    backend's moves name the request they answer."""
    for e in events:
        d = e.data
        if e.source == P.BACKEND and d["index"] != s.requests:
            return False
        if e.name == P.USER and (d["message"] != P.message_id(t.sent) or t.sent != s.sent + 1):
            return False
        if e.name == P.LIFECYCLE and d["turn"] and (d["turn"] != P.turn_id(t.turns) or t.turns != s.turns + 1):
            return False
        if e.name == P.REQUEST and (d["index"] != t.requests or t.requests != s.requests + 1
                                    or d["turn"] != P.turn_id(t.turns)):
            return False
        if e.name == P.TOOL_START and (d["call"] != P.call_id(t.requests) or d["turn"] != P.turn_id(t.turns)):
            return False
        if e.name in (P.TOOL_RESULT, P.TOOL_FINISHED) and d["call"] != P.call_id(s.requests):
            return False
        if e.name == P.RESULT and d["turn"] != P.turn_id(s.turns):
            return False
    return True


def request_carries_conversation(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
    """Each model request carries the whole conversation, every message taken into it so far in order, and
    reaches (carries first) exactly those no request carried yet: the newest ones, at its end."""
    for e in events:
        if e.name == P.REQUEST:
            carries, reached = e.data["carries"], e.data["reached"]
            if carries != t.history or reached != s.unsent or carries[len(carries) - len(reached):] != reached:
                return False
    return True


def within_parameters(params: Mapping[str, Any]) -> Callable[..., bool]:
    """The client sends at most `messages` messages and `interrupts` interrupts, and the model makes at most
    `tool_calls` Bash calls a turn, each counted as its event is shown; no step is of a kind the parameters
    cannot fire (`kinds_not_enabled`): the check explores the environment its parameters name."""
    off = kinds_not_enabled(params)

    def within(s: S, a: Action, t: S, events: Sequence[Event]) -> bool:
        if a.kind in off:
            return False
        sent = sum(1 for e in events if e.name == P.USER)
        interrupts = sum(1 for e in events if e.name == P.INTERRUPT)
        return (t.sent == s.sent + sent <= params["messages"]
                and t.interrupts == s.interrupts + interrupts <= params["interrupts"]
                and t.calls <= params["tool_calls"])
    return within


def properties(params: Mapping[str, Any]) -> Sequence[Property]:
    stops = params["now_during_tool"] == "stops"
    out: list[Property] = [
        Always("next-joins-at-tool-result", step=joins_at_tool_result("next", True), kinds=("cli.request",),
               doc="'next' joins the running turn without stopping it: no model request after a tool result "
                   "leaves a waiting 'next' message behind"),
        Always("later-waits-for-turn-end", step=joins_at_tool_result("later", False), kinds=("cli.request",),
               doc="'later' waits for the running turn's end: it never joins a turn it did not start"),
        Always("now-starts-own-turn", step=joins_at_tool_result("now", False), kinds=("cli.request",),
               doc="'now' interrupts the session's current turn: it is answered in a turn of its own, never "
                   "folded into the turn it stopped"),
        Always("queued-as-sent", step=queued_as_sent(params["default_priority"]), with_events=True,
               kinds=("client.send",),
               doc="a message is queued with the priority it was sent with; one sent without a priority field "
                   "with the session's own default (the SDK: \"omit it for the session's own default\"), which "
                   "default_priority names"),
        Always("interrupt-cancels-queue-iff-asked", step=interrupt_fits(params["cancel_queued"]), with_events=True,
               kinds=("client.interrupt",),
               doc="an interrupt cancels the queued messages (its response lists them under cancelled, each is "
                   "reported cancelled) if and only if the client set cancel_queued; else its response lists them "
                   "as still_queued and they stay queued"),
        Always("now-during-tool", step=lambda s, a, t: stops or s.phase != TOOL, kinds=("cli.stop_for_now",),
               doc="a `now` message that arrives while the Bash command runs lets it end before stopping the "
                   "turn, unless now_during_tool=stops (then it ends the command at once)"),
        Always("turn-start-takes-waiting", step=turn_start_fits(params["batch_turn_start"]), with_events=True,
               kinds=("cli.start_turn",),
               doc="a turn that starts takes the oldest waiting message of the highest priority waiting, and "
                   "every other waiting message of that priority if and only if batch_turn_start"),
        Always("turn-messages-settled", step=turn_messages_settled, with_events=True, events=(P.RESULT,),
               doc="when a turn ends, each message it took in is reported once, completed if the turn ended on "
                   "its own, else cancelled; those that joined at a tool result before the turn's result"),
        Always("synthetic-iff-command-ended", step=synthetic_iff_ended, with_events=True, events=(P.TOOL_RESULT,),
               doc="a tool_result is synthetic exactly when Claude Code ended the command (an interrupt, or a "
                   "`now` message under now_during_tool=stops); a command that finished gets its own output"),
        Always("ids-in-order", step=ids_in_order, with_events=True,
               doc="the ids a run shows follow the harness's renaming: messages m1, m2, ... as sent, turns t1, "
                   "t2, ... as started, model requests numbered from 1, request k's Bash call c<k>"),
        Always("request-carries-conversation", step=request_carries_conversation, with_events=True,
               events=(P.REQUEST,),
               doc="each model request carries the whole conversation (every message taken in so far, in order) "
                   "and reaches, at its end, exactly the messages no request carried yet"),
        Always("within-parameters", step=within_parameters(params), with_events=True,
               doc="the client sends at most messages messages and interrupts interrupts, the model makes at most "
                   "tool_calls Bash calls a turn, and no step is of a kind the parameters disable: the check "
                   "explores the environment its parameters name"),
    ]
    chosen = priorities(params)
    joiners = {"next"} | ({"default"} if params["default_priority"] == "next" else set())
    if params["messages"] > 1 and params["tool_calls"] > 0 and joiners & set(chosen):
        out.append(Sometimes("message-joins-running-turn", state=lambda s: s.joined,
                             doc="some message sent while a turn runs joins it at a tool result"))
    if params["messages"] > 1 and "now" in chosen:
        out.append(Sometimes("now-stops-turn", state=lambda s: s.stopped_for_now,
                             doc="some running turn is stopped for a 'now' message"))
        if stops and params["tool_calls"] > 0:
            out.append(Sometimes("now-ends-running-command", state=lambda s: s.now_ended_command,
                                 doc="under now_during_tool=stops, some `now` message ends a running Bash command"))
    if params["interrupts"] > 0:
        out.append(Sometimes("interrupt-ends-turn", state=lambda s: s.interrupts > 0,
                             doc="some running turn is interrupted by the client"))
    return out
