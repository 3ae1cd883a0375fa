"""Generated bad input: every file format and option steersim reads, mutated by Hypothesis from a valid
example, ends in exit code 2 and one line on stderr, never a traceback.

Each strategy makes inputs that are wrong by construction (a required field dropped, a value of the
wrong type or out of range, a line cut short, bytes that are no text, nesting too deep to parse), so
every generated case has one right answer: refused, with one line. The CLI runs in-process.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
from hashlib import blake2b
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import steersim.checking.checkpoint as checkpoint_format
import steersim.cli
from steersim.cli import main
from steersim.core.registry import available_models
from steersim.errors import EXIT_BROKEN_PIPE, EXIT_INTERNAL, EXIT_USAGE

ROOT = Path(__file__).resolve().parent.parent
CANONICAL = sorted((ROOT / "reports" / "canonical").glob("*.jsonl"))
SPECS = available_models()


def generated(examples: int) -> settings:
    """Reproducible in CI (derandomized, no example database) and bounded so that the whole file stays
    well under a minute."""
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large, HealthCheck.filter_too_much])


def assert_refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, (argv, err)
    assert code == EXIT_USAGE, (argv, code, out[-500:], err[-500:])
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("steersim: error: "), (argv, err)
    return lines[0]


# --- values that are wrong for a field ------------------------------------------------------------------

def deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**30), 10**30), st.sampled_from([-1, 0, 1, 2**63, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([math.nan, math.inf, -math.inf, -0.5, 1e308]),
    st.text(max_size=8), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                              max_size=2),
    st.just("DEEP"),  # stands for nesting too deep to parse, spliced in as text
)


def is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def is_time(value: Any) -> bool:
    return value is None or (type(value) in (int, float) and math.isfinite(value) and value >= 0)


# What each field of a trace must be, by where it sits: header fields, step fields, end-line fields.
HEADER = {"steersim": lambda v: type(v) is int and v == 1, "model": lambda v: isinstance(v, str),
          "params": lambda v: isinstance(v, dict), "bug": lambda v: v is None or isinstance(v, str),
          "seed": lambda v: v is None or is_count(v), "timing": lambda v: v is None or v == {},
          "init": is_count}
STEP = {"i": None, "t": is_time, "action": lambda v: isinstance(v, dict), "events": lambda v: isinstance(v, list),
        "facts": lambda v: isinstance(v, list), "state": lambda v: isinstance(v, str),
        "violations": lambda v: isinstance(v, list)}
ACTION = {"actor": lambda v: isinstance(v, str), "kind": lambda v: isinstance(v, str),
          "args": lambda v: isinstance(v, list)}
EVENT = {"source": lambda v: isinstance(v, str), "target": lambda v: isinstance(v, str),
         "name": lambda v: isinstance(v, str)}
FACT = {"fact": lambda v: isinstance(v, str)}
END = {"end": lambda v: v is None or isinstance(v, str), "violations": lambda v: isinstance(v, list)}
REQUIRED_HEADER = ("steersim", "model", "params")
REQUIRED_STEP = ("i", "action", "events", "facts", "state")


def dumps(row: Any) -> str:
    return json.dumps(row).replace('"DEEP"', "[" * 100_000 + "]" * 100_000)


def structural_fields(rows: list[Any]) -> list[tuple[int, tuple[Any, ...], Any]]:
    """(row, path to the field, the field's check) for every typed field of a trace's rows. A step's `i`
    must equal its position; the header's bug and timing and init must keep to what the model has, so
    only a value of another kind is generated for them."""
    fields = []
    for key, check in HEADER.items():
        fields.append((0, (key,), check))
    for number, row in enumerate(rows[1:], 1):
        table = END if "end" in row else STEP
        for key, check in table.items():
            if key == "i":
                check = lambda v, n=number - 1: type(v) is int and v == n  # noqa: E731
            fields.append((number, (key,), check))
        for key, check in (ACTION.items() if "action" in row else ()):
            fields.append((number, ("action", key), check))
        for index in range(len(row.get("events", []))):
            fields += [(number, ("events", index, key), check) for key, check in EVENT.items()]
        for index in range(len(row.get("facts", []))):
            fields += [(number, ("facts", index, key), check) for key, check in FACT.items()]
    return fields


def set_at(row: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        row = row[part]
    row[path[-1]] = value


def base_rows(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The canonical traces of every model, a simulated counterexample that ends in an end line, and its
    shrunk copy (untimed, with no seed)."""
    folder = tmp_path_factory.mktemp("traces")
    assert main(["simulate", "teaching", "--bug", "lost-at-boundary", "--seeds", "0..199", "--out", str(folder),
                 "--shrink"]) == 1
    return [*CANONICAL, *sorted(folder.glob("*.jsonl"))]


BAD_BYTES = st.binary(min_size=1, max_size=4).map(
    lambda b: bytes(c for c in b if (c < 0x20 and c not in b"\t\n\r") or 0x80 <= c < 0xC0) or b"\x01")


@st.composite
def damaged_trace(draw: st.DrawFn, traces: list[Path]) -> tuple[bytes, bool]:
    """The bytes of a damaged trace, and whether the damage is to its structure (which every reader of
    traces refuses) rather than to what it says of the model (which replay refuses)."""
    source = draw(st.sampled_from(traces))
    rows = base_rows(source)
    text = source.read_bytes()
    timed = [n for n, row in enumerate(rows[1:], 1) if row.get("t") is not None]
    how = draw(st.sampled_from(["retype", "retype", "retype", "drop", "cut", "garbage", "wrap", "duplicate",
                                "model", *(["back in time"] if len(timed) > 1 else [])]))
    if how == "retype":
        number, path, check = draw(st.sampled_from(structural_fields(rows)))
        value = draw(JSON_VALUES.filter(lambda v: v == "DEEP" or not check(v)))
        set_at(rows[number], path, value)
    elif how == "drop":
        number = draw(st.integers(0, len(rows) - 1))
        required = REQUIRED_HEADER if number == 0 else ("end",) if "end" in rows[number] else REQUIRED_STEP
        rows[number].pop(draw(st.sampled_from(required)))  # an end line without "end" is a step without "i"
    elif how == "cut":  # inside a line: the line is no JSON, or the file ends without a newline
        lines = text.split(b"\n")[:-1]
        number = draw(st.integers(0, len(lines) - 1))
        cut = draw(st.integers(0, len(lines[number]) - 1))
        keep_rest = draw(st.booleans())
        head = b"\n".join([*lines[:number], lines[number][:cut]])
        return head + (b"\n" + b"\n".join(lines[number + 1:]) + b"\n" if keep_rest else b""), True
    elif how == "garbage":  # control characters or stray UTF-8 continuation bytes: no JSON, no text
        at = draw(st.integers(0, len(text) - 1))
        return text[:at] + draw(BAD_BYTES) + text[at:], True
    elif how == "wrap":
        number = draw(st.integers(0, len(rows) - 1))
        rows[number] = draw(st.sampled_from([[rows[number]], "DEEP", None, 1, "text"]))
    elif how == "back in time":  # a step before the one it follows
        later = draw(st.sampled_from(timed[1:]))
        earlier = max(n for n in timed if n < later)
        rows[later]["t"] = draw(st.floats(0, rows[earlier]["t"], exclude_max=True))
    elif how == "duplicate":
        number = draw(st.integers(0, len(rows) - 1))
        rows.insert(number, rows[number])
    else:  # what the header says of the model: unknown name, bug variant or parameter, a bad parameter
        spec = SPECS[rows[0]["model"]]
        key, value = draw(st.sampled_from([
            ("model", "no-such-model"), ("bug", "no-such-bug"), ("params", {**rows[0]["params"], "zz": 1}),
            ("params", {**rows[0]["params"], **draw(bad_param_values(spec))})]))
        rows[0][key] = value
        return ("\n".join(dumps(r) for r in rows) + "\n").encode(), False
    return ("\n".join(dumps(r) for r in rows) + "\n").encode(), True


@generated(150)
@given(data=st.data())
def test_damaged_traces_are_refused_by_replay_and_diagram(tmp_path, capsys, traces, data):
    content, structural = data.draw(damaged_trace(traces))
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    assert_refused(capsys, ["replay", str(path)])
    if structural:
        assert_refused(capsys, ["diagram", str(path), "-o", str(tmp_path / "d.svg")])


def test_the_unmutated_traces_replay(traces, capsys):
    """The mutations start from traces that are valid: each refusal above is the mutation's doing."""
    for path in traces:
        assert main(["replay", str(path)]) in (0, 1)
        assert "error" not in capsys.readouterr().err


# --- timing profiles --------------------------------------------------------------------------------------

DIST_PARAMS = {"immediate": (), "constant": ("value",), "uniform": ("low", "high"), "exponential": ("mean",),
               "lognormal": ("median", "sigma")}
PROFILE = {"default": {"dist": "exponential", "mean": 0.2}, "user.steer": {"dist": "constant", "value": 3.0},
           "agent.*": {"dist": "lognormal", "median": 3.0, "sigma": 0.5},
           "tool.finish": {"dist": "uniform", "low": 0.5, "high": 2.0}, "tool.start": {"dist": "immediate"}}


def toml_value(value: Any) -> str:
    if value == "DEEP":
        return "[" * 50_000 + "]" * 50_000
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"


def toml_tables(tables: dict[str, Any]) -> str:
    out = []
    for name, table in tables.items():
        if isinstance(table, dict):
            out.append(f"[{json.dumps(name)}]")
            out += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in table.items()]
        else:
            out.insert(0, f"{json.dumps(name)} = {toml_value(table)}")
    return "\n".join(out) + "\n"


