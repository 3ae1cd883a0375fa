"""`steersim audit`: the same seeds in two fresh processes with different PYTHONHASHSEED values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.simulate.audit import compare

UNORDERED_MODEL = '''
from dataclasses import dataclass

from steersim.core.model import Action, Event
from steersim.core.registry import ModelSpec

NAMES = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")


@dataclass(frozen=True, slots=True)
class Done:
    names: tuple


class Unordered:
    """Offers its actions in the iteration order of a set of strings: salted per process."""

    name = "unordered"
    fair_actors = ("env",)

    def init_states(self):
        return [Done(())]

    def actions(self, state):
        return [Action("env", "env.do", (n,)) for n in set(NAMES) - set(state.names)]

    def next_state(self, state, action):
        return Done(state.names + action.args)

    def observe(self, state, action, next):
        return [Event("env", "env", "did", {"name": action.args[0]})]

    def facts(self, event):
        return []

    def properties(self):
        return []

    def default_timing(self):
        return {"default": {"dist": "constant", "value": 1.0}}


SPEC = ModelSpec("unordered", "a model that depends on string hashing", (), (), lambda params, bug: Unordered())
'''


def test_a_deterministic_model_is_identical(capsys: pytest.CaptureFixture) -> None:
    assert main(["audit", "teaching", "--bug", "lost-at-boundary", "--seeds", "0..19"]) == 0
    assert "identical: 20 runs identical under PYTHONHASHSEED 1 and 2" in capsys.readouterr().out


def test_a_model_that_depends_on_string_hashing_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "unordered_model.py").write_text(UNORDERED_MODEL)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.syspath_prepend(tmp_path)
    assert main(["audit", "unordered_model:SPEC", "--seeds", "0..2"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("differs: seed 0: step 0 (env: env.do) differs first in action:")
    assert "(PYTHONHASHSEED=1 vs 2)" in out


def test_compare_names_the_first_differing_step(tmp_path: Path) -> None:
    header = json.dumps({"steersim": 1})
    step = {"i": 0, "t": 1.0, "action": {"actor": "a", "kind": "k", "args": []}, "events": [], "facts": [],
            "state": "00"}
    for name, state in (("left", "00"), ("right", "ff")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "seed3.jsonl").write_text(f"{header}\n{json.dumps(step)}\n")
        (tmp_path / name / "seed4.jsonl").write_text(f"{header}\n{json.dumps({**step, 'state': state})}\n")
    assert compare(tmp_path / "left", tmp_path / "right", [3, 4]) == (
        'seed 4: step 0 (a: k) differs first in state: "00" vs "ff"')
    assert compare(tmp_path / "left", tmp_path / "left", [3, 4]) is None


def test_an_unknown_model_is_a_usage_error(capsys: pytest.CaptureFixture) -> None:
    assert main(["audit", "no_such_module:SPEC"]) == 2
    assert "cannot load model" in capsys.readouterr().err
