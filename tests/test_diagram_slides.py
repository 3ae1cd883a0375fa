"""`steersim diagram` options for slides: a title of one's own, refused when blank."""

from __future__ import annotations

from pathlib import Path

import pytest

from steersim.checking.engines import check
from steersim.checking.explorer import CheckOptions
from steersim.cli import main
from steersim.core.registry import get_model_spec
from steersim.traces.trace import trace_from_path, write_trace

SPEC = get_model_spec("teaching")

PARAMS = {"K": 2, "N": 2}


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    model = SPEC.build(SPEC.resolve(PARAMS), "lost-at-boundary")
    result = check(model, CheckOptions(keep_going=True))
    path = next(p for p in result.properties if p.name == "no-lost-steers").counterexample
    out = tmp_path / "cx.jsonl"
    write_trace(out, trace_from_path("teaching", SPEC.resolve(PARAMS), "lost-at-boundary", path))
    return out


def test_title_replaces_the_default_heading(trace_file: Path, tmp_path: Path) -> None:
    default, titled = tmp_path / "default.svg", tmp_path / "titled.svg"
    assert main(["diagram", str(trace_file), "-o", str(default)]) == 0
    assert main(["diagram", str(trace_file), "-o", str(titled), "--title", "A steer lost at the boundary"]) == 0
    assert "A steer lost at the boundary" in titled.read_text()
    assert "A steer lost at the boundary" not in default.read_text()
    # the default heading is drawn and also the file's metadata title; with --title only the metadata keeps it
    assert titled.read_text().count("teaching(") == default.read_text().count("teaching(") - 1


@pytest.mark.parametrize("title", ["", "   ", "two\nlines"])
def test_a_blank_title_is_refused_in_one_line(trace_file: Path, tmp_path: Path, capsys, title: str) -> None:
    assert main(["diagram", str(trace_file), "-o", str(tmp_path / "x.svg"), "--title", title]) == 2
    err = capsys.readouterr().err
    assert "--title" in err and "one non-empty line" in err and err.count("\n") == 1
