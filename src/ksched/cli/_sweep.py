"""``ksched sweep SPEC.yaml``: a grid of simulations into one table (docs/sweeps.md).

Exit status: 0 every cell of the table ran, 1 some failed (each with its error in the
table), 2 a bad spec or option (nothing runs), 130 interrupted (Ctrl-C: the table keeps
the cells that finished).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .._errors import KschedError

__all__ = ["add_sweep_parser"]


def add_sweep_parser(sub: Any) -> None:
    """Register ``ksched sweep`` on an argparse sub-parsers object."""
    p = sub.add_parser(
        "sweep",
        help="run a grid of simulations (inputs x configurations x seeds) into one table",
        description="Run every cell of a sweep spec (kind: Sweep) on local processes or a "
        "Dask cluster, writing a row per cell and metric as cells finish. Cells already "
        "in the table are skipped: run it again to resume.",
    )
    p.add_argument("spec", metavar="SPEC.yaml", help="the sweep spec")
    p.add_argument("--table", metavar="FILE.csv", help="the table (default: the spec's table)")
    p.add_argument(
        "--parquet", metavar="FILE.parquet", help="also write the table as Parquet (pyarrow)"
    )
    p.add_argument(
        "-j", "--jobs", type=int, metavar="N", help="local worker processes (default: cores)"
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on the Dask cluster at ADDRESS (tcp://host:8786), or local:N to start a "
        "LocalCluster of N worker processes",
    )
    p.add_argument("--no-plot", action="store_true", help="do not draw the spec's plots")
    p.add_argument(
        "--list", action="store_true", help="print the cells (and which the table has); run none"
    )
    p.set_defaults(run=_command)


def _command(args: argparse.Namespace) -> int:
    from ..sweep import SweepSpec

    if args.jobs is not None and args.jobs < 1:
        raise KschedError(f"--jobs {args.jobs}: expected at least 1")
    if args.dask is not None:
        from ..sweep._executors import parse_dask_address

        if args.jobs is not None:
            raise KschedError("--jobs and --dask: give one (a Dask cluster has its own workers)")
        parse_dask_address(args.dask)
    _require_extras(args)
    spec = SweepSpec.load(args.spec)
    if args.list:
        return _list(spec, args)
    return _run(spec, args)


def _require_extras(args: argparse.Namespace) -> None:
    needed = ["distributed"] if args.dask else ["aiometer"]
    if args.parquet:
        needed.append("pyarrow")
    import importlib.util

    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise KschedError(f"sweep needs {', '.join(missing)}: pip install 'ksched[sweep]'")


def _list(spec: Any, args: argparse.Namespace) -> int:
    from ..sweep._table import TableWriter

    table = Path(args.table) if args.table else spec.table
    done: set[str] = set()
    if table.exists():
        writer = TableWriter(table, spec.axis_names)
        done = writer.done
        writer.close()
    cells = spec.cells()
    print("\t".join(["cell", *spec.axis_names, "in table"]))
    for cell in cells:
        labels = [label for _, label in cell.labels]
        print("\t".join([cell.id, *labels, "yes" if cell.id in done else "no"]))
    have = sum(1 for c in cells if c.id in done)
    print(f"{len(cells)} cells, {have} in {table}", file=sys.stderr)
    return 0


def _run(spec: Any, args: argparse.Namespace) -> int:
    from ..sweep import run_sweep

    table = Path(args.table) if args.table else spec.table
    try:
        result = run_sweep(
            spec,
            backend=os.environ.get("KSCHED_ASYNC_BACKEND", "asyncio"),
            table=Path(args.table) if args.table else None,
            parquet=Path(args.parquet) if args.parquet else None,
            jobs=args.jobs,
            dask=args.dask,
            progress=sys.stderr,
            plots=not args.no_plot,
        )
    except KeyboardInterrupt:
        # The cells that finished are in the table; the ones in flight were stopped.
        print(f"ksched: interrupted: run it again to resume from {table}", file=sys.stderr)
        return 130
    print(
        f"{result.table}: {result.cells} cells ({result.skipped} already there, {result.ran} "
        f"run, {result.failed} failed) in {result.seconds:.1f} s"
    )
    if result.parquet is not None:
        print(f"{result.parquet}: written")
    for plot in result.plots:
        print(f"{plot}: plot written")
    return 1 if result.failed_in_table else 0
