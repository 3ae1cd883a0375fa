"""Value types for command-line options that refuse a bad value while the options are parsed.

An option given to argparse as `type=` is checked before the command does any work, so a search of an
hour never ends on a path it cannot write or a limit it cannot honour: an output's folder is really
written to (a temporary file created and removed), since permission bits do not tell (root may write
anywhere they allow, yet not under /proc). Each raises
`argparse.ArgumentTypeError`, which the parser turns into one line naming the option (exit 2). The
main command and the plugins' own parsers use these same types.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit


def output_file(text: str) -> str:
    """A file the command will write: its folder exists and is writable, and the path is no folder."""
    path = Path(text)
    if not text:
        raise argparse.ArgumentTypeError("needs a file name")
    if path.is_dir() or text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"{text!r} names a folder; give a file name inside it")
    _writable_folder(text, path.parent)
    if path.exists():
        _try_opening(text)
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
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".steersim-probe-")
    except OSError as bad:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: folder {shown!r} takes no new file "
                                         f"({bad.strerror}); give a path in a writable folder") from None
    os.close(fd)
    os.unlink(probe)


def _try_opening(text: str) -> None:
    """An existing file is opened for appending, which changes nothing in it, to learn whether it can
    be written (a read-only file, or one the system refuses, such as most of /proc)."""
    try:
        with open(text, "ab"):
            pass
    except OSError as bad:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {bad.strerror}; give another path") from None


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


DASK_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")


def dask_address(text: str) -> str:
    """`local`, or a Dask scheduler's address as Dask takes it (`tcp://HOST:PORT`, or `HOST:PORT` for
    tcp), refused while the options are parsed rather than when the work is about to be shipped."""
    if text == "local":
        return text
    try:
        parts = urlsplit(text if "://" in text else f"tcp://{text}")
        port = parts.port
    except ValueError:
        port, parts = None, None
    if parts is None or parts.scheme not in DASK_SCHEMES or not parts.hostname or port is None \
            or any(c.isspace() for c in text) or parts.path not in ("", "/"):
        raise argparse.ArgumentTypeError(f"takes `local` or a scheduler's address such as tcp://HOST:8786, not "
                                         f"{text[:60]!r}")
    return text
