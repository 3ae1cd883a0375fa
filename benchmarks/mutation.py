"""Mutation score of each model's check matrix: how many sampled mutants of the model's transition code
the matrix of `pyproject.toml` (`[[tool.steersim.check]]`) kills.

A mutant changes one spot of a model's transition code with the `ast` module: a comparison operator
(`<` to `<=`, `==` to `!=`, `in` to `not in`, ...), an int or bool constant, a boolean operator (`and`
to `or`), a condition negated (`if`, `while`, conditional expressions and comprehension filters), or a
statement deleted. Each spot has a stable id (file, function, the spot's number among that function's
spots of its operator, and what changes), and the sample is the `--mutants` ids of lowest hash under
`--seed`, so an edit elsewhere in a file leaves the rest of the sample as it was. Each mutant is checked
in a subprocess, against a copy of `steersim/models/` holding the mutated file, by every matrix case of its model
(the teaching model with `--engine generic`, so that its vector kernel does not run in place of the
code under test); the first case that fails kills it. A model error or the timeout counts as killed
too (the check noticed), and is shown apart. Mutants judged equivalent (no check can tell them from the
original) are listed with the reason in `benchmarks/mutation-equivalents.toml` and excluded from the
score.

    python benchmarks/mutation.py                         # 40 mutants per model, seed 0
    python benchmarks/mutation.py --models foundry --mutants 10 --timeout 60
    python benchmarks/mutation.py --list openclaw        # the sampled mutants, without running them

Columns: model, mutants, killed (of which by a model error or the timeout), equivalent, survived,
unreached, bug-only, the score killed / (mutants - equivalent), the score (reached) and the score
(correct model). The survivors follow, one line each.

`--by default` scores the default check instead (`steersim check MODEL`: the model's defaults, then each
reading its spec declares, which kills a mutant when one of them does not pass: a violation, an
unreached property, a model error or the timeout),
`--by both` scores each mutant by both, so the two columns show what a user's first check catches
against the whole matrix. Some of a model's code runs only in a seeded bug variant or in a reading
the default check leaves out, so the default check cannot kill a mutant there, although the matrix
may. To show that apart, the unmutated default check runs once per model under tracing of the
bytecode instructions of the model's own package (where in the source each one is, so that the second
operand of `bug == X and queue` counts as run only in bug variant X, although its line runs in every check,
and a deleted `if` counts as run where one of its branches ran),
and a survivor none of whose changed code it executed is unreached by the
default check: counted in `unreached`, marked so on its survivor line, and left out of `score
(reached)`, killed / (mutants - equivalent - unreached). A mutant of such code that the default
check kills anyway (it breaks the import, say) counts as killed. Of the unreached survivors, those of
code that the matrix's cases of the correct model (no `bug`, every parameter point the matrix names)
never run either, traced once per model when the first such survivor turns up, are bug-only: only a
seeded bug variant runs them, so they change a bug variant and not what the model says the real system
shows. They are counted in `bug-only`, marked so, and left out of `score (correct model)`, killed /
(mutants - equivalent - bug-only). Matrix rows show `-` in these columns.

`--population` runs no mutant: per model, it counts every mutant of the transition code (not a sample)
and how many are unreached by the default check and bug-only, traced as above. Their share bounds what any
sample's `score` can be in expectation, whatever the properties judge.

    python benchmarks/mutation.py --population --models openai-ws openclaw

`--seeds 0,7` scores several samples in one run (one row per seed), so a
fresh sample's score is reported beside seed 0's.

    python benchmarks/mutation.py --models codex --mutants 10 --seeds 0,7 --by both
"""

from __future__ import annotations

import argparse
import ast
import copy
import dis
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "benchmarks" / "mutation-equivalents.toml"

