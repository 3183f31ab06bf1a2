"""The ticker that paces updateAny and deletePods (scheduler_perf's time.Ticker)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import trio.testing

from ksched.bench._pace import Ticker


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


@pytest.mark.anyio
async def test_work_between_ticks_does_not_stretch_the_pace() -> None:
    ticker = Ticker(10)
    start = anyio.current_time()
    times = []
    for _ in range(3):
        await ticker.tick()
        times.append(round(anyio.current_time() - start, 6))
        await anyio.sleep(0.05)  # a write that takes half an interval
    assert times == [0.1, 0.2, 0.3]


@pytest.mark.anyio
async def test_ticks_missed_while_busy_are_dropped() -> None:
    ticker = Ticker(10)
    start = anyio.current_time()
    await ticker.tick()
    await anyio.sleep(0.35)  # busy through the ticks at 0.2, 0.3 and 0.4
    await ticker.tick()  # one missed tick is delivered at once, as Go's buffered channel
    assert round(anyio.current_time() - start, 6) == 0.45
    await ticker.tick()  # then the grid again: 0.3 and 0.4 were dropped
    assert round(anyio.current_time() - start, 6) == 0.5
