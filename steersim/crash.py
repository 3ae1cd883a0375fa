"""An internal error of steersim: one line for the user, the traceback in a file for the bug report.

A crash must not look like a finding (exit 1) nor bury the command's output under a traceback, so the
command line turns any unexpected exception into exit code 4 and this line; `steersim --debug` prints
the traceback instead. Bad input never comes here: readers raise `UsageError` (exit 2).
"""

from __future__ import annotations

import platform
import sys
import tempfile
import traceback
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, metadata, version

ISSUES_LABEL = "Issues"  # the [project.urls] entry of pyproject.toml that names the issue tracker


def issue_tracker() -> str:
    """Where to report a crash: the installed metadata's `Issues` URL, so that pyproject.toml is the one
    place that defines it (a source tree run without installing says so in words)."""
    try:
        urls = metadata("steersim").get_all("Project-URL") or []
    except PackageNotFoundError:
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip() == ISSUES_LABEL and url.strip():
            return url.strip()
    return "the steersim issue tracker"


REPORT_AT = issue_tracker()
MESSAGE_LIMIT = 300  # characters of the exception's message on the one line


def crash_line(crash: BaseException, argv: Sequence[str], debug: bool) -> str:
    """Write the traceback of `crash` to a fresh file under the system's temporary folder (or, with
    `debug`, to stderr) and return the one line that says what happened and what to do."""
    text = "".join(traceback.format_exception(crash))
    summary = " ".join(f"{type(crash).__name__}: {crash}".split())[:MESSAGE_LIMIT]
    if debug:
        print(text, end="", file=sys.stderr)
        return f"steersim: internal error: {summary}; please report it with the traceback above at {REPORT_AT}"
    try:
        with tempfile.NamedTemporaryFile("w", prefix="steersim-crash-", suffix=".txt", delete=False,
                                         encoding="utf-8") as f:
            f.write(f"command: steersim {' '.join(argv)}\n{_versions()}\n\n{text}")
    except OSError as unwritable:
        print(text, end="", file=sys.stderr)
        return (f"steersim: internal error: {summary}; the traceback (above) could not be saved ({unwritable}); "
                f"please report it at {REPORT_AT}")
    return f"steersim: internal error: {summary}; traceback in {f.name}; please report it with that file at {REPORT_AT}"


def _versions() -> str:
    try:
        steersim = version("steersim")
    except PackageNotFoundError:
        steersim = "not installed"
    return f"steersim {steersim}, Python {platform.python_version()}, {platform.platform()}"
