"""What ``ksched simulate`` shows while it works: a spinner while it reads its inputs, a
progress bar while it schedules; on stderr, and only when stderr is a terminal."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from ..scheduler import SchedulingEvent

__all__ = ["SchedulingProgress", "scheduling_progress", "status"]

_OUTCOMES = frozenset({"Bound", "Unschedulable", "SchedulerError", "WaitingOnPermit"})


class SchedulingProgress:
    """Pods that reached a first outcome (bound, failed, waiting at Permit) of the pending."""

    def __init__(self, pending: Collection[str], stream: TextIO) -> None:
        self.pending = frozenset(pending)
        self.done: set[str] = set()
        self.progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=stream, highlight=False),
            transient=True,
        )
        self.task = self.progress.add_task("scheduling", total=len(self.pending))

    def on_event(self, event: SchedulingEvent) -> None:
        """``run_scenario``'s ``on_event``: counts each pending pod's first outcome."""
        if event.kind in _OUTCOMES and event.pod in self.pending and event.pod not in self.done:
            self.done.add(event.pod)
            self.progress.update(self.task, completed=len(self.done))


@contextmanager
def scheduling_progress(
    pending: Collection[str], stream: TextIO
) -> Iterator[SchedulingProgress | None]:
    """A running progress bar on ``stream`` if it is a terminal, else None.

    The bar is transient: it is cleared when the run ends, before the report is printed.
    """
    if not stream.isatty():
        yield None
        return
    bar = SchedulingProgress(pending, stream)
    bar.progress.start()
    try:
        yield bar
    finally:
        bar.progress.stop()


@contextmanager
def status(text: str, stream: TextIO) -> Iterator[None]:
    """A spinner with ``text`` on ``stream`` while the block runs, if it is a terminal."""
    if not stream.isatty():
        yield
        return
    with Console(file=stream, highlight=False).status(text):
        yield
