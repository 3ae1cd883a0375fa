"""The Codex app-server model: one thread, its client, the model backend and the shell tool.

The client starts turns, steers them (`turn/steer` with `expectedTurnId`), sends malformed steers and
interrupts; the backend answers each model request with streamed text or one `exec_command` call; Codex
writes accepted steers into the thread (their `userMessage` items) at a sampling boundary and asks the
model again with the whole history. A boundary is the end of a response, the end of a tool call, or,
while the model streams, the arrival of a steer: Codex then abandons the stream and samples again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from steersim.core.facts import Fact
from steersim.core.model import Action, Event, ModelBase, Property
from steersim.models.codex import facts as codex_facts
from steersim.models.codex import properties as codex_properties
from steersim.models.codex import protocol as P
from steersim.models.codex.spec import DEFAULT_TIMING, kinds_not_enabled
from steersim.models.codex.state import (
    BOUNDARY,
    EMPTY_INPUT,
    IDLE,
    NO_ACTIVE_TURN,
    SAID,
    SAMPLING,
    TEXT,
    TOOL,
    TURN_MISMATCH,
    CodexState,
)

Step = tuple[CodexState, list[Event]]
BAD_KINDS = (P.STALE, P.BOGUS, "empty")


class CodexModel(ModelBase[CodexState]):
    """Codex app-server 0.171.0's steering, as its protocol documents it and as its build behaves."""

    name = "codex"
    fair_actors = ("codex", "model", "tool")
    action_kinds = ("client.turn_start", "client.steer", "client.bad_steer", "client.interrupt", "client.read",
                    "model.text_delta", "model.text_done", "model.tool_call", "model.complete", "tool.finish",
                    "codex.preempt", "codex.record", "codex.request", "codex.end_turn")

    def has_bug(self, name: str) -> bool:
        """Whether bug variant `name` is seeded. The judge of recorded runs seeds two at once (`a+b`) when
        one run shows two defects; the registry builds one variant at a time."""
        return self.bug is not None and name in self.bug.split("+")

    def kinds_not_enabled(self) -> Mapping[str, str]:
        return kinds_not_enabled(self.params)

    def init_states(self) -> Sequence[CodexState]:
        return [CodexState()]

    # ------------------------------------------------------------------------------------------ actions
    def actions(self, s: CodexState) -> Sequence[Action]:
        if s.read:
            return []
        p = self.params
        active = s.phase != IDLE
        out: list[Action] = []
        if s.prompts < p["turns"] and not s.running_tool:  # a client waits for an interrupted command's end
            out.append(Action("client", "client.turn_start"))
        if s.steers - len(s.bad) < p["steers"] and s.turns > 0:
            out.append(Action("client", "client.steer"))
        if p["bad_steers"] and active:
            out += [Action("client", "client.bad_steer", (kind,)) for kind in BAD_KINDS
                    if kind not in s.bad and (kind != P.STALE or s.turns > 1)]
        if active and s.interrupts < p["interrupts"] and not (p["cautious_interrupt"] and s.pending):
            out.append(Action("client", "client.interrupt"))
        if not active and s.turns > 0 and not s.running_tool and not s.pending:
            out.append(Action("client", "client.read"))
        out += self._system_actions(s)
        return out

    def _system_actions(self, s: CodexState) -> list[Action]:
        out: list[Action] = []
        if s.phase == SAMPLING:
            out.append(Action("model", "model.text_delta"))
            if s.calls < self.params["tool_calls"]:
                out.append(Action("model", "model.tool_call"))
        elif s.phase == TEXT:
            out.append(Action("model", "model.text_done"))
        elif s.phase == SAID:
            out.append(Action("model", "model.complete"))
        if s.phase == TOOL or s.running_tool:
            out.append(Action("tool", "tool.finish"))
        if s.phase in (SAMPLING, TEXT, SAID) and s.pending and self.params["preempt_stream"]:
            out.append(Action("codex", "codex.preempt"))
        if s.phase == BOUNDARY:
            if s.pending:
                out.append(Action("codex", "codex.record"))
            if s.need_request and not s.pending:
                out.append(Action("codex", "codex.request"))
                if s.calls and self.has_bug("end-turn-before-tool-output"):
                    out.append(Action("codex", "codex.end_turn"))
            elif not s.pending or self.has_bug("end-turn-with-pending"):
                out.append(Action("codex", "codex.end_turn"))
        return out

    # ---------------------------------------------------------------------------------------------- step
    def step(self, s: CodexState, a: Action) -> Step | None:
        handler = getattr(self, "_" + a.kind.replace(".", "_"))
        return handler(s, *a.args)

    def _turn(self, s: CodexState) -> str:
        return P.turn_id(s.turns)

    def _client_turn_start(self, s: CodexState) -> Step:
        message = P.prompt_id(s.prompts + 1)
        s = replace(s, prompts=s.prompts + 1)
        if s.phase != IDLE and not self.has_bug("start-while-active-starts-turn"):
            if self.params["start_while_active"] == "steer":
                return self._accept(s, [P.turn_start(message, P.STEERED, self._turn(s))], message)
            return s, [P.turn_start(message, "refused", self._turn(s))]
        turn = P.turn_id(s.turns + 1)
        s = replace(s, phase=BOUNDARY, turns=s.turns + 1, calls=0, need_request=True, unsent=(), open_items=())
        events = [P.turn_start(message, P.STARTED, turn), P.turn_started(turn)]
        carried, s = s.pending, replace(s, pending=())
        for ident in (*carried, message):
            events += self._user_message(ident, turn)
        return replace(s, history=(*s.history, *carried, message)), events

    def _accept(self, s: CodexState, events: list[Event], message: str) -> Step:
        return replace(s, pending=(*s.pending, message), accepted=(*s.accepted, message),
                       unsent=(*s.unsent, message)), events

    def _client_steer(self, s: CodexState) -> Step:
        message = P.steer_id(s.steers + 1)
        s = replace(s, steers=s.steers + 1)
        if s.phase == IDLE:
            return s, [P.turn_steer(message, P.ACTIVE, False, NO_ACTIVE_TURN, "")]
        return self._accept(s, [P.turn_steer(message, P.ACTIVE, False, P.ACCEPTED, self._turn(s))], message)

    def _client_bad_steer(self, s: CodexState, kind: str) -> Step:
        message = P.steer_id(s.steers + 1)
        s = replace(s, steers=s.steers + 1, bad=(*s.bad, kind))
        expected, empty = (P.ACTIVE, True) if kind == "empty" else (kind, False)
        if (kind == P.STALE and self.has_bug("accept-stale-turn-id")) or (empty and self.has_bug("accept-empty-steer")):
            return self._accept(s, [P.turn_steer(message, expected, empty, P.ACCEPTED, self._turn(s))], message)
        code = EMPTY_INPUT if empty else TURN_MISMATCH
        return s, [P.turn_steer(message, expected, empty, code, "")]

    def _client_interrupt(self, s: CodexState) -> Step:
        turn = self._turn(s)
        events = [P.turn_interrupt(turn)]
        if not self.has_bug("interrupt-drops-streaming-item"):
            events += self._abandon(s, turn)
        running = ""
        if s.phase == TOOL:
            call = P.call_id(s.requests)
            reading = "stops" if self.has_bug("interrupt-stops-command") else self.params["tool_on_interrupt"]
            if reading == "runs_on":
                running = call
                if self.has_bug("complete-command-still-running"):
                    events.append(P.item("completed", P.COMMAND, call, turn))
            if reading == "stops":
                events.append(P.item("completed", P.COMMAND, call, turn))
                running = ""
            if self.has_bug("forget-running-tool"):
                running = ""
        pending, history = s.pending, s.history
        if self.params["interrupt_pending"] == "persist" and not self.has_bug("interrupt-keeps-pending"):
            if not self.has_bug("drop-pending-on-interrupt"):
                for ident in pending:
                    events += self._user_message(ident, turn)
                history = (*history, *pending)
            pending = ()
        events.append(P.turn_completed(turn, "interrupted", s.unsent))
        return replace(s, phase=IDLE, interrupts=s.interrupts + 1, pending=pending, history=history, unsent=(),
                       open_items=self._left_open(s), need_request=False, running_tool=running), events

    def _client_read(self, s: CodexState) -> Step:
        return replace(s, read=True), [P.thread_read(s.history)]

    def _model_text_delta(self, s: CodexState) -> Step:
        ident = P.agent_message_id(s.requests)
        return replace(s, phase=TEXT, open_items=(*s.open_items, ident)), [
            P.backend(P.TEXT_DELTA, s.requests), P.item("started", P.AGENT_MESSAGE, ident, self._turn(s))]

    def _model_text_done(self, s: CodexState) -> Step:
        ident = P.agent_message_id(s.requests)
        return replace(s, phase=SAID, open_items=tuple(i for i in s.open_items if i != ident)), [
            P.backend(P.TEXT_DONE, s.requests), P.item("completed", P.AGENT_MESSAGE, ident, self._turn(s))]

    def _model_tool_call(self, s: CodexState) -> Step:
        return replace(s, phase=TOOL, calls=s.calls + 1), [
            P.backend(P.TOOL_CALL, s.requests), P.item("started", P.COMMAND, P.call_id(s.requests), self._turn(s))]

    def _model_complete(self, s: CodexState) -> Step:
        return replace(s, phase=BOUNDARY), [P.backend(P.COMPLETED, s.requests)]

    def _tool_finish(self, s: CodexState) -> Step:
        if s.running_tool:  # the turn was interrupted; the command ran on and ends now
            call, turn = s.running_tool, P.turn_id(s.turns)
            events = [P.tool_finished(call)]
            if not self.has_bug("complete-command-still-running"):  # that variant showed it at the interrupt
                events.append(P.item("completed", P.COMMAND, call, turn))
            return replace(s, running_tool=""), events
        call = P.call_id(s.requests)
        return replace(s, phase=BOUNDARY, need_request=True), [
            P.tool_finished(call), P.item("completed", P.COMMAND, call, self._turn(s))]

    def _codex_preempt(self, s: CodexState) -> Step:
        events = self._abandon(s, self._turn(s))
        return replace(s, phase=BOUNDARY, need_request=True, open_items=self._left_open(s)), events

    def _abandon(self, s: CodexState, turn: str) -> list[Event]:
        """The open agent message of an abandoned response completes with the text it has."""
        if self.has_bug("abandon-streaming-item"):
            return []
        return [P.item("completed", P.AGENT_MESSAGE, ident, turn) for ident in s.open_items]

    def _left_open(self, s: CodexState) -> tuple[str, ...]:
        """The items an abandoned response leaves open: none, unless they were never completed."""
        return s.open_items if self.has_bug("abandon-streaming-item") else ()

    def _codex_record(self, s: CodexState) -> Step:
        turn = self._turn(s)
        order = tuple(reversed(s.pending)) if self.has_bug("record-newest-first") else s.pending
        if self.has_bug("record-steer-twice"):
            order = order + order
        events: list[Event] = []
        for ident in order:
            events += [] if self.has_bug("write-steer-without-item") else self._user_message(ident, turn)
        return replace(s, pending=(), history=(*s.history, *order), need_request=True), events

    def _codex_request(self, s: CodexState) -> Step:
        reached = tuple(m for m in s.history if m in s.unsent)
        index = s.requests + (0 if s.calls and self.has_bug("output-request-keeps-index") else 1)
        event = P.request(index, self._turn(s), s.history, reached)
        return replace(s, phase=SAMPLING, requests=index, need_request=False, sent=s.history,
                       unsent=tuple(m for m in s.unsent if m not in reached)), [event]

    def _codex_end_turn(self, s: CodexState) -> Step:
        return replace(s, phase=IDLE, unsent=()), [P.turn_completed(self._turn(s), "completed", ())]

    @staticmethod
    def _user_message(ident: str, turn: str) -> list[Event]:
        return [P.item("started", P.USER_MESSAGE, ident, turn), P.item("completed", P.USER_MESSAGE, ident, turn)]

    # ---------------------------------------------------------------------------------------- delegates
    def facts(self, event: Event) -> Sequence[Fact]:
        return codex_facts.facts(event)

    def properties(self) -> Sequence[Property]:
        return codex_properties.properties(self.params, self.bug)

    def default_timing(self) -> Mapping[str, Any]:
        return DEFAULT_TIMING
