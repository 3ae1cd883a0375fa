"""Errors that reach the user as one line and exit code 2, never as a traceback."""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path
from typing import Any, NoReturn

# What each exit code of every steersim command means (README, "Exit codes"): one meaning each, so a CI job
# can tell a finding from a crash.
EXIT_OK = 0  # every property holds
EXIT_VIOLATION = 1  # a property is violated (conform and serve: a finding)
EXIT_USAGE = 2  # bad usage or bad input (a model error too): one line says what is wrong and how to fix it
EXIT_INCOMPLETE = 3  # a limit was hit before any violation, or nothing was judged
EXIT_INTERNAL = 4  # an internal error of steersim: one line says where the traceback went and where to report it
EXIT_INTERRUPTED = 130  # Ctrl-C: the partial report was written with status "interrupted"
EXIT_BROKEN_PIPE = 141  # whoever read the output closed it early (`| head`): the shell's code for SIGPIPE


class UsageError(Exception):
    """Bad usage or bad input. The message names the problem and how to fix it."""


class ModelError(UsageError):
    """A model's own code raised, or emitted a fact outside the vocabulary: the run ends here, and the
    message gives the problem, the action and the state it happened at, and the path of actions that led
    there, so that the model's author can reproduce it. A usage error (exit 2), because the model is the
    user's input; never a traceback of steersim's. Built from strings only, so it crosses process
    boundaries (worker pools, Dask) as it is."""

    SHOWN_STEPS = 30  # the last steps of a long (simulated) path that the message lists

    def __init__(self, problem: str, action: str | None = None, state: str | None = None,
                 path: tuple[str, ...] | None = None, origin: str = "") -> None:
        super().__init__(problem, action, state, path, origin)
        self.problem, self.action, self.state, self.path, self.origin = problem, action, state, path, origin

    def with_path(self, path: tuple[str, ...], origin: str = "") -> ModelError:
        """The same error, with the labels of the actions from an initial state to where it happened."""
        return ModelError(self.problem, self.action, self.state, tuple(path), origin)

    def __str__(self) -> str:
        lines = [f"model error: {self.problem}"]
        if self.action is not None:
            lines.append(f"  at action: {self.action}")
        if self.state is not None:
            lines.append(f"  in state:  {self.state}")
        if self.path is not None:
            origin = self.origin or "the initial state"
            if not self.path:
                lines.append(f"  path to it: none, it is {origin}")
            else:
                lines.append(f"  path to it from {origin}, {len(self.path)} steps:")
                hidden = len(self.path) - self.SHOWN_STEPS
                if hidden > 0:
                    lines.append(f"    ... {hidden} earlier steps")
                first = max(hidden, 0)
                lines += [f"    {first + k + 1:3}. {label}" for k, label in enumerate(self.path[first:])]
        return "\n".join(lines)


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting, so that every bad input,
    in the main command or in a plugin's own options, ends as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def read_toml(path: str | Path, what: str, meant: str, missing: str = "") -> dict[str, Any]:
    """The table in the TOML file `path`, or the one line that says why there is none: `what` names the
    file (`timing file`), `meant` what it should hold (`a timing profile`), `missing` is added when the
    file does not exist (how to name another)."""
    named = f"{what} {str(path)!r}"
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise UsageError(f"{named} does not exist{missing}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as bad:
        raise UsageError(f"{named} is not valid TOML: {bad}") from None
    except RecursionError:
        raise UsageError(f"{named} is nested too deeply to be {meant}") from None
    except OSError as bad:
        raise UsageError(f"{named} cannot be read: {bad.strerror}") from None