TOML_BAD_NUMBERS = st.sampled_from([-1, -0.001, math.nan, math.inf, -math.inf, 10**400, -(10**30)])
TOML_VALUES = st.one_of(st.booleans(), st.text(max_size=6), st.lists(st.integers(0, 3), max_size=2),
                        st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 3), max_size=2), st.just("DEEP"))


@st.composite
def damaged_profile(draw: st.DrawFn) -> bytes:
    profile = json.loads(json.dumps(PROFILE))
    how = draw(st.sampled_from(["entry", "dist", "drop-dist", "drop", "extra", "number", "retype", "order",
                                "garbage", "cut"]))
    with_params = how in ("drop", "number", "retype")
    kind = draw(st.sampled_from(sorted(k for k, e in profile.items() if DIST_PARAMS[e["dist"]] or not with_params)))
    entry = profile[kind]
    names = DIST_PARAMS[entry["dist"]]
    if how == "entry":
        profile[kind] = draw(TOML_VALUES.filter(lambda v: not isinstance(v, dict) or "dist" not in v))
    elif how == "dist":
        entry["dist"] = draw(st.one_of(TOML_VALUES, st.text(max_size=10)).filter(lambda v: v not in tuple(DIST_PARAMS)))
    elif how == "drop-dist":
        entry.pop("dist")
    elif how == "drop":
        entry.pop(draw(st.sampled_from(names)))
    elif how == "extra":
        entry[draw(st.sampled_from(["mean", "value", "low", "sigma", "rate"]).filter(lambda k: k not in names))] = 1.0
    elif how in ("number", "retype"):
        entry[draw(st.sampled_from(names))] = draw(TOML_BAD_NUMBERS if how == "number" else TOML_VALUES)
    elif how == "order":  # uniform low above high; exponential or lognormal scale 0
        profile["tool.finish"] = {"dist": "uniform", "low": 3.0, "high": draw(st.floats(0, 2.9))}
        profile["user.steer"] = {"dist": draw(st.sampled_from(["exponential", "lognormal"]))}
        profile["user.steer"].update({n: 0.0 if n in ("mean", "median") else 1.0
                                      for n in DIST_PARAMS[profile["user.steer"]["dist"]]})
    text = toml_tables(profile).encode()
    if how == "garbage":
        at = draw(st.integers(0, len(text) - 1))
        return text[:at] + draw(BAD_BYTES) + text[at:]
    if how == "cut":  # a value cut off after its `=`
        lines = text.split(b"\n")
        numbers = [i for i, line in enumerate(lines) if b" = " in line]
        number = draw(st.sampled_from(numbers))
        lines[number] = lines[number].split(b" = ")[0] + b" ="
        return b"\n".join(lines)
    return text