# The transition code of each model: the files whose functions decide what the model does.
TARGETS: dict[str, tuple[str, ...]] = {
    "teaching": ("steersim/models/teaching/model.py", "steersim/models/teaching/facts.py"),
    "openai-ws": ("steersim/models/openai_ws/model.py", "steersim/models/openai_ws/facts.py"),
    "foundry": ("steersim/models/foundry/model.py", "steersim/models/foundry/facts.py"),
    "openclaw": ("steersim/models/openclaw/model.py", "steersim/models/openclaw/agent_core.py",
                 "steersim/models/openclaw/gateway.py", "steersim/models/openclaw/codex.py"),
    "codex": ("steersim/models/codex/model.py", "steersim/models/codex/facts.py"),
    "langgraph": ("steersim/models/langgraph/model.py", "steersim/models/langgraph/facts.py"),
    "claude-code": ("steersim/models/claude_code/model.py", "steersim/models/claude_code/facts.py"),
    "pydantic-ai": ("steersim/models/pydantic_ai/model.py", "steersim/models/pydantic_ai/facts.py"),
}
ENGINES = {"teaching": "generic"}
# Not transition code: the properties judge the model, and the rest are hooks the matrix never runs
# (`render_state` draws a state for people and `judge_recorded` judges a served session's recording again:
# no verdict of a check reads either, and their own tests judge them).
SKIPPED_FUNCTIONS = frozenset(("properties", "behaviour_guards", "default_timing", "vector_kernel", "is_local",
                               "match_event", "symmetry", "monitors", "kinds_not_enabled", "render_state",
                               "judge_recorded"))
SWAPPED_COMPARISONS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                       ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
                       ast.IsNot: ast.Is}
DELETABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.If, ast.For, ast.Return)


Span = tuple[int, int, int, int]  # first line, its column, last line, the column after the code
Ran = tuple[int, int, int, int, bool]  # an instruction a check ran: its span, whether it loads a folded value


@dataclass(frozen=True)
class Mutant:
    """One spot of one file and how it changes. `id` is stable under edits elsewhere in the file."""

    model: str
    path: str
    function: str
    operator: str
    ordinal: int  # the spot's number among its function's spots of this operator
    line: int
    change: str
    span: Span = (0, 0, 0, 0)  # where the changed code is (the condition, the statement, the expression)

    @property
    def id(self) -> str:
        return f"{self.path}:{self.function}#{self.operator}{self.ordinal}:{self.change}"

    def reached(self, executed: dict[str, frozenset[Ran]]) -> bool:
        """Whether a run that executed these instructions (path -> the bytecode instructions it ran) ran
        any instruction of the changed code. Instructions, not lines: in `bug == X and queue` the second
        operand runs only in bug variant X, on the line every run runs. A deleted `if` counts as run
        where one of its branches ran (its test has no effect of its own). A constant counts as run also
        where the load of a folded value around it ran (a tuple of constants, `-1`)."""
        start, end = self.span[:2], self.span[2:4]
        constant = self.operator == "constant"
        return any((start <= ran[:2] and ran[2:4] <= end) or (constant and ran[4] and ran[:2] <= start
                                                             and end <= ran[2:4])
                   for ran in executed.get(self.path, frozenset()))


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef]]:
    """Every function and method of a module, with its qualified name, in source order."""
    def visit(body: Sequence[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.FunctionDef]]:
        for node in body:
            if isinstance(node, ast.ClassDef):
                yield from visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{prefix}{node.name}", node  # type: ignore[misc]
                yield from visit(node.body, f"{prefix}{node.name}.")
    yield from visit(tree.body, "")


def _spots(function: ast.FunctionDef) -> Iterator[tuple[str, ast.AST, int, str]]:
    """(operator, node, index, change) for every mutable spot of one function's own body (nested
    functions are visited as functions of their own), in a fixed order."""
    nested = {id(n) for n in ast.walk(function) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
              and n is not function}
    stack: list[ast.AST] = [function]
    while stack:
        node = stack.pop()
        if id(node) in nested and not isinstance(node, ast.Lambda):
            continue
        yield from _node_spots(node)
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _node_spots(node: ast.AST) -> Iterator[tuple[str, ast.AST, int, str]]:
    if isinstance(node, ast.Compare):
        for k, op in enumerate(node.ops):
            swapped = SWAPPED_COMPARISONS.get(type(op))
            if swapped is not None:
                yield "compare", node, k, f"{type(op).__name__}->{swapped.__name__}"
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield "constant", node, 0, f"{node.value}->{not node.value}"
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield "constant", node, 0, f"{node.value}->{_new_int(node.value)}"
    elif isinstance(node, ast.BoolOp):
        yield "boolop", node, 0, f"{type(node.op).__name__}->{'Or' if isinstance(node.op, ast.And) else 'And'}"
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        yield "negate", node, 0, f"not({ast.unparse(node.test)[:40]})"
    elif isinstance(node, ast.comprehension):
        for k, cond in enumerate(node.ifs):
            yield "negate", node, k, f"not({ast.unparse(cond)[:40]})"
    for field in ("body", "orelse"):
        body = getattr(node, field, None)
        if isinstance(body, list):
            for k, stmt in enumerate(body):
                if _deletable(stmt, k):
                    yield "delete", node, (field, k), f"del {type(stmt).__name__}"  # type: ignore


