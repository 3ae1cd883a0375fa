"""A run resolves its parameters once and builds its model once per process: the sweep, its in-process
worker, the traces it records and the estimate of a setting all share what the command resolved."""

from __future__ import annotations

from collections import Counter

import pytest

from steersim.cli import main
from steersim.core.registry import ModelSpec
from steersim.errors import EXIT_OK, EXIT_VIOLATION, UsageError
from steersim.models.teaching import SPEC as TEACHING
from steersim.simulate.executors import built_model


@pytest.fixture
def calls(monkeypatch):
    """How often any spec resolved parameters and built a model (every build goes through
    `build_resolved`), from a process that has built nothing yet."""
    built_model.cache_clear()
    counted: Counter[str] = Counter()
    resolve, build = ModelSpec.resolve, ModelSpec.build_resolved

    def counting_resolve(self, *args, **kwargs):
        counted["resolve"] += 1
        return resolve(self, *args, **kwargs)

    def counting_build(self, *args, **kwargs):
        counted["build"] += 1
        return build(self, *args, **kwargs)

    monkeypatch.setattr(ModelSpec, "resolve", counting_resolve)
    monkeypatch.setattr(ModelSpec, "build_resolved", counting_build)
    return counted


def test_simulate_resolves_once_and_builds_once(calls, tmp_path, capsys):
    code = main(["simulate", "teaching", "-p", "K=1", "--bug", "lost-at-boundary", "--seeds", "0..300",
                 "--out", str(tmp_path / "out"), "--traces", str(tmp_path / "traces"), "--quiet"])
    assert code in (EXIT_OK, EXIT_VIOLATION), capsys.readouterr()
    assert calls == {"resolve": 1, "build": 1}


def test_estimate_of_one_setting_resolves_once_and_builds_once(calls, capsys):
    assert main(["estimate", "teaching", "--runs", "50"]) == EXIT_OK, capsys.readouterr()
    assert calls == {"resolve": 1, "build": 1}


def test_a_build_from_resolved_parameters_refuses_what_was_not_resolved():
    resolved = TEACHING.resolve({"K": 1})
    assert TEACHING.build_resolved(resolved).init_states() == TEACHING.build({"K": 1}).init_states()
    with pytest.raises(ValueError, match="build_resolved takes the parameters resolve"):
        TEACHING.build_resolved({"K": 1})
    with pytest.raises(UsageError, match="has no bug variant 'nosuch'"):
        TEACHING.build_resolved(resolved, "nosuch")
    with pytest.raises(UsageError, match="has no bug variant 'nosuch'"):
        TEACHING.resolve({}, "nosuch")
