"""Action coverage: every check counts the transitions of each action kind and names the declared
kinds that never fired; `--require-coverage` fails on them. Both engines, and several workers, count
the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steersim.checking.coverage import coverage_of
from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.cli import main
from steersim.core.registry import get_model_spec
from steersim.errors import EXIT_OK, EXIT_VIOLATION
from tests.test_authoring import readme_model, variant

DECLARED = '''    name = "drop-oldest"
    fair_actors = ("agent",)
    action_kinds = ("user.steer", "agent.start", "agent.run_tool", "agent.collect", "agent.apply", "agent.end",
                    "agent.retry")
'''


@pytest.fixture
def declared_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The README's model declaring its kinds, and one more (`agent.retry`) that no state enables."""
    source = variant(readme_model(), '    name = "drop-oldest"\n    fair_actors = ("agent",)\n', DECLARED)
    (tmp_path / "declared.py").write_text(source)
    (tmp_path / "undeclared.py").write_text(readme_model())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_declared_kind_that_never_fires_is_named_and_fails_require_coverage(declared_dir: Path, capsys) -> None:
    assert main(["check", "declared.py:SPEC", "--quiet", "--json", "c.json"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "coverage: never fired at these parameters: agent.retry" in out
    coverage = json.loads(Path("c.json").read_text())["coverage"]
    assert coverage["unfired"] == ["agent.retry"] and coverage["actions"]["agent.retry"] == 0
    assert all(count > 0 for kind, count in coverage["actions"].items() if kind != "agent.retry")
    assert main(["check", "declared.py:SPEC", "--quiet", "--require-coverage"]) == EXIT_VIOLATION
    assert "action kind agent.retry never fired" in capsys.readouterr().out


def test_a_model_that_declares_no_kinds_lists_those_seen_and_passes_require_coverage(declared_dir: Path,
                                                                                      capsys) -> None:
    assert main(["check", "undeclared.py:SPEC", "--quiet", "--require-coverage", "--json", "c.json"]) == EXIT_OK
    coverage = json.loads(Path("c.json").read_text())["coverage"]
    assert coverage["declared"] is False and coverage["unfired"] == []
    assert sorted(coverage["actions"]) == ["agent.apply", "agent.collect", "agent.end", "agent.run_tool",
                                           "agent.start", "user.steer"]
    assert "declares no action_kinds" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "params"), [
    ("teaching", {}), ("openai-ws", {}), ("openai-ws", {"followups": 1}), ("foundry", {}), ("openclaw", {}),
    ("codex", {}), ("langgraph", {}), ("pydantic-ai", {}), ("pydantic-ai", {"reprioritise": True})])
def test_the_built_in_models_declare_every_kind_they_fire(name: str, params: dict) -> None:
    """At the defaults, and where a parameter enables a kind the defaults never fire."""
    spec = get_model_spec(name)
    result = check(spec.build(spec.resolve(params, None), None), CheckOptions(keep_going=True))
    assert result.coverage.declared and not result.coverage.undeclared, (name, params)
    assert sum(count for _, count in result.coverage.fired) == result.transitions, name


def test_the_vector_engine_and_workers_count_as_the_generic_engine() -> None:
    model = get_model_spec("teaching").build({"K": 2, "N": 2, "P": 1}, None)
    generic = check(model, CheckOptions(engine="generic"))
    assert check(model, CheckOptions(engine="vector")).coverage == generic.coverage
    assert check(model, CheckOptions(), workers=2).coverage == generic.coverage
    assert generic.coverage.unfired == ()


def test_counts_follow_the_declaration_order_and_put_undeclared_kinds_last_by_name() -> None:
    coverage = coverage_of(("b", "a"), {"z": 1, "a": 2, "y": 3})
    assert coverage.fired == (("b", 0), ("a", 2), ("y", 3), ("z", 1))
    assert coverage.unfired == ("b",) and coverage.undeclared == ("y", "z")


NOT_ENABLED = DECLARED + '''
    def kinds_not_enabled(self):
        return {KIND: "retries=1"}
'''


