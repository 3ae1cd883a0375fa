"""`check --workers N` and `check --dask`: the partitioned search gives one process's report (verdicts,
counts, counterexamples, coverage, notes), but for seconds; what it cannot honour is refused in one line."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import socket
import warnings
from pathlib import Path

import numpy as np
import pytest

from steersim import Action, CheckOptions, Eventually, ModelBase, check
from steersim.checking import transfer
from steersim.checking.ownership import WHOLE
from steersim.checking.partition import KEY_BITS, SOURCES_BETWEEN_CHECKS, Asked, Budget, Partition, Settle
from steersim.cli import main
from steersim.core.product import Product
from steersim.core.registry import get_model_spec
from steersim.errors import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION
from steersim.report.formats import check_json
from tests.test_explorer_judging import Grid
from tests.test_reduction import PoolModel


def report(tmp_path: Path, *args: str) -> tuple[int, dict]:
    """The exit code and the JSON report of `steersim check ARGS`, without its seconds (nor its readings')."""
    out = tmp_path / "report.json"
    code = main(["check", *args, "--quiet", "--json", str(out)])
    data = json.loads(out.read_text())
    for checked in (data, *data.get("readings", ())):
        checked.pop("seconds")
    return code, data


def violated(data: dict, kind: str) -> list[str]:
    return [p["name"] for p in data["properties"] if p["kind"] == kind and p["status"] == "violated"]


@pytest.mark.parametrize(("model", "workers"), [("teaching", "2"), ("teaching", "3"), ("openai-ws", "2"),
                                               ("foundry", "2"), ("openclaw", "2"), ("openclaw", "3")])
def test_workers_give_the_report_of_one_process_for_every_model(tmp_path: Path, model: str, workers: str) -> None:
    one = report(tmp_path, model, "--workers", "1")
    assert one[0] == EXIT_OK and one[1]["states"] > 100
    assert report(tmp_path, model, "--workers", workers) == one


@pytest.mark.parametrize(("args", "workers"), [
    (["teaching", "--bug", "lost-at-boundary", "--keep-going"], "2"),
    (["teaching", "--bug", "lost-at-boundary", "--keep-going"], "3"),
    (["teaching", "--bug", "turn-left-open"], "3"),
    (["openai-ws", "-p", "steers=2", "--bug", "interrupt-hosted-tool", "--keep-going"], "2"),
    (["openai-ws", "--bug", "reorder-steers"], "2"),
    (["foundry", "-p", "callers=3", "--bug", "raise-ends-chain", "--keep-going"], "2"),
    (["openclaw", "--bug", "overlapping-runs", "--keep-going"], "2"),
    (["openclaw", "--bug", "no-debounce"], "3"),
])
def test_workers_give_the_counterexamples_of_one_process_for_bug_variants(tmp_path: Path, args: list[str],
                                                                          workers: str) -> None:
    one = report(tmp_path, *args)
    assert one[0] == EXIT_VIOLATION
    if "--keep-going" in args:  # kept going: a counterexample of the liveness analysis is compared too
        assert violated(one[1], "eventually")
    assert report(tmp_path, *args, "--workers", workers) == one


class Ring(ModelBase):
    """A token goes round three places, one place on (ring:a) or two (ring:b), both fair; a fair server
    may serve only at place 0, so weak fairness does not make it serve: the lasso is a fair cycle that
    takes an edge of each mover."""

    name = "ring"
    fair_actors = ("ring:*", "server")

    def init_states(self):
        return [(0, False)]

    def actions(self, state):
        moves = [Action("ring:a", "ring.move"), Action("ring:b", "ring.move")]
        return moves + [Action("server", "server.serve")] if state == (0, False) else moves

    def step(self, state, action):
        if action.kind == "server.serve":
            return (state[0], True), ()
        return ((state[0] + (1 if action.actor == "ring:a" else 2)) % 3, state[1]), ()

    def properties(self):
        return [Eventually("served", goal=lambda state: state[1])]


def test_workers_give_the_fair_cycle_of_one_process() -> None:
    one = check(Ring())
    lasso = next(p for p in one.properties if p.name == "served").counterexample
    assert lasso.loop_start is not None and {"ring:a", "ring:b"} <= {a.actor for a in lasso.actions}
    for workers in (2, 3):
        assert check_json(check(Ring(), workers=workers), {}, None) | {"seconds": 0} == \
            check_json(one, {}, None) | {"seconds": 0}


@pytest.mark.parametrize("flags", [
    ["--max-states", "1"], ["--max-states", "100"], ["--max-states", "333"], ["--max-depth", "0"],
    ["--max-depth", "6"], ["--liveness-limit", "100"], ["--no-liveness"],
    ["--bug", "lost-at-boundary", "--max-states", "150", "--keep-going"],
    ["--bug", "no-skip-result", "--max-depth", "7", "--keep-going"],
])
def test_workers_stop_where_one_process_stops(tmp_path: Path, flags: list[str]) -> None:
    one = report(tmp_path, "teaching", "--engine", "generic", *flags)
    assert report(tmp_path, "teaching", "--workers", "2", *flags) == one


def test_workers_keep_symmetry_reduction() -> None:
    for model in (PoolModel(4), PoolModel(3, bad_total=4)):
        one = check(model, CheckOptions(symmetry=True, keep_going=True))
        two = check(model, CheckOptions(symmetry=True, keep_going=True), workers=2)
        assert one.states < check(model, CheckOptions(keep_going=True)).states  # the reduction was on
        assert check_json(two, {}, None) | {"seconds": 0} == check_json(one, {}, None) | {"seconds": 0}


@pytest.mark.parametrize(("flags", "named"), [
    (["--por"], "--por"), (["--checkpoint", "CKPT"], "--checkpoint"), (["--engine", "vector"], "--engine vector"),
    (["--strategy", "dfs"], "--strategy dfs"), (["--resume", "CKPT"], "--resume")])
@pytest.mark.parametrize("parallel", [["--workers", "2"], ["--dask", "tcp://127.0.0.1:9"]])
def test_what_a_parallel_check_cannot_honour_is_refused_before_it_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture, flags: list[str], named: str, parallel: list[str]) -> None:
    flags = [str(tmp_path / "c.ckpt") if f == "CKPT" else f for f in flags]
    # an unknown model: the refusal comes while the arguments are read, before anything is built
    assert main(["check", "no-such-model", "--quiet", *parallel, *flags]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err and " ".join(parallel) in err and "Traceback" not in err
    assert not (tmp_path / "c.ckpt").exists()


def test_the_api_refuses_as_the_command_line_does() -> None:
    from steersim.errors import UsageError

    model = get_model_spec("teaching").build({}, None)
    with pytest.raises(UsageError, match="--por cannot be used with --workers 2"):
        check(model, CheckOptions(por=True), workers=2)
    with pytest.raises(UsageError, match="needs the model by reference"):
        check(model, CheckOptions(), dask="local")


def test_a_worker_stops_within_a_level_past_its_share_of_the_time_or_memory() -> None:
    model = get_model_spec("teaching").build({}, None)
    init = Product(model).init_states()[0]
    count = SOURCES_BETWEEN_CHECKS + 10  # one state under many indices: a wide level

    def level(budget: Budget) -> dict:
        batch = Settle(initial=[(index, init) for index in range(count)], judge=False)
        return Partition(model, 0, 1, False).settle_and_expand(batch, "expand", budget)

    assert "stopped" not in level(Budget()) and len(level(Budget())["keys"]) > count
    assert level(Budget(memory_mb=-1.0))["stopped"] == "memory"  # no room at all
    assert level(Budget(seconds=0.0))["stopped"] == "time"


def test_a_worker_knows_a_target_by_its_symmetry_representative() -> None:
    model = PoolModel(3)
    init = Product(model).init_states()[0]
    rows = Partition(model, 0, 1, True).settle_and_expand(Settle(initial=[(0, init)], judge=False), "expand",
                                                         Budget())
    # three workers' first steps, one class: one code, the next after the initial state's
    assert set(rows["refs"].tolist()) == {1} and len(rows["refs"]) == 3


def test_a_state_met_once_keeps_its_code_and_crosses_only_the_first_time() -> None:
    """Two partitions: a target owned by the other one leaves packed the first time it is met, and
    keeps the code it got then: a transition to it later is that code, and nothing leaves for it."""
    model = PoolModel(3)
    product = Product(model)
    init = product.init_states()[0]
    targets = [move.target for move in product.moves(init)]
    elsewhere = [t for t in targets if WHOLE.owners([t], 2)[0] == 1]
    assert elsewhere, "the pool's first steps all land in partition 0: choose another model"
    me = Partition(model, 0, 2, False)
    first = me.settle_and_expand(Settle(initial=[(0, init)], judge=False), "expand", Budget())
    assert first["base"] == 1 and first["refs"].tolist() == list(range(1, len(targets) + 1))
    asked = first["asked"][1]
    assert len(asked.numbers) == len(elsewhere)
    answer = me.admit([])  # the targets partition 0 owns are new to it, under the codes they got
    assert sorted(answer["new_codes"].tolist()) == sorted(
        {1 + n for n in range(len(targets))} - {1 + n for n in asked.numbers.tolist()})
    assert answer["codes"] == 1 + len(targets)
    admitted = np.arange(1, len(answer["firsts"]) + 1, dtype=np.int64)
    again = me.settle_and_expand(Settle(admitted, initial=[(99, init)], judge=False), "expand", Budget())
    from_init = (again["keys"] >> KEY_BITS) == 99  # the admitted states are expanded too
    assert again["refs"][from_init].tolist() == first["refs"].tolist()
    shipped = [state for asked in again["asked"].values() for state in pickle.loads(asked.blob)]
    assert not set(shipped) & set(targets)


def test_an_owner_answers_a_target_asked_twice_with_one_code_and_the_earlier_first_key() -> None:
    """Two workers meet the same new state in one level: its owner makes it one new state, under one
    code, reached first by the smaller of the two first keys, and answers both askers with that code."""
    model = PoolModel(3)
    init = Product(model).init_states()[0]
    target = Product(model).moves(init)[0].target
    owner = Partition(model, 0, 2, False)
    blob = transfer.dumps([target])
    late = Asked(np.array([0]), np.array([(7 << KEY_BITS) | 2]), blob)
    early = Asked(np.array([0]), np.array([(5 << KEY_BITS) | 1]), blob)
    answer = owner.admit([late, early])
    assert answer["firsts"].tolist() == [(5 << KEY_BITS) | 1] and answer["new_codes"].tolist() == [0]
    assert [theirs.tolist() for theirs in answer["theirs"]] == [[0], [0]] and answer["codes"] == 1
    assert owner.new_states == [target]


# ---------------------------------------------------------------- Dask
@pytest.fixture(scope="module")
def scheduler():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.mark.parametrize(("args"), [["teaching", "-p", "K=3", "-p", "N=2"],
                                    ["teaching", "--bug", "lost-at-boundary", "--keep-going", "--workers", "3"]])
def test_a_dask_cluster_gives_the_report_of_one_process(tmp_path: Path, scheduler: str, args: list[str]) -> None:
    one = report(tmp_path, *[a for a in args if a not in ("--workers", "3")])
    assert report(tmp_path, *args, "--dask", scheduler) == one  # --workers 3: three partitions on two workers


def test_check_dask_local_builds_a_model_file_from_its_reference_on_its_own_cluster(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("dask.distributed")
    from tests.test_authoring import readme_model

    (tmp_path / "drop_oldest.py").write_text(readme_model())
    monkeypatch.chdir(tmp_path)  # a model file is named relative to where the command (and its cluster) runs
    args = ["drop_oldest.py:SPEC", "--bug", "silent-drop", "--keep-going"]
    one = report(tmp_path, *args)
    assert one[0] == EXIT_VIOLATION
    assert report(tmp_path, *args, "--dask", "local") == one


def test_check_dask_local_serves_its_http_pages_on_a_free_port() -> None:
    """A local cluster's scheduler serves health and metrics pages over HTTP even without its dashboard,
    by default on 8787: with that port taken (a dashboard of the user's, or this module's cluster),
    distributed would print a warning of several lines about it."""
    pytest.importorskip("dask.distributed")
    with socket.socket() as taken:
        with contextlib.suppress(OSError):  # taken already: the case this is about, as well
            taken.bind(("127.0.0.1", 8787))
            taken.listen()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert main(["check", "teaching", "-p", "K=2", "-p", "N=1", "--quiet", "--dask", "local"]) == EXIT_OK
    assert [str(w.message) for w in caught if "in use" in str(w.message)] == []


def test_a_model_error_on_a_worker_is_the_one_process_error_with_its_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from tests.test_authoring import CRASH, readme_model, variant

    (tmp_path / "crash.py").write_text(variant(readme_model(), *CRASH))
    monkeypatch.chdir(tmp_path)
    errors = []
    for workers in ("1", "2", "3"):
        assert main(["check", "crash.py:SPEC", "--quiet", "--workers", workers]) == EXIT_USAGE
        errors.append(capsys.readouterr().err)
    assert "model error: KeyError: 'boom'" in errors[0] and "path to it" in errors[0]
    assert errors[1] == errors[0] and errors[2] == errors[0]


class Vanishing(PoolModel):
    """A model whose step ends the process it runs in, once the search is past the initial state."""

    def next_state(self, s, a):
        if sum(s.work):
            os._exit(1)
        return super().next_state(s, a)


def test_a_worker_that_dies_ends_the_check_instead_of_hanging_it() -> None:
    from steersim.checking.workers import WorkerFailure

    with pytest.raises(WorkerFailure, match="ended unexpectedly"):
        check(Vanishing(3), workers=2)


def test_a_worker_that_cannot_build_its_partition_ends_the_check_instead_of_hanging_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from steersim.checking.workers import WorkerFailure

    def broken(self: Partition, *args: object) -> None:
        raise RuntimeError("no partition here")

    monkeypatch.setattr(Partition, "__init__", broken)  # the forked workers inherit it
    with pytest.raises(WorkerFailure, match=r"could not start(.|\n)*no partition here"):
        check(PoolModel(3), workers=2)


@pytest.mark.parametrize("bad", [frozenset({(2, 3)}), frozenset({(1, 1), (4, 0), (0, 5)}), frozenset({(0, 0)})])
def test_workers_judge_each_new_state_once_with_the_verdicts_of_one_process(bad: frozenset) -> None:
    """The owner judges a new state by the state properties when it admits it; the violation is the one
    process's, at the state the first step reaches, and stops the search after that step's source."""
    for keep_going in (False, True):
        options = CheckOptions(keep_going=keep_going)
        one = check_json(check(Grid(bad=bad), options), {}, None) | {"seconds": 0}
        assert one["status"] == "violation"
        for workers in (2, 3):
            assert check_json(check(Grid(bad=bad), options, workers=workers), {}, None) | {"seconds": 0} == one


class Raising(Grid):
    """A grid whose state property raises at one cell: a model error while a new state is judged."""

    def off_bad(self, s) -> bool:
        if s == (2, 1):
            raise KeyError("boom")
        return True


def test_a_state_property_that_raises_on_a_worker_is_the_one_process_error() -> None:
    from steersim.errors import ModelError

    messages = []
    for workers in (1, 2, 3):
        with pytest.raises(ModelError) as raised:
            check(Raising(), workers=workers)
        messages.append(str(raised.value))
    assert "boom" in messages[0] and messages[1] == messages[0] and messages[2] == messages[0]
