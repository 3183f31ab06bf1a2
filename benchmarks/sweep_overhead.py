"""What a sweep costs beyond its simulations: cells/s and the overhead per cell.

The same cells run (1) one by one in this process (``run_cell`` in a loop: the
simulations alone), (2) as ``ksched sweep`` on 1 and 2 local worker processes, and (3) on a
Dask LocalCluster of 1 and 2 worker processes (the cluster's start timed apart). The
overhead per cell is ``(wall x workers - serial) / cells``: what each cell costs beyond
its simulation on that executor (process start, shipping, the table), spread over the
cells; the CPU overhead per cell, ``(CPU of driver and workers - serial CPU) / cells``,
is the same without the wall clock (which other work on a shared machine stretches). Two
grids: tiny simulate cells (a few ms each: overhead dominates) and the FGD grid
on the shipped openb slice (24 cells of 0.3-1 s).

    python benchmarks/sweep_overhead.py [--cells 64] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import resource
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ksched.sweep import SweepSpec, prepare, run_cell, run_sweep  # noqa: E402

SLICE = ROOT / "examples" / "sweeps" / "openb-slice"


def tiny_spec(folder: Path, cells: int) -> SweepSpec:
    """``cells`` seeds of 8 pods on 4 nodes (a few ms of simulation each)."""
    items = [
        f"  - {{apiVersion: v1, kind: Node, metadata: {{name: n{i}}}, status: "
        f"{{allocatable: {{cpu: '4', memory: 8Gi, pods: '20'}}}}}}"
        for i in range(4)
    ] + [
        f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: "
        f"[{{name: c, image: i, resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}}}"
        for i in range(8)
    ]
    (folder / "objects.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n" + "\n".join(items))
    spec = folder / "tiny.yaml"
    spec.write_text(
        textwrap.dedent(
            f"""\
            kind: Sweep
            run: simulate
            grid:
              input: [objects.yaml]
              seed: {list(range(cells))}
            """
        )
    )
    return SweepSpec.load(spec)


def fgd_spec(folder: Path) -> SweepSpec:
    spec = folder / "fgd.yaml"
    spec.write_text(
        textwrap.dedent(
            f"""\
            kind: Sweep
            run: gpu
            trace: {SLICE}
            grid:
              input: [default, gpuspec33]
              policy: [Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD]
              seed: [42, 43]
            """
        )
    )
    return SweepSpec.load(spec)


def cpu_now() -> float:
    """CPU seconds of this process, its reaped children and its live descendants."""
    psutil: Any = importlib.import_module("psutil")  # distributed's dependency

    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def serial(spec: SweepSpec) -> tuple[float, float]:
    """(wall, CPU) of the cells one by one in this process (after a warm-up cell)."""
    cells = prepare(spec)
    run_cell(cells[0].task, cells[0].bundle)
    start, cpu = time.perf_counter(), time.process_time()
    for cell in cells:
        outcome = run_cell(cell.task, cell.bundle)
        assert outcome.error is None, outcome.error
    return time.perf_counter() - start, time.process_time() - cpu


def swept(spec: SweepSpec, table: Path, **options: Any) -> tuple[float, float]:
    """(wall, CPU of everything: driver, workers) of a sweep."""
    table.unlink(missing_ok=True)
    start, cpu = time.perf_counter(), cpu_now()
    result = run_sweep(spec, table=table, plots=False, **options)
    assert result.failed == 0
    return time.perf_counter() - start, cpu_now() - cpu


def on_dask(spec: SweepSpec, table: Path, workers: int) -> tuple[float, tuple[float, float]]:
    """(cluster start, sweep (wall, CPU)) on a LocalCluster of ``workers`` processes."""
    LocalCluster: Any = importlib.import_module("distributed").LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        silence_logs=logging.ERROR,
    )
    started = time.perf_counter() - start
    try:
        # A first sweep warms the workers (imports), as a long-lived cluster would be.
        swept(spec, table, dask=cluster.scheduler_address)
        return started, swept(spec, table, dask=cluster.scheduler_address)
    finally:
        cluster.close()


def measure(name: str, spec: SweepSpec, folder: Path) -> dict[str, Any]:
    cells = len(spec.cells())
    alone, alone_cpu = serial(spec)
    row: dict[str, Any] = {"grid": name, "cells": cells, "serial_s": round(alone, 3)}
    row["serial_cpu_s"] = round(alone_cpu, 3)
    row["serial_cells_per_s"] = round(cells / alone, 2)
    for workers in (1, 2):
        local = swept(spec, folder / f"{name}-local{workers}.csv", jobs=workers)
        start, dask = on_dask(spec, folder / f"{name}-dask{workers}.csv", workers)
        for executor, (seconds, cpu) in (("local", local), ("dask", dask)):
            key = f"{executor}{workers}"
            row[f"{key}_s"] = round(seconds, 3)
            row[f"{key}_cpu_s"] = round(cpu, 3)
            row[f"{key}_cells_per_s"] = round(cells / seconds, 2)
            row[f"{key}_wall_overhead_ms_per_cell"] = round(
                1000 * (seconds * workers - alone) / cells, 2
            )
            row[f"{key}_cpu_overhead_ms_per_cell"] = round(1000 * (cpu - alone_cpu) / cells, 2)
        row[f"dask{workers}_cluster_start_s"] = round(start, 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=64, help="tiny simulate cells")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/sweep_overhead.json")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows.append(measure("tiny-simulate", tiny_spec(folder, args.cells), folder))
        print(json.dumps(rows[-1]), flush=True)
        rows.append(measure("fgd-slice", fgd_spec(folder), folder))
        print(json.dumps(rows[-1]), flush=True)
    load = os.getloadavg()
    document: dict[str, Any] = {
        "machine": {"cores": os.cpu_count(), "load_avg": [round(x, 2) for x in load]},
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
