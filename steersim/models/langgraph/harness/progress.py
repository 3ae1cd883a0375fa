"""Progress lines of `steersim conform langgraph` on stderr, like the other long commands'.

The full plan runs hundreds of scenarios, each a few seconds of the real server; without a line now
and then a user cannot tell a slow run from a hung one. The lines go to stderr, so the summary on
stdout and the `--json` document stay what they were; the wall clock is read here, in the command,
never inside the harness, so no recording depends on it.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

INTERVAL_S = 5.0


class Progress:
    """Counts the scenarios judged and prints `progress: ...` at most every `interval` seconds, and once
    when the plan's size becomes known (after the solo run) so that the first line comes early."""

    def __init__(self, stream: TextIO | None = None, interval: float = INTERVAL_S) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.started = time.monotonic()
        self.last = self.started
        self.done = 0
        self.causes = 0
        self.total: int | None = None

    def planned(self, total: int) -> None:
        self.total = total
        self._print(time.monotonic())

    def judged(self, causes: int) -> None:
        self.done += 1
        self.causes = causes
        now = time.monotonic()
        if now - self.last >= self.interval:
            self._print(now)

    def _print(self, now: float) -> None:
        self.last = now
        of = f" of {self.total:,}" if self.total is not None else ""
        print(f"progress: {now - self.started:7.1f} s  scenarios {self.done:,}{of}  root causes "
              f"{self.causes}", file=self.stream, flush=True)
