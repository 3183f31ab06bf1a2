"""Fan-out across nodes: chunks of nodes taken in turn by at most ``parallelism`` workers.

# pkg/scheduler/framework/parallelize/parallelism.go: chunk size
# max(1, min(sqrt(n), n/parallelism + 1)).
Never one task per node: a task costs far more than a node's plugin chain.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

import anyio

__all__ = ["chunk_size", "run_chunked"]


def chunk_size(pieces: int, parallelism: int) -> int:
    """Upstream chunkSizeFor."""
    size = int(math.sqrt(pieces))
    size = min(size, pieces // max(parallelism, 1) + 1)
    return max(size, 1)


async def run_chunked(
    pieces: int,
    parallelism: int,
    work: Callable[[int], Awaitable[bool]],
) -> None:
    """Run ``work(i)`` for i in range(pieces) with at most ``parallelism`` workers.

    ``work`` returns False to stop the whole fan-out early (remaining pieces are skipped,
    pieces in progress finish). Exceptions propagate as an ExceptionGroup.
    """
    if pieces <= 0:
        return
    size = chunk_size(pieces, parallelism)
    next_start = 0
    stop = False

    async def worker() -> None:
        nonlocal next_start, stop
        while not stop and next_start < pieces:
            start = next_start
            next_start = min(pieces, start + size)
            for i in range(start, next_start):
                if stop:
                    return
                if not await work(i):
                    stop = True
                    return

    workers = min(parallelism, (pieces + size - 1) // size)
    async with anyio.create_task_group() as tg:
        for _ in range(max(workers, 1)):
            tg.start_soon(worker)
