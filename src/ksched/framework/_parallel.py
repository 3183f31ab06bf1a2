"""Fan-out across nodes: at most ``parallelism`` workers, each taking the next node in turn.

# pkg/scheduler/framework/parallelize/parallelism.go: upstream hands out chunks of
# max(1, min(sqrt(n), n/parallelism + 1)) pieces to amortise the shared counter between
# goroutines. On one event loop taking a piece is an integer increment, so workers take
# one node at a time: chunks only leave workers idle at the end (500 nodes at
# parallelism 16: 23 chunks of 22 take 44 rounds, single nodes 32).
Never one task per node (aiometer's ``run_on_each``, a plain task group): a task costs
far more than a node's plugin chain, and refilling a freed slot with a new task costs
a scheduler pass (benchmarks/fanout.py). The calling task is one of the workers, so a
fan-out spawns ``parallelism - 1`` tasks and parallelism 1 spawns none.

Timer-driven waits (``anyio.sleep`` in a plugin) wake in lockstep: event loops sleep in
whole milliseconds, so the workers of a round wake together and the CPU of all their
nodes runs back to back before the next round; that CPU (per wake-up, about twice as
much on trio as on asyncio) bounds the speed-up, not this helper. Waits that end on I/O
readiness do not round (benchmarks/fanout.py ``--wait socket``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

__all__ = ["run_chunked"]


async def run_chunked(
    pieces: int,
    parallelism: int,
    work: Callable[[int], Awaitable[bool]],
) -> None:
    """Run ``work(i)`` for i in range(pieces), at most ``parallelism`` at a time.

    Pieces start in index order. ``work`` returns False to stop the fan-out early: no
    new piece starts, pieces in progress finish. An exception in ``work`` cancels the
    other pieces and propagates in an ExceptionGroup; cancelling the caller cancels all.
    """
    if pieces <= 0:
        return
    next_piece = 0
    stop = False

    async def worker() -> None:
        nonlocal next_piece, stop
        while not stop and next_piece < pieces:
            i = next_piece
            next_piece += 1
            if not await work(i):
                stop = True

    async with anyio.create_task_group() as tg:
        for _ in range(min(max(parallelism, 1), pieces) - 1):
            tg.start_soon(worker)
        await worker()
