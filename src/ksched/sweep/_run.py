"""``run_sweep``: the grid's cells on an executor, into the table, resumed where it stopped."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import attrs

from ._cells import CellOutcome
from ._executors import run_dask, run_local
from ._prepare import PreparedCell, prepare
from ._progress import SweepProgress
from ._spec import SweepSpec
from ._table import TableWriter, read_rows, write_parquet

__all__ = ["SweepResult", "default_jobs", "run_sweep", "sweep_async"]


def default_jobs() -> int:
    """As many cells at once as this process may use cores."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@attrs.frozen
class SweepResult:
    """What a sweep did: cells in the grid, skipped (already in the table), run, failed."""

    table: Path
    cells: int
    skipped: int
    ran: int
    failed: int
    """Cells of this run that failed."""
    failed_in_table: int
    """Cells of the whole table that failed (this run's and earlier ones')."""
    seconds: float
    parquet: Path | None = None
    plots: tuple[Path, ...] = ()


async def sweep_async(
    spec: SweepSpec,
    *,
    table: Path | None = None,
    parquet: Path | None = None,
    jobs: int | None = None,
    dask: str | None = None,
    progress: TextIO | None = None,
    plots: bool = True,
    on_cell: Callable[[CellOutcome], None] | None = None,
) -> SweepResult:
    """Run the spec's cells not yet in the table; write the table, Parquet and plots.

    Args:
        spec: the sweep (``SweepSpec.load``).
        table: the CSV table (default: the spec's ``table``).
        parquet: also write the table as Parquet (default: the spec's ``parquet``).
        jobs: local worker processes (default: the cores this process may use).
        dask: run on the Dask cluster at this address, or ``local:N``.
        progress: where progress lines go (a live bar when it is a terminal).
        plots: draw the spec's figures once the table is complete.
        on_cell: called with each cell's outcome as it is written.
    """
    start = time.perf_counter()
    if parquet is None and spec.parquet is not None:
        # Another table (--table) gets its own Parquet file beside it.
        parquet = table.with_suffix(".parquet") if table is not None else spec.parquet
    table = table or spec.table
    cells = spec.cells()
    writer = TableWriter(table, spec.axis_names)
    try:
        todo = prepare(spec, [c for c in cells if c.id not in writer.done])
        skipped = len(cells) - len(todo)
        meter = SweepProgress(len(cells), skipped, progress)
        by_id = {p.cell.id: p for p in todo}
        failed = 0

        def done(outcome: CellOutcome) -> None:
            nonlocal failed
            writer.write(by_id[outcome.id].labels, outcome)
            failed += outcome.error is not None
            meter.cell_done(outcome.error is not None)
            if on_cell is not None:
                on_cell(outcome)

        items = [(p.task, p.bundle) for p in _grouped_by_input(todo)]
        try:
            if dask is not None:
                await run_dask(items, done, address=dask)
            else:
                await run_local(items, done, jobs=jobs or default_jobs())
        finally:
            meter.close()
        failed_in_table = len(writer.failed)
    finally:
        writer.close()
    written_parquet = None
    if parquet is not None:
        write_parquet(table, parquet, spec.axis_names)
        written_parquet = parquet
    drawn: tuple[Path, ...] = ()
    if plots and spec.plots:
        from ._plot import write_plots

        drawn = tuple(write_plots(list(read_rows(table)), spec.plots, _warn(progress)))
    return SweepResult(
        table=table,
        cells=len(cells),
        skipped=skipped,
        ran=len(todo),
        failed=failed,
        failed_in_table=failed_in_table,
        seconds=time.perf_counter() - start,
        parquet=written_parquet,
        plots=drawn,
    )


def _warn(stream: TextIO | None) -> Callable[[str], None]:
    def warn(message: str) -> None:
        if stream is not None:
            print(f"ksched: warning: {message}", file=stream)

    return warn


def _grouped_by_input(todo: list[PreparedCell]) -> list[PreparedCell]:
    """The grid's order; cells of one bundle stay together, so a worker loads it once."""
    return sorted(todo, key=lambda p: p.bundle.digest)


def run_sweep(spec: SweepSpec, *, backend: str = "asyncio", **options: Any) -> SweepResult:
    """``sweep_async`` on a new event loop (``backend``: asyncio or trio)."""
    result: SweepResult = anyio.run(
        functools.partial(sweep_async, spec, **options), backend=backend
    )
    return result
