"""Seed sweeps on other executors give the serial report, byte for byte; swarm testing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.errors import UsageError
from steersim.models.teaching import SPEC
from steersim.simulate.executors import (
    DaskExecutor,
    SwarmModel,
    SweepRecipe,
    chunk_seeds,
    environment_kinds,
    run_chunk,
    swarm_subset,
    sweep,
)
from steersim.simulate.sweep import run_sweep
from steersim.simulate.timing import TimingProfile
from steersim.traces.trace import read_trace, replay

PARAMS = SPEC.resolve({})
BUG = "lost-at-boundary"


def report_bytes(report) -> str:
    return json.dumps(report.to_json(), indent=2)


@pytest.fixture(scope="module")
def serial_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    out = tmp_path_factory.mktemp("serial")
    report = run_sweep("teaching", PARAMS, BUG, SPEC.build(PARAMS, BUG), range(1000), out=out)
    assert report.violating_runs > 0, "the bug variant should give counterexamples in 1,000 seeds"
    return report_bytes(report).replace(str(out), "OUT"), out


def test_chunks_cover_the_seeds_in_order() -> None:
    chunks = chunk_seeds(range(10, 1010), workers=2)
    assert 1 < len(chunks) < 1000
    assert [s for c in chunks for s in c] == list(range(10, 1010))
    assert [len(c) for c in chunk_seeds(range(7), 1, chunk_size=3)] == [3, 3, 1]


@pytest.mark.parametrize("executor", [{"workers": 2}, {"workers": 2, "chunk_size": 7}])
def test_process_pool_sweep_equals_serial(executor: dict, serial_report: tuple[str, Path], tmp_path: Path) -> None:
    expected, _ = serial_report
    report = sweep("teaching", PARAMS, BUG, range(1000), out=tmp_path, **executor)
    assert report_bytes(report).replace(str(tmp_path), "OUT") == expected


def test_sweep_on_a_running_dask_scheduler_equals_serial(serial_report: tuple[str, Path], tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    expected, _ = serial_report
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        report = sweep("teaching", PARAMS, BUG, range(1000), out=tmp_path, dask=cluster.scheduler_address)
    assert report_bytes(report).replace(str(tmp_path), "OUT") == expected


def test_cli_json_is_byte_identical_across_executors(tmp_path: Path) -> None:
    outputs = []
    for flags in ([], ["--workers", "2"]):
        target = tmp_path / f"report{len(outputs)}.json"
        code = main(["simulate", "teaching", "--bug", BUG, "--seeds", "0..299", "--out", str(tmp_path / "traces"),
                     "--json", str(target), *flags])
        assert code == 1
        outputs.append(target.read_bytes())
    assert outputs[0] == outputs[1]


def test_swarm_candidates_are_the_environment_kinds_only() -> None:
    assert environment_kinds(SPEC.build(PARAMS)) == ("user.steer",)


def test_swarm_subsets_depend_on_the_seed_only() -> None:
    kinds = ("fault.a", "fault.b", "user.steer")
    subsets = [swarm_subset(seed, kinds) for seed in range(64)]
    assert subsets == [swarm_subset(seed, kinds) for seed in range(64)]
    assert len(set(subsets)) > 4, "subsets should vary between seeds"
    assert swarm_subset(5, ("user.steer",)) == swarm_subset(5, kinds) & {"user.steer"}


def test_swarm_model_filters_disabled_kinds() -> None:
    model = SwarmModel(SPEC.build(PARAMS), frozenset({"user.steer"}))
    state = model.init_states()[0]
    assert [a.kind for a in model.actions(state)] == ["agent.model_call"]


def test_swarm_runs_the_same_on_every_executor_and_records_subsets(tmp_path: Path) -> None:
    serial = sweep("teaching", PARAMS, BUG, range(400), out=tmp_path, swarm=True)
    pooled = sweep("teaching", PARAMS, BUG, range(400), out=tmp_path, swarm=True, workers=2, chunk_size=33)
    assert report_bytes(serial) == report_bytes(pooled)
    subsets = serial.to_json()["swarm"]
    assert [row["seed"] for row in subsets] == list(range(400))
    silent = [row["seed"] for row in subsets if row["disabled"] == ["user.steer"]]
    assert 100 < len(silent) < 300
    by_seed = {v.seed: v for v in serial.verdicts}
    assert all(not by_seed[s].violations for s in silent), "with no steers the boundary bug cannot lose one"


def test_swarm_counterexample_trace_replays(tmp_path: Path) -> None:
    report = sweep("teaching", PARAMS, BUG, range(400), out=tmp_path, swarm=True)
    assert report.first_trace is not None and report.first_trace.endswith("-swarm.jsonl")
    trace = read_trace(report.first_trace)
    assert trace.seed == report.first_seed
    result = replay(trace)
    assert result.ok and result.violations


def recipe() -> SweepRecipe:
    return SweepRecipe.create("teaching", PARAMS, None, TimingProfile.from_mapping(SPEC.build(PARAMS).default_timing()))


def test_chunks_are_the_unit_of_work() -> None:
    verdicts, subsets = run_chunk(recipe(), range(5, 9))
    assert [v.seed for v in verdicts] == [5, 6, 7, 8] and subsets == []


def test_unreachable_dask_scheduler_is_a_usage_error() -> None:
    pytest.importorskip("dask.distributed")
    with pytest.raises(UsageError, match="cannot reach a Dask scheduler"):
        DaskExecutor(recipe(), "tcp://127.0.0.1:9", connect_timeout=1)


@pytest.mark.slow
def test_hundred_thousand_seeds_on_a_local_dask_cluster(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    report = sweep("teaching", PARAMS, None, range(100_000), out=tmp_path, dask="local")
    assert report.runs == 100_000
    assert report.status == "ok", report.summary_line()
    assert [v.seed for v in report.verdicts] == list(range(100_000))
