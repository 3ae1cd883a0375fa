"""The built distributions: the wheel and sdist build and pass `twine check`, carry the files the harnesses
read at run time and nothing else (no node_modules, tests, notebooks or benchmarks), and the wheel installs
beside a user's own `models` package without either shadowing the other.

Offline and fast: the build runs without isolation (setuptools from this environment) and the fresh venv
sees this environment's site-packages for the heavy dependencies; the venv's own copy of steersim is the
one imported (checked), not the editable install of the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from steersim import crash

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

pytestmark = pytest.mark.xdist_group("packaging")  # one build for the module's tests


def _run(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of the tracked files: a checkout's own build leftovers (an `*.egg-info` whose
    SOURCES.txt an earlier configuration wrote, installed node_modules) must not reach the distributions,
    as they cannot on a fresh clone."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    for name in filter(None, tracked.stdout.split("\0")):
        if (ROOT / name).exists() or (ROOT / name).is_symlink():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name, follow_symlinks=False)
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source, cwd=out)
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("steersim-*.whl")
    return wheel


def test_twine_check_passes(dist: Path) -> None:
    files = sorted(dist.iterdir())
    assert sorted(f.suffix for f in files) == [".gz", ".whl"]
    done = _run(sys.executable, "-m", "twine", "check", "--strict", *files, cwd=dist)
    assert done.stdout.count("PASSED") == 2


def test_wheel_has_the_run_time_files_and_nothing_else(dist: Path) -> None:
    with zipfile.ZipFile(_wheel(dist)) as wheel:
        names = wheel.namelist()
        metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    tracked = subprocess.run(["git", "ls-files", "steersim", "sim"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0 or not tracked.stdout:
        pytest.skip("not a git checkout: the tracked files are unknown")
    # Every tracked file under the packages is one the code reads (modules, Node manifests, drivers,
    # reproductions), except the models' READMEs, which are documentation.
    wanted = {f for f in tracked.stdout.split() if not f.endswith(".md")}
    assert wanted <= set(names), sorted(wanted - set(names))
    packaged = {n for n in names if ".dist-info/" not in n}
    assert packaged == wanted, sorted(packaged - wanted)
    assert not [n for n in names if "node_modules" in n or n.split("/")[0] in ("tests", "notebooks", "benchmarks")]
    for label, url in PROJECT["urls"].items():
        assert f"Project-URL: {label}, {url}" in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_sdist_builds_the_wheel_and_holds_no_node_modules(dist: Path) -> None:
    (sdist,) = dist.glob("steersim-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert not [n for n in names if "node_modules" in n]
    root = names[0].split("/")[0]
    for needed in ("pyproject.toml", "LICENSE", "README.md",
                   "steersim/models/openclaw/harness/node/package-lock.json",
                   "steersim/models/foundry/harness/repro/futures_bound_by_position.py"):
        assert f"{root}/{needed}" in names, needed


USER_MODELS = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "someones-models"
        version = "1.0"

        [tool.setuptools]
        packages = ["models"]
        """,
    "models/__init__.py": 'OWNER = "the user"\n',
}

PROBE = """\
import warnings, sys
import models
import steersim
from steersim import crash
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import sim
    import sim.core.model
assert any(issubclass(w.category, DeprecationWarning) for w in caught), [str(w.message) for w in caught]
assert sim.core.model.Model is steersim.core.model.Model
print(models.OWNER)
print(steersim.__file__)
print(crash.REPORT_AT)
"""


def test_wheel_installs_beside_a_user_models_package(dist: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    user = tmp_path / "someones-models"
    for name, text in USER_MODELS.items():
        (user / name).parent.mkdir(parents=True, exist_ok=True)
        (user / name).write_text(textwrap.dedent(text), encoding="utf-8")
    cwd = tmp_path / "elsewhere"  # not the repository, so neither its steersim/ nor models is on the path
    cwd.mkdir()
    env = {"PATH": f"{env_dir / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}
    pip = (sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index",
           "--no-build-isolation")
    _run(*pip, user, cwd=cwd, env=env)
    _run(*pip, "--force-reinstall", _wheel(dist), cwd=cwd, env=env)

    owner, steersim_file, report_at = _run(python, "-c", PROBE, cwd=cwd, env=env).stdout.splitlines()
    assert owner == "the user"
    assert Path(steersim_file).is_relative_to(env_dir), steersim_file
    assert report_at == PROJECT["urls"]["Issues"]
    checked = _run(env_dir / "bin" / "steersim", "check", "teaching", cwd=cwd, env=env)
    summary, _, readings = checked.stdout.partition("\nreadings (")
    assert summary.splitlines()[-1].startswith("ok:"), checked.stdout[-500:]
    assert [line.split()[0] for line in readings.splitlines()[1:]] == ["ok", "ok"], checked.stdout[-500:]


def test_crash_line_names_the_issue_tracker_of_the_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    class Meta:
        def get_all(self, field: str) -> list[str]:
            assert field == "Project-URL"
            return ["Homepage, https://example.org/home", "Issues, https://example.org/issues"]

    monkeypatch.setattr(crash, "metadata", lambda name: Meta())
    assert crash.issue_tracker() == "https://example.org/issues"