@generated(60)
@given(data=st.data())
def test_damaged_timing_profiles_are_refused(tmp_path, capsys, traces, data):
    path = tmp_path / "timing.toml"
    path.write_bytes(data.draw(damaged_profile()))
    command = data.draw(st.sampled_from(["simulate", "audit", "diagram"]))
    if command == "diagram":
        argv = ["diagram", str(traces[-1]), "-o", str(tmp_path / "d.svg"), "--timing", str(path)]
    else:
        argv = [command, "teaching", "--seeds", "0", "--max-steps", "20", "--timing", str(path)]
        argv += ["--out", str(tmp_path / "out")] if command == "simulate" else []
    line = assert_refused(capsys, argv)
    assert "timing" in line


def test_the_unmutated_profile_is_accepted(tmp_path, capsys):
    path = tmp_path / "timing.toml"
    path.write_text(toml_tables(PROFILE))
    assert main(["simulate", "teaching", "--seeds", "0", "--timing", str(path), "--out", str(tmp_path)]) in (0, 1)
    assert "error" not in capsys.readouterr().err


# --- model parameters -------------------------------------------------------------------------------------

def bad_values(param: Any) -> st.SearchStrategy[Any]:
    """Typed values a parameter must refuse (as in a trace header or a ci grid)."""
    default = param.default
    if isinstance(default, bool):
        return st.one_of(st.integers(), st.text(max_size=5), st.none(), st.lists(st.booleans(), max_size=2))
    if isinstance(default, int):
        out_of_range = st.one_of(st.integers(max_value=param.low - 1), st.integers(min_value=param.high + 1))
        return st.one_of(out_of_range, st.sampled_from([10**30, -(10**30)]), st.booleans(), st.text(max_size=5),
                         st.floats(allow_nan=True), st.lists(st.integers(), max_size=2))
    return st.one_of(st.text(max_size=12).filter(lambda v: v not in param.choices), st.integers(), st.booleans())


