"""The teaching model compiled for the vector engine (`steersim.checking.vector`).

A state is one row of small integers, in the layout of `COLUMNS` below (the queue and the history are
fixed slots, 0 when empty, with their lengths kept beside them). Each method of `steps` is one action
of `TeachingModel` applied to every state of a level where it is enabled; the facts of each step are
codes into `facts`, in the order the model's `observe` and `facts` produce them. `tests/test_vector.py`
checks every transition of every reachable state against the model, for every bug variant.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from steersim.checking.vector import StepBatch
from steersim.core import facts as F
from steersim.models.teaching.state import (
    CHAIN,
    CLEAR,
    IDLE,
    LAUNCH,
    MODEL,
    TURN,
    TeachingState,
    call_id,
    steer_id,
)

if TYPE_CHECKING:
    from steersim.models.teaching.model import TeachingModel

PHASES = (MODEL, LAUNCH, CLEAR, IDLE)
CODE = {name: code for code, name in enumerate(PHASES)}
SCALARS = ("phase", "i", "c", "nl", "intr", "pend", "sent", "rej", "qlen", "hlen")


class TeachingKernel:
    """Columns: the scalars of `TeachingState` (phase as its index in PHASES) and the queue and history
    lengths, then the slots q[Q], hist[N], nres[K], calls[K], ress[K]."""

    properties = frozenset(("steer-before-launch", "delivered-steers-called", "steer-skips-a-call",
                            "steer-delivered-mid-run", "turn-completes", "steer-wakes-idle-agent", "steer-rejected",
                            "calls-in-parallel", "within-parameters", "results-recorded"))

    def __init__(self, model: TeachingModel) -> None:
        self.model = model
        K, N, Q = model.K, model.N, model.Q
        self.col = {name: j for j, name in enumerate(SCALARS)}
        self.q0 = len(SCALARS)
        self.h0 = self.q0 + Q
        self.nres0 = self.h0 + N
        self.calls0 = self.nres0 + K
        self.ress0 = self.calls0 + K
        self.width = self.ress0 + K
        self.facts, self.code = self._alphabet()

    def _alphabet(self) -> tuple[list[F.Fact], dict[str, int]]:
        """Every fact the model can emit, grouped so that a code is a group's base plus an offset: a steer
        number less one, or a call index."""
        K, N = self.model.K, self.model.N
        steers = range(1, N + 1)
        calls = range(K)
        groups = {
            "submitted": [F.steer_submitted(steer_id(n), CHAIN) for n in steers],
            "accepted": [F.steer_accepted(steer_id(n)) for n in steers],
            "rejected": [F.steer_rejected(steer_id(n), "queue_full") for n in steers],
            "applied": [F.steer_applied(steer_id(n), TURN) for n in steers],
            "appended": [F.history_appended(CHAIN, steer_id(n)) for n in steers],
            "requested": [F.tool_requested(call_id(j), TURN) for j in calls],
            "started": [F.tool_started(call_id(j)) for j in calls],
            "skipped": [F.tool_result(call_id(j), True) for j in calls],
            "collected": [F.tool_result(call_id(j), False) for j in calls],
            "turn-started": [F.turn_started(TURN, CHAIN)],
            "steered": [F.turn_ended(TURN, "steered")],
            "completed": [F.turn_ended(TURN, "completed")],
        }
        alphabet: list[F.Fact] = []
        code = {}
        for name, group in groups.items():
            code[name] = len(alphabet)
            alphabet.extend(group)
        return alphabet, code

    # ------------------------------------------------------------------ rows and states
    def encode(self, s: TeachingState) -> Sequence[int]:
        N, Q = self.model.N, self.model.Q
        return [CODE[s.phase], s.i, s.c, s.nl, int(s.intr), s.pend, s.sent, s.rej, len(s.q), len(s.hist),
                *s.q, *(0,) * (Q - len(s.q)), *s.hist, *(0,) * (N - len(s.hist)),
                *s.nres, *map(int, s.calls), *map(int, s.ress)]

    def decode(self, row: np.ndarray) -> TeachingState:
        r = [int(x) for x in row]
        c = self.col
        return TeachingState(
            PHASES[r[c["phase"]]], r[c["i"]], r[c["c"]], r[c["nl"]], bool(r[c["intr"]]), r[c["pend"]],
            r[c["sent"]], r[c["rej"]], tuple(r[self.q0: self.q0 + r[c["qlen"]]]),
            tuple(r[self.h0: self.h0 + r[c["hlen"]]]), tuple(r[self.nres0: self.calls0]),
            tuple(bool(x) for x in r[self.calls0: self.ress0]), tuple(bool(x) for x in r[self.ress0: self.width]),
        )

    def predicates(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        c = self.col
        return {
            "steer-skips-a-call": (rows[:, c["intr"]] == 1) & (rows[:, c["phase"]] == CODE[LAUNCH]),
            "steer-delivered-mid-run": (rows[:, c["phase"]] == CODE[CLEAR]) & (rows[:, c["pend"]] > 0),
            "turn-completes": (rows[:, c["phase"]] == CODE[CLEAR]) & (rows[:, c["intr"]] == 0),
            "steer-wakes-idle-agent": (rows[:, c["phase"]] == CODE[IDLE]) & (rows[:, c["qlen"]] > 0),
            "steer-rejected": rows[:, c["rej"]] > 0,
            "calls-in-parallel": rows[:, c["nl"]] - rows[:, c["c"]] > 1,
            "within-parameters": rows[:, c["sent"]] <= self.model.N,
        }

    # ------------------------------------------------------------------ steps
    def steps(self, rows: np.ndarray) -> list[StepBatch]:
        c = self.col
        may_steer = (rows[:, c["sent"]] < self.model.N).astype(np.int64)
        calls = rows[:, self.calls0: self.ress0].astype(np.int64)
        before = np.cumsum(calls, axis=1) - calls  # running calls listed before each call
        batches = [self._steer(rows, np.flatnonzero(may_steer))]
        for j in range(self.model.K):
            batches.append(self._finish(rows, np.flatnonzero(calls[:, j]), j, may_steer + before[:, j]))
        agent_position = may_steer + calls.sum(axis=1)
        batches.extend(self._agent(rows, agent_position))
        return batches

    def _batch(self, source: np.ndarray, position: np.ndarray, actor: str, kind: str, targets: np.ndarray,
               facts: np.ndarray, broken: dict[str, np.ndarray] | None = None) -> StepBatch:
        """`position` holds each level row's position of this action; the batch keeps its sources'."""
        return StepBatch(source, position[source], actor, kind, targets, facts, broken or {})

    def _steer(self, rows: np.ndarray, src: np.ndarray) -> StepBatch:
        c, Q = self.col, self.model.Q
        t = rows[src].copy()
        steer = t[:, c["sent"]] + 1
        if self.model.bug == "steer-id-reused-after-rejection":
            steer = steer - t[:, c["rej"]]
        accept = t[:, c["qlen"]] < Q
        where = np.flatnonzero(accept)
        t[where, self.q0 + t[where, c["qlen"]]] = steer[where]
        t[where, c["qlen"]] += 1
        t[~accept, c["rej"]] += 1
        t[:, c["sent"]] += 1
        index = steer.astype(np.int64) - 1
        answer = np.where(accept, self.code["accepted"], self.code["rejected"]) + index
        facts = np.stack([self.code["submitted"] + index, answer], axis=1)
        return self._batch(src, np.zeros(len(rows), dtype=np.int64), "user", "user.steer", t, facts)  # listed first

    def _finish(self, rows: np.ndarray, src: np.ndarray, j: int, position: np.ndarray) -> StepBatch:
        t = rows[src].copy()
        t[:, self.calls0 + j] = 0
        t[:, self.ress0 + j] = 1
        no_facts = np.zeros((len(src), 0), dtype=np.int64)
        return self._batch(src, position, f"tool:{call_id(j)}", "tool.finish", t, no_facts)

    def _agent(self, rows: np.ndarray, position: np.ndarray) -> list[StepBatch]:
        c, K, P, bug = self.col, self.model.K, self.model.P, self.model.bug
        phase = rows[:, c["phase"]]
        i, done, nl, qlen = rows[:, c["i"]], rows[:, c["c"]], rows[:, c["nl"]], rows[:, c["qlen"]]
        launching = phase == CODE[LAUNCH]
        can_launch = launching & (i < K) & (nl - done < P)
        steered = qlen > 0 if bug != "launch-after-steer" else np.zeros(len(rows), dtype=bool)
        collect_at = np.minimum(done, K - 1)
        ready = rows[np.arange(len(rows)), self.ress0 + collect_at] == 1
        out = [
            self._model_call(rows, np.flatnonzero(phase == CODE[MODEL]), position),
            self._skip(rows, np.flatnonzero(can_launch & steered), position),
            self._launch(rows, np.flatnonzero(can_launch & ~steered), position),
            self._collect(rows, np.flatnonzero(launching & ~can_launch & (done < nl) & ready), position),
            self._deliver(rows, np.flatnonzero(launching & ~can_launch & (done >= nl)), position, CLEAR),
            self._clear(rows, np.flatnonzero(phase == CODE[CLEAR]), position),
            self._deliver(rows, np.flatnonzero((phase == CODE[IDLE]) & (qlen > 0)), position, MODEL),
        ]
        return out

    def _model_call(self, rows: np.ndarray, src: np.ndarray, position: np.ndarray) -> StepBatch:
        c, K = self.col, self.model.K
        t = rows[src].copy()
        t[:, c["phase"]] = CODE[LAUNCH]
        for name in ("i", "c", "nl", "intr"):
            t[:, c[name]] = 0
        codes = [self.code["turn-started"], *(self.code["requested"] + j for j in range(K))]
        facts = np.tile(np.array(codes, dtype=np.int64), (len(src), 1))
        return self._batch(src, position, "agent", "agent.model_call", t, facts)

    def _skip(self, rows: np.ndarray, src: np.ndarray, position: np.ndarray) -> StepBatch:
        c, K = self.col, self.model.K
        t = rows[src].copy()
        t[:, c["i"]] = K
        t[:, c["intr"]] = 1
        unlaunched = np.arange(K)[None, :] >= t[:, c["nl"]][:, None]
        if self.model.bug == "no-skip-result":
            facts = np.zeros((len(src), 0), dtype=np.int64)
        else:
            t[:, self.nres0: self.calls0] += unlaunched.astype(t.dtype)
            facts = np.where(unlaunched, self.code["skipped"] + np.arange(K)[None, :], -1)
        return self._batch(src, position, "agent", "agent.skip", t, facts)

    def _launch(self, rows: np.ndarray, src: np.ndarray, position: np.ndarray) -> StepBatch:
        c = self.col
        t = rows[src].copy()
        call = t[:, c["i"]].astype(np.int64)
        t[np.arange(len(src)), self.calls0 + call] = 1
        t[:, c["i"]] += 1
        t[:, c["nl"]] += 1
        broken = {"steer-before-launch": rows[src, c["qlen"]] > 0}
        facts = (self.code["started"] + call)[:, None]
        return self._batch(src, position, "agent", "agent.launch", t, facts, broken)

    def _collect(self, rows: np.ndarray, src: np.ndarray, position: np.ndarray) -> StepBatch:
        c = self.col
        t = rows[src].copy()
        call = t[:, c["c"]].astype(np.int64)
        every = np.arange(len(src))
        t[every, self.nres0 + call] += 1
        t[every, self.ress0 + call] = 0
        t[:, c["c"]] += 1
        return self._batch(src, position, "agent", "agent.collect", t, (self.code["collected"] + call)[:, None])

    def _deliver(self, rows: np.ndarray, src: np.ndarray, position: np.ndarray, phase: str) -> StepBatch:
        """`agent.deliver` (to CLEAR: the queue is read into the history, and removed at the clear) and
        `agent.wake` (to MODEL: read and removed at once)."""
        c, Q = self.col, self.model.Q
        t = rows[src].copy()
        broken = {"results-recorded": (t[:, self.nres0: self.calls0] != 1).any(axis=1)} if phase == CLEAR else {}
        qlen = t[:, c["qlen"]].astype(np.int64)
        hlen = t[:, c["hlen"]].astype(np.int64)
        queued = t[:, self.q0: self.h0].astype(np.int64)
        present = np.arange(Q)[None, :] < qlen[:, None]
        for k in range(Q):
            has = np.flatnonzero(present[:, k])
            t[has, self.h0 + hlen[has] + k] = queued[has, k]
        t[:, c["hlen"]] += qlen.astype(t.dtype)
        t[:, c["phase"]] = CODE[phase]
        if phase == CLEAR:
            t[:, c["pend"]] = qlen
            t[:, self.nres0: self.calls0] = 0
        else:
            t[:, self.q0: self.h0] = 0
            t[:, c["qlen"]] = 0
        pairs = np.stack([self.code["applied"] + queued - 1, self.code["appended"] + queued - 1], axis=2)
        facts = np.where(present[:, :, None], pairs, -1).reshape(len(src), 2 * Q)
        kind = "agent.deliver" if phase == CLEAR else "agent.wake"
        return self._batch(src, position, "agent", kind, t, facts, broken)

    def _clear(self, rows: np.ndarray, src: np.ndarray, position: np.ndarray) -> StepBatch:
        c, Q = self.col, self.model.Q
        t = rows[src].copy()
        pend = t[:, c["pend"]].astype(np.int64)
        qlen = t[:, c["qlen"]].astype(np.int64)
        intr = t[:, c["intr"]] == 1
        lost = ~intr if self.model.bug == "lost-at-boundary" else np.zeros(len(src), dtype=bool)
        padded = np.hstack([t[:, self.q0: self.h0], np.zeros((len(src), Q), dtype=t.dtype)])
        shifted = padded[np.arange(len(src))[:, None], pend[:, None] + np.arange(Q)[None, :]]
        t[:, self.q0: self.h0] = np.where(lost[:, None], 0, shifted)
        t[:, c["qlen"]] = np.where(lost, 0, qlen - pend)
        t[:, c["phase"]] = np.where(pend > 0, CODE[MODEL], CODE[IDLE])
        broken = {"delivered-steers-called": (pend > 0) & (t[:, c["phase"]] != CODE[MODEL])}
        t[:, c["pend"]] = 0
        steered = intr | (pend > 0) if self.model.bug == "completed-turn-reported-steered" else intr
        ended = np.where(steered, self.code["steered"], self.code["completed"])
        if self.model.bug == "turn-left-open":
            ended = np.where(pend > 0, -1, ended)
        return self._batch(src, position, "agent", "agent.clear", t, ended[:, None], broken)
