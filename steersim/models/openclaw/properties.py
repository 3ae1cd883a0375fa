"""OpenClaw's own promises (spec section 13), as properties named after them.

Most are step properties over the native events a transition emits (which the engine hands them, so no
property steps the model again), judged against the call statuses
of the source state, so each reads like the documented rule: "a tool that started is never cancelled",
"a drained steer is appended before the next model call". Vacuity guards (`Sometimes`) are added only
where the configuration can reach the situation they name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from steersim.core.model import Action, Always, Event, Eventually, Property, Sometimes
from steersim.models.openclaw import events as E
from steersim.models.openclaw.agent_core import NEW, RUNNING
from steersim.models.openclaw.config import Config, route_of
from steersim.models.openclaw.enabled import kinds_not_enabled
from steersim.models.openclaw.state import ENDING, IDLE, START, Ended, Lifecycle, OpenClawState, Step

EventsOf = Callable[[OpenClawState, Action], Sequence[Event]]
"""The native events of the step (state, action): `OpenClawModel.events_of`."""
EventJudge = Callable[[OpenClawState, Action, OpenClawState, Sequence[Event]], bool]

ABORTING = ("run.start", "model.respond", "turn.poll", "turn.next", "run.follow_up_poll")
"""The kinds whose step ends a run found aborted (`agent_core.abort_run`): turn_end and agent_end."""
TOOL_RESULTS = ("tool.checkpoint_a", "tool.launch", "tool.finish", "tool.prepare", "tool.launch_batch",
                "tool.launch_call", "tool.commit")
"""The kinds whose step may end a call: tool_execution_end, the toolResult message."""


def sent_by(cfg: Config) -> dict[str, tuple[str, ...]]:
    """Per native event (`tool_result`: a message of role toolResult), the action kinds whose steps can
    send it under `cfg`, read off the step handlers: a property that only such an event can break judges
    those kinds alone. A run is found aborted only where something aborts it (a user abort of an Agent
    Core run, an interrupt), and the stop hook ends a run after a turn only when it answers true."""
    aborting = ABORTING if (cfg.abort and not cfg.codex) or cfg.mode == "interrupt" else ()
    stopping = ("turn.poll",) if cfg.stop_after_turn else ()
    return {
        "tool_execution_start": ("tool.checkpoint_a", "tool.launch", "tool.finish", "tool.start",
                                 "tool.launch_batch"),
        "tool_execution_end": TOOL_RESULTS,
        "tool_result": TOOL_RESULTS,
        "turn_end": ("turn.end", *aborting),
        "agent_end": (*aborting, *stopping, "run.final_poll"),
        "model_request": ("run.start", "turn.next"),
        "steering_poll": ("run.start", "tool.checkpoint_a", "tool.launch", "tool.checkpoint_c",
                          "tool.launch_batch", "turn.poll", "run.final_poll", "session.post_run"),
        "follow_up_poll": ("run.follow_up_poll", "session.post_run"),
        "tool_execute": ("tool.launch", "tool.launch_call"),
        "followup_drain": ("gateway.drain",),
        "followup_enqueued": ("user.message",),
        "turn/steer": ("user.message", "timer.codex_flush"),
        "codex_queued": ("user.message",),
        "userMessage": ("codex.boundary",),
        "followup_requeued": ("codex.boundary",),
        "turn/completed": ("codex.boundary",),
        "agent_start": ("run.start",),
        "run_settled": (*ABORTING, "run.final_poll", "run.finish", "session.post_run"),
    }


def _call_index(call: str) -> int:
    return int(call[1:])


def _stage(value: int | Ended) -> int:
    return value if isinstance(value, int) else 2


def _ended(data: dict) -> Ended:
    """An ended call's entry of the lifecycle: the text and details its tool_execution_end carried."""
    return 2, data["text"], tuple(data["details"].items())


def replay_lifecycle(seen: Lifecycle, events: Sequence[Event]) -> Lifecycle:
    """Each call's lifecycle after `events` (`Lifecycle`), from the events alone: each assistant message
    opens a new batch, empty when it asks for no tools. Unknown calls are ignored; the judging is `_lifecycle_ok`'s
    and `_result_matches_end`'s. A step without tool events leaves `seen` as it is."""
    life = None
    for event in events:
        name = event.name
        if name not in LIFECYCLE_EVENTS:
            continue
        if life is None:
            life = list(seen)
        data = event.data
        if name == "message_end" and data["role"] == "assistant":
            life = [0] * len(data["toolCalls"])
            continue
        if name == "tool_execution_start":
            step: int | Ended = 1
        elif name == "tool_execution_end":
            step = _ended(data)
        elif name == "message_end" and data["role"] == "toolResult":
            step = 3
        else:
            continue
        index = _call_index(data.get("toolCallId", data.get("id", "")))
        if index < len(life):
            life[index] = step
    return seen if life is None else tuple(life)


LIFECYCLE_EVENTS = frozenset(("message_end", "tool_execution_start", "tool_execution_end", "turn_end"))


