"""Every command's input and output paths, in one table, so that no command writes over what it reads or
over another of its own outputs, and a write that fails at the end names its path.

The option types of `steersim.argtypes` judge one path at a time (its folder exists and takes a file);
what they cannot see is a path given twice: `check m.py:SPEC --json m.py` would replace the model's
source with the report, `--json r --junit r` one report with the other. `refuse_clashes` compares every
output of the parsed command with its inputs and its other outputs, before any work starts. A
checkpoint being resumed may be named as the run's `--checkpoint` too: a checkpoint replaces its file
atomically, and only with a later point of the same run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path

from steersim.errors import UsageError

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
}
OUTPUT_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "check": (("--json", "json"), ("--junit", "junit"), ("--graph", "graph"), ("--checkpoint", "checkpoint")),
    "simulate": (("--json", "json"),),
    "estimate": (("--json", "json"), ("--plot", "plot")),
    "ci": (("--json", "json"), ("--junit", "junit")),
    "diagram": (("-o", "output"),),
}
OUTPUT_FOLDERS: dict[str, tuple[tuple[str, str], ...]] = {
    "check": (("--traces", "traces"),),
    "simulate": (("--out", "out"), ("--traces", "traces")),
    "estimate": (("--explain", "explain"),),
    "report": (("-o", "output"),),
}
ALLOWED_SAME = {("--checkpoint", "--resume")}  # output, input: see the module's docstring


def _given(args: argparse.Namespace, table: dict[str, tuple[tuple[str, str], ...]]) -> list[tuple[str, str]]:
    return [(option, value) for option, attr in table.get(args.command, ())
            if isinstance(value := getattr(args, attr, None), str) and value]


def model_source(reference: str) -> str | None:
    """The file a model reference reads its code from, when it names one without running it."""
    where, colon, _ = reference.rpartition(":")
    if not colon or not where:
        return None
    if where.endswith(".py") or "/" in where or os.sep in where:
        return where
    try:
        found = importlib.util.find_spec(where)
    except (ImportError, ValueError):
        return None  # loading the model names the problem
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
    files, folders = _given(args, OUTPUT_FILES), _given(args, OUTPUT_FOLDERS)
    for k, (option, out) in enumerate(files):
        for name, source in inputs:
            if _same(out, source) and (option, name) not in ALLOWED_SAME:
                what = "the model's source" if name == "MODEL" else f"the file read as {name}"
                raise UsageError(f"{args.command} {option} {out}: that is {what}, which the command would "
                                 "overwrite; give another output path")
        for other, earlier in files[:k]:
            if _same(out, earlier):
                raise UsageError(f"{args.command} {other} and {option} both name {out}: one output would "
                                 "overwrite the other; give each its own path")
    for option, folder in folders:
        for name, source in [*inputs, *files]:
            if _same(folder, source):
                raise UsageError(f"{args.command} {option} {folder}: that is the file given as {name}; give "
                                 "another folder")
        for other, earlier in folders[: folders.index((option, folder))]:
            if _same(folder, earlier):
                raise UsageError(f"{args.command} {other} and {option} both name folder {folder}: give each "
                                 "its own folder")


def write_failure(args: argparse.Namespace | None, error: OSError) -> str | None:
    """The line for a write to one of the command's outputs that failed after the work was done (the
    disk filled, the folder went away), or None when `error` concerns no output of the command."""
    if args is None or not error.filename:
        return None
    failed = str(error.filename)
    for option, out in [*_given(args, OUTPUT_FILES), *_given(args, OUTPUT_FOLDERS)]:
        if _inside(failed, out) or _temporary_of(failed, out):
            return (f"{args.command} {option} {out}: cannot write {failed} ({error.strerror or error}); "
                    "free the space or give a writable path, and run the command again")
    return None