def _deletable(stmt: ast.stmt, index: int) -> bool:
    if not isinstance(stmt, DELETABLE):
        return False
    is_docstring = index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    return not is_docstring


def _new_int(value: int) -> int:
    return 0 if value == 1 else value + 1


def _apply(node: ast.AST, operator: str, index: object) -> None:
    """Change `node` in place, as the spot says."""
    if operator == "compare":
        node.ops[index] = SWAPPED_COMPARISONS[type(node.ops[index])]()  # type: ignore[attr-defined,index]
    elif operator == "constant":
        value = node.value  # type: ignore[attr-defined]
        node.value = (not value) if isinstance(value, bool) else _new_int(value)  # type: ignore[attr-defined]
    elif operator == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()  # type: ignore[attr-defined]
    elif operator == "negate" and isinstance(node, ast.comprehension):
        node.ifs[index] = ast.UnaryOp(ast.Not(), node.ifs[index])  # type: ignore[index]
    elif operator == "negate":
        node.test = ast.UnaryOp(ast.Not(), node.test)  # type: ignore[attr-defined]
    else:
        field, k = index  # type: ignore[misc]
        body = getattr(node, field)
        body[k] = ast.Pass()
        ast.copy_location(body[k], node)


def enumerate_mutants(model: str) -> list[tuple[Mutant, int]]:
    """Every mutant of the model's files, with its position in the walk that `mutated_source` repeats."""
    out = []
    for path in TARGETS[model]:
        for position, (mutant, _, _) in enumerate(_walk(model, path, ast.parse((ROOT / path).read_text()))):
            out.append((mutant, position))
    return out


def _walk(model: str, path: str, tree: ast.Module) -> Iterator[tuple[Mutant, ast.AST, object]]:
    for name, function in _functions(tree):
        if name.rsplit(".", 1)[-1] in SKIPPED_FUNCTIONS:
            continue
        counts: dict[str, int] = {}
        for operator, node, index, change in _spots(function):
            ordinal = counts[operator] = counts.get(operator, -1) + 1
            line = getattr(node, "lineno", function.lineno)
            if operator == "delete":
                line = getattr(node, index[0])[index[1]].lineno  # type: ignore[index]
            span = _spot_span(node, operator, index)
            yield Mutant(model, path, name, operator, ordinal, line, change, span), node, index


def _spot_span(node: ast.AST, operator: str, index: object) -> Span:
    """Where the code a mutant changes is: the deleted statement, the negated condition, or the node."""
    if operator == "delete":
        changed = getattr(node, index[0])[index[1]]  # type: ignore[index]
        if isinstance(changed, ast.If):  # the test decides, the branches act: deleting the `if` changes them
            first, last = changed.body[0], (changed.orelse or changed.body)[-1]
            return (first.lineno, first.col_offset, last.end_lineno, last.end_col_offset)  # type: ignore[return-value]
    elif operator == "negate" and isinstance(node, ast.comprehension):
        changed = node.ifs[index]  # type: ignore[index]
    elif operator == "negate":
        changed = node.test  # type: ignore[attr-defined]
    else:
        changed = node
    return (changed.lineno, changed.col_offset, changed.end_lineno, changed.end_col_offset)  # type: ignore[attr-defined]


def mutated_source(mutant: Mutant) -> str:
    tree = ast.parse((ROOT / mutant.path).read_text())
    for found, node, index in _walk(mutant.model, mutant.path, tree):
        if found.id == mutant.id:
            _apply(node, found.operator, index)
            return ast.unparse(ast.fix_missing_locations(tree))
    raise KeyError(mutant.id)


def sample(model: str, count: int, seed: int) -> list[Mutant]:
    """The `count` mutants of lowest hash: a fixed sample for a seed that moves only where code moved."""
    mutants = [m for m, _ in enumerate_mutants(model)]
    # hashed as the path was before the models moved under steersim/, so that the move kept the sample
    ranked = sorted(mutants, key=lambda m: hashlib.sha256(
        f"{seed}:{m.id.removeprefix('steersim/')}".encode()).hexdigest())
    chosen = ranked[:count]
    return sorted(chosen, key=lambda m: (m.path, m.line, m.id))


