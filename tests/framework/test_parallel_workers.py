"""The fan-out's workers: the calling task is one of them, errors on either side cancel the
other, and timer-driven pieces take whole rounds of virtual time."""

from __future__ import annotations

import math

import anyio
import pytest
from anyio import get_current_task, wait_all_tasks_blocked
from anyio.lowlevel import checkpoint
from trio.testing import MockClock

from ksched.framework.batch import run_chunked

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("pieces", "parallelism"), [(1, 1), (50, 1), (1, 16)])
async def test_one_worker_runs_in_the_calling_task(pieces: int, parallelism: int) -> None:
    caller = get_current_task().id
    tasks: set[int] = set()

    async def work(i: int) -> bool:
        tasks.add(get_current_task().id)
        await checkpoint()
        return True

    await run_chunked(pieces, parallelism, work)
    assert tasks == {caller}


async def test_parallelism_workers_include_the_caller() -> None:
    caller = get_current_task().id
    tasks: set[int] = set()
    gate = anyio.Event()

    async def work(i: int) -> bool:
        tasks.add(get_current_task().id)
        await gate.wait()
        return True

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_chunked, 40, 4, work)
        await wait_all_tasks_blocked()
        assert len(tasks) == 4
        assert caller not in tasks  # run_chunked ran in its own task here
        gate.set()
    assert len(tasks) == 4


async def test_first_piece_is_taken_by_the_caller() -> None:
    caller = get_current_task().id
    owner: dict[int, int] = {}

    async def work(i: int) -> bool:
        owner[i] = get_current_task().id
        await checkpoint()
        return True

    await run_chunked(8, 4, work)
    assert owner[0] == caller
    assert len(set(owner.values())) == 4


@pytest.mark.parametrize("failing", [0, 3])
async def test_a_failing_worker_cancels_the_others(failing: int) -> None:
    # Piece 0 runs in the calling task, piece 3 in a spawned one: either way the
    # error cancels the pieces still waiting and comes out in an ExceptionGroup.
    cancelled: list[int] = []
    started: list[int] = []

    async def work(i: int) -> bool:
        started.append(i)
        if i == failing:
            await wait_all_tasks_blocked()
            raise ValueError(f"piece {i}")
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(i)
            raise
        return True

    with pytest.raises(BaseExceptionGroup) as info:
        await run_chunked(100, 4, work)
    assert info.group_contains(ValueError, match=f"piece {failing}")
    assert sorted(started) == [0, 1, 2, 3]
    assert sorted(cancelled) == sorted({0, 1, 2, 3} - {failing})


@pytest.mark.parametrize(
    "anyio_backend",
    [("trio", {"clock": MockClock(autojump_threshold=0)})],
)
@pytest.mark.parametrize("parallelism", [1, 4, 16, 64])
async def test_timer_pieces_take_whole_rounds(parallelism: int) -> None:
    # 500 pieces of 1 ms: ceil(500 / p) rounds of 1 ms of virtual time, as the benchmark's
    # ideal (p=16: 32 rounds, the last one 4 pieces).
    async def work(i: int) -> bool:
        await anyio.sleep(0.001)
        return True

    start = anyio.current_time()
    await run_chunked(500, parallelism, work)
    rounds = math.ceil(500 / parallelism)
    assert anyio.current_time() - start == pytest.approx(rounds * 0.001)


@pytest.mark.parametrize(
    "anyio_backend",
    [("trio", {"clock": MockClock(autojump_threshold=0)})],
)
async def test_stop_on_a_timer_round_starts_no_new_piece() -> None:
    # Piece 20 (round 2 at parallelism 16) stops the fan-out. Round 2's pieces wake together
    # in any order: those that return before piece 20 may start round-3 pieces, which then
    # finish; nothing else starts and no fourth round is spent.
    started: list[int] = []

    async def work(i: int) -> bool:
        started.append(i)
        await anyio.sleep(0.001)
        return i != 20

    start = anyio.current_time()
    await run_chunked(500, 16, work)
    assert started == list(range(len(started)))
    assert 32 <= len(started) < 48
    elapsed = anyio.current_time() - start
    third_round = len(started) > 32
    assert elapsed == pytest.approx(0.003 if third_round else 0.002)
