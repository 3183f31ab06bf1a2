"""The pace of updateAny and deletePods: a ticker, as scheduler_perf's ops use.

# test/integration/scheduler_perf/update.go and executor.go runDeletePodsOp: a
# time.Ticker of 1/rate; the first write after one interval.
Ticks lie on a fixed grid from the op's start, so the time each write takes does not add
to the interval (as sleeping 1/rate between writes would); ticks missed while the op was
busy are dropped, not caught up in a burst (one late tick is delivered at once, as Go's
ticker channel buffers one).
"""

from __future__ import annotations

import math

import anyio

__all__ = ["Ticker"]


class Ticker:
    """``await tick()`` returns on each tick of a ``per_second`` grid (started at the first
    call); missed ticks are dropped."""

    def __init__(self, per_second: float) -> None:
        self._interval = 1.0 / per_second
        self._next: float | None = None

    async def tick(self) -> None:
        interval = self._interval
        if self._next is None:
            self._next = anyio.current_time() + interval
        await anyio.sleep_until(self._next)
        now = anyio.current_time()
        self._next += interval
        if self._next <= now:
            self._next += (math.floor((now - self._next) / interval) + 1) * interval