@st.composite
def bad_param_values(draw: st.DrawFn, spec: Any) -> dict[str, Any]:
    param = draw(st.sampled_from(spec.params))
    return {param.name: draw(bad_values(param))}


def bad_text(param: Any) -> st.SearchStrategy[str]:
    """Command-line values (`-p KEY=VALUE`) a parameter must refuse."""
    default = param.default
    if isinstance(default, bool):
        return st.text(max_size=8).filter(lambda t: t.lower() not in ("true", "1", "yes", "on", "false", "0", "no",
                                                                      "off"))
    if isinstance(default, int):
        return st.one_of(st.integers(max_value=param.low - 1).map(str), st.integers(min_value=param.high + 1).map(str),
                         st.sampled_from(["1.5", "1e3", "", "three", "0x3", "9" * 5000, "nan", "inf"]))
    return st.text(max_size=12).filter(lambda t: t not in param.choices)


@st.composite
def bad_assignments(draw: st.DrawFn) -> tuple[str, list[str]]:
    name = draw(st.sampled_from(sorted(SPECS)))
    spec = SPECS[name]
    good = [f"{p.name}={str(p.default).lower() if isinstance(p.default, bool) else p.default}"
            for p in draw(st.lists(st.sampled_from(spec.params), max_size=2))]
    how = draw(st.sampled_from(["value", "value", "value", "unknown", "no-equals"]))
    if how == "value":
        param = draw(st.sampled_from(spec.params))
        bad = f"{param.name}={draw(bad_text(param))}"
    elif how == "unknown":
        bad = f"{draw(st.text(max_size=8).filter(lambda k: k not in {p.name for p in spec.params} and '=' not in k))}=1"
    else:
        bad = draw(st.text(max_size=8).filter(lambda t: "=" not in t))
    position = draw(st.integers(0, len(good)))
    return name, [*good[:position], bad, *good[position:]]


@generated(80)
@given(case=bad_assignments(), command=st.sampled_from(["check", "simulate", "audit", "report"]))
def test_bad_parameters_of_every_model_are_refused(tmp_path, capsys, case, command):
    name, assignments = case
    argv = [command, name, *[f"--param={text}" for text in assignments]]
    argv += ["--quiet"] if command == "check" else ["-o", str(tmp_path)] if command == "report" else []
    argv += ["--out", str(tmp_path)] if command == "simulate" else []
    assert_refused(capsys, argv)


# --- seed ranges and numeric options ----------------------------------------------------------------------

BAD_SEEDS = st.one_of(
    st.integers(max_value=-1).map(str),
    st.tuples(st.integers(0, 10**6), st.integers(1, 10**6)).map(lambda ab: f"{ab[0] + ab[1]}..{ab[0]}"),
    st.integers(min_value=2**64).map(str),
    st.tuples(st.integers(0, 10**9), st.integers(10**8, 10**40)).map(lambda ab: f"{ab[0]}..{ab[0] + ab[1]}"),
    st.tuples(st.integers(-(10**6), -1), st.integers(0, 10)).map(lambda ab: f"{ab[0]}..{ab[1]}"),
    st.sampled_from(["", "..", "1..", "..3", "1..2..3", "1...3", "a..b", "1.5", "0x10", "1e3", "9" * 5000]),
    st.text(max_size=10).filter(lambda t: not whole_number(t) and ".." not in t),
)


