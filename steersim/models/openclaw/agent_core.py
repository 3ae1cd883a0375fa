"""The OpenClaw runtime (Agent Core, `agent-loop.ts`): checkpoints, tool batches, injection, endings.

Each function is one step of the loop between two points where other participants can act (an awaited
listener, preflight hook, tool or model call), so a steer the user sends lands exactly where the real
loop could see it. The checkpoints are those of spec section 3.2: run start, sequential checkpoint A
before each call and B right before its launch (after all awaited preflight), C after the last call,
the launch checkpoint of a parallel batch (then each ready call's launch, one after another, so an
abort between two launches ends the later calls unstarted), after each turn, and at the end of the run
after the follow-up drain. At the session layer (`layer=session`) the embedded runner's AgentSession
follows each run: while the run did not abort and the Agent still has queued messages it calls
`Agent.continue()`.
"""

from __future__ import annotations

from steersim.core.model import Event
from steersim.models.openclaw import events as E
from steersim.models.openclaw.config import Config
from steersim.models.openclaw.state import ENDING, IDLE, START, Step, set_at

NEW, READY, RUNNING, DONE = "new", "ready", "running", "done"
ENDED, SKIPPED, ABORTED = "ended", "skipped", "aborted"  # ended, result message still to come


def drain(queue: tuple[str, ...], mode: str, cfg: Config) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """PendingMessageQueue.drain: `all` takes the FIFO batch, `one-at-a-time` only the first message."""
    if mode == "all" or cfg.bug == "all-in-one-at-a-time":
        return queue, ()
    return queue[:1], queue[1:]


def poll(cfg: Config, st: Step, checkpoint: str) -> tuple[str, ...]:
    """Take the steering messages at a checkpoint and record the poll."""
    taken, st.steerq = drain(st.steerq, cfg.steering_mode, cfg)
    st.emit(E.steering_poll(checkpoint, taken))
    return taken


def inject(st: Step, items: tuple[str, ...]) -> None:
    """Append messages to the transcript (message_start/end each), as the loop does at the top of a turn."""
    for item in items:
        st.emit(*E.user_message(item))
    st.hist = st.hist + items


def request_model(cfg: Config, st: Step) -> None:
    """Inject what is pending, then call the model: the steer is the last thing the model sees."""
    pending, st.pending = st.pending, ()
    st.llm_calls = st.llm_calls + 1
    if cfg.bug == "steer-after-model-call":
        st.emit(E.model_request(st.llm_calls, st.hist))
        inject(st, pending)
    else:
        inject(st, pending)
        st.emit(E.model_request(st.llm_calls, st.hist))
    st.phase = "llm"


def end_run(cfg: Config, st: Step) -> None:
    """After agent_end: idle at once, or first through the window in which agent_end listeners run."""
    if cfg.end_listener_window or cfg.bug == "streaming-through-agent-end":
        st.phase = ENDING
    else:
        finish_run(cfg, st)
    st.calls, st.call, st.drained, st.has_more, st.turn_open = (), 0, False, False, False
    st.after_launch, st.late_steer = False, False


def abort_run(cfg: Config, st: Step) -> None:
    """stopIfAborted: the run ends. What was drained and not yet injected is dropped with it, or, where
    the build restores in-flight messages (`restore_on_abort`), goes back to the front of its queue."""
    st.emit(*E.aborted_ending(st.turn_open))
    st.hist = (*st.hist, E.ABORTED_TURN_ID)
    if cfg.restore_on_abort:
        st.steerq = tuple(item for item in st.pending if E.is_message_id(item)) + st.steerq
        st.followups = tuple(item for item in st.pending if not E.is_message_id(item)) + st.followups
    st.pending = ()
    end_run(cfg, st)


def start_run(cfg: Config, st: Step) -> None:
    """agent_start, turn_start, the prompts, the run-start checkpoint (skipped by a run that
    Agent.continue() started with drained steering), then the first model call."""
    st.emit(E.agent("agent_start"), E.agent("turn_start"))
    inject(st, st.prompts)
    st.turn_open = True
    st.pending = () if st.skip_poll else poll(cfg, st, "run-start")
    st.skip_poll = cfg.bug == "continue-skip-sticks" and st.skip_poll
    if st.aborted:
        abort_run(cfg, st)
    else:
        request_model(cfg, st)


def respond(cfg: Config, st: Step) -> None:
    """The scripted model: tool calls on the first `tool_turns` responses, plain text afterwards."""
    if st.aborted:
        abort_run(cfg, st)
        return
    if st.llm_calls <= cfg.tool_turns and cfg.calls > 0:
        calls = tuple(E.call_id(j) for j in range(cfg.calls))
        st.emit(*E.assistant_message(st.llm_calls, calls, "toolUse"))
        st.calls, st.call, st.drained = (NEW,) * cfg.calls, 0, False
        st.has_more = cfg.bug != "tool-results-unanswered"
        st.phase = "seq-a" if cfg.tool_execution == "sequential" else "par-prep"
    else:
        st.emit(*E.assistant_message(st.llm_calls, (), "stop"))
        st.calls, st.has_more = (), False
        st.phase = "turn-end"


