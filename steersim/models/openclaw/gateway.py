"""The gateway's inbound policy (`src/auto-reply/reply/queue/...`): what a message that arrives during
an active run does in each queue mode, and the follow-up queue (cap, drop policy, debounce, collect).

The session counts as busy while a run is active, while an interrupt replacement waits, and while the
follow-up queue still holds messages, so a new message never overtakes queued ones by running at once.
"""

from __future__ import annotations

from steersim.models.openclaw import codex
from steersim.models.openclaw import events as E
from steersim.models.openclaw.config import Config, route_of
from steersim.models.openclaw.state import IDLE, START, Step


def message_id(n: int) -> str:
    return f"m{n}"


def start(st: Step, prompt: str) -> None:
    """Begin a run (Agent.prompt or a Codex turn) with one prompt."""
    st.prompts, st.phase, st.aborted = (prompt,), START, False


def inbound(cfg: Config, st: Step, n: int) -> None:
    item = message_id(n)
    st.sent = n
    st.emit(E.gateway("inbound", id=item, route=route_of(item, cfg.routes)))
    if st.phase == IDLE and not st.fq and not st.dropped and not st.replacement:
        st.emit(E.gateway("run_now", id=item))
        start(st, item)
    elif cfg.mode == "interrupt":
        interrupt(cfg, st, item)
    elif cfg.mode == "steer" and try_steer(cfg, st, item):
        return
    else:
        enqueue(cfg, st, item)


def interrupt(cfg: Config, st: Step, item: str) -> None:
    """Abort the active run and run the newest message after it ends; one replacement at a time."""
    if st.replacement:
        st.emit(E.gateway("interrupt_refused", id=item, reason="still-shutting-down"))
        return
    st.emit(E.gateway("interrupt", id=item))
    if cfg.bug == "overlapping-runs" and st.phase != IDLE:
        # The replacement starts without waiting for the aborted run to wind down: whatever that run still
        # had in flight is dropped with it, and a turn it left open is never ended.
        st.calls, st.call, st.pending, st.drained, st.has_more = (), 0, (), False, False
        start(st, item)
        return
    st.replacement = item
    if st.phase != IDLE and cfg.bug != "interrupt-without-abort":
        st.aborted = True


def try_steer(cfg: Config, st: Step, item: str) -> bool:
    """queueEmbeddedAgentMessage: the runtime takes the message only while a run streams and does not
    compact, and at the session layer only while its admission gate is open (the embedded runner's
    `canInject`: closed once the run is aborted, "active session is finalizing"); otherwise the message
    falls back to the follow-up queue."""
    if cfg.codex:
        return codex.queue(cfg, st, item)
    reason = ("no_active_run" if st.phase == IDLE else "compacting" if st.phase == "compacting"
              else "finalizing" if cfg.session and st.aborted else "")
    if reason:
        st.emit(E.gateway("steer_rejected", id=item, reason=reason))
        return False
    st.emit(E.gateway("steer", id=item))
    st.steerq = (*st.steerq, item)
    if st.after_launch:
        st.late_steer = True
    return True


def enqueue(cfg: Config, st: Step, item: str) -> None:
    """enqueueFollowupRun with applyQueueDropPolicy. The debounce window restarts before the cap check,
    so even a rejected message delays the drain."""
    if cfg.debounces and cfg.bug != "enqueue-keeps-window":
        st.quiet = False
    cap = cfg.cap + 1 if cfg.bug == "cap-admits-one-more" else cfg.cap
    if len(st.fq) >= cap:
        if cfg.drop == "new":
            st.emit(E.gateway("followup_rejected", id=item, reason="queue-cap-new"))
            return
        evict = len(st.fq) - cap + 1
        for old in st.fq[:evict]:
            if cfg.drop == "old":
                st.emit(E.gateway("followup_evicted", id=old, reason="queue-cap-old"))
            else:
                st.emit(E.gateway("followup_summarized", id=old))
                summarize(cfg, st, old)
        st.fq = st.fq[evict:]
    st.emit(E.gateway("followup_enqueued", id=item))
    st.fq = (*st.fq, item)


def summarize(cfg: Config, st: Step, item: str) -> None:
    """The item waits for its route's overflow summary. A route keeps at most `cap` summary lines
    (summaryLimit, the oldest elided: trimSummaryElisionsToCap), so an elided item is reported as such."""
    st.dropped = (*st.dropped, item)
    route = route_of(item, cfg.routes)
    same = [d for d in st.dropped if route_of(d, cfg.routes) == route]
    if len(same) > cfg.cap and cfg.bug != "unbounded-summary":
        st.emit(E.gateway("followup_evicted", id=same[0], reason="summary-elided"))
        st.dropped = tuple(d for d in st.dropped if d != same[0])


def requeue(cfg: Config, st: Step, items: tuple[str, ...]) -> None:
    """Messages a runtime accepted and then handed back go to the follow-up queue, still accepted."""
    for item in items:
        st.emit(E.gateway("followup_requeued", id=item))
    st.fq = st.fq + items
    if items and cfg.debounces:
        st.quiet = False


def debounce_elapsed(st: Step) -> None:
    st.emit(E.gateway("debounce_elapsed"))
    st.quiet = True


def drain_ready(cfg: Config, quiet: bool) -> bool:
    return quiet or not cfg.debounces or cfg.bug == "no-debounce"


SUMMARY_RIDES = ("overflow-across-routes", "summary-joins-followup")
"""The seeded variants whose overflow summary rides with the next drained prompt."""


def drain(cfg: Config, st: Step) -> None:
    """One drain step after the run ended and the quiet window passed (queue/drain.ts). An overflow
    summary goes first, as a synthetic follow-up run of its own for the leading summarised items that
    share one route (drainOverflowSummaryGroup). Then collect coalesces every queued message into one
    run when they share a route; a cross-route queue drains individually (forceIndividualCollect),
    until what is left is one route again with more than one message. The other modes run the oldest
    message. (The seeded overflow-across-routes and summary-joins-followup variants skip the summary's
    own run and prepend it to the next drained prompt instead.)"""
    if st.dropped and cfg.bug not in SUMMARY_RIDES:
        route = route_of(st.dropped[0], cfg.routes)
        count = next((k for k, item in enumerate(st.dropped) if route_of(item, cfg.routes) != route),
                     len(st.dropped))
        prompt = "+".join(f"overflow:{item}" for item in st.dropped[:count])
        st.dropped = st.dropped[count:]
        st.emit(E.gateway("followup_drain", id=prompt))
        start(st, prompt)
        return
    overflow = tuple(f"overflow:{item}" for item in st.dropped)
    st.dropped = ()
    queue = st.fq
    if cfg.mode == "collect":
        cross = len({route_of(item, cfg.routes) for item in queue}) > 1 and cfg.bug != "collect-across-routes"
        if st.forced and not cross and len(queue) > 1:
            st.forced = False
        st.forced = st.forced or cross
        taken = queue[:1] if st.forced else queue
    else:
        taken = queue[:1]
    st.fq = queue[len(taken):]
    if not st.fq:
        st.forced = False
    prompt = "+".join(overflow + taken)
    st.emit(E.gateway("followup_drain", id=prompt))
    start(st, prompt)


def run_replacement(st: Step) -> None:
    item = st.replacement
    st.replacement = ""
    st.emit(E.gateway("replacement_run", id=item))
    start(st, item)
