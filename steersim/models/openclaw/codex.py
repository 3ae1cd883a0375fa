"""The native Codex app-server harness (`attempt-steering.ts`): no per-tool checkpoints; messages in
one quiet window go to Codex as one `turn/steer`, consumed at Codex's next model boundary. Review and
compaction turns refuse steering, and a closing turn hands back whatever it has not consumed."""

from __future__ import annotations

from steersim.models.openclaw import events as E
from steersim.models.openclaw.config import Config
from steersim.models.openclaw.state import IDLE, Step


def queue(cfg: Config, st: Step, item: str) -> bool:
    """createCodexSteeringQueue().queue: batch the message and re-arm the quiet window (0 sends at once)."""
    if st.phase != "codex-turn" or st.aborted:
        reason = "no_active_run" if st.phase == IDLE else "not_streaming"
        if cfg.bug != "silent-steer-fallback":
            st.emit(E.gateway("steer_rejected", id=item, reason=reason))
        return False
    if cfg.codex_turn_kind != "default":
        st.emit(E.codex("activeTurnNotSteerable", id=item, turnKind=cfg.codex_turn_kind))
        return False
    st.emit(E.gateway("codex_queued", id=item))
    st.batch = (*st.batch, item)
    if not cfg.codex_debounces or cfg.bug == "codex-flush-at-once":
        flush(st)
    return True


def start_turn(cfg: Config, st: Step) -> None:
    prompt = "+".join(st.prompts)
    st.emit(E.codex("turn/start", id=prompt), E.codex("turn/started"))
    st.hist = st.hist + st.prompts
    first = 1 if cfg.bug == "steer-count-from-one" else 0
    st.phase, st.boundaries, st.steer_batches = "codex-turn", cfg.codex_boundaries, first


def flush(st: Step) -> None:
    """The quiet window passed: every batched message goes out as one turn/steer."""
    number = st.steer_batches + 1
    st.emit(E.gateway("turn/steer", clientUserMessageId=f"openclaw:turn:steer:{number}", ids=list(st.batch)))
    st.inflight = (*st.inflight, st.batch)
    st.batch, st.steer_batches = (), number


def boundary(cfg: Config, st: Step) -> tuple[str, ...]:
    """A Codex model boundary consumes every batch sent so far (echoed as a userMessage completion).
    Returns the messages a closing turn hands back to the gateway."""
    if st.aborted:
        return complete(cfg, st, "interrupted")
    for sent in st.inflight:
        prompt = "+".join(sent)
        st.emit(E.codex("userMessage", id=prompt))
        if cfg.bug != "echo-skips-transcript":
            st.hist = (*st.hist, prompt)
    if cfg.bug != "steer-consumed-twice":
        st.inflight = ()
    st.boundaries = st.boundaries - 1
    return complete(cfg, st, "completed") if st.boundaries == 0 else ()


def complete(cfg: Config, st: Step, status: str) -> tuple[str, ...]:
    """The turn ends and the steering queue closes: unsent and unconsumed messages fall back."""
    st.emit(E.codex("turn/completed", status=status))
    unsent = () if cfg.bug == "turn-end-drops-unsent" else st.batch
    leftovers = tuple(item for sent in st.inflight for item in sent) + unsent
    st.inflight, st.batch, st.phase = (), (), IDLE
    return leftovers
