"""The FGD study's grid as a sweep: one full cell measured, the 1020-cell grid projected.

One cell (openb default, a policy, seed 42, tune 1.3, Go's draws) runs as a sweep of one
cell on one local worker process: the cell's wall time and CPU seconds on its worker, and
the sweep's wall time around it (worker start, reading the trace). The grid (6 policies x 17
workloads x 10 seeds) on N workers is then projected, not run:

    T(N) = ceil(1020 / N) x (cell + overhead)

with ``cell`` the measured cell's CPU seconds (a worker per core: no other work sharing
it) and ``overhead`` the per-cell overhead ``benchmarks/sweep_overhead.py`` measured.
That assumes every cell costs what the measured one does (the 85 cells of the five
deterministic policies at seed 42 cost 5.8-21.4 s of CPU, median 10.3 s: "The FGD study on
every workload variant" in RESULTS.md) and that the Dask scheduler keeps up (it hands out a
task in about a millisecond: ~1 s for the whole grid).

    python benchmarks/sweep_fgd.py [--policy FGD] [--workload default]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ksched.sweep import CellOutcome, SweepSpec, read_rows, run_sweep  # noqa: E402

GRID_CELLS = 6 * 17 * 10
TRACE = ROOT.parent / "shared" / "traces" / "openb"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="FGD")
    parser.add_argument("--workload", default="default")
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument(
        "--overhead-s",
        type=float,
        default=0.05,
        help="per-cell overhead (benchmarks/sweep_overhead.py)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/sweep_fgd.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        spec_path = Path(tmp) / "one.yaml"
        spec_path.write_text(
            textwrap.dedent(
                f"""\
                kind: Sweep
                run: gpu
                trace: {args.trace}
                grid:
                  input: [{args.workload}]
                  policy: [{args.policy}]
                  seed: [42]
                """
            )
        )
        outcomes: list[CellOutcome] = []
        start = time.perf_counter()
        result = run_sweep(SweepSpec.load(spec_path), jobs=1, plots=False, on_cell=outcomes.append)
        wall = time.perf_counter() - start
        rows = list(read_rows(result.table))
    assert result.failed == 0, rows[0]["error"]
    cell = float(rows[0]["seconds"])
    cell_cpu = outcomes[0].cpu_seconds
    alloc130 = next(r["value"] for r in rows if r["metric"] == "gpu_alloc_pct" and r["at"] == "130")
    projected = {
        str(n): round(math.ceil(GRID_CELLS / n) * (cell_cpu + args.overhead_s) / 3600, 2)
        for n in (1, 2, 8, 32, 128, 256)
    }
    document = {
        "cell": {"workload": args.workload, "policy": args.policy, "seed": 42},
        "cell_wall_s": round(cell, 2),
        "sweep_wall_s": round(wall, 2),
        "cell_cpu_s": round(outcomes[0].cpu_seconds, 2),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "gpu_alloc_pct_at_130": float(alloc130),
        "grid_cells": GRID_CELLS,
        "projected_grid_hours_by_workers": projected,
        "projection": "ceil(1020/N) x (cell_cpu_s + overhead_s); not run",
    }
    print(json.dumps(document, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
