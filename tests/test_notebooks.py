"""Every notebook runs top to bottom in a fresh `python3` kernel, and is committed without outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="install the notebooks extra: pip install -e '.[notebooks]'")
nbclient = pytest.importorskip("nbclient", reason="install the notebooks extra: pip install -e '.[notebooks]'")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT = 60  # seconds; the whole suite of notebooks must stay well under two minutes


def test_there_are_notebooks() -> None:
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "timing-sweep.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    assert code, "a notebook without code answers nothing"
    assert all(not cell.outputs and cell.execution_count is None for cell in code), \
        f"strip outputs: jupyter nbconvert --clear-output --inplace {path.name}"


# A kernel's ports are chosen free before the kernel binds them, so two kernels started at the same moment
# by two test workers can choose the same port: the notebooks run one after another, on one worker.
@pytest.mark.xdist_group("jupyter-kernels")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(book, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [out for cell in book.cells if cell.cell_type == "code" for out in cell.outputs
              if out.output_type == "error"]
    assert not errors
    assert any(out.output_type == "display_data" for cell in book.cells if cell.cell_type == "code"
               for out in cell.outputs), "each notebook shows at least one picture"