def steer_number(event: Event) -> int:
    """The batch number a turn/steer carries in its clientUserMessageId (`openclaw:turn:steer:<n>`)."""
    return int(event.data["clientUserMessageId"].rsplit(":", 1)[1])


def replay_checkpoints(st: Step) -> None:
    """Set `OpenClawState.continued` and `steer_number` from the step's events alone: the continue poll
    of AgentSession's Agent.continue() (announced by session_continue in the step) sets `continued` to
    whether it drained steering, and agent_start clears it; turn/started resets the turn's steer number and
    each turn/steer sets it to the number it carries. Only written, never read, so a remembered step
    (`memo`) does not depend on them."""
    announced = False
    for event in st.events:
        name = event.name
        if name == "session_continue":
            announced = True
        elif name == "steering_poll" and event.data["checkpoint"] == "continue":
            st.continued = announced and bool(event.data["drained"])
        elif name == "agent_start":
            st.continued = False
        elif name == "turn/started":
            st.steer_number = 0
        elif name == "turn/steer":
            st.steer_number = steer_number(event)


def _lifecycle_ok(in_order: bool, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """Replay the step's tool events over each call's lifecycle as the earlier events left it (`s.seen`):
    one start, one end, one result, in that order, all done by turn_end; with `in_order`, results follow
    assistant source order. A step without tool events has nothing to replay."""
    life = None
    for event in events:
        name = event.name
        if name not in LIFECYCLE_EVENTS:
            continue
        if life is None:
            life = list(s.seen)
        data = event.data
        if name == "message_end" and data["role"] == "assistant":
            life = [0] * len(data["toolCalls"])
            continue
        if name == "tool_execution_start":
            index, expect = _call_index(data["toolCallId"]), 0
        elif name == "tool_execution_end":
            index, expect = _call_index(data["toolCallId"]), 1
        elif name == "message_end" and data["role"] == "toolResult":
            index, expect = _call_index(data["id"]), 2
            if in_order and any(value != 3 for value in life[:index]):
                return False
        elif name == "turn_end":
            if any(value != 3 for value in life):
                return False
            continue
        else:
            continue
        if index >= len(life) or _stage(life[index]) != expect:
            return False
        life[index] = expect + 1
    return True


def _result_matches_end(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """A call's toolResult message carries the result its tool_execution_end carried: the loop builds
    both from one finalized outcome (`emitToolExecutionEnd(finalized)`, then
    `createToolResultMessage(finalized)`), so a call skipped by steering reads the skip in its result
    message, an aborted one the abort, a finished one its output. A result whose call has not ended is
    `one-start-one-end`'s to judge."""
    life = dict(enumerate(s.seen))
    for event in events:
        data = event.data
        if event.name == "message_end" and data["role"] == "assistant":
            life = {}
        elif event.name == "tool_execution_end":
            life[_call_index(data["toolCallId"])] = _ended(data)
        elif event.name == "message_end" and data["role"] == "toolResult":
            end = life.get(_call_index(data["id"]), 0)
            if isinstance(end, tuple) and end[1:] != (data["text"], tuple(data["details"].items())):
                return False
    return True


def _abort_result_exact(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """A call ends with "Operation aborted", details {} and executionStarted false exactly when it ends
    unstarted in a run that was aborted (spec section 4.5): after an abort every unstarted call reads the
    abort, never the steering skip nor its preflight's block; a run that was not aborted never reads it (a
    steering skip, a blocking preflight keep their own results); a started call ends with its output."""
    for event in events:
        data = event.data
        if event.name != "tool_execution_end":
            continue
        reads_abort = data["text"] == E.ABORT_TEXT
        if reads_abort and (not s.aborted or data["executionStarted"] or data["details"]):
            return False
        if s.aborted and not data["executionStarted"] and not reads_abort:
            return False
    return True


ABORT_STOPPED = frozenset(("model_request", "tool_execute", "follow_up_poll"))
"""What an aborted run no longer does: call the model, launch a tool, drain the follow-up queue."""


def _abort_stops_run(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """Once a /stop aborted the run, or the gateway's interrupt did (its replacement waits for the run to
    end: "abort and then wait"), the run makes no further model call (section 4.4), launches no tool, and
    does not drain the follow-up queue (the loop leaves through stopIfAborted before the follow-up drain,
    and AgentSession does not continue an aborted run)."""
    if not (s.aborted or s.replacement):
        return True
    return not any(event.name in ABORT_STOPPED for event in events)


TURN_CHECKPOINTS = frozenset(("before-call", "before-launch", "after-last-call", "batch-launch", "after-turn"))
"""The steering checkpoints inside a turn: the tool-batch ones and the one after turn_end."""


def _abort_skips_turn_checkpoints(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """Once the run is aborted, no checkpoint of the turn polls steering: the tool-batch checkpoints are
    skipped on an aborted signal (`if (!signal?.aborted)`, `signal?.aborted ? [] : ...`, spec sections
    4.2 and 4.3), and after turn_end the loop leaves through stopIfAborted before the after-turn poll
    (section 4.4: abort anywhere ends the run), so no steer is drained into a run that will not answer it."""
    if not s.aborted:
        return True
    return not any(event.name == "steering_poll" and event.data["checkpoint"] in TURN_CHECKPOINTS
                   for event in events)


PREPARE_KINDS = ("tool.start", "tool.prepare")
"""The steps of the parallel prepare phase: a call's start, then its preparation."""


def _abort_stops_prepare(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """The parallel prepare phase stops at the abort (spec section 4.3, step 1: "If aborted, stop the
    prepare phase"): a preparation that runs once the run is aborted ends its call with "Operation
    aborted" at once, and once a call of the batch ended so, no later call starts its preparation (the
    calls it did not reach get their abort pair at the launch checkpoint, step 4)."""
    if not s.aborted or a.kind not in PREPARE_KINDS:
        return True
    if a.kind == "tool.prepare":
        return any(event.name == "tool_execution_end" and event.data["text"] == E.ABORT_TEXT for event in events)
    return not any(isinstance(value, tuple) and value[1] == E.ABORT_TEXT for value in s.seen)


REFUSALS = frozenset(("steer_rejected", "activeTurnNotSteerable"))
FALLBACKS = frozenset(("followup_enqueued", "followup_rejected"))


def _fallback_follows_refusal(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """In steer mode a message reaches the follow-up queue (or its cap) only after the runtime refused to
    steer it, with its reason: queueEmbeddedAgentMessage's `steer_rejected` (no active run, compacting,
    finalizing; the Codex steering queue's not_streaming) or a Codex turn's activeTurnNotSteerable. A
    message the runtime took is never also queued for a follow-up run."""
    refused = set()
    for event in events:
        if event.name in REFUSALS:
            refused.add(event.data["id"])
        elif event.name in FALLBACKS and event.data["id"] not in refused:
            return False
    return True


def _tool_results_answered(cfg: Config, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]
                           ) -> bool:
    """The loop calls the model again after every tool batch (hasMoreToolCalls): a run ends (agent_end)
    only after a response that asked for no tools, unless it was aborted (the aborted assistant message
    closes it) or shouldStopAfterTurn ended it right after the tool turn. The replayed lifecycle (`seen`)
    is empty exactly when the last assistant message asked for no tools."""
    asked = bool(s.seen)
    for event in events:
        if event.name == "message_end" and event.data["role"] == "assistant":
            asked = bool(event.data["toolCalls"])
        elif event.name == "agent_end" and asked and not (cfg.stop_after_turn and a.kind == "turn.poll"):
            return False
    return True


WINDOW_OPENS = frozenset(("followup_enqueued", "followup_rejected", "followup_requeued"))


def window_after(cfg: Config, events: Sequence[Event]) -> bool | None:
    """Whether the follow-up queue's quiet window is open after `events`, as they tell it: an enqueue, a
    rejection at the cap (lastEnqueuedAt is refreshed before the cap check) or a requeue opens it, and
    debounce_elapsed closes it; None when they tell nothing (or no window is configured)."""
    if not cfg.debounces:
        return None
    window = None
    for event in events:
        if event.name in WINDOW_OPENS:
            window = True
        elif event.name == "debounce_elapsed":
            window = False
    return window


def _waits_debounce(s: OpenClawState, a: Action, t: OpenClawState) -> bool:
    """The follow-up queue drains only once the quiet window closed after the last enqueue, and the window
    elapses only after an enqueue (or a rejection, or a requeue) opened it: judged on the window the
    gateway's events tell (`OpenClawState.window`), not on the model's `quiet`."""
    if a.kind == "gateway.drain":
        return not s.window
    return a.kind != "timer.debounce" or s.window


def _codex_steer_window(cfg: Config, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]
                        ) -> bool:
    """The Codex steering queue's quiet window (spec section 6, attempt-steering.ts): with a window
    (`codex_debounce_ms` above 0) each queue() re-arms the timer and only its expiry sends the batch, so
    a turn/steer never leaves in the step that queued a message; with an explicit 0 each queued message
    goes out at once, as its own turn/steer, without a timer."""
    sent = [event.data["ids"] for event in events if event.name == "turn/steer"]
    if cfg.codex_debounces:
        return a.kind == "timer.codex_flush" or not sent
    queued = [[event.data["id"]] for event in events if event.name == "codex_queued"]
    return sent == queued


def _codex_consumes_sent(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """Replay the step's Codex traffic over the batches sent and not yet consumed (`s.inflight`): a
    turn/steer request adds its batch, a userMessage item must echo the oldest one (Codex writes steered
    input once, in the order it was sent), and turn/completed hands back whatever is left. What remains
    is what the turn still holds (`t.inflight`): nothing consumed that was never sent, nothing sent that
    is neither consumed nor held. The closing turn hands back, in order, every message it holds and did
    not consume: the batches in flight, then those still in the quiet window (`followup_requeued`)."""
    inflight = list(s.inflight)
    handed: list[str] = []
    requeued: list[str] = []
    for event in events:
        if event.name == "turn/steer":
            inflight.append(tuple(event.data["ids"]))
        elif event.name == "userMessage":
            if not inflight or "+".join(inflight.pop(0)) != event.data["id"]:
                return False
        elif event.name == "turn/completed":
            handed = [item for sent in inflight for item in sent] + list(s.batch)
            inflight = []
        elif event.name == "followup_requeued":
            requeued.append(event.data["id"])
    return tuple(inflight) == t.inflight and requeued == handed


def _no_cancel_started(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    for event in events:
        if event.name == "tool_execution_end":
            index = _call_index(event.data["toolCallId"])
            if index < len(s.calls) and s.calls[index] == RUNNING and not event.data["executionStarted"]:
                return False
    return True


def _no_launch_after_drain(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    drained = s.drained
    for event in events:
        if event.name == "steering_poll" and event.data["drained"] and s.calls:
            drained = True
        elif event.name == "tool_execute" and drained:
            return False
    return True


def _steer_before_launch(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    return not (s.steerq and a.kind != "tool.launch_call" and any(e.name == "tool_execute" for e in events))


def _skip_exact(cfg: Config, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    for event in events:
        data = event.data
        if "text" not in data and "details" not in data:  # neither a skip nor anything that reads like one
            continue
        is_skip = data.get("details", {}).get("deniedReason") == "steering" or data.get("text") == cfg.skip_text
        if not is_skip:
            continue
        if data["text"] != cfg.skip_text or data["details"] != E.SKIP_DETAILS:
            return False
        if event.name == "tool_execution_end" and data["executionStarted"]:
            return False
    return True


def _steer_before_next_call(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    requested = False
    for event in events:
        if event.name == "model_request":
            requested = True
        elif requested and event.name == "message_end" and event.data["role"] == "user":
            return False
    return not (requested and t.pending)


def _drained_not_lost(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """A drained message reaches the transcript before agent_end, or goes back to its queue (so a step
    without agent_end loses nothing)."""
    for event in events:
        if event.name == "agent_end":
            break
    else:
        return True
    open_items = set(s.pending)
    for event in events:
        if event.name == "steering_poll":
            open_items.update(event.data["drained"])
        elif event.name == "message_end" and event.data["role"] == "user":
            open_items.difference_update(E.items_of(event.data["id"]))
            open_items.discard(event.data["id"])
        elif event.name == "agent_end" and open_items - set(t.steerq) - set(t.followups):
            return False
    return True


def _one_at_a_time(cfg: Config, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    for event in events:
        if event.name == "steering_poll" and cfg.steering_mode == "one-at-a-time" and len(event.data["drained"]) > 1:
            return False
        if event.name == "follow_up_poll" and cfg.follow_up_mode == "one-at-a-time" and len(event.data["drained"]) > 1:
            return False
    return True


def _truthful_preflight(cfg: Config, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]
                        ) -> bool:
    """Once the blocked call's preflight ran (the call started), its result is the block (or the abort);
    a steer drained before the call started may still skip it. Its implementation never runs: no launch,
    and its end reads executionStarted false (spec section 4.5)."""
    index = cfg.blocked_call
    if index >= len(s.calls) or s.calls[index] == NEW:
        return True
    blocked = E.call_id(index)
    for event in events:
        data = event.data
        call = data.get("toolCallId", data.get("id") if data.get("role") == "toolResult" else None)
        if call == blocked and "text" in data and data["text"] not in (E.BLOCK_TEXT, E.ABORT_TEXT):
            return False
        if call == blocked and (data.get("executionStarted") or event.name == "tool_execute"):
            return False
    return True


def _enqueue_within_cap(cfg: Config, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]
                        ) -> bool:
    """applyQueueDropPolicy runs when the queue holds `cap` messages (spec section 10: "When pending >= cap"),
    so a message the follow-up queue takes finds fewer than `cap` ahead of it."""
    return all(t.fq.index(event.data["id"]) < cfg.cap for event in events if event.name == "followup_enqueued")


def _drains_reported(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """A message leaves the Agent's steering or follow-up queue only through a poll that reports it: the
    harness sees each drain at the seam OpenClaw's own tests use (`steering_poll`, `follow_up_poll`), so
    a drain it cannot see would take messages nobody can account for."""
    left = set(s.steerq + s.followups) - set(t.steerq + t.followups)
    if not left:
        return True
    reported = {item for event in events if event.name in ("steering_poll", "follow_up_poll")
                for item in event.data["drained"]}
    return left <= reported


def _echo_in_transcript(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """Each batch Codex echoes as a userMessage item is written into the session transcript in that step,
    in echo order: the transcript is what the session (and its next turn) reads back."""
    echoed = [event.data["id"] for event in events if event.name == "userMessage"]
    return not echoed or list(t.hist[len(s.hist):]) == echoed


def _run_start_polls(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """A run polls steering at its start (the run-start checkpoint), unless AgentSession's Agent.continue()
    drained steering to start it (`s.continued`: session_continue, then a continue poll that drained some):
    that run's prompts are what the poll took."""
    names = [(event.name, event.data.get("checkpoint")) for event in events]
    return ("agent_start", None) not in names or s.continued or ("steering_poll", "run-start") in names


def _after_turn_polls(cfg: Config, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]
                      ) -> bool:
    """After turn_end the loop polls steering (Checkpoint after turn), unless the run was aborted (it leaves
    through stopIfAborted), the tool batch already drained a steer (it outranks the stop hook and runs next),
    or shouldStopAfterTurn ended the run: a steer that arrived during the turn reaches the next model call."""
    if a.kind != "turn.poll" or s.aborted or s.pending:
        return True
    return any((event.name == "steering_poll" and event.data["checkpoint"] == "after-turn")
               or (cfg.stop_after_turn and event.name == "agent_end") for event in events)


def _settle_reported(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """A step that leaves the Agent (or the session) idle reports it once, with what the steering and
    follow-up queues still hold (`run_settled`, what waitForIdle resolves with), and no other step does:
    a message left in a queue is never left unaccounted for."""
    settled = [event.data for event in events if event.name == "run_settled"]
    if t.phase != IDLE or s.phase == IDLE:
        return not settled
    return settled == [{"steeringQueue": list(t.steerq), "followUpQueue": list(t.followups)}]


def _steers_numbered(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """Each turn/steer of a Codex turn is numbered one past the last (`openclaw:turn:steer:<n>`, from 1 at
    turn/started): Codex keys its userMessage echo by that id, so a skipped or repeated number would pair
    the echo with the wrong batch."""
    number = s.steer_number
    for event in events:
        if event.name == "turn/started":
            number = 0
        elif event.name == "turn/steer":
            if steer_number(event) != number + 1:
                return False
            number += 1
    return True


def _collect_routes(cfg: Config, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    for event in events:
        if event.name == "followup_drain":
            items = [item for item in E.items_of(event.data["id"]) if E.is_message_id(item)]
            if len({route_of(item, cfg.routes) for item in items}) > 1:
                return False
    return True


def _summary_bounded(cfg: Config, s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    for event in events:
        if event.name == "followup_drain":
            summarised = [item for item in event.data["id"].split("+") if item.startswith("overflow:")]
            if len(summarised) > cfg.cap:
                return False
    return True


def _summary_runs_alone(s: OpenClawState, a: Action, t: OpenClawState, events: Sequence[Event]) -> bool:
    """Outside collect, the overflow summary is a synthetic follow-up prompt of its own (spec section 10:
    "It is injected as a synthetic followup prompt"; only collect prepends it to a coalesced prompt): a
    drained run that carries summary lines carries no queued message."""
    for event in events:
        if event.name == "followup_drain":
            items = event.data["id"].split("+")
            if any(item.startswith("overflow:") for item in items) and \
                    not all(item.startswith("overflow:") for item in items):
                return False
    return True


def _on_events(name: str, judge: EventJudge, sent: Sequence[str], doc: str, *,
               senders: dict[str, tuple[str, ...]], events_of: EventsOf) -> Always:
    """A promise about the events a step sends, judged on the kinds that send one of `sent` (`senders`)
    alone, the events read from the model's memo of the steps it just took (`events_of`): the engine
    then steps the model without building events for the properties (`ModelBase.successor_facts`)."""
    kinds = tuple(dict.fromkeys(kind for event in sent for kind in senders[event]))
    return Always(name, step=lambda s, a, t: judge(s, a, t, events_of(s, a)), kinds=kinds, doc=doc)


def properties(cfg: Config, events_of: EventsOf) -> list[Property]:
    """The promises of one configuration (parameters and bug variant). The step ones read the step's
    events (`events_of`); each judge is `(s, a, t, events)` (a configuration bound first with
    `partial`), named with the events that can break it, so that steps sending none of them are not
    judged at all."""
    on = partial(_on_events, senders=sent_by(cfg), events_of=events_of)
    ended = ("tool_execution_end", "tool_result")
    lifecycle = ("tool_execution_start", *ended, "turn_end")
    props: list[Property] = [
        on("no-cancel-started", _no_cancel_started, ("tool_execution_end",),
           "no tool whose implementation started is cancelled by steering"),
        on("no-launch-after-drain", _no_launch_after_drain, ("tool_execute",),
           "once a batch drained a steer, no further tool of that batch starts"),
        on("steer-before-launch", _steer_before_launch, ("tool_execute",),
           "a steer pending at a launch checkpoint suppresses that launch (the calls of a parallel "
           "batch that crossed its checkpoint launch together)"),
        on("one-start-one-end", partial(_lifecycle_ok, False), lifecycle,
           "every call gets one start, one end and one result message, in that order, before turn_end"),
        on("results-in-source-order", partial(_lifecycle_ok, True), lifecycle,
           "tool result messages follow assistant source order"),
        on("result-matches-end", _result_matches_end, ("tool_result",),
           "each call's toolResult message carries the text and details of its tool_execution_end"),
        on("abort-result-exact", _abort_result_exact, ("tool_execution_end",),
           f"a call ends unstarted with {E.ABORT_TEXT!r} and details {{}} exactly when its run was aborted"),
        on("abort-skips-turn-checkpoints", _abort_skips_turn_checkpoints, ("steering_poll",),
           "once the run is aborted, neither a tool-batch checkpoint nor the after-turn checkpoint polls "
           "steering"),
        on("abort-stops-the-run", _abort_stops_run, tuple(ABORT_STOPPED),
           "an aborted run (a /stop, or an interrupt whose replacement waits) calls no model, launches no tool "
           "and drains no follow-up"),
        on("tool-results-reach-model", partial(_tool_results_answered, cfg), ("agent_end",),
           "a run that was neither aborted nor stopped by shouldStopAfterTurn ends only after the model "
           "answered its last tool results"),
        on("skip-result-exact", partial(_skip_exact, cfg), ended,
           f"a steering skip reads {cfg.skip_text!r} with details {E.SKIP_DETAILS} and never started"),
        on("steer-before-next-call", _steer_before_next_call, ("model_request",),
           "a drained steer is appended after the batch's results and before the next model call"),
        on("drained-not-lost", _drained_not_lost, ("agent_end",),
           "every drained message is injected before agent_end (or restored to its queue)"),
        on("one-at-a-time-drain", partial(_one_at_a_time, cfg), ("steering_poll", "follow_up_poll"),
           "in one-at-a-time mode each checkpoint drains at most one message"),
        on("drains-reported", _drains_reported, ("steering_poll", "follow_up_poll"),
           "a message leaves the Agent's steering or follow-up queue only through a poll that reports it"),
        Always("after-turn-polls", step=lambda s, a, t: _after_turn_polls(cfg, s, a, t, events_of(s, a)),
               kinds=("turn.poll",),
               doc="after a turn whose batch drained no steer, the loop polls steering (or the stop hook ends "
                   "the run), so a steer that arrived during the turn reaches the next model call"),
        Eventually("run-settles", trigger=lambda s: s.phase != IDLE, goal=lambda s: s.phase == IDLE,
                   doc="every run settles: the Agent (or, at the session layer, the session) ends idle, so "
                       "waitForIdle resolves and reports what its queues still hold"),
        Always("steer-outranks-stop", step=lambda s, a, t: not (
                   a.kind == "turn.poll" and (s.pending or s.late_steer) and not s.aborted and t.phase != "next"),
               kinds=("turn.poll",),
               doc="a steer accepted during the tool batch outranks shouldStopAfterTurn: one the batch drained, "
                   "and one accepted while its launched calls ran (sequential Checkpoint C: 'must outrank "
                   "shouldStopAfterTurn even when there is no remaining tail')"),
    ]
    if not cfg.codex:
        props.append(on("run-start-polls", _run_start_polls, ("agent_start",),
                        "a run polls steering at its start, unless AgentSession's continue drained the steering "
                        "that starts it"))
        props.append(on("settle-reported", _settle_reported, ("run_settled",),
                        "a step that leaves the Agent idle reports it once (run_settled), with what its steering "
                        "and follow-up queues hold, and no other step does"))
    if cfg.codex:
        props.append(on("steers-numbered", _steers_numbered, ("turn/steer",),
                        "each turn/steer of a Codex turn is numbered one past the last, from 1"))
        props.append(on("echo-in-transcript", _echo_in_transcript, ("userMessage",),
                        "each batch Codex echoes as a userMessage is written into the session transcript, in "
                        "echo order"))
        props.append(on("codex-consumes-what-was-sent", _codex_consumes_sent,
                        ("turn/steer", "userMessage", "turn/completed", "followup_requeued"),
                        "Codex echoes each turn/steer batch once, oldest first, as a userMessage item, a "
                        "turn holds exactly the batches sent and not yet echoed, and a closing turn hands "
                        "back every message it holds and did not consume"))
        props.append(on("codex-steer-window", partial(_codex_steer_window, cfg), ("turn/steer", "codex_queued"),
                        "with a quiet window a turn/steer leaves only when the window elapses; without one "
                        "each queued message leaves at once, alone"))
    if cfg.tool_execution == "parallel" and not cfg.codex:
        props.append(Always("abort-stops-prepare",
                            step=lambda s, a, t: _abort_stops_prepare(s, a, t, events_of(s, a)),
                            kinds=PREPARE_KINDS,
                            doc="the parallel prepare phase stops at the abort: the call being prepared ends "
                                "'Operation aborted', and no later call starts its preparation"))
    if cfg.mode == "steer":
        props.append(Always("fallback-follows-refusal",
                            step=lambda s, a, t: _fallback_follows_refusal(s, a, t, events_of(s, a)),
                            kinds=("user.message",),
                            doc="in steer mode a message falls back to the follow-up queue only after the "
                                "runtime refused to steer it, with its reason"))
    if cfg.blocked_call >= 0:
        props.append(on("truthful-preflight", partial(_truthful_preflight, cfg), (*ended, "tool_execute"),
                        "a call blocked by its preflight keeps its own result, even when steering skips, "
                        "and never starts"))
    if cfg.mode == "collect":
        props.append(on("collect-respects-routes", partial(_collect_routes, cfg), ("followup_drain",),
                        "collect never coalesces messages of different routes, nor delivers "
                        "one route's overflow summary with another route's messages"))
    props.append(on("enqueue-within-cap", partial(_enqueue_within_cap, cfg), ("followup_enqueued",),
                    "the follow-up queue takes a message only with fewer than `cap` ahead of it (the drop policy "
                    "runs at the cap)"))
    if cfg.drop == "summarize" and cfg.mode != "collect":
        props.append(on("overflow-summary-runs-alone", _summary_runs_alone, ("followup_drain",),
                        "outside collect, an overflow summary runs as a follow-up of its own, never with a "
                        "queued message"))
    if cfg.drop == "summarize":
        props.append(on("summary-bounded", partial(_summary_bounded, cfg), ("followup_drain",),
                        "an overflow summary run carries at most `cap` summary lines (the oldest are "
                        "elided)"))
    if cfg.mode != "interrupt" and cfg.debounces:
        props.append(Always("followup-waits-debounce", step=_waits_debounce,
                            kinds=("gateway.drain", "timer.debounce"),
                            doc="the follow-up queue drains only after the debounce window, which only an "
                                "enqueue, a rejection at the cap or a requeue opens"))
    off = kinds_not_enabled(cfg)
    if off:
        props.append(Always("switched-off-stays-off", step=lambda s, a, t: a.kind not in off, kinds=tuple(off),
                            doc="no step is of a kind the configuration switches off (`kinds_not_enabled`: the "
                                "other runtime or tool executor, an abort, compaction, the agent_end listener "
                                "window, the session's post-run, the follow-up queue in steer mode): a knob "
                                "that is off keeps its behaviour off"))
    props += _vacuity_guards(cfg)
    return props


def _vacuity_guards(cfg: Config) -> list[Property]:
    guards: list[Property] = []
    tools = cfg.calls > 0 and cfg.tool_turns > 0 and cfg.blocked_call < 0
    steering = cfg.mode == "steer" and cfg.messages > 0
    if steering and not cfg.codex and tools:
        guards += [
            Sometimes("steer-skips-a-call", state=lambda s: s.drained and s.phase == "turn-end",
                      doc="some tool call is skipped because a steer was drained at its launch checkpoint"),
            Sometimes("steer-lands-during-tool", state=lambda s: bool(s.steerq) and RUNNING in s.calls,
                      doc="some steer arrives while a tool implementation runs"),
        ]
        if cfg.tool_execution == "parallel":
            guards.append(Sometimes(
                "steer-lands-after-launch", state=lambda s: s.late_steer,
                doc="some steer is accepted after a parallel batch crossed its launch checkpoint, where no "
                    "checkpoint of the batch polls it (the steer steer-outranks-stop weighs against "
                    "shouldStopAfterTurn)"))
    if steering and not cfg.codex:
        guards.append(Sometimes(
            "steer-injected-mid-run",
            state=lambda s: s.phase == "llm" and s.llm_calls > 1 and bool(s.hist) and E.is_message_id(s.hist[-1])
            and s.hist[-1] not in s.prompts,
            doc="a steer is the last message the model sees at a later model call of the run (not the "
                "prompt the run started with)"))
    if cfg.mode in ("followup", "collect") and cfg.messages > 0:
        guards.append(Sometimes("followup-run", state=lambda s: s.phase == START and s.prompts != ("p0",),
                                doc="a queued message runs after the active run ended"))
    if cfg.mode == "followup" and cfg.messages > 1:
        guards.append(Sometimes("followup-drains-one-by-one",
                                state=lambda s: s.phase == START and s.prompts != ("p0",) and bool(s.fq),
                                doc="a drained follow-up runs while later ones wait their turn in the queue"))
    if cfg.mode == "collect" and cfg.messages > 1 and cfg.routes > 1:
        guards.append(Sometimes("collect-keeps-routes-apart", state=lambda s: s.forced,
                                doc="a cross-route collect queue drains message by message"))
    guards += _behaviour_guards(cfg)
    if cfg.mode == "collect" and cfg.messages > 1 and cfg.routes == 1:
        guards.append(Sometimes("collect-coalesces", state=lambda s: s.phase == START and "+" in s.prompts[0],
                                doc="several queued messages run as one coalesced follow-up"))
    if cfg.mode == "interrupt" and cfg.messages > 0:
        guards.append(Sometimes("interrupt-replaces", state=lambda s: s.phase == IDLE and bool(s.replacement),
                                doc="an interrupt aborted the run and its message is about to run"))
    if steering and cfg.codex and cfg.codex_turn_kind == "default" and cfg.messages > 1 and cfg.codex_debounces:
        guards.append(Sometimes("codex-batches-steers", state=lambda s: any(len(b) > 1 for b in s.inflight),
                                doc="two messages of one quiet window go to Codex as one turn/steer"))
    return guards


def _behaviour_guards(cfg: Config) -> list[Property]:
    """One guard for each behaviour a parameter switches on, so a check that never reached it (a mutant
    that removed it, say) cannot pass: the abort, compaction, the stop hook, agent follow-ups, the session
    layer's post-run continue, the agent_end listener window, each drop policy at a reachable cap, the Codex
    runtime."""
    guards: list[Property] = []
    agent_core = not cfg.codex
    if cfg.abort and agent_core:
        guards.append(Sometimes("abort-ends-run", state=lambda s: s.aborts > 0 and E.ABORTED_TURN_ID in s.hist,
                                doc="a user abort ends the active run (the turn-aborted guidance is appended)"))
    if cfg.compaction and agent_core:
        guards.append(Sometimes("run-compacts", state=lambda s: s.compacted,
                                doc="a run compacts after its first turn"))
    if cfg.stop_after_turn and agent_core and cfg.calls > 0 and cfg.tool_turns > 0:
        guards.append(Sometimes(
            "stop-hook-ends-run",
            state=lambda s: s.phase == IDLE and 0 < s.llm_calls <= cfg.tool_turns and not s.aborted,
            doc="shouldStopAfterTurn ends a run right after a tool turn, before the model answers it"))
    if cfg.agent_follow_ups > 0 and agent_core:
        followups = frozenset(f"f{n}" for n in range(1, cfg.agent_follow_ups + 1))
        guards.append(Sometimes("agent-follow-up-runs", state=lambda s: bool(followups.intersection(s.hist)),
                                doc="a message queued with Agent.followUp reaches the transcript"))
    steering = cfg.mode == "steer" and cfg.messages > 0
    if cfg.session and steering:
        guards.append(Sometimes(
            "session-continues-steer", state=lambda s: s.phase == START and s.skip_poll,
            doc="a steer accepted after agent_end runs through AgentSession's post-run Agent.continue(), which "
                "drains it (handlePostAgentRun: continue while hasQueuedMessages())"))
    if cfg.end_listener_window and agent_core and steering:
        guards.append(Sometimes(
            "steer-lands-in-end-listeners", state=lambda s: s.phase == ENDING and bool(s.steerq),
            doc="a steer lands while agent_end listeners run and the Agent still counts as streaming"))
    if cfg.mode in ("followup", "collect") and cfg.messages > cfg.cap:
        guards.append(_drop_guard(cfg))
    if cfg.codex and cfg.mode == "steer" and cfg.codex_turn_kind == "default" and cfg.messages > 0 \
            and cfg.codex_boundaries > 1:
        guards.append(Sometimes(
            "codex-consumes-steer",
            state=lambda s: s.phase == "codex-turn" and s.boundaries < cfg.codex_boundaries and s.steer_number > 0
            and bool(s.hist) and E.is_message_id(E.items_of(s.hist[-1])[0]),
            doc="a turn/steer batch is consumed at a Codex model boundary inside the turn (the turn sent one, "
                "and the transcript ends with a message)"))
    return guards


def _drop_guard(cfg: Config) -> Property:
    """The drop policy at work once the queue is full: a summary run, an evicted oldest message, or a
    rejected newest one (a message that ran nowhere and waits nowhere)."""
    if cfg.drop == "summarize":
        return Sometimes("overflow-summary-runs",
                         state=lambda s: s.phase == START and s.prompts[0].startswith("overflow:"),
                         doc="messages dropped at the cap run as an overflow summary")

    def gone_and_waiting(s: OpenClawState) -> tuple[list[int], list[int]]:
        present = {item for text in (*s.hist, *s.prompts, *s.dropped, *s.steerq, *s.pending)
                   for item in E.items_of(text)}
        waiting = [int(item[1:]) for item in s.fq]
        return [n for n in range(1, s.sent + 1) if f"m{n}" not in present and n not in waiting], waiting

    def evicted_oldest(s: OpenClawState) -> bool:
        gone, waiting = gone_and_waiting(s)
        return any(n < m for n in gone for m in waiting)

    def rejected_newest(s: OpenClawState) -> bool:
        gone, waiting = gone_and_waiting(s)
        return bool(waiting) and any(n > max(waiting) for n in gone)

    if cfg.drop == "old":
        return Sometimes("cap-evicts-oldest", state=evicted_oldest,
                         doc="a full queue evicts its oldest message, which never runs")
    return Sometimes("cap-rejects-newest", state=rejected_newest,
                     doc="a full queue rejects the newest message, which never runs")