def _finish_call(st: Step, index: int, text: str, *, started: bool, details: dict | None = None) -> None:
    """tool_execution_end then the toolResult message: sequential results are committed as each call ends."""
    call = E.call_id(index)
    st.emit(E.tool_end(call, text, started=started, details=details), *E.tool_result_message(call, text, details))
    st.calls = set_at(st.calls, index, DONE)


def complete_tail(cfg: Config, st: Step, first: int, *, steering: bool, start_emitted: bool) -> None:
    """completeUnstartedToolCall for every call from `first` on: a start (unless already emitted), an
    end that never started, and the result message, with the steering skip or the abort text."""
    text, details = (cfg.skip_text, E.SKIP_DETAILS) if steering else (E.ABORT_TEXT, None)
    for index in range(first, len(st.calls)):
        if cfg.bug == "skip-without-result" and steering:
            st.calls = set_at(st.calls, index, DONE)
            continue
        if not (index == first and start_emitted):
            st.emit(E.tool_start(E.call_id(index)))
        _finish_call(st, index, text, started=False, details=details)
    st.phase = "turn-end"


def checkpoint_a(cfg: Config, st: Step) -> None:
    """Sequential checkpoint A (skipped once aborted): a steer here suppresses the call before its start."""
    index = st.call
    if not st.aborted:
        taken = poll(cfg, st, "before-call")
        if taken:
            st.pending, st.drained = taken, True
            complete_tail(cfg, st, index, steering=True, start_emitted=False)
            return
    st.emit(E.tool_start(E.call_id(index)))
    st.calls = set_at(st.calls, index, READY)
    st.phase = "seq-b"


def launch_sequential(cfg: Config, st: Step) -> None:
    """After the awaited preflight: an immediate outcome (abort, a blocking preflight) keeps its own result
    and takes no checkpoint; otherwise checkpoint B, and the launch if nothing was drained."""
    index = st.call
    if st.aborted:
        _finish_call(st, index, E.ABORT_TEXT, started=False)
        after_call(cfg, st)
        return
    if index == cfg.blocked_call:
        _finish_call(st, index, E.BLOCK_TEXT, started=False)
        after_call(cfg, st)
        return
    if cfg.bug != "no-checkpoint-b":
        taken = poll(cfg, st, "before-launch")
        if taken:
            st.pending, st.drained = taken, True
            complete_tail(cfg, st, index, steering=cfg.bug != "skip-reads-abort", start_emitted=True)
            return
    st.emit(E.tool_execute(E.call_id(index)))
    st.calls = set_at(st.calls, index, RUNNING)
    st.phase = "seq-run"


def after_call(cfg: Config, st: Step) -> None:
    """Move to the next call; an abort makes the rest of the batch "Operation aborted"."""
    index = st.call
    if st.aborted:
        complete_tail(cfg, st, index + 1, steering=False, start_emitted=False)
    elif index + 1 < len(st.calls):
        st.call, st.phase = index + 1, "seq-a"
    else:
        st.phase = "seq-c"


def finish_sequential(cfg: Config, st: Step, index: int) -> None:
    _finish_call(st, index, E.real_text(E.call_id(index)), started=True)
    after_call(cfg, st)


def checkpoint_c(cfg: Config, st: Step) -> None:
    """One more poll after the last call when nothing was drained, so a steer that landed during the final
    call outranks shouldStopAfterTurn."""
    if not st.aborted:
        taken = poll(cfg, st, "after-last-call")
        if taken:
            st.pending, st.drained = taken, True
    st.phase = "turn-end"


def start_parallel(cfg: Config, st: Step) -> None:
    """Prepare phase, in source order: each call's start is emitted (and its listeners awaited) before
    its preparation runs."""
    st.emit(E.tool_start(E.call_id(st.call)))
    st.calls = set_at(st.calls, st.call, READY)
    st.phase = "par-resolve"


def prepare_parallel(cfg: Config, st: Step) -> None:
    """The call's preparation: an abort or a blocking preflight ends it at once (an abort also ends the
    prepare phase); otherwise it waits, ready, for the launch checkpoint."""
    index = st.call
    call = E.call_id(index)
    if st.aborted and cfg.bug != "prepare-ignores-abort":
        st.emit(E.tool_end(call, E.ABORT_TEXT, started=False))
        st.calls = set_at(st.calls, index, ABORTED)
        st.phase = "par-cp"
        return
    if index == cfg.blocked_call:
        st.emit(E.tool_end(call, E.BLOCK_TEXT, started=cfg.bug == "block-reads-started"))
        st.calls = set_at(st.calls, index, ENDED)
    if index + 1 < len(st.calls):
        st.call, st.phase = index + 1, "par-prep"
    else:
        st.phase = "par-cp"


