"""Errors that reach the user as one line and exit code 2, never as a traceback."""


class UsageError(Exception):
    """Bad usage or bad input. The message names the problem and how to fix it."""