def load_equivalents() -> dict[str, str]:
    """Mutant id -> why no check can tell it from the original."""
    if not EQUIVALENTS.exists():
        return {}
    data = tomllib.loads(EQUIVALENTS.read_text())
    return {entry["id"]: entry["reason"] for entry in data.get("equivalent", [])}


# ---------------------------------------------------------------------- one mutant, in a subprocess
def check_default(model: str) -> dict[str, object]:
    """Run the model's default check in this process (what `steersim check MODEL` runs: the defaults,
    then each reading the model declares): a mutant it does not pass is killed."""
    from steersim.checking.engines import check
    from steersim.checking.explorer import CheckOptions
    from steersim.checking.readings import check_reading
    from steersim.core.registry import get_model_spec
    from steersim.errors import UsageError

    spec = get_model_spec(model)
    options = CheckOptions(engine=ENGINES.get(model, "auto"))
    case = "default"
    try:
        result = check(spec.build(spec.resolve({}, None), None), options)
        checked = [("default", result)]
        for reading in spec.readings if _passes(result) else ():
            case = reading.label
            checked.append((case, check_reading(spec, model, reading, options).result))
            if not _passes(checked[-1][1]):
                break
    except UsageError as error:
        return {"killed": True, "by": "error", "case": case, "detail": str(error).splitlines()[0][:160]}
    case, result = checked[-1]
    if not _passes(result):
        broken = [p.name for p in result.properties if p.status in ("violated", "unreached")]
        return {"killed": True, "by": "check", "case": case, "detail": ", ".join(broken) or result.status}
    return {"killed": False, "cases": len(checked)}


def _passes(result: object) -> bool:
    return result.status == "ok" and not any(  # type: ignore[attr-defined]
        p.status in ("violated", "unreached") for p in result.properties)  # type: ignore[attr-defined]


def start_tracing(model: str, root: Path) -> Callable[[], dict[str, list[Ran]]]:
    """Record the bytecode instructions of the model's own package (the folder of its transition code
    under `root`) that run from now on, in this thread and in threads started later. Returns what stops
    the recording and gives those instructions, as path relative to `root` -> their sorted spans, each
    with whether it loads a folded value (`_loads_folded_value`). Started before the model is imported,
    so that the module-level code (default arguments, class bodies) counts too."""
    folder = str((root / TARGETS[model][0]).parent.resolve()) + os.sep
    executed: dict[CodeType, set[int]] = {}
    ours: dict[str, bool] = {}

    def local(frame: FrameType, event: str, arg: object) -> Callable[..., object]:
        if event == "opcode":
            executed[frame.f_code].add(frame.f_lasti)
        return local

    def call(frame: FrameType, event: str, arg: object) -> Callable[..., object] | None:
        filename = frame.f_code.co_filename
        if filename not in ours:
            ours[filename] = str(Path(filename).resolve()).startswith(folder)
        if not ours[filename]:
            return None
        executed.setdefault(frame.f_code, set())
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return local

    def stop() -> dict[str, list[Ran]]:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
        resolved = root.resolve()
        spans: dict[str, set[Ran]] = {}
        for code, offsets in executed.items():
            path = Path(code.co_filename).resolve().relative_to(resolved).as_posix()
            spans.setdefault(path, set()).update(
                (p.lineno, p.col_offset, p.end_lineno, p.end_col_offset, _loads_folded_value(i))  # type: ignore[misc]
                for i in dis.get_instructions(code) if i.offset in offsets
                for p in [i.positions] if p is not None and None not in p)
        return {path: sorted(found) for path, found in sorted(spans.items())}

    threading.settrace(call)
    sys.settrace(call)
    return stop


def _loads_folded_value(instruction: dis.Instruction) -> bool:
    """Whether the instruction loads a value the compiler may have folded from int or bool constants of the
    source (`-1`, a tuple or set holding such constants), whose span is then that of the whole expression.
    A code object, a name or the annotations loaded to build a function or class span the whole definition
    instead, and hold no such constant."""
    return instruction.opname == "LOAD_CONST" and _holds_int(instruction.argval)


def _holds_int(value: object) -> bool:
    if isinstance(value, (tuple, frozenset)):
        return any(_holds_int(item) for item in value)
    return isinstance(value, int)