def launch_parallel(cfg: Config, st: Step) -> None:
    """The launch checkpoint, polled once for the batch: a steer recalls every ready call (steering skip,
    in source order) and earlier immediate outcomes keep their results; otherwise the ready calls launch,
    each as its own step (`launch_ready_call`)."""
    ready = tuple(j for j, status in enumerate(st.calls) if status == READY)
    if st.aborted:
        for j in ready:
            st.emit(E.tool_end(E.call_id(j), E.ABORT_TEXT, started=False))
            st.calls = set_at(st.calls, j, ABORTED)
        unprepared = st.calls.index(NEW) if NEW in st.calls else len(st.calls)
        commit_parallel(cfg, st)
        complete_tail(cfg, st, unprepared, steering=False, start_emitted=False)
        return
    taken = poll(cfg, st, "batch-launch")
    if taken:
        st.pending, st.drained = taken, True
        recalled = ready
        if cfg.bug == "partial-parallel-recall":
            recalled = ready[:1]
        for j in recalled:
            if cfg.bug != "skip-without-result":
                text = E.ABORT_TEXT if cfg.bug == "wrong-skip-text" else cfg.skip_text
                st.emit(skip_end(E.call_id(j), text))
            st.calls = set_at(st.calls, j, SKIPPED)
        ready = ready[len(recalled):]
    if ready:
        st.after_launch = True
        st.call, st.phase = ready[0], "par-launch"
    else:
        commit_parallel(cfg, st)


def launch_ready_call(cfg: Config, st: Step) -> None:
    """One ready call's `execute` inside the batch's Promise.all: it launches the implementation, unless
    the run was aborted since the checkpoint (an abort inside an earlier call's start), in which case it
    ends at once with "Operation aborted", never started. The launches run back to back, so no launched
    call finishes before the last one launched."""
    index = st.call
    call = E.call_id(index)
    if st.aborted:
        st.emit(E.tool_end(call, E.ABORT_TEXT, started=False))
        st.calls = set_at(st.calls, index, ABORTED)
    else:
        st.emit(E.tool_execute(call))
        st.calls = set_at(st.calls, index, RUNNING)
    later = [j for j in range(index + 1, len(st.calls)) if st.calls[j] == READY]
    if later:
        st.call = later[0]
    elif RUNNING in st.calls:
        st.phase = "par-run"
    else:
        commit_parallel(cfg, st)


def finish_parallel(cfg: Config, st: Step, index: int) -> None:
    """A launched call ends in completion order; results wait for the commit phase."""
    call = E.call_id(index)
    if cfg.bug == "cancel-running-tool" and st.steerq:
        st.emit(skip_end(call, cfg.skip_text))
        st.calls = set_at(st.calls, index, SKIPPED)
    elif cfg.bug == "results-out-of-order":
        _finish_call(st, index, E.real_text(call), started=True)
    else:
        st.emit(E.tool_end(call, E.real_text(call), started=True))
        st.calls = set_at(st.calls, index, ENDED)
    if RUNNING not in st.calls:
        st.phase = "par-commit"


def commit_parallel(cfg: Config, st: Step) -> None:
    """Commit phase: the result messages of every ended call in assistant source order."""
    for j, status in enumerate(st.calls):
        if status not in (ENDED, SKIPPED, ABORTED):
            continue
        st.calls = set_at(st.calls, j, DONE)
        call = E.call_id(j)
        if status == ENDED:
            result = ended_result(cfg, st, j, call)
        elif status == SKIPPED:
            result = skipped_result(cfg, st, call)
        else:
            result = E.ABORT_TEXT, {}
        if result is not None:
            st.emit(*E.tool_result_message(call, *result))
    st.phase = "turn-end"


def ended_result(cfg: Config, st: Step, index: int, call: str) -> tuple[str, dict]:
    """The result of a call that ended on its own: its output, or its preflight's block (which the
    skip-overwrites-preflight variant replaces with the steering skip once the batch drained a steer)."""
    if index != cfg.blocked_call:
        return E.real_text(call), {}
    if cfg.bug == "skip-overwrites-preflight":
        return (cfg.skip_text, dict(E.SKIP_DETAILS)) if st.drained else (E.BLOCK_TEXT, {})
    return E.BLOCK_TEXT, {}


def skip_end(call: str, text: str) -> Event:
    """The tool_execution_end of a call steering recalled before it launched: never started, with the
    skip details (one builder, so every place that ends a skipped call ends it the same way)."""
    return E.tool_end(call, text, started=False, details=E.SKIP_DETAILS)