@pytest.fixture
def not_enabled_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The README's model declaring `agent.retry` not enabled (rightly), and `agent.collect` (wrongly)."""
    for name, kind in (("right", "agent.retry"), ("wrong", "agent.collect")):
        source = variant(readme_model(), '    name = "drop-oldest"\n    fair_actors = ("agent",)\n',
                         NOT_ENABLED.replace("KIND", repr(kind)))
        (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_kind_its_parameters_do_not_enable_is_named_with_its_setting_and_passes(not_enabled_dir: Path,
                                                                                   capsys) -> None:
    assert main(["check", "right.py:SPEC", "--quiet", "--require-coverage", "--json", "c.json"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "coverage: not enabled by these parameters: agent.retry (enabled by retries=1)" in out
    assert "never fired" not in out
    coverage = json.loads(Path("c.json").read_text())["coverage"]
    assert coverage["unfired"] == [] and coverage["not_enabled"] == {"agent.retry": "retries=1"}


def test_a_kind_declared_not_enabled_that_fires_fails_require_coverage(not_enabled_dir: Path, capsys) -> None:
    assert main(["check", "wrong.py:SPEC", "--quiet", "--require-coverage"]) == EXIT_VIOLATION
    out = capsys.readouterr().out
    assert "fired although the model declares it not enabled by these parameters: agent.collect" in out
    assert "action kind agent.retry never fired" in out


def test_kinds_sharing_a_setting_share_a_line_and_undeclared_ones_are_refused() -> None:
    coverage = coverage_of(("a", "b", "c"), {"a": 1}, {"c": "x=1", "b": "x=1"})
    assert coverage.unfired == () and coverage.complete
    assert "coverage: not enabled by these parameters: b, c (enabled by x=1)" in coverage.lines()
    with pytest.raises(ValueError, match="does not declare in action_kinds: z"):
        coverage_of(("a",), {}, {"z": "x=1"})


@pytest.mark.parametrize("name", ["teaching", "openai-ws", "foundry", "openclaw", "codex",
                                  pytest.param("langgraph", marks=pytest.mark.slow), "pydantic-ai"])
def test_every_built_in_model_covers_its_enabled_kinds_at_the_defaults(name: str, capsys) -> None:
    assert main(["check", name, "--quiet", "--require-coverage"]) == EXIT_OK, capsys.readouterr().out


WITHOUT = {"foundry": {"shutdowns": 0}, "codex": {"bad_steers": False}}  # defaults that enable the kinds already


@pytest.mark.parametrize(("name", "params"), [
    ("foundry", {"shutdowns": 1}), ("openclaw", {"mode": "followup", "layer": "agent"}),
    ("openclaw", {"mode": "interrupt"}),
    ("openclaw", {"tool_execution": "sequential", "compaction": True, "end_listener_window": True, "mode": "collect"}),
    pytest.param("openai-ws", {"followups": 1, "response_failures": True}, marks=pytest.mark.slow),
    pytest.param("openai-ws", {"followups": 2}, marks=pytest.mark.slow),
    pytest.param("codex", {"bad_steers": True}, marks=pytest.mark.slow)])
def test_the_setting_a_model_names_does_enable_the_kind(name: str, params: dict) -> None:
    """What `check` says enables a kind does: with that setting, each kind it frees fires (against the
    model without it, where its defaults have it already)."""
    spec = get_model_spec(name)
    plain = spec.build(spec.resolve(WITHOUT.get(name, {}), None), None)
    model = spec.build(spec.resolve(params, None), None)
    result = check(model, CheckOptions(keep_going=True))
    fired = dict(result.coverage.fired)
    freed = [kind for kind in plain.kinds_not_enabled() if kind not in model.kinds_not_enabled()]
    assert freed and all(fired[kind] > 0 for kind in freed), (freed, fired)
    assert not result.coverage.wrongly_not_enabled


def test_the_html_report_says_which_setting_enables_a_kind_left_out() -> None:
    from steersim.report.html import report_html

    spec = get_model_spec("codex")
    page, _ = report_html(spec, spec.resolve({"bad_steers": False}, None), None)
    assert "not enabled by these parameters (enabled by bad_steers=true)" in page
    assert "never fired" not in page
