"""The node fan-out helper: every piece once, bounded concurrency, early stop, errors and
cancellation, on asyncio and trio."""

from __future__ import annotations

import anyio
import pytest
from anyio import wait_all_tasks_blocked
from anyio.lowlevel import checkpoint
from trio.testing import MockClock

from ksched.framework.batch import run_chunked

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("parallelism", [1, 2, 16, 64])
@pytest.mark.parametrize("pieces", [0, 1, 7, 100])
async def test_every_piece_runs_once(pieces: int, parallelism: int) -> None:
    seen: list[int] = []

    async def work(i: int) -> bool:
        await checkpoint()
        seen.append(i)
        return True

    await run_chunked(pieces, parallelism, work)
    assert sorted(seen) == list(range(pieces))


@pytest.mark.parametrize("parallelism", [1, 4])
async def test_pieces_start_in_index_order(parallelism: int) -> None:
    started: list[int] = []

    async def work(i: int) -> bool:
        started.append(i)
        for _ in range(7 - i % 7):
            await checkpoint()
        return True

    await run_chunked(50, parallelism, work)
    assert started == list(range(50))


@pytest.mark.parametrize("parallelism", [1, 3, 16])
async def test_concurrency_never_above_parallelism(parallelism: int) -> None:
    in_flight = 0
    peak = 0
    done = 0

    async def work(i: int) -> bool:
        nonlocal in_flight, peak, done
        in_flight += 1
        peak = max(peak, in_flight)
        for _ in range(i % 4 + 1):
            await checkpoint()
        in_flight -= 1
        done += 1
        return True

    await run_chunked(200, parallelism, work)
    assert done == 200
    assert 1 <= peak <= parallelism


async def test_pieces_wait_together_up_to_parallelism() -> None:
    # All 4 workers are busy at once: the fan-out really runs pieces concurrently.
    started: list[int] = []
    gate = anyio.Event()

    async def work(i: int) -> bool:
        started.append(i)
        await gate.wait()
        return True

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_chunked, 64, 4, work)
        await wait_all_tasks_blocked()
        assert len(started) == 4
        gate.set()
    assert sorted(started) == list(range(64))


@pytest.mark.parametrize("parallelism", [1, 4, 16])
async def test_no_piece_starts_after_stop(parallelism: int) -> None:
    stopped = False
    late: list[int] = []
    ran: list[int] = []

    async def work(i: int) -> bool:
        nonlocal stopped
        if stopped:
            late.append(i)
        ran.append(i)
        await checkpoint()
        if i == 10:
            stopped = True
            return False
        return True

    await run_chunked(500, parallelism, work)
    assert late == []
    assert sorted(ran) == list(range(len(ran)))
    assert 11 <= len(ran) < 500
    if parallelism == 1:
        assert ran == list(range(11))


async def test_pieces_in_progress_finish_after_stop() -> None:
    finished: list[int] = []
    gate = anyio.Event()

    async def work(i: int) -> bool:
        if i == 0:
            await wait_all_tasks_blocked()
            gate.set()
            return False
        await gate.wait()
        await checkpoint()
        finished.append(i)
        return True

    await run_chunked(100, 4, work)
    # The other pieces already running when piece 0 stopped the fan-out completed.
    assert len(finished) == 3


@pytest.mark.parametrize("parallelism", [1, 4])
async def test_exception_propagates(parallelism: int) -> None:
    ran: list[int] = []

    async def work(i: int) -> bool:
        ran.append(i)
        await checkpoint()
        if i == 5:
            raise ValueError("boom")
        return True

    with pytest.raises(BaseExceptionGroup) as info:
        await run_chunked(1000, parallelism, work)
    assert info.group_contains(ValueError, match="boom")
    assert len(ran) < 1000


async def test_cancellation_stops_the_fan_out() -> None:
    started: list[int] = []

    async def work(i: int) -> bool:
        started.append(i)
        await anyio.sleep_forever()
        return True

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_chunked, 100, 4, work)
            await wait_all_tasks_blocked()
            assert len(started) == 4
            scope.cancel()
    assert scope.cancelled_caught
    assert len(started) == 4


@pytest.mark.parametrize(
    "anyio_backend",
    [("trio", {"clock": MockClock(autojump_threshold=0)})],
)
async def test_waiting_pieces_overlap() -> None:
    # 100 pieces of 1 s each at parallelism 10 take 10 s of virtual time, not 100.
    async def work(i: int) -> bool:
        await anyio.sleep(1)
        return True

    start = anyio.current_time()
    await run_chunked(100, 10, work)
    assert anyio.current_time() - start == pytest.approx(10.0)
