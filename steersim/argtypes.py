"""Value types for command-line options that refuse a bad value while the options are parsed.

An option given to argparse as `type=` is checked before the command does any work, so a search of an
hour never ends on a path it cannot write or a limit it cannot honour: an output's folder is really
written to (a temporary file created and removed), since permission bits do not tell (root may write
anywhere they allow, yet not under /proc).

What one option's type cannot see is a path given twice; `refuse_clashes` below, from one table of every
command's inputs and outputs, sees that once the whole command line is parsed. Each raises
`argparse.ArgumentTypeError`, which the parser turns into one line naming the option (exit 2). The
main command and the plugins' own parsers use these same types.
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import math
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from steersim.errors import UsageError


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


# --- the inputs and outputs of every command ------------------------------------------------------------
# Every command's input and output paths, in one table, so that no command writes over what it reads or
# over another of its own outputs, and a write that fails at the end names its path.
#
# The option types above judge one path at a time (its folder exists and takes a file); what they cannot see is
# a path given twice: `check m.py:SPEC --json m.py` would replace the model's source with the report, `--json r
# --junit r` one report with the other. `refuse_clashes` compares every output of the parsed command with its
# inputs and its other outputs, before any work starts. A checkpoint being resumed may be named as the run's
# `--checkpoint` too: a checkpoint replaces its file atomically, and only with a later point of the same run.

# command -> (option, attribute) of each kind of path. The model reference is an input when it names a
# file or an importable module (`path/to/file.py:SPEC`, `package.module:SPEC`).
INPUTS: dict[str, tuple[tuple[str, str], ...]] = {
    "check": (("MODEL", "model"), ("--resume", "resume")),
    "simulate": (("MODEL", "model"), ("--timing", "timing")),
    "estimate": (("MODEL", "model"), ("--timing", "timing")),
    "audit": (("MODEL", "model"), ("--timing", "timing")),
    "report": (("MODEL", "model"),),
    "explore": (("MODEL", "model"), ("--trace", "trace")),
    "replay": (("TRACE", "trace"),),
    "diagram": (("TRACE", "trace"), ("--timing", "timing")),
    "ci": (("--config", "config"),),
    "validate": (("MODEL", "model"), ("LOG", "logs")),
}
OUTPUT_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "check": (("--json", "json"), ("--junit", "junit"), ("--graph", "graph"), ("--checkpoint", "checkpoint")),
    "simulate": (("--json", "json"),),
    "estimate": (("--json", "json"), ("--plot", "plot")),
    "ci": (("--json", "json"), ("--junit", "junit")),
    "diagram": (("-o", "output"),),
    "validate": (("--json", "json"),),
}
OUTPUT_FOLDERS: dict[str, tuple[tuple[str, str], ...]] = {
    "check": (("--traces", "traces"),),
    "simulate": (("--out", "out"), ("--traces", "traces")),
    "estimate": (("--explain", "explain"),),
    "report": (("-o", "output"),),
    "validate": (("--report", "report"),),
}
ALLOWED_SAME = {("--checkpoint", "--resume")}  # output, input: see the module's docstring


def _given(args: argparse.Namespace, table: dict[str, tuple[tuple[str, str], ...]]) -> list[tuple[str, str]]:
    """Each path the command was given for an entry of `table`, one pair per path (an option such as
    validate's LOG takes several)."""
    given = []
    for option, attr in table.get(args.command, ()):
        value = getattr(args, attr, None)
        given += [(option, path) for path in (value if isinstance(value, list) else [value])
                  if isinstance(path, str) and path]
    return given


def model_source(reference: str) -> str | None:
    """The file a model reference reads its code from, when it names one without running it."""
    where, colon, _ = reference.rpartition(":")
    if not colon or not where:
        return None
    if where.endswith(".py") or "/" in where or os.sep in where:
        return where
    if os.getcwd() not in sys.path:  # where loading the model will look for it too (`core.registry`)
        sys.path.append(os.getcwd())
    try:
        found = importlib.util.find_spec(where)
    except Exception:  # a parent package that fails to import: loading the model names the problem
        return None
    return found.origin if found is not None and found.has_location else None


def _same(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # two names of one file (a hard link)
    except OSError:
        return False


def _inside(path: str, folder: str) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def _temporary_of(path: str, out: str) -> bool:
    """Whether `path` is the temporary file a replacement of `out` is written to first (`.NAME.*`)."""
    failed, target = Path(os.path.realpath(path)), Path(os.path.realpath(out))
    return failed.parent == target.parent and failed.name.startswith(f".{target.name}.")


def refuse_clashes(args: argparse.Namespace) -> None:
    """Refuse, in one line, an output that is one of the command's inputs or another of its outputs."""
    inputs = []
    for option, value in _given(args, INPUTS):
        path = model_source(value) if option == "MODEL" else value
        if path is not None:
            inputs.append((option, path))
    refuse_path_clashes(args.command, inputs, _given(args, OUTPUT_FILES), _given(args, OUTPUT_FOLDERS))


def refuse_path_clashes(command: str, inputs: Sequence[tuple[str, str]], files: Sequence[tuple[str, str]],
                        folders: Sequence[tuple[str, str]] = ()) -> None:
    """The rule of `refuse_clashes` over given (option, path) pairs, for a command that parses its own
    options (the `conform` and `serve` plugins): None values are left out."""
    inputs = [(name, path) for name, path in inputs if path]
    files = [(name, path) for name, path in files if path]
    folders = [(name, path) for name, path in folders if path]
    for k, (option, out) in enumerate(files):
        for name, source in inputs:
            if _same(out, source) and (option, name) not in ALLOWED_SAME:
                what = "the model's source" if name == "MODEL" else f"the file read as {name}"
                raise UsageError(f"{command} {option} {out}: that is {what}, which the command would "
                                 "overwrite; give another output path")
        for other, earlier in files[:k]:
            if _same(out, earlier):
                raise UsageError(f"{command} {other} and {option} both name {out}: one output would "
                                 "overwrite the other; give each its own path")
    for option, folder in folders:
        for name, source in [*inputs, *files]:
            if _same(folder, source):
                raise UsageError(f"{command} {option} {folder}: that is the file given as {name}; give "
                                 "another folder")
        for other, earlier in folders[: folders.index((option, folder))]:
            if _same(folder, earlier):
                raise UsageError(f"{command} {other} and {option} both name folder {folder}: give each "
                                 "its own folder")


def write_failure(args: argparse.Namespace | None, error: OSError) -> str | None:
    """The line for a write to one of the command's outputs that failed after the work was done (the
    folder went away, the disk filled), or None when `error` concerns no output of the command. A full
    disk is met while writing, where the error names no file: then every output of the command is named."""
    if args is None:
        return None
    outputs = [*_given(args, OUTPUT_FILES), *_given(args, OUTPUT_FOLDERS)]
    reason = error.strerror or str(error)
    if not error.filename:
        if error.errno not in FULL or not outputs:
            return None
        named = ", ".join(f"{option} {out}" for option, out in outputs)
        return f"{args.command}: writing its outputs ({named}) failed: {reason}; free some space and run it again"
    failed = str(error.filename)
    for option, out in outputs:
        if _inside(failed, out) or _temporary_of(failed, out):
            return (f"{args.command} {option} {out}: cannot write {failed} ({reason}); "
                    "free the space or give a writable path, and run the command again")
    return None


FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # a write that failed for want of room, which names no file
