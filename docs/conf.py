"""Sphinx configuration of steersim's documentation: MyST pages, the notebooks as a gallery, the CLI
reference from the argument parser and the API reference from the docstrings of `from steersim import ...`.

Build it with `sphinx-build -W --keep-going -b html docs docs/_build/html` (install the `docs` extra).
The notebooks run at build time, so the gallery shows their outputs; `STEERSIM_DOCS_EXECUTE=off` renders
them without running them (the test suite does: it runs every notebook already, in tests/test_notebooks.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))
sys.path.insert(0, str(DOCS / "_ext"))

project = "steersim"
author = "the steersim authors"
copyright = "the steersim authors"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinxarg.ext",
    "steersim_docs",
]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
exclude_patterns = ["_build", "**/_*.md", "**.ipynb_checkpoints"]
html_theme = "alabaster"
html_title = "steersim"
templates_path: list[str] = []

# The notebooks of notebooks/ are linked into gallery/ and run in a fresh kernel each; a cell that raises
# fails the build.
nb_execution_mode = os.environ.get("STEERSIM_DOCS_EXECUTE", "force")
nb_execution_timeout = 120
nb_execution_raise_on_error = True

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"undoc-members": False}