def reached_code(model: str, config: Path) -> dict[str, frozenset[Ran]]:
    """What code of the model's package its unmutated default check executes (`start_tracing`), traced
    once in a subprocess as the mutants are checked. A surviving mutant none of whose code is among it is
    unreached by the default check: it cannot kill it, whatever it checks."""
    return _traced_code(model, config, "default")


def correct_model_code(model: str, config: Path) -> dict[str, frozenset[Ran]]:
    """What code of the model's package the unmutated matrix's cases of the correct model (no seeded bug,
    every parameter point the matrix names) execute. A survivor unreached by the default check and by
    these too is on code that only a seeded bug variant runs: no check of the correct model can kill it,
    and what it changes is a bug variant, not what the model says the real system shows."""
    return _traced_code(model, config, "matrix", correct_only=True)


def _traced_code(model: str, config: Path, by: str, correct_only: bool = False) -> dict[str, frozenset[Ran]]:
    with tempfile.TemporaryDirectory(prefix="steersim-mutation-") as tmp:
        workdir = Path(tmp)
        shutil.copyfile(config, workdir / "matrix.toml")
        outcome = run_mutant(None, model, 3600.0, workdir, by, trace=True, correct_only=correct_only)
    if outcome.get("killed") or "spans" not in outcome:
        raise SystemExit(f"the unmutated {model} model fails its own {by} check under tracing: {outcome}")
    return {path: frozenset(map(tuple, spans))  # type: ignore[misc]
            for path, spans in outcome["spans"].items()}  # type: ignore[attr-defined]


def check_matrix(model: str, config: Path, correct_only: bool = False) -> dict[str, object]:
    """Run the model's matrix cases of `config` in this process (the mutated copy comes first on the path);
    stop at the first failing case. Correct-model cases run first: they are the cheap kills. With
    `correct_only`, only they run."""
    from steersim.checking.engines import check
    from steersim.checking.explorer import CheckOptions
    from steersim.core.registry import get_model_spec
    from steersim.errors import UsageError
    from steersim.integrations.ci import load_matrix

    cases = [c for c in load_matrix(config) if c.model == model and not (correct_only and c.bug is not None)]
    cases.sort(key=lambda c: c.bug is not None)
    engine = ENGINES.get(model, "auto")
    for case in cases:
        try:
            built = get_model_spec(case.model).build(case.params, case.bug)
            keep_going = case.bug is not None or bool(case.violated)  # judge every property the case names
            result = check(built, CheckOptions(keep_going=keep_going, engine=engine, **case.limits))
        except UsageError as error:
            return {"killed": True, "by": "error", "case": case.name, "detail": str(error).splitlines()[0][:160]}
        broken = [p.name for p in result.properties if p.status in ("violated", "unreached")]
        if case.bug is None and (result.status != case.expect or (case.violated and set(broken) != set(case.violated))):
            return {"killed": True, "by": "check", "case": case.name, "detail": ", ".join(broken) or result.status}
        statuses = {p.name: p.status for p in result.properties}
        if case.bug is not None and statuses.get(case.catcher or "") != "violated":
            return {"killed": True, "by": "check", "case": case.name,
                    "detail": f"{case.catcher} {statuses.get(case.catcher or '')}"}
    return {"killed": False, "cases": len(cases)}


def run_mutant(mutant: Mutant | None, model: str, timeout: float, workdir: Path, by: str = "matrix",
               trace: bool = False, correct_only: bool = False) -> dict[str, object]:
    """Check one mutant (None: the unmutated copy) in a subprocess against a copy of steersim/, by the
    matrix (only its correct-model cases with `correct_only`) or by the default check (`by`); with
    `trace`, the outcome's `spans` are where the model's code the check executed is (`start_tracing`)."""
    target = workdir / "steersim"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(ROOT / "steersim", target, ignore=shutil.ignore_patterns("node", "__pycache__"))
    node = ROOT / "steersim" / "models" / "openclaw" / "harness" / "node"
    if node.exists():
        os.symlink(node, target / "models" / "openclaw" / "harness" / "node")
    if mutant is not None:
        (workdir / mutant.path).write_text(mutated_source(mutant))
    env = {**os.environ, "PYTHONPATH": f"{workdir}{os.pathsep}{ROOT}", "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, str(ROOT / "benchmarks" / "mutation.py"), "--check-one", model, "--expect-root",
               str(workdir), "--config", str(workdir / "matrix.toml"), "--by", by, *(["--trace"] if trace else []),
               *(["--correct-only"] if correct_only else [])]
    started = time.monotonic()
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=workdir)
    except subprocess.TimeoutExpired:
        return {"killed": True, "by": "timeout", "detail": f"over {timeout:g} s", "seconds": timeout}
    seconds = time.monotonic() - started
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"killed": True, "by": "error", "detail": tail[:160], "seconds": seconds}
    return {**json.loads(lines[-1]), "seconds": seconds}


