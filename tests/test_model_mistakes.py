"""A model author's mistakes are theirs: each kind, written into a tiny model file, ends in exit 2 and one
"model error: ..." that names the model file and the line of the author's code, the action and the path
of actions to it where a step is involved, on every engine that steps the model; never an internal error
that blames steersim, never counts silently changed."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from steersim.cli import main
from steersim.errors import EXIT_OK, EXIT_USAGE

BASE = '''"""A counter that a user bumps up to three, each bump a steer submitted and accepted."""

from dataclasses import dataclass, replace

from steersim import Action, Always, Bug, Event, Eventually, ModelBase, ModelSpec, Param, Sometimes


@dataclass(frozen=True)
class State:
    n: int = 0
    tag: str = "a"


class Counter(ModelBase):
    name = "counter"
    fair_actors = ("user",)
    action_kinds = ("user.bump",)

    def init_states(self):
        return [State()]

    def actions(self, s):
        return [Action("user", "user.bump", (s.n + 1,))] if s.n < 3 else []

    def step(self, s, a):
        nxt = replace(s, n=s.n + 1)
        sid = f"s{a.args[0]}"
        return nxt, [Event("user", "queue", "steer.submitted", {"id": sid, "target": "c"}),
                     Event("queue", "user", "steer.accepted", {"id": sid}),
                     Event("queue", "user", "steer.applied", {"id": sid, "turn": "t1"})]

    def properties(self):
        return [Always("small", state=lambda s: s.n <= 3, doc="n stays small"),
                Sometimes("three", state=lambda s: s.n == 3, doc="n reaches three")]


SPEC = ModelSpec(name="counter", doc="a counter", params=(Param("N", 1, "unused", low=0, high=3),),
                 bugs=(), factory=Counter)
'''

SECOND_BUMP = "user: user.bump(2)"  # the action of the second step, from the state after the first
FIRST_STEP = ["user: user.bump(1)"]  # the path to the state it is taken in


@dataclass(frozen=True)
class Mistake:
    """One kind of mistake: the edits that make it, the text of the line the message must point at, and
    the action and path it must name (None: no step is involved, so it names none)."""

    name: str
    edits: tuple[tuple[str, str], ...]
    line_of: str
    says: str
    action: str | None = None
    path: list[str] | None = None
    shortcut: bool = False  # in a hook a check may take in place of `step`; the simulator steps by `step`


def on_second_bump(new_state: str) -> tuple[str, str]:
    """An edit making the step from n=1 return `new_state` (text, reading `s` and `nxt`)."""
    return ("        return nxt, [", f"        if s.n == 1:\n            nxt = {new_state}\n        return nxt, [")


MISTAKES = [
    Mistake("state with a list field", (("    tag: str = \"a\"", "    tag: object = \"a\""),
                                        on_second_bump("replace(nxt, tag=[1])")),
            "    def step(", "not hashable", SECOND_BUMP, FIRST_STEP),
    Mistake("step returns a dict as the state", (on_second_bump("{'n': 2}"),),
            "    def step(", "not hashable", SECOND_BUMP, FIRST_STEP),
    Mistake("init state not hashable", (("return [State()]", "return [State(tag={})]"),),
            "    def init_states(", "init_states() returned a state that is not hashable"),
    Mistake("actions returns strings", (('return [Action("user", "user.bump", (s.n + 1,))]',
                                          'return ["bump"]'),),
            "    def actions(", "actions() returned 'bump', not an Action", None, []),
    Mistake("actions returns None", (('return [Action("user", "user.bump", (s.n + 1,))] if s.n < 3 else []',
                                       'return [Action("user", "user.bump", (s.n + 1,))] if s.n < 1 else None'),),
            "    def actions(", "actions() returned None", None, FIRST_STEP),
    Mistake("actions is a generator that raises", (('return [Action("user", "user.bump", (s.n + 1,))] if s.n < 3 '
                                                    'else []', 'yield Action("user", "user.bump", (s.n + 1,))\n'
                                                    '        raise LookupError("no more actions")'),),
            'raise LookupError("no more actions")', "actions() raised LookupError: no more actions", None, []),
    Mistake("action with unhashable args", (('(s.n + 1,))]', '([s.n + 1],))]'),),
            "    def actions(", "whose args are not hashable"),
    Mistake("step returns a bare state", (("        return nxt, [Event", "        if s.n == 1:\n"
                                           "            return nxt\n        return nxt, [Event"),),
            "    def step(", "it returns (next_state, events)", SECOND_BUMP, FIRST_STEP),
    Mistake("events that are not Events", (("return nxt, [Event(", "return nxt, [\"steer.submitted\", Event("),),
            "    def step(", "returned 'steer.submitted' among its events, not an Event", "user: user.bump(1)", []),
    Mistake("init_states returns nothing", (("return [State()]", "return []"),),
            "    def init_states(", "init_states() returned no states"),
    Mistake("init_states returns a non-iterable", (("return [State()]", "return State()"),),
            "    def init_states(", "init_states() returned State(n=0, tag='a'), which is not a list of states"),
    Mistake("step reads a random number", (on_second_bump("replace(nxt, tag=str(__import__('random').random()))"),),
            "    def step(", "step() is not deterministic: stepped twice, the next states differ", SECOND_BUMP,
            FIRST_STEP),
    Mistake("step puts a NaN in the state", (("    tag: str = \"a\"", "    tag: object = \"a\""),
                                             on_second_bump("replace(nxt, tag=float('nan'))")),
            "    def step(", "a NaN in them?", SECOND_BUMP, FIRST_STEP),
    Mistake("events differ from one step to the next", (('{"id": sid, "turn": "t1"}',
                                                          '{"id": sid, "turn": "t1"}) if __import__("random")'
                                                          '.random() < 2 else None, Event("user", "queue", '
                                                          '"steer.submitted", {"id": str(__import__("time")'
                                                          '.perf_counter_ns()), "target": "c"}'),),
            "    def step(", "stepped twice, event 4 differ", "user: user.bump(1)", []),
    Mistake("facts() raises", (("    def init_states(self):", "    def facts(self, event):\n"
                                "        raise RuntimeError(\"no facts today\")\n\n    def init_states(self):"),),
            'raise RuntimeError("no facts today")', "RuntimeError: no facts today", "user: user.bump(1)", []),
    Mistake("successor_facts drifts from step", (("    def init_states(self):",
                                                   "    def successor_facts(self, s):\n"
                                                   "        return [(a, replace(s, n=s.n + 2), ()) for a in "
                                                   "self.actions(s)]\n\n    def init_states(self):"),),
            "    def successor_facts(", "successor_facts() disagrees with step(): next state State(n=2",
            "user: user.bump(1)", [], shortcut=True),
    Mistake("step_facts leaves out the facts", (("    def init_states(self):",
                                                 "    def step_facts(self, s, a):\n"
                                                 "        return self.step(s, a)[0], ()\n\n"
                                                 "    def init_states(self):"),),
            "    def step_facts(", "step_facts() disagrees with step(): facts ()", "user: user.bump(1)", [],
            shortcut=True),
    Mistake("a property predicate raises", (("lambda s: s.n <= 3", "lambda s: s.m <= 3"),),
            "Always(\"small\"", "property 'small' raised AttributeError"),
    Mistake("a Sometimes raises", (("lambda s: s.n == 3", "lambda s: 1 / s.n > 0"),),
            "Sometimes(\"three\"", "property 'three' raised ZeroDivisionError", None, []),
    Mistake("an Eventually raises", (('Sometimes("three", state=lambda s: s.n == 3, doc="n reaches three")',
                                      'Eventually("three", goal=lambda s: s.n == 3, trigger=lambda s: s.n.x)'),),
            "Eventually(\"three\"", "property 'three' raised AttributeError"),
    Mistake("a duplicate property name", (('Sometimes("three"', 'Sometimes("small"'),),
            "    def properties(", "declares property names twice: small"),
    Mistake("a property named as a core invariant", (('Always("small"', 'Always("no-lost-steers"'),),
            "    def properties(", "declares property names twice: no-lost-steers"),
    Mistake("properties() returns a name", (('Always("small", state=lambda s: s.n <= 3, doc="n stays small")',
                                             '"small"'),),
            "    def properties(", "properties() returned 'small', which is not an Always"),
    Mistake("properties() raises", (("        return [Always(", "        assert self.params['N'] > 1\n"
                                     "        return [Always("),),
            "assert self.params", "properties() or monitors() raised AssertionError"),
    Mistake("fair_actors not strings", (('fair_actors = ("user",)', "fair_actors = (1,)"),),
            "class Counter", "fair_actors is (1,); it is a tuple of strings"),
    Mistake("action_kinds a bare string", (('action_kinds = ("user.bump",)', 'action_kinds = "user.bump"'),),
            "class Counter", "action_kinds is 'user.bump'; it is a tuple of strings"),
    Mistake("a Param default outside its bounds", (('Param("N", 1, "unused", low=0, high=3)',
                                                    'Param("N", 7, "unused", low=0, high=3)'),),
            "SPEC = ModelSpec(", "Param 'N' has default 7, which it refuses"),
    Mistake("a ModelSpec without a factory", ((", factory=Counter)", ")"),),
            "SPEC = ModelSpec(", "missing 1 required positional argument: 'factory'"),
    Mistake("render_state raises", (("    def init_states(self):", "    def render_state(self, s):\n"
                                     "        return s.label\n\n    def init_states(self):"),
                                    ("lambda s: s.n <= 3", "lambda s: s.n <= 2")),  # a counterexample to render
            "        return s.label", "render_state() raised AttributeError"),
    Mistake("a syntax error", (("    def init_states(self):", "    def init_states(self)"),),
            "    def init_states(self)", "SyntaxError"),
    Mistake("the model file raises at import", (("SPEC = ModelSpec(", "SETTINGS = {}['url']\nSPEC = ModelSpec("),),
            "SETTINGS = ", "KeyError: 'url'"),
]


def write(folder: Path, mistake: Mistake) -> tuple[Path, int]:
    """The model file with `mistake` made, and the number of the line its message must name. Each kind has
    a file name of its own: a process builds a model once per reference (`built_model`)."""
    source = BASE
    for old, new in mistake.edits:
        assert old in source, (mistake.name, old)
        source = source.replace(old, new, 1)
    path = folder / f"counter_{MISTAKES.index(mistake)}.py"
    path.write_text(source)
    return path, next(n for n, line in enumerate(source.splitlines(), 1) if mistake.line_of in line)


def assert_model_error(err: str, path: Path, line: int, mistake: Mistake) -> None:
    err = "\n".join(line for line in err.splitlines() if not line.startswith("progress:")) + "\n"
    assert err.startswith("steersim: error: model error: "), err
    assert mistake.says in err, err
    assert f"{path}:{line}" in err or f"{path.name}:{line}" in err, (line, err)
    assert "Traceback" not in err and "steersim/core" not in err and "internal error" not in err, err
    if mistake.action is None:
        assert "  at action:" not in err, err
    else:
        assert f"  at action: {mistake.action}\n" in err, err
    if mistake.path is not None:
        assert re.findall(r"^ +\d+\. (.*)$", err, re.M) == mistake.path, err
        assert ("path to it: none" in err) == (not mistake.path), err


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_unbroken_model_checks_and_simulates(folder: Path, capsys: pytest.CaptureFixture) -> None:
    (folder / "counter.py").write_text(BASE)
    assert main(["check", "counter.py:SPEC", "--quiet"]) == EXIT_OK
    assert main(["simulate", "counter.py:SPEC", "--seeds", "0..2"]) == EXIT_OK


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_mistake_is_a_model_error_naming_the_authors_line(folder: Path, capsys: pytest.CaptureFixture,
                                                                 mistake: Mistake) -> None:
    path, line = write(folder, mistake)
    assert main(["check", f"{path.name}:SPEC"]) == EXIT_USAGE  # not --quiet: the report renders states
    assert_model_error(capsys.readouterr().err, path, line, mistake)


STEPPED = [m for m in MISTAKES if m.action is not None]


@pytest.mark.parametrize("command", [["check", "--quiet", "--workers", "2"], ["simulate", "--seeds", "0..1"]],
                         ids=["workers", "simulate"])
@pytest.mark.parametrize("mistake", STEPPED, ids=[m.name for m in STEPPED])
def test_a_mistake_in_a_step_is_named_alike_by_workers_and_the_simulator(
        folder: Path, capsys: pytest.CaptureFixture, mistake: Mistake, command: list[str]) -> None:
    path, line = write(folder, mistake)
    if mistake.shortcut and command[0] == "simulate":  # the simulator steps by `step`, which is right
        assert main([command[0], f"{path.name}:SPEC", *command[1:]]) == EXIT_OK
        return
    assert main([command[0], f"{path.name}:SPEC", *command[1:]]) == EXIT_USAGE
    assert_model_error(capsys.readouterr().err, path, line, mistake)


def test_a_vector_kernel_indexing_out_of_range_is_a_model_error(folder: Path, capsys: pytest.CaptureFixture
                                                                ) -> None:
    (folder / "past.py").write_text('''from dataclasses import replace

from steersim.models.teaching import SPEC as TEACHING
from steersim.models.teaching.model import TeachingModel
from steersim.models.teaching.vector import TeachingKernel


class PastTheEnd(TeachingKernel):
    def steps(self, rows):
        return [*super().steps(rows), rows[:, self.width + 5]]


class Model(TeachingModel):
    def vector_kernel(self):
        return PastTheEnd(self)


SPEC = replace(TEACHING, name="past-the-end", bugs=TEACHING.variants,
               factory=lambda p, bug: Model(p["K"], p["N"], p["Q"], p["P"], bug))
''')
    assert main(["check", "past.py:SPEC", "--engine", "vector", "--quiet"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("steersim: error: model error: the vector kernel's steps() raised IndexError: ")
    assert "past.py:10, in steps)" in err and "Traceback" not in err


def test_the_audit_is_bounded(folder: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step that goes wrong only past the audited states is not stepped twice: the audit's cost is bounded."""
    from steersim.core import mistakes
    monkeypatch.setattr(mistakes, "AUDIT_STATES", 1)
    path, _ = write(folder, MISTAKES[11])  # random only from n=1: past the one state audited
    assert "random" in path.read_text()
    assert main(["check", f"{path.name}:SPEC", "--quiet"]) == EXIT_OK


