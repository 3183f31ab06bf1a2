"""A sweep's progress: cells done and failed of the grid, and the time left.

On a terminal, a live bar (rich); otherwise a line now and then (at most one per
``every`` seconds) and the last one when the sweep ends, so logs stay short.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["SweepProgress", "format_eta"]


def format_eta(seconds: float | None) -> str:
    """``1:02:03``, ``4:05`` or ``-`` (not known yet)."""
    if seconds is None:
        return "-"
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class SweepProgress:
    """Counts cells as they finish; ``line()`` says where the sweep is."""

    def __init__(
        self,
        total: int,
        skipped: int,
        stream: TextIO | None,
        *,
        every: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.skipped = skipped
        self.done = 0
        self.failed = 0
        self.stream = stream
        self.every = every
        self.clock = clock
        self.start = clock()
        self.last_line = -every
        self._bar: Any = None
        self._task: Any = None
        if stream is not None and stream.isatty():
            self._start_bar(stream)

    def _start_bar(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(
            TextColumn("cells"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed, ETA {task.fields[eta]}"),
            console=Console(file=stream, highlight=False),
            transient=True,
        )
        self._task = self._bar.add_task(
            "cells", total=self.total, completed=self.skipped, failed=0, eta="-"
        )
        self._bar.start()

    @property
    def remaining(self) -> int:
        """Cells not finished yet."""
        return self.total - self.skipped - self.done

    def eta(self) -> float | None:
        """Seconds left at this run's pace so far (None before its first cell)."""
        if self.done == 0:
            return None
        return (self.clock() - self.start) / self.done * self.remaining

    def line(self) -> str:
        """``12/40 cells done (3 from the table), 1 failed, ETA 1:20``."""
        finished = self.skipped + self.done
        kept = f" ({self.skipped} from the table)" if self.skipped else ""
        return (
            f"sweep: {finished}/{self.total} cells done{kept}, {self.failed} failed, "
            f"ETA {format_eta(self.eta())}"
        )

    def cell_done(self, failed: bool) -> None:
        """One more cell finished (``failed``: with an error)."""
        self.done += 1
        self.failed += failed
        if self._bar is not None and self._task is not None:
            self._bar.update(
                self._task,
                completed=self.skipped + self.done,
                failed=self.failed,
                eta=format_eta(self.eta()),
            )
            return
        now = self.clock()
        if self.stream is not None and now - self.last_line >= self.every:
            self.last_line = now
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        """Stop the bar; the final line."""
        if self._bar is not None:
            self._bar.stop()
        if self.stream is not None:
            print(self.line(), file=self.stream, flush=True)
