"""Named bug variants of the Foundry model, each a plausible implementation mistake, and the
property (spec sections 6-7) that catches it."""

from __future__ import annotations

BUGS: dict[str, str] = {
    "lifo-promotion": "the end of a turn promotes the newest queued input instead of the oldest",
    "orphan-future-on-full": "a start() refused with SteeringQueueFull leaves its registered future behind, "
                             "so the next promoted turn resolves a handle nobody holds",
    "resolve-after-promote": "the next queued input is promoted before the finished turn's handle is resolved",
    "no-signal": "an enqueue behind a running turn does not set its ctx.cancel",
    "cancel-before-count": "an enqueue sets ctx.cancel before the pending count is visible",
    "stale-count-after-cancel": "cancelling a queued handle leaves ctx.pending_input_count at the old value",
    "input-id-is-chain-head": "a turn's ctx.input_id is the chain's last accepted input id, not its own",
    "no-precancel": "a promoted turn with inputs behind it starts with ctx.cancel clear",
    "full-advances-head": "a start() refused with SteeringQueueFull still advances last_input_id",
    "off-by-one-cap": "the capacity check lets one input more than queue_cap wait",
    "capacity-before-precondition": "a full queue is reported before a stale if_last_input_id",
    "nonsteerable-queues": "a non-steerable chain queues a concurrent start() instead of raising TaskConflictError "
                           "(its variant runs with -p steerable=false)",
    "raise-ends-chain": "after a handler raises, the chain is suspended with its queue left waiting",
    "cancel-removes-head": "cancelling a queued handle removes the queue head instead of its own input",
    "recover-queue-head": "recovery after a crash enters the queue head instead of the interrupted turn",
    "interrupting-steer": "a steer on a busy chain starts its turn at once, interrupting the running handler",
}

BUG_CATCHERS: dict[str, str] = {
    "lifo-promotion": "fifo",
    "orphan-future-on-full": "own-outcome",
    "resolve-after-promote": "resolution-order",
    "no-signal": "signal",
    "cancel-before-count": "cause-first",
    "stale-count-after-cancel": "live-count",
    "input-id-is-chain-head": "turn-identity",
    "no-precancel": "pre-cancel",
    "full-advances-head": "side-effect-free-rejection",
    "off-by-one-cap": "bound",
    "capacity-before-precondition": "if-match",
    "nonsteerable-queues": "non-steerable",
    "raise-ends-chain": "chain-survives",
    "cancel-removes-head": "queued-cancel",
    "recover-queue-head": "recovery",
    "interrupting-steer": "one-active-turn",
}

# parameters a bug variant needs to be reachable at all, beyond the defaults
BUG_PARAMS: dict[str, dict[str, object]] = {
    "nonsteerable-queues": {"steerable": False},
}
