"""The engine's shape: no import cycles, a short top level, and imports that only point inward.

`steersim/` is arranged in subpackages by role, and each subpackage sits in a ring: the model API and the
facts at the centre, the engines around them, then the built-in models, then pictures and reports, then
the integrations. An import may stay in its ring or point inward, never outward, so that an inner ring
can be read, tested and reused without anything around it. The graph is built from every import
statement of every module, function-level ones included (they run too), except those under
`if TYPE_CHECKING:`, which never run.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from itertools import islice
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("steersim",)

# Innermost first. A module's ring is the ring of its subpackage of steersim/; every model package is in "models".
RINGS = (
    ("core",),  # the model API, facts, monitors, the product, the registry
    ("checking", "simulate", "traces", "harness"),  # the engines, over the core
    ("models",),  # the built-in models, written against the core and the engines
    ("draw", "report"),  # pictures and pages of what the engines found
    ("integrations",),  # ci, the pytest plugin, the Hypothesis strategies
)
# The public API (`steersim/__init__.py` re-exports from the rings) and the command line sit outside every ring;
# every other module at steersim/'s top level (errors) is shared by all rings, so it counts as innermost.
ENTRY_POINTS = ("steersim", "steersim.cli", "steersim.__main__")
MAX_TOP_LEVEL = 6
DRAWING_LIBRARIES = ("matplotlib", "jupyter", "nbclient", "dask", "IPython")


def module_files(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module of the packages, by dotted name: files in directories that are packages all the way
    up (so a vendored tree such as node_modules is not taken for Python code)."""
    found = {}
    for package in packages:
        top = root / package
        for path in sorted(top.rglob("*.py")):
            folders = path.relative_to(top).parents
            if all((top / folder / "__init__.py").exists() for folder in folders):
                parts = path.relative_to(root).with_suffix("").parts
                found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_names(tree: ast.Module, module: str, is_package: bool) -> list[str]:
    """The dotted names a module imports, wherever the import statement is, except under TYPE_CHECKING.
    `from a.b import c` yields `a.b.c`; the caller keeps the longest prefix that is a module."""
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            names.extend(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> nx.DiGraph:
    """Modules as nodes; an edge from each module to every module of the packages it imports."""
    files = module_files(root, packages)
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name in imported_names(tree, module, path.name == "__init__.py"):
            while name and name not in files:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph.add_edge(module, name)
    return graph


def ring_of(module: str, files: dict[str, Path]) -> int:
    """0 is innermost; the entry points are outside every ring."""
    if module in ENTRY_POINTS:
        return len(RINGS)
    parts = module.split(".")
    if files[module].parent.name == "steersim" and files[module].name != "__init__.py":
        return 0
    else:
        group = parts[1]
    rings = [k for k, members in enumerate(RINGS) if group in members]
    if not rings:
        pytest.fail(f"steersim/{group}/ is in no ring: add it to RINGS in tests/test_architecture.py")
    return rings[0]


def outward_imports(graph: nx.DiGraph, files: dict[str, Path]) -> list[str]:
    return [f"{a} (ring {ring_of(a, files)}) imports {b} (ring {ring_of(b, files)})"
            for a, b in sorted(graph.edges) if ring_of(b, files) > ring_of(a, files)]


def cycles_of(graph: nx.DiGraph, limit: int = 20) -> list[str]:
    """Shortest first, each from its smallest module, e.g. `a -> b -> a`."""
    cycles = [cycle[cycle.index(min(cycle)):] + cycle[:cycle.index(min(cycle))]
              for cycle in islice(nx.simple_cycles(graph), limit)]
    return [" -> ".join([*cycle, cycle[0]]) for cycle in sorted(cycles, key=lambda cycle: (len(cycle), cycle))]


def test_no_module_imports_itself_back() -> None:
    cycles = cycles_of(import_graph())
    assert not cycles, "import cycles (every import counts but those under TYPE_CHECKING):\n" + "\n".join(cycles)


def test_sim_keeps_a_short_top_level() -> None:
    top = sorted(path.name for path in (ROOT / "steersim").glob("*.py") if path.name != "__main__.py")
    assert len(top) <= MAX_TOP_LEVEL, f"steersim/ has {len(top)} modules at its top level: {top}; move them into rings"


def test_every_subpackage_of_sim_is_in_a_ring() -> None:
    subpackages = sorted(path.parent.name for path in (ROOT / "steersim").glob("*/__init__.py"))
    placed = {name for members in RINGS for name in members}
    assert set(subpackages) <= placed, f"subpackages in no ring: {sorted(set(subpackages) - placed)}"


def test_imports_only_point_inward() -> None:
    files = module_files(ROOT)
    outward = outward_imports(import_graph(), files)
    assert not outward, "imports that point outward:\n" + "\n".join(outward)


def test_the_rings_inside_drawing_never_load_drawing_libraries() -> None:
    files = module_files(ROOT, ("steersim",))
    drawing = next(k for k, members in enumerate(RINGS) if "draw" in members)
    inner = sorted(m for m in files if ring_of(m, files) < drawing)
    code = (f"import importlib, sys; [importlib.import_module(m) for m in {inner!r}]; "
            f"bad = sorted({{m.split('.')[0] for m in sys.modules}} & {set(DRAWING_LIBRARIES)!r}); "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def write_modules(root: Path, sources: dict[str, str]) -> None:
    for name, source in sources.items():
        path = root / Path(*name.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in path.relative_to(root).parents:
            (root / folder / "__init__.py").touch()
        path.write_text(source)


def test_the_graph_sees_lazy_and_relative_imports_and_skips_type_checking(tmp_path: Path) -> None:
    write_modules(tmp_path, {
        "steersim.core.model":
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from steersim.draw.picture import X\n",
        "steersim.draw.picture": "def f():\n    from steersim.core import model\n",
        "steersim.simulate.loop": "from ..core.model import Y\nimport steersim.simulate.clock\n",
        "steersim.simulate.clock": "def g():\n    import steersim.simulate.loop\n",
    })
    graph = import_graph(tmp_path, ("steersim",))
    assert sorted(graph.edges) == [("steersim.draw.picture", "steersim.core.model"),
                                   ("steersim.simulate.clock", "steersim.simulate.loop"),
                                   ("steersim.simulate.loop", "steersim.core.model"),
                                   ("steersim.simulate.loop", "steersim.simulate.clock")]
    assert cycles_of(graph) == ["steersim.simulate.clock -> steersim.simulate.loop -> steersim.simulate.clock"]


def test_an_outward_import_is_named(tmp_path: Path) -> None:
    write_modules(tmp_path, {"steersim.core.model": "def f():\n    import steersim.report.page\n",
                             "steersim.report.page": ""})
    outward = outward_imports(import_graph(tmp_path, ("steersim",)), module_files(tmp_path, ("steersim",)))
    assert outward == ["steersim.core.model (ring 0) imports steersim.report.page (ring 3)"]


MODEL_SHAPE = ("__init__.py", "spec.py", "state.py", "model.py", "facts.py", "properties.py")


def model_packages(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in (root / "steersim" / "models").iterdir() if (p / "__init__.py").exists())


def shape_problems(package: Path) -> list[str]:
    """What keeps a model package from the common shape (README, "How it is built"): a missing role
    file, or a `spec.py` that imports the model (it is data only, so that `model.py` may read it)."""
    problems = [f"{package.name} has no {name}" for name in MODEL_SHAPE if not (package / name).exists()]
    spec = package / "spec.py"
    if spec.exists():
        module = f"steersim.models.{package.name}.spec"
        names = imported_names(ast.parse(spec.read_text()), module, is_package=False)
        model = f"steersim.models.{package.name}.model"
        if any(name == model or name.startswith(f"{model}.") for name in names):
            problems.append(f"{package.name}/spec.py imports the model")
    return problems


def test_every_model_package_has_the_common_shape() -> None:
    packages = model_packages()
    assert len(packages) >= 6
    assert [problem for package in packages for problem in shape_problems(package)] == []


def test_a_package_out_of_shape_is_named(tmp_path: Path) -> None:
    package = tmp_path / "models" / "mine"
    package.mkdir(parents=True)
    for name in ("__init__.py", "state.py", "model.py"):
        (package / name).write_text("")
    (package / "spec.py").write_text("from steersim.models.mine.model import Mine\n")
    assert shape_problems(package) == ["mine has no facts.py", "mine has no properties.py",
                                       "mine/spec.py imports the model"]
