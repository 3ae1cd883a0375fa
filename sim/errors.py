"""Errors that reach the user as one line and exit code 2, never as a traceback."""

import argparse
from typing import NoReturn

# What each exit code of every steersim command means (README, "Exit codes"): one meaning each, so a CI job
# can tell a finding from a crash.
EXIT_OK = 0  # every property holds
EXIT_VIOLATION = 1  # a property is violated (conform and serve: a finding)
EXIT_USAGE = 2  # bad usage or bad input: one line says what is wrong and how to fix it
EXIT_INCOMPLETE = 3  # a limit was hit before any violation, or nothing was judged
EXIT_INTERNAL = 4  # an internal error of steersim: one line says where the traceback went and where to report it
EXIT_INTERRUPTED = 130  # Ctrl-C: the partial report was written with status "interrupted"
EXIT_BROKEN_PIPE = 141  # whoever read the output closed it early (`| head`): the shell's code for SIGPIPE


class UsageError(Exception):
    """Bad usage or bad input. The message names the problem and how to fix it."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting, so that every bad input,
    in the main command or in a plugin's own options, ends as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")
