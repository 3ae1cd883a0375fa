"""A model of one's own: the example file of the how-to "Model your own system", outside any package,
run by path through every command; the facts checked as they are emitted; model errors with their path;
bad references."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.core.registry import Bug, ModelSpec, Param, get_model_spec
from steersim.errors import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, ModelError
from steersim.integrations.pytest_plugin import assert_properties
from steersim.traces.trace import read_trace

ROOT = Path(__file__).resolve().parents[1]


def readme_model() -> str:
    """The minimal complete model file of the how-to "Model your own system" (once in the README, now
    docs/howto/drop_oldest.py, which the page includes as it is)."""
    return (ROOT / "docs" / "howto" / "drop_oldest.py").read_text()


@pytest.fixture
def model_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder outside any package holding the how-to's model, as the current directory."""
    (tmp_path / "drop_oldest.py").write_text(readme_model())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def variant(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


def check_json(tmp_path: Path, *args: str) -> tuple[int, dict[str, str]]:
    out = tmp_path / "check.json"
    code = main(["check", *args, "--quiet", "--json", str(out)])
    return code, {p["name"]: p["status"] for p in json.loads(out.read_text())["properties"]}


def test_the_readme_model_is_checked_by_path_and_each_bug_caught_by_the_property_it_names(model_dir: Path) -> None:
    code, statuses = check_json(model_dir, "drop_oldest.py:SPEC")
    assert code == EXIT_OK
    assert statuses["steer-applied-mid-turn"] == "reached" and statuses["queue-bounded"] == "holds"
    spec = get_model_spec("drop_oldest.py:SPEC")
    assert [b.name for b in spec.variants] == ["silent-drop", "newest-first"]
    for bug in spec.variants:
        code, statuses = check_json(model_dir, "drop_oldest.py:SPEC", "--bug", bug.name, "--keep-going")
        assert code == EXIT_VIOLATION
        assert statuses[bug.caught_by] == "violated", bug.name


def test_the_readme_model_simulates_with_two_workers_and_replays_and_draws_by_path(model_dir: Path) -> None:
    report = model_dir / "steersim.json"
    assert main(["simulate", "drop_oldest.py:SPEC", "--bug", "newest-first", "--seeds", "0..39", "--workers", "2",
                 "--out", "traces", "--json", str(report)]) == EXIT_VIOLATION
    first = json.loads(report.read_text())["first_counterexample"]
    trace_file = Path(first["trace"])
    assert trace_file.name == f"drop-oldest-newest-first-seed{first['seed']}.jsonl"
    assert read_trace(trace_file).model == "drop_oldest.py:SPEC"  # the reference, so the model is found again
    one = model_dir / "one.json"
    assert main(["simulate", "drop_oldest.py:SPEC", "--bug", "newest-first", "--seeds", "0..39",
                 "--out", "traces1", "--json", str(one)]) == EXIT_VIOLATION
    assert json.loads(one.read_text()) == {**json.loads(report.read_text()),
                                           "first_counterexample": {**first, "trace": str(Path("traces1") /
                                                                                          trace_file.name)}}
    assert main(["replay", str(trace_file)]) == EXIT_VIOLATION  # reproduced, and the violation shown again
    assert main(["diagram", str(trace_file), "-o", "run.svg"]) == EXIT_OK
    assert "<svg" in (model_dir / "run.svg").read_text()


def test_a_model_by_module_reference_in_the_pytest_plugin_ci_and_report(model_dir: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", [*sys.path])  # the current directory joins it only for this test
    package = model_dir / "mine"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "queues.py").write_text(readme_model())
    assert assert_properties("mine.queues:SPEC").status == "ok"
    with pytest.raises(AssertionError, match="violated: always no-lost-steers"):
        assert_properties("drop_oldest.py:SPEC", bug="silent-drop")
    (model_dir / "ci.toml").write_text('[[tool.steersim.check]]\nmodel = "drop_oldest.py:SPEC"\nexpect = "ok"\n'
                                       'bugs = "all"\n')
    assert main(["ci", "--config", "ci.toml"]) == EXIT_OK
    assert main(["report", "mine.queues:SPEC", "--bug", "newest-first", "-o", "page"]) == EXIT_VIOLATION
    assert "steersim report mine.queues:SPEC --bug newest-first" in (model_dir / "page" / "index.html").read_text()
    for name in ("mine.queues", "mine"):
        del sys.modules[name]


def test_an_edited_model_file_is_loaded_again(model_dir: Path) -> None:
    assert get_model_spec("drop_oldest.py:SPEC").doc.startswith("a bounded")
    source = variant(readme_model(), 'doc="a bounded', 'doc="an edited, bounded')
    (model_dir / "drop_oldest.py").write_text(source)
    assert get_model_spec("drop_oldest.py:SPEC").doc.startswith("an edited")


@pytest.mark.parametrize(("reference", "message"), [
    ("missing.py:SPEC", "model 'missing.py:SPEC': no file missing.py"),
    ("drop_oldest.py:NOPE", "model 'drop_oldest.py:NOPE': drop_oldest.py has no attribute 'NOPE'; it defines: SPEC"),
    ("drop_oldest.py:CHAIN", "model 'drop_oldest.py:CHAIN': CHAIN is a str, not a steersim.ModelSpec"),
    ("drop_oldest.py", "a model file needs the name of its spec, as in drop_oldest.py:SPEC"),
    ("no_such_package.module:SPEC", "cannot load model 'no_such_package.module:SPEC': no module 'no_such_package'"),
])
def test_a_bad_reference_is_one_line(model_dir: Path, capsys: pytest.CaptureFixture, reference: str,
                                     message: str) -> None:
    assert main(["check", reference]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_misspelled_fact_is_an_error_naming_the_action(model_dir: Path, capsys: pytest.CaptureFixture) -> None:
    (model_dir / "typo.py").write_text(variant(readme_model(), '"steer.submitted"', '"steer.submited"'))
    assert main(["check", "typo.py:SPEC"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "model error: user: user.steer(1) emitted event 'steer.submited', which is not a fact" in err
    assert "Traceback" not in err


def test_a_missing_fact_field_is_an_error_naming_the_action(model_dir: Path, capsys: pytest.CaptureFixture) -> None:
    (model_dir / "field.py").write_text(variant(readme_model(), '{"turn": turn, "status": "done"}', '{"turn": turn}'))
    assert main(["simulate", "field.py:SPEC", "--seeds", "0..3"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "model error: agent: agent.end() emitted event 'turn.ended' without field 'status'" in err
    assert "path to it from the initial state of simulated seed 0" in err


def test_a_fact_built_by_hand_with_fields_out_of_order_is_refused(model_dir: Path) -> None:
    source = variant(readme_model(), "    def properties(self):", '''    def facts(self, event):
        from steersim.core.facts import Fact
        if event.name == "steer.submitted":
            return [Fact("steer.submitted", (("target", CHAIN), ("id", event.data["id"])))]
        return super().facts(event)

    def properties(self):''')
    (model_dir / "order.py").write_text(source)
    with pytest.raises(ModelError, match=r"fact 'steer.submitted' with fields \(target, id\), but it takes "
                                         r"\(id, target\)"):
        assert_properties("order.py:SPEC")


CRASH = ('        if a.kind == "agent.collect":\n',
         '        if a.kind == "agent.collect":\n            if s.sent == 3:\n                {}["boom"]\n')


@pytest.mark.parametrize("command", [["check", "--quiet"], ["check", "--quiet", "--workers", "2"],
                                     ["simulate", "--seeds", "0..9"],
                                     ["simulate", "--seeds", "0..9", "--workers", "2"], ["audit", "--seeds", "0..3"]])
def test_an_exception_in_model_code_is_a_model_error_with_state_action_and_path(
        model_dir: Path, capsys: pytest.CaptureFixture, command: list[str]) -> None:
    (model_dir / "crash.py").write_text(variant(readme_model(), *CRASH))
    assert main([command[0], "crash.py:SPEC", *command[1:]]) == EXIT_USAGE
    err = capsys.readouterr().err
    headline = "model error: KeyError: 'boom' ("
    assert err.startswith("steersim: error: " + ("recording under PYTHONHASHSEED=1 failed: " if command[0] == "audit"
                                                 else "") + headline)
    assert "crash.py:" in err and ", in step)" in err
    assert "  at action: agent: agent.collect()\n  in state:  State(sent=3," in err
    steps = re.findall(r"^ +\d+\. (.*)$", err, re.M)  # the path replays to the state: three steers, a tool run
    assert steps.count("user: user.steer(3)") == 1 and "agent: agent.run_tool()" in steps
    if command[0] == "check":  # the shortest path runs the tool once; a simulated run may run it more often
        assert steps.count("agent: agent.run_tool()") == 1
    assert "Traceback" not in err


def test_bug_records_are_the_one_source_and_the_mappings_views_of_them() -> None:
    params = (Param("N", 1, "n"),)
    records = ModelSpec("m", "d", params, (Bug("a", "doc a", "no-lost-steers", {"N": 2}), Bug("b", "doc b")),
                        lambda p, bug: None)
    assert dict(records.bugs) == {"a": "doc a", "b": "doc b"}
    assert records.bug_catchers == {"a": "no-lost-steers"} and records.bug_params == {"a": {"N": 2}}
    assert [bug["name"] for bug in records.to_json()["bugs"]] == ["a", "b"]
    assert records.resolve({}, "a") == {"N": 2}
    with pytest.raises(ValueError, match="twice"):
        ModelSpec("m", "d", params, (Bug("a", "x"), Bug("a", "y")), lambda p, bug: None)
    with pytest.raises(ValueError, match="a sequence of Bug"):
        ModelSpec("m", "d", params, ["a"], lambda p, bug: None)


def test_optional_hooks_are_declared_on_the_base_and_found_on_a_model_of_the_old_protocol() -> None:
    from steersim.checking.reduction import has_local_actions, has_symmetry
    from steersim.core.model import Action, AdaptedModel, ModelBase

    class Plain(ModelBase):
        def init_states(self):
            return [0]

        def actions(self, state):
            return [Action("env", "env.tick")] if state < 2 else []

        def step(self, state, action):
            return state + 1, ()

    class Local(Plain):
        def is_local(self, action):
            return True

    assert Plain.name == "Plain" and Plain().fair_actors == () and Plain().facts is not None
    assert not has_local_actions(Plain()) and has_local_actions(Local()) and not has_symmetry(Local())
    teaching = get_model_spec("teaching").build()
    assert has_local_actions(teaching) and AdaptedModel(teaching).vector_kernel is not None
    assert assert_properties(ModelSpec("plain", "", (), (), Plain)).states == 3


def test_dask_workers_build_a_model_file_from_its_reference(model_dir: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    from steersim.simulate.executors import sweep

    params = get_model_spec("drop_oldest.py:SPEC").resolve({}, "newest-first")
    serial = sweep("drop_oldest.py:SPEC", params, "newest-first", range(60), out=model_dir / "serial")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        remote = sweep("drop_oldest.py:SPEC", params, "newest-first", range(60), out=model_dir / "dask",
                       dask=cluster.scheduler_address)
        (model_dir / "crash.py").write_text(variant(readme_model(), *CRASH))
        with pytest.raises(ModelError, match="KeyError: 'boom'") as raised:
            sweep("crash.py:SPEC", params, None, range(20), dask=cluster.scheduler_address)
    assert "path to it from the initial state of simulated seed" in str(raised.value)
    assert remote.violating_runs > 0
    assert [v.to_json() for v in remote.verdicts] == [v.to_json() for v in serial.verdicts]


def test_replaying_a_trace_against_a_model_that_now_raises_names_the_steps_reproduced(
        model_dir: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["simulate", "drop_oldest.py:SPEC", "--bug", "silent-drop", "--seeds", "0..9", "--out", "t"]) == 1
    trace_file = next((model_dir / "t").glob("*.jsonl"))
    steps = [step.action["kind"] for step in read_trace(trace_file).steps]
    assert "agent.start" in steps
    start = '        if a.kind in ("agent.start", "agent.apply"):\n'
    (model_dir / "drop_oldest.py").write_text(variant(readme_model(), start, '        if a.kind == "agent.start":\n'
                                                      '            {}["boom"]\n' + start))
    capsys.readouterr()
    assert main(["replay", str(trace_file)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "model error: KeyError: 'boom'" in err and "at action: agent: agent.start()" in err
    assert f"path to it from initial state 0 of the trace, {steps.index('agent.start')} steps:" in err