def skipped_result(cfg: Config, st: Step, call: str) -> tuple[str, dict] | None:
    """The result of a call steering recalled at the launch checkpoint: the skip. The seeded variants
    send none (skip-without-result), end the call a second time first (double-end-event), or write the
    abort text (skip-result-reads-abort)."""
    if cfg.bug == "skip-without-result":
        return None
    if cfg.bug == "double-end-event":
        st.emit(skip_end(call, cfg.skip_text))
    if cfg.bug == "skip-result-reads-abort":
        return E.ABORT_TEXT, {}
    return cfg.skip_text, dict(E.SKIP_DETAILS)


def end_turn(cfg: Config, st: Step) -> None:
    st.emit(E.agent("turn_end", toolResults=[E.call_id(j) for j in range(len(st.calls))]))
    st.turn_open, st.after_launch = False, False
    if cfg.compaction and not st.compacted:
        st.emit(E.agent("compaction_start"))
        st.phase = "compacting"
    else:
        st.phase = "turn-poll"


def compact(st: Step) -> None:
    st.emit(E.agent("compaction_end"))
    st.compacted, st.phase = True, "turn-poll"


def after_turn(cfg: Config, st: Step) -> None:
    """After the turn: an aborted run leaves through stopIfAborted (the seeded poll-after-abort variant
    goes on to the stop hook and the poll first); a drained steer skips shouldStopAfterTurn; otherwise the
    stop hook, then a poll."""
    st.late_steer = False
    if st.aborted and cfg.bug != "poll-after-abort":
        abort_run(cfg, st)
        return
    consult_stop = not st.pending or cfg.bug == "stop-outranks-steer"
    if consult_stop and cfg.stop_after_turn:
        st.emit(E.agent("agent_end"))
        st.pending = ()
        end_run(cfg, st)
        return
    if not st.pending and cfg.bug != "no-after-turn-poll":
        st.pending = poll(cfg, st, "after-turn")
    st.phase = "next" if st.pending or st.has_more else "fu-poll"


def next_turn(cfg: Config, st: Step) -> None:
    if st.aborted:
        abort_run(cfg, st)
        return
    st.emit(E.agent("turn_start"))
    st.turn_open = True
    request_model(cfg, st)


def follow_up_poll(cfg: Config, st: Step) -> None:
    """Leaving the turn loop (after a last stopIfAborted), the agent follow-up queue is drained."""
    if st.aborted and cfg.bug != "follow-up-after-abort":
        abort_run(cfg, st)
        return
    taken, st.followups = drain(st.followups, cfg.follow_up_mode, cfg)
    if cfg.bug != "follow-up-drain-unreported":
        st.emit(E.follow_up_poll(taken))
    if taken:
        st.pending, st.has_more, st.phase = taken, True, "next"
    else:
        st.phase = "final-poll"


def final_poll(cfg: Config, st: Step) -> None:
    """Recheck steering after the awaited follow-up drain, so agent_end cannot strand an accepted steer."""
    if cfg.bug != "no-final-recheck":
        taken = poll(cfg, st, "end-of-run")
        if taken:
            st.pending, st.has_more, st.phase = taken, True, "next"
            return
    st.emit(E.agent("agent_end"))
    end_run(cfg, st)


def finish_run(cfg: Config, st: Step) -> None:
    """finishRun after the agent_end listeners settle: the Agent stops counting as streaming. The bare
    Agent is then idle, and what is left in its queues waits for a later run; at the session layer
    AgentSession decides next (`after_run`)."""
    if cfg.session:
        st.phase = "post-run"
    elif cfg.bug == "finish-run-keeps-streaming":
        st.phase = "streaming"  # no step leaves it: the run never settles
    else:
        settle(cfg, st)


def settle(cfg: Config, st: Step) -> None:
    """The run is over: waitForIdle resolves, reporting what the steering and follow-up queues hold."""
    if cfg.bug != "settle-unreported":
        st.emit(E.run_settled(st.steerq, st.followups))
    st.phase = IDLE


def after_run(cfg: Config, st: Step) -> None:
    """AgentSession.handlePostAgentRun: an aborted run settles the session (its queued messages stay for
    the next prompt); otherwise, while the Agent has queued messages, Agent.continue() drains the steering
    queue (its run then skips the run-start poll) or else the follow-up queue and runs what it took."""
    if st.aborted or not (st.steerq or st.followups):
        settle(cfg, st)
        return
    st.emit(E.agent("session_continue"))
    taken = poll(cfg, st, "continue")
    st.skip_poll = bool(taken)
    if not taken:
        taken, st.followups = drain(st.followups, cfg.follow_up_mode, cfg)
        st.emit(E.follow_up_poll(taken))
    st.prompts, st.phase = taken, START
