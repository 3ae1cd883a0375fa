"""The `estimate --grid --plot` picture for slides: a log x axis for a geometric sweep, a title that names
what was estimated, and a chosen size; bad sizes are refused in one line."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.image
import matplotlib.pyplot as plt
import pytest

from steersim.cli import main
from steersim.simulate.estimate import Plan
from steersim.simulate.queries import parse_query
from steersim.simulate.study import estimate_grid, is_geometric, parse_axis, setting

BUG = "lost-at-boundary"


def _grid(axis: str):
    base = setting("teaching", {"N": 3}, BUG)
    return base, estimate_grid(base, parse_axis(axis, base), parse_query("violation"), Plan(runs=40))


def test_geometric_sweeps_are_told_from_even_ones():
    assert is_geometric([0.05, 0.2, 0.8, 3.2]) and is_geometric([1, 10, 100])
    assert not is_geometric([1, 2, 3]) and not is_geometric([1, 2]) and not is_geometric([0, 1, 2])
    assert not is_geometric([2, 2, 2]) and not is_geometric([-1, -2, -4])


@pytest.mark.parametrize(("axis", "scale"), [("timing:agent.clear.mean=0.05,0.2,0.8,3.2", "log"),
                                             ("timing:agent.clear.mean=0.5,1,1.5", "linear")])
def test_a_geometric_grid_is_drawn_on_a_log_axis(axis, scale):
    _, result = _grid(axis)
    fig, ax = plt.subplots()
    try:
        result.plot(ax)
        assert ax.get_xscale() == scale
        if scale == "log":  # each value labelled where it sits, not powers of ten
            assert [t.get_text() for t in ax.get_xticklabels()] == [str(v) for v in result.axis.values]
    finally:
        plt.close(fig)


def test_the_title_names_model_bug_params_query_and_runs():
    base, result = _grid("timing:agent.clear.mean=0.05,0.8")
    title = result.title(base)
    assert title.startswith(f"teaching --bug {BUG}: violation, 40 runs per point")
    assert "N=3" in title and "timing:" not in title


def test_plot_size_and_title_reach_the_png(tmp_path, capsys):
    picture = tmp_path / "g.png"
    argv = ["estimate", "teaching", "--bug", BUG, "--runs", "30", "--grid", "P=1,3", "--plot", str(picture)]
    assert main([*argv, "--plot-size", "8x4.5"]) == 0
    height, width = matplotlib.image.imread(picture).shape[:2]
    assert (width, height) == (800, 450)
    first = picture.read_bytes()
    assert main([*argv, "--plot-size", "8x4.5"]) == 0
    assert picture.read_bytes() == first, "the same grid draws the same bytes"
    assert main(argv) == 0
    assert matplotlib.image.imread(picture).shape[:2] == (350, 600)
    capsys.readouterr()


@pytest.mark.parametrize("size", ["8", "8x", "0x4", "8x-1", "axb", "100x4", "nanx4"])
def test_bad_plot_sizes_are_refused_in_one_line(capsys, size, tmp_path):
    code = main(["estimate", "teaching", "--grid", "P=1,3", "--plot", str(tmp_path / "g.png"), "--plot-size", size])
    err = capsys.readouterr().err
    assert code == 2 and "WIDTHxHEIGHT in inches" in err and err.count("\n") == 1
    assert not (tmp_path / "g.png").exists()


def test_plot_size_without_plot_is_refused(capsys):
    assert main(["estimate", "teaching", "--grid", "P=1,3", "--plot-size", "8x4"]) == 2
    err = capsys.readouterr().err
    assert "--plot-size sizes the --plot picture" in err and err.count("\n") == 1
