"""The documentation site builds with warnings as errors, its tutorial's commands run and end as the page
says, its references cover what they promise, and the README stays a short front page."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import steersim

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
COMMAND = re.compile(r"^\$ steersim (?P<args>.+?)\s+# exit (?P<code>\d+)$")


def shell_blocks(page: Path) -> list[list[str]]:
    """The lines of each fenced `sh` or `console` block of a Markdown page."""
    return [block.strip("\n").splitlines()
            for block in re.findall(r"^```(?:sh|console)\n(.*?)^```", page.read_text(), re.S | re.M)]


def test_site_builds_without_a_warning(tmp_path: Path) -> None:
    """The whole site, warnings as errors. The notebooks are rendered without running them here, as
    tests/test_notebooks.py runs each of them already; a real build (`sphinx-build` alone) runs them."""
    for module in ("sphinx", "myst_nb", "sphinxarg"):
        pytest.importorskip(module, reason="install the docs extra: pip install -e '.[docs]'")
    env = {**os.environ, "STEERSIM_DOCS_EXECUTE": "off", "PYTHONPATH": str(ROOT)}
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-j", "1", "-q", "-b", "html",
                            str(DOCS), str(tmp_path / "html")], capture_output=True, text=True, env=env, timeout=240)
    assert built.returncode == 0, built.stderr[-4000:]
    page = (tmp_path / "html" / "reference" / "cli.html").read_text()
    assert "--require-coverage" in page and "estimate" in page  # generated from the parser
    foundry = (tmp_path / "html" / "systems" / "foundry.html").read_text()
    assert "orphan-future-after-queue-full" in foundry  # the cause catalogue, read from the harness


def test_every_tutorial_command_states_its_exit_code() -> None:
    lines = [line for block in shell_blocks(DOCS / "tutorial.md") for line in block]
    assert len(lines) >= 8
    assert all(COMMAND.match(line) for line in lines), [line for line in lines if not COMMAND.match(line)]


def test_tutorial_commands_end_as_the_page_says(tmp_path: Path) -> None:
    """One after another in one empty folder, as a reader runs them: later commands read earlier files."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    printed = []
    for block in shell_blocks(DOCS / "tutorial.md"):
        for line in block:
            command = COMMAND.match(line)
            assert command, line
            ran = subprocess.run([sys.executable, "-m", "steersim", *shlex.split(command["args"])], cwd=tmp_path,
                                 capture_output=True, text=True, env=env, timeout=120)
            assert ran.returncode == int(command["code"]), f"{line}\n{ran.stdout[-2000:]}\n{ran.stderr[-2000:]}"
            printed.append(ran.stdout)
    assert (tmp_path / "seed48.svg").is_file() and (tmp_path / "cex.png").is_file()
    # what the page quotes of the output is what the commands print
    page, output = (DOCS / "tutorial.md").read_text(), "".join(printed)
    for quoted in ("ok: 405 distinct states", "cause: s1 was accepted at step 11 and was removed from queue at step 12",
                   "ok: 15 steps reproduced", "first counterexample: seed 48, trace traces/teaching-lost-at-boundary",
                   "P(violation) 1.80%, 95% interval [1.26%, 2.48%] (36 of 2,000 runs, exact)",
                   "P(violation) < 0.150% at 95% (0 of 2,000 runs; one-sided exact bound)"):
        assert quoted in page and quoted in output, quoted


def test_own_model_page_includes_the_checked_file() -> None:
    """The how-to shows docs/howto/drop_oldest.py itself (tests/test_authoring.py runs that file)."""
    page = (DOCS / "howto" / "own-model.md").read_text()
    assert "```{literalinclude} drop_oldest.py" in page


def test_timing_example_is_a_valid_profile() -> None:
    profile = steersim.TimingProfile.from_file(DOCS / "howto" / "slow-tools.toml")
    assert profile.delay_for("tool.finish").params == (15.0, 1.0)
    assert profile.delay_for("agent.clear") == profile.default


def test_api_reference_documents_every_public_name() -> None:
    page = (DOCS / "reference" / "api.md").read_text()
    documented = set(re.findall(r"^\.\. auto\w+:: steersim\.(\w+)$", page, re.M))
    assert documented == set(steersim.__all__)


def test_public_names_resolve_even_beside_their_subpackages() -> None:
    """Every name of `from steersim import ...` is what it says, also once a subpackage of the same
    name (steersim.simulate) has been imported."""
    import steersim.simulate  # the subpackage, as any simulation imports it

    modules = {name for name in steersim.__all__ if isinstance(getattr(steersim, name), ModuleType)}
    assert modules == {"facts"}
    assert steersim.simulate_seed.__module__ == "steersim.simulate.simulator"


def test_readme_is_a_short_front_page_with_the_set_up_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 80
    commands = re.findall(r"^```sh\n(.*?)\n```", readme, re.S | re.M)
    assert "pip install -e . && steersim check teaching" in commands
    test_command = next(c for c in commands if "python -m pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text()  # CI runs exactly the README's test command
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), link