OLD_MODEL = BASE.replace(
    "from steersim import Action, Always, Bug, Event, Eventually, ModelBase, ModelSpec, Param, Sometimes",
    "from sim.model import Action, Always, Event, Eventually, ModelBase, Sometimes\n"
    "from sim.registry import ModelSpec, Param\nfrom sim.explorer import CheckOptions").replace(
    "bugs=(), factory=Counter)", 'bugs={"too-far": "counts one too far"}, factory=Counter,\n'
    '                 bug_catchers={"too-far": "small"}, bug_params={"too-far": {"N": 2}})')


def test_a_model_file_of_0_1_loads_with_a_warning_per_old_spelling(folder: Path) -> None:
    from steersim.core.registry import Bug, get_model_spec
    assert "sim.explorer" in OLD_MODEL and "bug_params=" in OLD_MODEL
    (folder / "old.py").write_text(OLD_MODEL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = get_model_spec("old.py:SPEC")
    said = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert any("`sim.explorer` is deprecated" in s and "steersim.checking.explorer" in s for s in said), said
    assert any("`sim.registry` is deprecated" in s for s in said), said
    for spelling in ("bugs={name: doc}", "bug_catchers=", "bug_params="):
        assert sum(f"ModelSpec({spelling}...) is deprecated" in s for s in said) == 1, (spelling, said)
    assert spec.variants == (Bug("too-far", "counts one too far", "small", {"N": 2}),)
    assert spec.resolve({}, "too-far") == {"N": 2}


def test_a_0_1_bug_catcher_naming_no_bug_is_refused(folder: Path) -> None:
    (folder / "old.py").write_text(OLD_MODEL.replace('bug_catchers={"too-far"', 'bug_catchers={"too-near"'))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["check", "old.py:SPEC", "--quiet"]) == EXIT_USAGE
