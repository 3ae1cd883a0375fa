"""Exhaustive checking: the generic, vector and parallel engines, the choice among them
(`engines.check`), and what they share: stores, reductions, liveness, checkpoints, the graph export."""