# ---------------------------------------------------------------------- the table
def score(model: str, mutants: Sequence[Mutant], config: Path, timeout: float | None, equivalents: dict[str, str],
          echo: bool, by: str = "matrix", seed: int = 0, reached: dict[str, frozenset[Ran]] | None = None,
          correct: Callable[[], dict[str, frozenset[Ran]]] | None = None) -> tuple[list[str], list[str]]:
    """The model's table row and its survivor lines, for the sample of `seed` judged `by` the matrix or
    the default check. Without a `timeout`, a mutant may take five times as long as the unmutated run,
    and ten seconds more. With `reached` (the code the unmutated default check executes), a survivor
    none of whose code it ran counts as unreached, and the row scores also without the unreached survivors; with
    `correct` too (what gives the code the correct model's matrix cases execute, called only when a
    survivor is unreached), an unreached survivor none of whose code they ran is bug-only, and the row scores also
    without the bug-only survivors."""
    killed = by_other = equivalent = unreached = bug_only = 0
    survivors = []
    with tempfile.TemporaryDirectory(prefix="steersim-mutation-") as tmp:
        workdir = Path(tmp)
        shutil.copyfile(config, workdir / "matrix.toml")  # the matrix as it was when the run began
        baseline = run_mutant(None, model, 3600.0, workdir, by)
        if baseline.get("killed"):
            raise SystemExit(f"the unmutated {model} model fails its own {by} check: {baseline}")
        if timeout is None:
            timeout = 5 * float(baseline["seconds"]) + 10  # type: ignore[arg-type]
        for mutant in mutants:
            if mutant.id in equivalents:
                equivalent += 1
                continue
            outcome = run_mutant(mutant, model, timeout, workdir, by)
            if echo:
                print(f"  {model} seed {seed} {by} {mutant.id} (line {mutant.line}): "
                      f"{'killed by ' + str(outcome['by']) if outcome['killed'] else 'SURVIVED'} "
                      f"({outcome.get('seconds', 0):.1f} s)", file=sys.stderr, flush=True)
            if outcome["killed"]:
                killed += 1
                by_other += outcome["by"] != "check"
            else:
                mark = "" if reached is None or mutant.reached(reached) else "  (unreached by the default check)"
                if mark and correct is not None and not mutant.reached(correct()):
                    mark = "  (unreached: only a seeded bug variant runs it)"
                    bug_only += 1
                unreached += bool(mark)
                survivors.append(f"{model}  seed {seed}  {by}  {mutant.id}  (line {mutant.line}){mark}")
    judged = len(mutants) - equivalent
    scored = reached is not None
    row = [model, str(seed), by, str(len(mutants)), f"{killed} ({by_other})", str(equivalent), str(len(survivors)),
           str(unreached) if scored else "-", str(bug_only) if scored and correct else "-", _percent(killed, judged),
           _percent(killed, judged - unreached) if scored else "-",
           _percent(killed, judged - bug_only) if scored and correct else "-"]
    return row, survivors


def _percent(killed: int, judged: int) -> str:
    return f"{100.0 * killed / judged if judged else 100.0:.0f}%"



def population(model: str, config: Path) -> list[str]:
    """The model's row of `--population`: every mutant of its transition code, how many the unmutated
    default check never runs (`unreached`) and, of those, how many no correct-model case of the matrix
    runs either (`bug-only`), with the share of the rest: the most a sample's `score` can be in expectation
    (a mutant the default check never runs survives it, unless it breaks the import)."""
    reached, correct = reached_code(model, config), correct_model_code(model, config)
    mutants = [mutant for mutant, _ in enumerate_mutants(model)]
    unreached = [mutant for mutant in mutants if not mutant.reached(reached)]
    bug_only = sum(not mutant.reached(correct) for mutant in unreached)
    return [model, str(len(mutants)), f"{len(unreached)} ({_percent(len(unreached), len(mutants))})",
            f"{bug_only} ({_percent(bug_only, len(mutants))})", _percent(len(mutants) - len(unreached), len(mutants))]


