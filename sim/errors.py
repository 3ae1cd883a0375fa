"""Errors that reach the user as one line and exit code 2, never as a traceback."""

import argparse
from typing import NoReturn


class UsageError(Exception):
    """Bad usage or bad input. The message names the problem and how to fix it."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting, so that every bad input,
    in the main command or in a plugin's own options, ends as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")
