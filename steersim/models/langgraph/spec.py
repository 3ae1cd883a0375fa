"""The LangGraph model's specification: parameters (the documented knobs and the readings the docs
leave open), bug variants and the properties that catch them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steersim.core.registry import Bug, Param, Reading
from steersim.models.langgraph.state import ANY, STRATEGIES

PARAMS = (
    Param("runs", 2, "runs the client creates on the thread, one after another (each may meet the ones in flight)",
          low=1, high=4),
    Param("nodes", 1, "nodes of the graph, run one after another (a checkpoint after each)", low=1, high=3),
    Param("strategy", ANY, "the multitask_strategy of every creation; `any`: each creation picks one of the four",
          choices=(ANY, *STRATEGIES)),
    Param("stream_clients", True, "a stream client may join any run in flight (it decides how rollback deletes)"),
    Param("node_errors", True, "a node may raise, ending its run in error"),
    Param("cancels", 1, "runs.cancel requests the client sends (POST /threads/{thread_id}/runs/{run_id}/cancel with "
          "the API's default action, interrupt) for the running run, once it has created its runs and none waits "
          "behind it", low=0, high=2),
    Param("interrupted_thread_status", "interrupted",
          "the thread's status after an interrupted run with nothing else in flight: `interrupted` while the "
          "run's last checkpoint has nodes left (what the in-memory runtime writes), or `idle`; the docs do not say",
          choices=("interrupted", "idle")),
)

BUGS = (
    Bug("dispatch-by-status", "the dispatcher starts a pending run as soon as no record says running, while a "
        "cancelled run's task still runs its clean-up", "one-active-turn",
        {"strategy": "interrupt", "stream_clients": False, "node_errors": False}),
    Bug("newest-pending-first", "the dispatcher picks the newest pending run", "ordered-history",
        {"runs": 3, "strategy": "enqueue", "stream_clients": False, "node_errors": False}),
    Bug("drop-cancelled-pending", "an interrupt removes a pending run it cancels without a status", "no-lost-steers",
        {"runs": 3, "strategy": "interrupt", "stream_clients": False, "node_errors": False}),
    Bug("error-keeps-stale-values", "a run that ends in error leaves the thread's values as they were, not its "
        "last checkpoint's", "thread-agrees-with-last-run", {"runs": 1}),
    Bug("rollback-keeps-checkpoints", "deleting a rolled-back run keeps its checkpoints", "rollback-leaves-no-trace",
        {"strategy": "rollback", "node_errors": False}),
    Bug("reject-ignores-pending", "reject answers 409 only when a run is running, not when one is pending",
        "reject-409-iff-in-flight", {"strategy": "reject", "stream_clients": False, "node_errors": False}),
    Bug("interrupted-thread-stays-busy", "a run interrupted with nothing else in flight leaves the thread busy",
        "thread-agrees-with-last-run", {"runs": 1, "node_errors": False}),
    Bug("refusal-answers-200", "a creation the reject strategy refuses is answered 200, as if its run were stored",
        "reject-409-iff-in-flight", {"strategy": "reject", "stream_clients": False, "node_errors": False}),
    Bug("pending-interrupt-reported-started", "a run interrupted while pending is reported as a run that started",
        "run-status-says-started", {"runs": 3, "strategy": "interrupt", "stream_clients": False,
                                    "node_errors": False}),
    Bug("stream-ends-early", "a stream client's stream may end while its run still runs, before its final status",
        "stream-ends-when-run-over", {"strategy": "rollback", "node_errors": False}),
    Bug("cancel-pending-idles-thread", "cancelling a pending run marks the thread idle while other runs are in flight",
        "thread-busy-while-in-flight", {"runs": 3, "strategy": "interrupt", "stream_clients": False,
                                        "node_errors": False}),
    Bug("thread-announced-unchanged", "the thread record is announced again when a step leaves its status and "
        "values as they were", "events-tell-record-changes",
        {"strategy": "enqueue", "stream_clients": False, "node_errors": False, "cancels": 0}),
    Bug("run-starts-from-empty-state", "a run's input checkpoint starts from empty values, not from the thread's "
        "latest checkpoint", "checkpoints-continue-history",
        {"strategy": "enqueue", "stream_clients": False, "node_errors": False, "cancels": 0}),
    Bug("answers-before-cancelling", "a rollback or interrupt creation answers before the cancellations it asked "
        "for are carried out", "creation-answers-after-cancelling",
        {"strategy": "rollback", "stream_clients": False, "node_errors": False, "cancels": 0}),
    Bug("refusal-left-unanswered", "a creation the reject strategy refuses never gets its 409: the client waits "
        "for ever", "thread-settles", {"strategy": "reject", "stream_clients": False, "node_errors": False,
                                       "cancels": 0}),
    Bug("error-after-last-node", "a run whose last node has written its checkpoint may still end in error",
        "run-fails-in-a-node", {"runs": 1, "stream_clients": False, "cancels": 0}),
    Bug("join-refused-run", "a stream client joins a run its creation refused (409), which has no record",
        "stream-joins-a-stored-run", {"strategy": "reject", "node_errors": False, "cancels": 0}),
)

DEFAULT_TIMING: Mapping[str, Any] = {
    "default": {"dist": "exponential", "mean": 0.01},
    "client.create": {"dist": "exponential", "mean": 2.0},
    "worker.checkpoint": {"dist": "lognormal", "median": 1.0, "sigma": 0.5},
    "worker.fail": {"dist": "exponential", "mean": 20.0},
    "worker.settle": {"dist": "lognormal", "median": 0.5, "sigma": 0.5},
    "stream.join": {"dist": "exponential", "mean": 1.0},
}

READINGS = tuple(
    Reading({"runs": 3, "strategy": strategy, "stream_clients": False, "node_errors": False},
            f"three runs, every creation with multitask_strategy={strategy}")
    for strategy in ("reject", "enqueue", "interrupt", "rollback")
) + (
    Reading({"nodes": 2, "stream_clients": False, "interrupted_thread_status": "idle"},
            "a graph of two nodes, and a thread that reads idle after an interrupted run"),
)