def whole_number(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


@generated(50)
@given(seeds=BAD_SEEDS, command=st.sampled_from(["simulate", "audit"]))
def test_bad_seed_ranges_are_refused(tmp_path, capsys, seeds, command):
    argv = [command, "teaching", f"--seeds={seeds}"] + (["--out", str(tmp_path)] if command == "simulate" else [])
    assert_refused(capsys, argv)


POSITIVE_INT, COUNT, POSITIVE, INTERVAL = "positive int", "count", "positive", "interval"
OPTIONS = [(("check", "teaching", "--quiet"), "--max-states", POSITIVE_INT),
           (("check", "teaching", "--quiet"), "--max-depth", COUNT),
           (("check", "teaching", "--quiet"), "--timeout", POSITIVE),
           (("check", "teaching", "--quiet"), "--max-memory", POSITIVE),
           (("check", "teaching", "--quiet"), "--liveness-limit", COUNT),
           (("check", "teaching", "--quiet"), "--checkpoint-every", INTERVAL),
           (("check", "teaching", "--quiet"), "--workers", POSITIVE_INT),
           (("simulate", "teaching"), "--max-steps", COUNT),
           (("simulate", "teaching"), "--max-time", POSITIVE),
           (("simulate", "teaching"), "--workers", POSITIVE_INT),
           (("audit", "teaching"), "--max-steps", COUNT),
           (("report", "teaching", "-o", "."), "--seed", COUNT),
           (("conform", "foundry"), "--seed", COUNT),
           (("conform", "foundry"), "--runs", POSITIVE_INT),
           (("conform", "foundry"), "--max-seconds", POSITIVE),
           (("serve", "openai-ws", "--port", "0"), "--seed", COUNT),
           (("serve", "openai-ws", "--seed", "1"), "--port", COUNT)]
NOT_NUMBERS = st.sampled_from(["", "x", "1,5", "nan", "NaN", "inf", "-inf", "1e999", "--", "0x1", "½"])


def bad_numbers(kind: str) -> st.SearchStrategy[str]:
    whole = kind in (POSITIVE_INT, COUNT)
    low = 1 if kind in (POSITIVE_INT, POSITIVE) else 0
    too_small = (st.integers(max_value=low - 1).map(str) if whole
                 else st.floats(max_value=0 if low else -1e-9, allow_nan=False, allow_infinity=False).map(repr))
    fractional = st.floats(0.01, 1e6).filter(lambda f: not f.is_integer()).map(repr)
    return st.one_of(too_small, NOT_NUMBERS, *([fractional] if whole else []))


@generated(80)
@given(data=st.data())
def test_bad_numeric_options_are_refused(tmp_path, capsys, data):
    command, option, kind = data.draw(st.sampled_from(OPTIONS))
    value = data.draw(bad_numbers(kind) if option != "--port" else st.sampled_from(["-1", "65536", "10" * 20]))
    argv = [*command, f"{option}={value}"]
    if command[0] == "report":
        argv[3] = str(tmp_path)
    assert_refused(capsys, argv)


# --- output paths -----------------------------------------------------------------------------------------

OUTPUTS = [(("check", "teaching", "--quiet"), "--json"), (("check", "teaching", "--quiet"), "--junit"),
           (("check", "teaching", "--quiet"), "--graph"), (("check", "teaching", "--quiet"), "--checkpoint"),
           (("simulate", "teaching"), "--json"), (("simulate", "teaching"), "--out"),
           (("ci", "--config", "CONFIG"), "--json"), (("ci", "--config", "CONFIG"), "--junit"),
           (("diagram", str(CANONICAL[0])), "-o"), (("report", "teaching"), "-o"),
           (("conform", "foundry"), "--json"), (("conform", "foundry"), "--report"),
           (("conform", "openclaw"), "--json"), (("conform", "openclaw"), "--report"),
           (("serve", "openai-ws", "--port", "0", "--seed", "1", "--timeout", "0.1"), "--json"),
           (("serve", "openai-ws", "--port", "0", "--seed", "1", "--timeout", "0.1"), "--record")]
NAMES = st.text(st.sampled_from("abcxyz_-"), min_size=1, max_size=6)


@generated(60)
@given(data=st.data())
def test_unwritable_output_paths_are_refused_before_any_work(tmp_path, capsys, data, monkeypatch):
    command, option = data.draw(st.sampled_from(OUTPUTS))
    config = tmp_path / "ci.toml"
    config.write_text('[[tool.steersim.check]]\nmodel = "teaching"\ngrid = { K = 1, N = 1 }\nexpect = "ok"\n')
    a_file = tmp_path / "a-file.svg"
    a_file.write_text("")
    folder_option = option in ("--out", "--report") or command[0] == "report"
    how = data.draw(st.sampled_from(["a file", "under a file"] if folder_option else
                                    ["missing folder", "a folder", "under a file"]))
    name = data.draw(NAMES) + ".svg"
    if how == "missing folder":
        target = tmp_path.joinpath(*data.draw(st.lists(NAMES, min_size=1, max_size=3)), "missing", name)
    elif how == "a folder":  # a file output refuses a folder
        target = tmp_path
    elif how == "a file":  # a folder output refuses a file
        target = a_file
    else:
        target = a_file / name
    argv = [str(config) if part == "CONFIG" else part for part in command] + [option, str(target)]
    monkeypatch.setattr("steersim.checking.explorer.Explorer.run", lambda *a, **k: pytest.fail("the work started"))
    assert_refused(capsys, argv)


FORMATS = {("check", "teaching", "--quiet", "--graph"): (".graphml", ".dot", ".gv"),
           ("diagram", str(CANONICAL[0]), "-o"): (".svg", ".png")}


@generated(30)
@given(data=st.data())
def test_output_names_of_an_unknown_format_are_refused_before_any_work(tmp_path, capsys, data, monkeypatch):
    command, suffixes = data.draw(st.sampled_from(sorted(FORMATS.items())))
    suffix = data.draw(st.one_of(st.just(""), st.text(st.sampled_from("abcdgmpsvx."), min_size=1, max_size=6).map(
        lambda t: "." + t)).filter(lambda t: Path(f"out{t}").suffix.lower() not in suffixes))
    monkeypatch.setattr("steersim.checking.graph.state_graph", lambda *a: pytest.fail("the graph was built"))
    monkeypatch.setattr("steersim.draw.diagram.save_diagram", lambda *a, **k: pytest.fail("the diagram was drawn"))
    assert_refused(capsys, [*command, str(tmp_path / f"out{suffix}")])


# --- ci matrices ------------------------------------------------------------------------------------------

MATRIX = {"check": [{"model": "teaching", "grid": {"K": [1, 2], "P": 1}, "expect": "ok", "max_states": 500},
                    {"model": "teaching", "grid": {"P": [1]}, "bugs": {"lost-at-boundary": "no-lost-steers"}},
                    {"model": "openai-ws", "bugs": "all", "timeout": 5}]}
ENTRY_KEYS = ("model", "grid", "expect", "bugs", "max_states", "max_depth", "timeout")


def matrix_toml(table: Any) -> str:
    if not isinstance(table, dict) or not isinstance(table.get("check"), list):
        return f"[tool]\nsteersim = {toml_value(table)}\n"
    out = [f"[tool.steersim]\n{json.dumps(k)} = {toml_value(v)}" for k, v in table.items() if k != "check"]
    for entry in table["check"]:
        out.append("[[tool.steersim.check]]")
        out += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(out) + "\n"


@st.composite
def damaged_matrix(draw: st.DrawFn) -> bytes:
    table = json.loads(json.dumps(MATRIX))
    index = draw(st.integers(0, len(table["check"]) - 1))
    entry = table["check"][index]
    spec = SPECS[entry["model"]]
    how = draw(st.sampled_from(["top", "unknown", "model", "neither", "expect", "limit", "grid", "axis", "point",
                                "bugs", "bug", "garbage"]))
    if how == "top":
        table = draw(st.one_of(TOML_VALUES, st.just({"check": []}), st.just({"check": 5}),
                               st.just({"check": [{"model": "teaching", "expect": "ok"}], "other": 1})))
        if isinstance(table, dict) and "check" not in table:
            table["check"] = 5
    elif how == "unknown":
        entry[draw(st.text(min_size=1, max_size=6).filter(lambda k: k not in ENTRY_KEYS))] = 1
    elif how == "model":
        entry["model"] = draw(st.one_of(TOML_VALUES, st.text(max_size=8)).filter(lambda v: v not in tuple(SPECS)))
    elif how == "neither":
        entry.pop("expect", None)
        entry.pop("bugs", None)
    elif how == "expect":
        entry["expect"] = draw(st.one_of(TOML_VALUES, st.text(max_size=8)).filter(
            lambda v: v not in ("ok", "violation", "incomplete")))
    elif how == "limit":
        entry[draw(st.sampled_from(["max_states", "max_depth", "timeout"]))] = draw(st.one_of(
            TOML_VALUES, st.sampled_from([0, -1, -0.001, math.nan, math.inf, -math.inf])))
    elif how == "grid":
        entry["grid"] = draw(st.one_of(st.booleans(), st.text(max_size=4), st.lists(st.integers(), max_size=2),
                                       st.integers(), st.just("DEEP")))
    elif how == "axis":
        param = draw(st.sampled_from(spec.params))
        entry["grid"] = {param.name: draw(st.one_of(st.just([]), st.lists(bad_values(param), min_size=1,
                                                                            max_size=2)))}
        single = entry["grid"][param.name][:1]
        if single and not isinstance(single[0], list) and draw(st.booleans()):
            entry["grid"][param.name] = entry["grid"][param.name][0]
    elif how == "point":
        entry["grid"] = {draw(st.text(min_size=1, max_size=5).filter(lambda k: k not in {p.name for p in
                                                                                         spec.params})): 1}
    elif how == "bugs":
        entry["bugs"] = draw(st.one_of(st.integers(), st.booleans(), st.text(max_size=5).filter(lambda t: t != "all"),
                                       st.lists(st.one_of(st.integers(), st.lists(st.integers(), max_size=1),
                                                          st.text(max_size=5).filter(lambda b: b not in spec.bugs)),
                                                min_size=1, max_size=2)))
    elif how == "bug":
        name = draw(st.sampled_from(sorted(spec.bugs)))
        entry["bugs"] = draw(st.sampled_from([{"no-such-bug": "x"}, {name: 5}, {name: [name]}, {name: {"a": 1}},
                                              {name: True}]))
    text = matrix_toml(table).encode()
    if how == "garbage":
        at = draw(st.integers(0, len(text) - 1))
        return text[:at] + draw(BAD_BYTES) + text[at:]
    return text


@generated(80)
@given(content=damaged_matrix())
def test_damaged_ci_matrices_are_refused(tmp_path, capsys, content, monkeypatch):
    path = tmp_path / "pyproject.toml"
    path.write_bytes(content)
    monkeypatch.setattr("steersim.integrations.ci.run_case",
                        lambda case: pytest.fail(f"a malformed matrix ran {case.name}"))
    assert_refused(capsys, ["ci", "--config", str(path)])


def test_the_unmutated_matrix_is_accepted(tmp_path):
    from steersim.integrations.ci import load_matrix

    path = tmp_path / "pyproject.toml"
    path.write_text(matrix_toml(MATRIX))
    assert len(load_matrix(path)) > 4


# --- checkpoints ------------------------------------------------------------------------------------------

RESUME = ["check", "teaching", "--quiet"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("checkpoint") / "run.ckpt"
    assert main([*RESUME, "--checkpoint", str(path), "--checkpoint-every", "0"]) == 0
    return path.read_bytes()


def _checkpoint_parts(content: bytes) -> tuple[bytes, bytes]:
    """The identity line and the pickled search state of a checkpoint (`steersim.checking.checkpoint`'s layout)."""
    body = content[len(checkpoint_format.MAGIC):].partition(b"\n")[2]
    identity, _, payload = body.partition(b"\n")
    return identity, payload


def _signed(identity: bytes, payload: bytes) -> bytes:
    """A checkpoint whose checksum matches its (damaged) contents, as a buggy or foreign writer makes one."""
    body = identity + b"\n" + payload
    digest = blake2b(body, digest_size=checkpoint_format.DIGEST_SIZE).hexdigest().encode()
    return checkpoint_format.MAGIC + digest + b"\n" + body


@st.composite
def damaged_checkpoint(draw: st.DrawFn, content: bytes) -> bytes:
    how = draw(st.sampled_from(["cut", "prefix", "noise", "other file", "flipped bit", "identity", "layout"]))
    if how == "cut":
        return content[:draw(st.integers(0, len(content) - 1))]
    if how == "prefix":
        return draw(st.binary(min_size=1, max_size=8)) + content
    if how == "noise":
        return draw(st.binary(max_size=64))
    if how == "other file":
        return draw(st.sampled_from([p.read_bytes() for p in CANONICAL[:1]] + [b"", b"\x80\x05N.", b"\x80\x05K\x01."]))
    if how == "flipped bit":
        at = draw(st.integers(0, len(content) - 1))
        return content[:at] + bytes([content[at] ^ (1 << draw(st.integers(0, 7)))]) + content[at + 1:]
    identity, payload = _checkpoint_parts(content)
    if how == "identity":  # checksummed, but not the JSON object of a run
        return _signed(draw(st.sampled_from([b"", b"[]", b"null", b"{", b"\xff\xfe"])), payload)
    data = pickle.loads(payload)  # the layout damaged: a part dropped or of another type
    part = draw(st.sampled_from(["search", "frontier", "seconds", "search part", "whole"]))
    values = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2),
                       st.just(math.nan), st.just(-1.0))
    if part == "whole":
        return _signed(identity, pickle.dumps(draw(values)))
    if part == "search part":
        name = draw(st.sampled_from(sorted(data["search"])))
        if draw(st.booleans()):
            data["search"].pop(name)
        else:
            data["search"][name] = draw(values.filter(lambda v: type(v) is not type(data["search"][name])))
        return _signed(identity, pickle.dumps(data))
    if part == "seconds":
        values = values.filter(lambda v: not (type(v) in (int, float) and v >= 0))
    if draw(st.booleans()):
        data.pop(part)
    else:
        data[part] = draw(values)
    return _signed(identity, pickle.dumps(data))


