"""Where cells run: local worker processes, or a Dask cluster.

Both take (task, bundle) pairs and call ``on_done`` on the event loop's thread with each
cell's outcome as it finishes, in finishing order; the table does not depend on it.

- ``run_local``: anyio's worker processes (``anyio.to_process``), as many cells at once
  as ``jobs``, bounded by aiometer on the anyio loop (asyncio or trio). A worker reads a
  bundle from disk once and keeps it for its next cells.
- ``run_dask``: a ``distributed`` cluster at an address, or ``local:N`` (a LocalCluster
  of N single-threaded worker processes on loopback, started and closed here). Each
  bundle is scattered to every worker once (``broadcast=True``); the cells' tasks refer
  to it, so its bytes cross the network once per worker, not once per cell.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_process
import anyio.to_thread

from .._errors import KschedError
from ._bundle import Bundle
from ._cells import CellOutcome, CellTask, run_cell

__all__ = ["parse_dask_address", "run_dask", "run_local"]

Item = tuple[CellTask, Bundle]
OnDone = Callable[[CellOutcome], None]

_POLL_SECONDS = 0.5
"""How often the Dask thread looks whether the sweep was stopped."""


async def run_local(items: Sequence[Item], on_done: OnDone, *, jobs: int) -> None:
    """Run the cells on ``jobs`` local worker processes."""
    import aiometer

    limiter = anyio.CapacityLimiter(jobs)

    async def one(item: Item) -> None:
        task, bundle = item
        try:
            outcome = await anyio.to_process.run_sync(
                run_cell, task, bundle.without_data(), cancellable=True, limiter=limiter
            )
        except Exception as exc:  # the worker process died, or could not take the cell
            outcome = CellOutcome(id=task.id, error=f"worker: {type(exc).__name__}: {exc}")
        on_done(outcome)

    await aiometer.run_on_each(one, list(items), max_at_once=jobs)


def parse_dask_address(value: str) -> tuple[str | None, int | None]:
    """``local:N`` gives (None, N); anything else is a scheduler address, as given."""
    if value.startswith("local:"):
        raw = value.removeprefix("local:")
        if not raw.isdigit() or not 1 <= int(raw) <= 1024:
            raise KschedError(f"--dask {value}: expected local:N with N from 1 to 1024")
        return None, int(raw)
    if not value:
        raise KschedError("--dask: expected a scheduler address (tcp://HOST:PORT) or local:N")
    return value, None


async def run_dask(items: Sequence[Item], on_done: OnDone, *, address: str) -> None:
    """Run the cells on a Dask cluster (``address``, or ``local:N`` started here)."""
    stop = threading.Event()

    def report(outcome: CellOutcome) -> None:
        anyio.from_thread.run_sync(on_done, outcome)

    async def stop_when_cancelled() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            stop.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_when_cancelled)
            # Not abandoned on cancel: the thread sees ``stop``, cancels what is left and
            # closes the cluster it started before the sweep returns.
            await anyio.to_thread.run_sync(_dask_sweep, items, report, address, stop)
            tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, KschedError):
            raise leaf from None  # an unreachable scheduler: said as such (exit status 2)
        raise


def _dask_sweep(items: Sequence[Item], report: OnDone, address: str, stop: threading.Event) -> None:
    wait = _distributed().wait

    # Keys of this run only: a long-lived cluster may still hold a result of an earlier
    # sweep's cell of the same id, which would be handed back instead of running it.
    run = uuid.uuid4().hex[:12]
    with _client(address) as client:
        scattered: dict[str, Any] = {}
        for _, bundle in items:
            if bundle.digest not in scattered:
                scattered[bundle.digest] = client.scatter(bundle, broadcast=True, hash=False)
        pending = {
            client.submit(
                run_cell,
                task,
                scattered[bundle.digest],
                key=f"ksched-cell-{task.id}-{run}",
                pure=False,
            ): task.id
            for task, bundle in items
        }
        while pending and not stop.is_set():
            try:
                done = wait(list(pending), timeout=_POLL_SECONDS, return_when="FIRST_COMPLETED")
            except TimeoutError:
                continue  # none finished yet: look at ``stop`` again
            for future in done.done:
                cell = pending.pop(future)
                report(_outcome(future, cell))
        if pending:
            client.cancel(list(pending))


def _outcome(future: Any, cell: str) -> CellOutcome:
    try:
        outcome = future.result()
    except Exception as exc:  # the worker died with the cell, or the cluster lost it
        return CellOutcome(id=cell, error=f"dask: {type(exc).__name__}: {exc}")
    assert isinstance(outcome, CellOutcome)
    return outcome


def _distributed() -> Any:
    """The ``distributed`` module (untyped: its calls are checked at run time)."""
    return importlib.import_module("distributed")


@contextlib.contextmanager
def _client(address: str) -> Iterator[Any]:
    dist = _distributed()
    Client, LocalCluster = dist.Client, dist.LocalCluster
    where, workers = parse_dask_address(address)
    with contextlib.ExitStack() as stack:
        if workers is not None:
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    scheduler_kwargs={
                        "dashboard_address": "127.0.0.1:0"
                    },  # its HTTP server: a free port
                    silence_logs=logging.CRITICAL,  # a cell's failure comes back as its error
                )
            )
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = stack.enter_context(Client(where, timeout="10s"))
            except OSError as exc:
                raise KschedError(f"--dask {address}: cannot reach the scheduler: {exc}") from None
        yield client
