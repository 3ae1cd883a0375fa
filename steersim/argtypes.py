"""Value types for command-line options that refuse a bad value while the options are parsed.

An option given to argparse as `type=` is checked before the command does any work, so a search of an
hour never ends on a path it cannot write or a limit it cannot honour. Each raises
`argparse.ArgumentTypeError`, which the parser turns into one line naming the option (exit 2). The
main command and the plugins' own parsers use these same types.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path


def output_file(text: str) -> str:
    """A file the command will write: its folder exists and is writable, and the path is no folder."""
    path = Path(text)
    if not text:
        raise argparse.ArgumentTypeError("needs a file name")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name inside it")
    _writable_folder(text, path.parent)
    if path.exists() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: the file is read-only")
    return text


def output_folder(text: str) -> str:
    """A folder the command will create (with its parents) or write into: where it exists it is a
    writable folder, else its nearest existing ancestor is."""
    if not text:
        raise argparse.ArgumentTypeError("needs a folder name")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder; give a folder")
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    _writable_folder(text, existing)
    return text


def _writable_folder(text: str, folder: Path) -> None:
    shown = str(folder) if str(folder) else "."
    if not folder.exists():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: folder {shown!r} does not exist; create it first")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {shown!r} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: folder {shown!r} is not writable")


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a whole number, not {text!r}") from None


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a number, not {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"takes a finite number, not {text!r}")
    return value


def positive_int(text: str) -> int:
    """A count or limit of at least 1."""
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"takes a whole number of at least 1, not {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """A count, a depth or a seed: 0 or more."""
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"takes a whole number of at least 0, not {text!r}")
    return value


def positive_float(text: str) -> float:
    """Seconds, megabytes, virtual time: a finite number above 0."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"takes a number above 0, not {text!r}")
    return value


def non_negative_float(text: str) -> float:
    """An interval where 0 means "every time": a finite number, 0 or more."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"takes a number of at least 0, not {text!r}")
    return value
