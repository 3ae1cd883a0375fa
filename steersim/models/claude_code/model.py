"""The Claude Code model: one session, its client, the model backend and the Bash tool.

The client sends user messages with a priority and interrupts; Claude Code reports each message `queued`,
starts a turn with the waiting messages of the highest priority when none runs, and asks the model; the
backend answers with streamed text (then the turn ends, and a message that arrived meanwhile waits for a
turn of its own) or one Bash tool_use (the CLI runs the command). At the command's tool_result Claude Code
decides how the turn goes on: a waiting `now` message stops it (the message then starts a turn of its
own), else every waiting `next` message joins it and the model is asked again. A `now` message that
arrives while the model streams stops the turn at once, also as the response ends (Claude Code may not
have read its end yet). An interrupt ends the running turn (a running
command with a synthetic tool_result) and leaves the queue as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from steersim.core.facts import Fact
from steersim.core.model import Action, Event, ModelBase, Property
from steersim.models.claude_code import facts as cc_facts
from steersim.models.claude_code import properties as cc_properties
from steersim.models.claude_code import protocol as P
from steersim.models.claude_code.spec import DEFAULT_TIMING, kinds_not_enabled, priorities
from steersim.models.claude_code.state import (
    ASKING,
    CALLING,
    ENDED,
    ENDING,
    FINISHED,
    IDLE,
    INTERRUPTED,
    RESULT,
    SAMPLING,
    STOPPED,
    STREAMING,
    TEXT,
    TOOL,
    ClaudeCodeState,
)

Step = tuple[ClaudeCodeState, list[Event]]
RANK = {"now": 0, "next": 1, "later": 2}
# The priorities whose waiting messages join a running turn at a tool result: `next` alone, or those of the
# bug variant that changes which join (a table, so that a variant is a different entry, not code of its own).
JOINING: Mapping[str | None, frozenset[str]] = {
    None: frozenset(("next",)),
    "later-joins-turn": frozenset(("next", "later")),
    "next-waits-for-turn-end": frozenset(),
    "now-joins-turn": frozenset(("next", "now")),
}


class ClaudeCodeModel(ModelBase[ClaudeCodeState]):
    """Claude Code 2.1.332's message queue, as its SDK documents it and as its build behaves."""

    name = "claude-code"
    fair_actors = ("claude", "model", "tool")
    action_kinds = ("client.send", "client.interrupt", "cli.start_turn", "cli.stop_for_now", "cli.request",
                    "cli.ask", "cli.end_turn", "cli.tool_result", "model.text", "model.end", "model.tool_use",
                    "model.tool_input", "tool.finish")

    def kinds_not_enabled(self) -> Mapping[str, str]:
        return kinds_not_enabled(self.params)

    def init_states(self) -> Sequence[ClaudeCodeState]:
        return [ClaudeCodeState()]

    def _effective(self, priority: str) -> str:
        default = "next" if self.bug == "default-taken-as-next" else self.params["default_priority"]
        return cc_facts.effective(priority, default)

    def _waiting(self, s: ClaudeCodeState, priority: str) -> bool:
        return any(p == priority for _, p in s.queue)

    def _turn(self, s: ClaudeCodeState) -> str:
        return P.turn_id(s.turns)

    # ------------------------------------------------------------------------------------------ actions
    def actions(self, s: ClaudeCodeState) -> Sequence[Action]:
        p = self.params
        out: list[Action] = []
        if s.sent < p["messages"]:
            out += [Action("client", "client.send", (priority,)) for priority in priorities(p)]
        if s.phase != IDLE and s.interrupts < p["interrupts"]:
            out.append(Action("client", "client.interrupt"))
        now_stops = self._waiting(s, "now") and self.bug != "now-joins-turn"
        if s.phase == IDLE and s.queue:
            out.append(Action("claude", "cli.start_turn"))
        ends_command = p["now_during_tool"] == "stops" or self.bug == "now-ends-running-command"
        stoppable = (*STREAMING, RESULT, ENDING, *((TOOL,) if ends_command else ()))
        if now_stops and s.phase in stoppable:
            out.append(Action("claude", "cli.stop_for_now"))
        if s.phase == RESULT and not now_stops:
            out.append(Action("claude", "cli.request"))
        if s.phase == ASKING:
            out.append(Action("claude", "cli.ask"))
        if s.phase == FINISHED:
            out.append(Action("claude", "cli.tool_result"))
        if s.phase == ENDING:
            out.append(Action("claude", "cli.end_turn"))
        if s.phase == SAMPLING:
            out.append(Action("model", "model.text"))
            if s.calls < p["tool_calls"]:
                out.append(Action("model", "model.tool_use"))
        elif s.phase == TEXT:
            out.append(Action("model", "model.end"))
        elif s.phase == CALLING:
            out.append(Action("model", "model.tool_input"))
        elif s.phase == TOOL:
            out.append(Action("tool", "tool.finish"))
        return out

    # ---------------------------------------------------------------------------------------------- step
    def step(self, s: ClaudeCodeState, a: Action) -> Step | None:
        handler = getattr(self, "_" + a.kind.replace(".", "_"))
        return handler(s, *a.args)

    def _client_send(self, s: ClaudeCodeState, priority: str) -> Step:
        message = P.message_id(s.sent if self.bug == "message-ids-from-zero" else s.sent + 1)
        entry = (message, self._effective(priority))
        return replace(s, sent=s.sent + 1, queue=(*s.queue, entry)), [
            P.user(message, priority), P.lifecycle(message, P.QUEUED)]

    def _client_interrupt(self, s: ClaudeCodeState) -> Step:
        queued = tuple(m for m, _ in s.queue)
        if self.params["cancel_queued"] or self.bug == "interrupt-cancels-queue":
            events = [*(P.lifecycle(m, P.CANCELLED, unsent=True) for m in queued), P.interrupt((), queued)]
            queue: tuple[tuple[str, str], ...] = ()
        else:
            events = [P.interrupt(queued)]
            queue = () if self.bug == "interrupt-drops-queue" else s.queue
        if s.phase in (TOOL, FINISHED) and self.bug != "interrupt-forgets-tool-result":
            synthetic = s.phase == TOOL and self.bug != "interrupted-command-result-real"
            events.append(P.tool_result(P.call_id(s.requests), synthetic))
        interrupts = s.interrupts if self.bug == "interrupts-uncounted" else s.interrupts + 1
        s = replace(s, interrupts=interrupts, queue=queue)
        return self._end_turn(s, events, INTERRUPTED)

    def _end_turn(self, s: ClaudeCodeState, events: list[Event], how: str) -> Step:
        """The turn's `result` and its messages `completed` (those that joined it first, as the pinned build
        prints them), or after it `cancelled`, when it was stopped."""
        if how == ENDED:
            joined = () if self.bug == "joined-message-not-completed" else s.joined_in
            early = [P.lifecycle(m, P.COMPLETED) for m in s.turn_messages if m in joined]
            late = [P.lifecycle(m, P.COMPLETED) for m in s.turn_messages if m not in s.joined_in]
        else:
            early, late = [], [P.lifecycle(m, P.CANCELLED, unsent=m in s.unsent) for m in s.turn_messages]
        events = [*events, *early, P.result(self._turn(s), how), *late]
        return replace(s, phase=IDLE, turn_messages=(), joined_in=(), unsent=()), events

    def _take(self, s: ClaudeCodeState, taken: tuple[str, ...], turn: str) -> Step:
        """Messages taken into the conversation (`started`); the model request that carries them follows."""
        events = [P.lifecycle(m, P.STARTED, turn if i == 0 else "") for i, m in enumerate(taken)]
        remaining = tuple(entry for entry in s.queue if entry[0] not in taken)
        return replace(s, phase=ASKING, queue=remaining, history=(*s.history, *taken),
                       unsent=(*s.unsent, *taken), turn_messages=(*s.turn_messages, *taken)), events

    def _cli_ask(self, s: ClaudeCodeState) -> Step:
        """The model request: the whole conversation, first carrying the messages no request carried yet."""
        index = s.requests + 1
        carried = s.unsent if self.bug == "request-carries-only-new" else s.history
        event = P.request(index, self._turn(s), carried, s.unsent)
        return replace(s, phase=SAMPLING, requests=index, unsent=()), [event]

    def _cli_start_turn(self, s: ClaudeCodeState) -> Step:
        best = min(RANK[p] for _, p in s.queue)
        queue = s.queue[::-1] if self.bug == "dequeue-newest-first" else s.queue
        candidates = [m for m, p in queue if RANK[p] == best]
        batch = self.params["batch_turn_start"] and self.bug != "turn-start-takes-one"
        taken = tuple(candidates) if batch else (candidates[0],)
        s = replace(s, turns=s.turns + 1, calls=0)
        return self._take(s, taken, self._turn(s))

    def _cli_stop_for_now(self, s: ClaudeCodeState) -> Step:
        events: list[Event] = []
        if s.phase == TOOL:
            events.append(P.tool_result(P.call_id(s.requests), True))
        s = replace(s, stopped_for_now=True, now_ended_command=s.now_ended_command or s.phase == TOOL)
        return self._end_turn(s, events, STOPPED)

    def _cli_request(self, s: ClaudeCodeState) -> Step:
        """The model request after a tool result: the waiting messages of the priorities that join a running
        turn (`next`; a bug may name others) are taken into it first."""
        joining = JOINING.get(self.bug, JOINING[None])
        taken = tuple(m for m, p in s.queue if p in joining)
        s = replace(s, joined=s.joined or bool(taken), joined_in=(*s.joined_in, *taken))
        return self._take(s, taken, "")

    def _model_text(self, s: ClaudeCodeState) -> Step:
        return replace(s, phase=TEXT), [P.backend(P.TEXT_DELTA, s.requests)]

    def _model_end(self, s: ClaudeCodeState) -> Step:
        return replace(s, phase=ENDING), [P.backend(P.END_TURN, s.requests)]

    def _cli_end_turn(self, s: ClaudeCodeState) -> Step:
        return self._end_turn(s, [], ENDED)

    def _model_tool_use(self, s: ClaudeCodeState) -> Step:
        return replace(s, phase=CALLING, calls=s.calls + 1), [P.backend(P.TOOL_USE_START, s.requests)]

    def _model_tool_input(self, s: ClaudeCodeState) -> Step:
        return replace(s, phase=TOOL), [P.backend(P.TOOL_USE_DONE, s.requests),
                                        P.tool_start(P.call_id(s.requests), self._turn(s))]

    def _tool_finish(self, s: ClaudeCodeState) -> Step:
        return replace(s, phase=FINISHED), [P.tool_finished(P.call_id(s.requests))]

    def _cli_tool_result(self, s: ClaudeCodeState) -> Step:
        return replace(s, phase=RESULT), [P.tool_result(P.call_id(s.requests), False)]

    # ---------------------------------------------------------------------------------------- delegates
    def facts(self, event: Event) -> Sequence[Fact]:
        return cc_facts.facts(event, self.params["default_priority"])

    def properties(self) -> Sequence[Property]:
        return cc_properties.properties(self.params)

    def default_timing(self) -> Mapping[str, Any]:
        return DEFAULT_TIMING
