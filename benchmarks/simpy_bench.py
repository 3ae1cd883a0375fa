"""Simulator speed: steersim's simulator against SimPy running the same teaching system.

Both run the teaching model's system (K calls per turn, at most P in flight, a queue of capacity Q, N
steers) for the same seeds with the same timing profile and the same per-kind delay streams
(`steersim.simulate.timing.Clocks`), and count the same steps: one per action that fires (a steer sent, an agent step,
a tool finishing). steersim also runs the four core monitors and the model's properties online on every
step; the SimPy program checks nothing. Prints one table; the ratio is steersim's steps per second over
SimPy's, measured side by side in one process.

    python benchmarks/simpy_bench.py [--seeds 2000] [--repeat 5]

Two configurations: the model's defaults (short runs of about 28 steps, where setting up each run's
per-kind random streams, the same for both, is much of the cost) and a long-run one with 15 steers.
Each engine's figure is its best of the repeats, which alternate between the two. One simulator serves
every repeat, as one serves every seed of a sweep, so its memo of states is cold only in the first
(about ten times slower at 15 steers, where it holds some 45,000 states).
"""

from __future__ import annotations

import argparse
import time

import simpy

from steersim.models.teaching import SPEC
from steersim.models.teaching.spec import DEFAULT_TIMING
from steersim.simulate.simulator import Simulator
from steersim.simulate.timing import Clocks, TimingProfile


def simpy_run(K: int, N: int, Q: int, P: int, clocks: Clocks) -> int:
    """The teaching system as an idiomatic SimPy program; returns the number of actions fired."""
    env = simpy.Environment()
    queue: list[int] = []
    history: list[int] = []
    count = [0]
    wake = [env.event()]

    def tick(kind: str):
        count[0] += 1
        return env.timeout(clocks.delay(kind))

    def user():
        for n in range(1, N + 1):
            yield tick("user.steer")
            if len(queue) < Q:
                queue.append(n)
                if not wake[0].triggered:
                    wake[0].succeed()

    def tool(done: simpy.Event):
        yield tick("tool.finish")
        done.succeed()

    def agent():
        while True:
            yield tick("agent.model_call")
            results: list[simpy.Event] = []
            i = c = 0
            while i < K or c < len(results):
                if i < K and len(results) - c < P:
                    yield tick("agent.launch")
                    if queue:
                        i = K  # skip the rest with synthetic results
                    else:
                        results.append(env.event())
                        env.process(tool(results[-1]))
                        i += 1
                else:
                    yield results[c]
                    yield tick("agent.collect")
                    c += 1
            yield tick("agent.deliver")
            pending = len(queue)
            history.extend(queue)
            yield tick("agent.clear")
            del queue[:pending]
            if pending:
                continue
            while not queue:
                wake[0] = env.event()
                yield wake[0]
            yield tick("agent.wake")
            history.extend(queue)
            queue.clear()

    env.process(user())
    env.process(agent())
    env.run()
    return count[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    profile = TimingProfile.from_mapping(DEFAULT_TIMING)
    print(f"{'configuration':<32} {'engine':<10} {'steps':>10} {'steps/s':>12}")
    for params in ({"K": 3, "N": 3, "Q": 2, "P": 3}, {"K": 3, "N": 15, "Q": 2, "P": 3}):
        simulator = Simulator(SPEC.build(params), profile)
        best = {"steersim": 0.0, "simpy": 0.0}
        steps = {"steersim": 0, "simpy": 0}
        for _ in range(args.repeat):
            start = time.perf_counter()
            steps["steersim"] = sum(simulator.run(seed).step_count for seed in range(args.seeds))
            best["steersim"] = max(best["steersim"], steps["steersim"] / (time.perf_counter() - start))
            start = time.perf_counter()
            steps["simpy"] = sum(simpy_run(**params, clocks=Clocks(profile, seed)) for seed in range(args.seeds))
            best["simpy"] = max(best["simpy"], steps["simpy"] / (time.perf_counter() - start))
        label = " ".join(f"{k}={v}" for k, v in params.items())
        for name in ("steersim", "simpy"):
            print(f"{label:<32} {name:<10} {steps[name]:>10,} {best[name]:>12,.0f}")
        print(f"{label:<32} ratio steersim/simpy: {best['steersim'] / best['simpy']:.2f}x "
              f"({args.seeds} seeds, best of {args.repeat})")


if __name__ == "__main__":
    main()