def print_table(rows: Sequence[Sequence[str]], head: Sequence[str] = (
        "model", "seed", "by", "mutants", "killed (error/timeout)", "equivalent", "survived", "unreached",
        "bug-only", "score", "score (reached)", "score (correct model)")) -> None:
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    for r in (head, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument("--mutants", type=int, default=40, help="mutants sampled per model (default 40)")
    parser.add_argument("--seed", type=int, default=0, help="sample seed (default 0)")
    parser.add_argument("--seeds", type=_seeds, help="several sample seeds, comma-separated (e.g. 0,7): one row each")
    parser.add_argument("--by", choices=("matrix", "default", "both"), default="matrix",
                        help="what judges a mutant: the check matrix, the default check, or both (default: matrix)")
    parser.add_argument("--timeout", type=float,
                        help="seconds per mutant before it counts as killed (default: 5 times the unmutated run, +10)")
    parser.add_argument("--config", type=Path, default=ROOT / "pyproject.toml",
                        help="the file holding the check matrix (default: pyproject.toml)")
    parser.add_argument("--list", metavar="MODEL", choices=list(TARGETS), help="print the sample and stop")
    parser.add_argument("--show", metavar="ID", help="print the mutated function of one mutant id and stop")
    parser.add_argument("--quiet", action="store_true", help="no per-mutant lines on stderr")
    parser.add_argument("--population", action="store_true",
                        help="count every mutant, unreached by the default check and bug-only, and stop")
    parser.add_argument("--check-one", metavar="MODEL", help=argparse.SUPPRESS)
    parser.add_argument("--expect-root", help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--correct-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.check_one:
        stop = start_tracing(args.check_one, Path(args.expect_root or ROOT)) if args.trace else None
        import steersim.models

        imported = Path(steersim.models.__file__).resolve()
        if args.expect_root and not imported.is_relative_to(Path(args.expect_root).resolve()):
            raise SystemExit(f"the mutated copy is not the one imported: models is {steersim.models.__file__}")
        outcome = (check_default(args.check_one) if args.by == "default"
                   else check_matrix(args.check_one, args.config, args.correct_only))
        if stop is not None:
            outcome["spans"] = stop()
        print(json.dumps(outcome))
        return 0
    if args.list or args.show:
        equivalents = load_equivalents()
        for model in [args.list] if args.list else TARGETS:
            for mutant in sample(model, args.mutants, (args.seeds or [args.seed])[0]):
                if args.show and mutant.id == args.show:
                    print(_mutated_function(mutant))
                    return 0
                if args.list:
                    mark = "  (equivalent)" if mutant.id in equivalents else ""
                    print(f"{mutant.id}  (line {mutant.line}){mark}")
        return 0 if args.list else 2
    if args.population:
        print_table([population(model, args.config) for model in args.models],
                    ("model", "mutants", "unreached", "bug-only", "reached share"))
        return 0
    equivalents = load_equivalents()
    rows, survivors = [], []
    judges = ("default", "matrix") if args.by == "both" else (args.by,)
    for model in args.models:
        reached = reached_code(model, args.config) if "default" in judges else None  # once per model and run
        correct = functools.cache(functools.partial(correct_model_code, model, args.config))
        for seed in args.seeds or [args.seed]:
            for by in judges:
                row, lost = score(model, sample(model, args.mutants, seed), args.config, args.timeout, equivalents,
                                  not args.quiet, by, seed, *((reached, correct) if by == "default" else ()))
                rows.append(row)
                survivors.extend(lost)
    print_table(rows)
    if survivors:
        print("\nsurvivors:")
        print("\n".join(survivors))
    return 0


def _seeds(text: str) -> list[int]:
    """`0,7` as [0, 7]; argparse turns the ValueError of a bad list into a usage error (exit 2)."""
    return [int(part) for part in text.split(",")]


def _mutated_function(mutant: Mutant) -> str:
    tree = ast.parse(mutated_source(mutant))
    for name, function in _functions(tree):
        if name == mutant.function:
            return ast.unparse(copy.deepcopy(function))
    return mutated_source(mutant)


if __name__ == "__main__":
    sys.exit(main())