@generated(50)
@given(data=st.data())
def test_damaged_checkpoints_are_refused(tmp_path, capsys, checkpoint, data):
    path = tmp_path / "run.ckpt"
    path.write_bytes(data.draw(damaged_checkpoint(checkpoint)))
    assert_refused(capsys, [*RESUME, "--resume", str(path)])


# --- the paths that are not bad input: internal errors and closed pipes ------------------------------------

def test_an_internal_error_is_one_line_exit_4_and_a_traceback_file(capsys, monkeypatch):
    def broken(*args: Any) -> None:
        raise RuntimeError("a bug\nin two lines")

    monkeypatch.setattr("steersim.core.registry.available_models", broken)
    assert main(["models"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("steersim: internal error: RuntimeError: a bug in two lines; traceback in ")
    saved = Path(err.split("traceback in ")[1].split(";")[0])
    text = saved.read_text()
    saved.unlink()
    assert "Traceback (most recent call last)" in text and "in broken" in text and "command: steersim models" in text


def test_debug_prints_the_traceback_instead(capsys, monkeypatch):
    monkeypatch.setattr("steersim.core.registry.available_models", lambda: 1 / 0)
    assert main(["--debug", "models"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "traceback in" not in err
    assert err.splitlines()[-1].startswith("steersim: internal error: ZeroDivisionError")


def test_a_plugin_that_crashes_is_an_internal_error_too(capsys, monkeypatch):
    import steersim.models.foundry.harness.conform

    monkeypatch.setattr(steersim.models.foundry.harness.conform, "conform", lambda *a: {}["missing"])
    assert main(["conform", "foundry", "--runs", "1"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "KeyError" in err
    Path(err.split("traceback in ")[1].split(";")[0]).unlink()


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def test_a_closed_output_pipe_ends_quietly():
    reader, writer = os.pipe()
    os.close(reader)  # the reader left before the first byte (as `| head -0` does)
    try:
        done = subprocess.run([sys.executable, "-m", "steersim.cli", "models"], stdout=writer, stderr=subprocess.PIPE,
                              env=_environment(), timeout=120, check=False)
    finally:
        os.close(writer)
    assert done.returncode == EXIT_BROKEN_PIPE
    assert done.stderr == b""


def test_an_internal_error_in_a_real_process(tmp_path):
    """The installed command's own path: exit 4, one line, the file exists and holds the traceback."""
    code = ("import sys, steersim.cli, steersim.core.registry\n"
            "steersim.core.registry.available_models = lambda: None.missing\n"
            "sys.exit(steersim.cli.main(['models']))\n")
    env = {**_environment(), "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == EXIT_INTERNAL
    assert len(done.stderr.splitlines()) == 1 and "AttributeError" in done.stderr
    (saved,) = tmp_path.glob("steersim-crash-*.txt")
    assert str(saved) in done.stderr and "AttributeError" in saved.read_text()


def test_no_traceback_when_a_check_is_asked_to_write_into_a_missing_folder(capsys, monkeypatch):
    """The issue's example: the search must not run first and die on the write."""
    monkeypatch.setattr(steersim.cli, "_build", lambda args: pytest.fail("the model was built"))
    line = assert_refused(capsys, ["check", "teaching", "--json", "nodir/r.json"])
    assert "nodir" in line and "does not exist" in line


def test_a_json_document_that_is_no_trace_nor_check_report_is_refused_by_diagram(tmp_path, capsys):
    other = tmp_path / "estimate.json"
    other.write_text(json.dumps({"estimate": 0.01, "low": 0.0, "high": 0.02, "runs": 100}, indent=2) + "\n")
    line = assert_refused(capsys, ["diagram", str(other), "-o", str(tmp_path / "x.svg")])
    assert "neither a trace nor a `check --json` report" in line
