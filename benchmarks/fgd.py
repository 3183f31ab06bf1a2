"""The FGD study (USENIX ATC '23, "Beware of Fragmentation") reproduced on ksched: its
experiments on the openb trace, written as its published tables, and compared with them.

Each experiment (workload x policy x seed, tune 1.3) runs in a child process of its own,
measured as the operating system sees it (``os.wait4``: CPU seconds, peak RSS), and gives a
row of ``analysis_allo_discrete.csv`` (GPU allocation at each percent of arrived workload,
0..130), and with ``--frag-out`` / ``--frag-ratio-out`` rows of the fragmentation tables.
``--compare OURS PUBLISHED`` prints, per (workload, policy), the largest cell difference
over the seeds both tables have, the largest difference of the per-point means, and FGD's
lead over each baseline at 130 %. The published tables are the artifact's
``experiments/analysis/expected_results/analysis_allo_discrete.csv``
(github.com/hkust-adsl/kubernetes-scheduler-simulator).

    python benchmarks/fgd.py --workload default --policy FGD --seed 42 --out fgd42.csv
    python benchmarks/fgd.py --grid --rng go --jobs 2 --out grid.csv --stats grid.json
    python benchmarks/fgd.py --compare grid.csv path/to/analysis_allo_discrete.csv
    python benchmarks/fgd.py --from-sweep results/fgd_grid.csv --out grid_alloc.csv

``--from-sweep TABLE`` turns a ``ksched sweep`` table of gpu cells (``fgd_grid.yaml``) into
the artifact's three tables, so a grid run as a sweep compares the same way.

``--rng go`` draws the pod order, the tuning clones and the node order with Go's math/rand
as the artifact does (its rows for the five deterministic policies are then expected to the
cell); ``--rng ksched`` with a seeded numpy generator (compare the means over the seeds).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ksched.gpu import (  # noqa: E402  (the source tree first)
    ExperimentConfig,
    WorkloadConfig,
    policy_name,
    read_nodes,
    read_pods,
    run_experiment,
    to_nodes,
    to_pods,
)
from ksched.gpu._table import TableRow, compare_tables, mean_rows, read_table, write_table  # noqa: E402

TRACE = ROOT.parent / "shared" / "traces" / "openb"
WORKLOADS = (
    "default",
    "cpu050",
    "cpu100",
    "cpu200",
    "cpu250",
    "gpushare100",
    "gpushare40",
    "gpushare60",
    "gpushare80",
    "gpuspec10",
    "gpuspec20",
    "gpuspec25",
    "gpuspec33",
    "multigpu20",
    "multigpu30",
    "multigpu40",
    "multigpu50",
)
"""The artifact's 17 workloads (experiments/run_scripts/generate_run_scripts.py)."""
POLICY_ORDER = (
    "01-Random",
    "02-DotProd",
    "03-GpuClustering",
    "04-GpuPacking",
    "05-BestFit",
    "06-FGD",
)
SEEDS = tuple(range(42, 52))
TUNE = 1.3


def workload_name(name: str) -> str:
    """``default`` or ``openb_pod_list_default`` -> ``default``."""
    return name.removeprefix("openb_pod_list_").removesuffix(".csv")


def run_one(args: argparse.Namespace) -> dict[str, Any]:
    """One experiment in this process (the child's side)."""
    wl = workload_name(args.workload[0])
    nodes = to_nodes(read_nodes(args.trace / "openb_node_list_gpu_node.csv"))
    pods = to_pods(read_pods(args.trace / f"openb_pod_list_{wl}.csv"))
    config = ExperimentConfig(
        policy=args.policy[0],
        workload=WorkloadConfig(tune=TUNE, seed=args.seed[0], rng=args.rng),
    )
    result = run_experiment(nodes, pods, config)
    curve = result.curve
    return {
        "workload": f"openb_pod_list_{wl}",
        "policy": result.policy,
        "seed": args.seed[0],
        "rng": args.rng,
        "pods": len(result.workload.pods),
        "clones": len(result.workload.pods) - result.workload.originals,
        "failed": result.failed,
        "failed_by_kind": result.failed_by_kind,
        "unallocated_gpu_milli": result.unallocated_gpu_milli,
        "fully_free_gpus": result.fully_free_gpus,
        "total_gpus": curve.total_gpus,
        "typical_pods": len(result.typical),
        "loop_cpu_seconds": round(result.cpu_seconds, 3),
        "checkpoints": result.checkpoints,
        "alloc": curve.allocation(),
        "frag": curve.fragmentation(),
        "frag_ratio": curve.fragmentation_ratio(),
    }


def _child(args: argparse.Namespace, wl: str, policy: str, seed: int, out: Path) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--one",
        "--trace",
        str(args.trace),
        "--rng",
        args.rng,
        "--workload",
        wl,
        "--policy",
        policy,
        "--seed",
        str(seed),
        "--json",
        str(out),
    ]
    start = time.perf_counter()
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if child.returncode != 0:
        raise SystemExit(f"{wl} {policy} seed {seed}: the run failed ({child.returncode})")
    record: dict[str, Any] = json.loads(out.read_text())
    record["cpu_seconds"] = round(usage.ru_utime + usage.ru_stime, 3)
    record["peak_rss_mib"] = round(usage.ru_maxrss / 1024, 1)
    record["wall_seconds"] = round(wall, 3)
    return record


def _rows(records: Sequence[dict[str, Any]], which: str) -> list[TableRow]:
    return [
        TableRow(
            workload=r["workload"],
            policy=r["policy"],
            tune=str(TUNE),
            seed=r["seed"],
            total_gpus=r["total_gpus"] if which == "alloc" else None,
            values={int(k): v for k, v in r[which].items()},
        )
        for r in records
    ]


def run_grid(args: argparse.Namespace) -> None:
    workloads = WORKLOADS if args.grid else [workload_name(w) for w in args.workload or ["default"]]
    policies = POLICY_ORDER if args.grid else [policy_name(p) for p in args.policy or ["FGD"]]
    seeds = SEEDS if args.grid else args.seed or [42]
    runs = [(w, p, s) for s in seeds for w in workloads for p in policies]
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        futures = [
            pool.submit(_child, args, w, p, s, Path(tmp) / f"{i}.json")
            for i, (w, p, s) in enumerate(runs)
        ]
        for future, (w, p, s) in zip(futures, runs, strict=True):
            record = future.result()
            records.append(record)
            print(
                f"{w:12} {p:17} seed {s}: {record['cpu_seconds']:7.1f} s CPU, "
                f"{record['peak_rss_mib']:6.1f} MiB, {record['failed']} failed, "
                f"130 %: {record['alloc'].get('130', math.nan)}",
                flush=True,
            )
            _write(args, records)  # after every run: a long grid keeps what it has done


def _write(args: argparse.Namespace, records: Sequence[dict[str, Any]]) -> None:
    write_table(args.out, _rows(records, "alloc"))
    if args.frag_out:
        write_table(args.frag_out, _rows(records, "frag"))
    if args.frag_ratio_out:
        write_table(args.frag_ratio_out, _rows(records, "frag_ratio"))
    if args.stats:
        Path(args.stats).write_text(json.dumps(records, indent=1) + "\n")


_SWEEP_CURVES = {
    "gpu_alloc_pct": "alloc",
    "gpu_frag_pct": "frag",
    "gpu_frag_ratio_pct": "frag_ratio",
}


def from_sweep(args: argparse.Namespace) -> None:
    """Write the artifact's tables from a sweep table's gpu cells (one row per cell)."""
    import csv

    total_gpus = sum(n.gpus for n in read_nodes(args.trace / "openb_node_list_gpu_node.csv"))
    curves: dict[tuple[str, str, int], dict[str, dict[int, float]]] = {}
    with open(args.from_sweep, newline="") as f:
        for row in csv.DictReader(f):
            which = _SWEEP_CURVES.get(row["metric"])
            if which is None or row["error"]:
                continue
            key = (workload_name(row["input"]), policy_name(row["policy"]), int(row["seed"]))
            curves.setdefault(key, {}).setdefault(which, {})[int(row["at"])] = float(row["value"])
    records = [
        {
            "workload": f"openb_pod_list_{w}",
            "policy": p,
            "seed": s,
            "total_gpus": total_gpus,
            **{which: by.get(which, {}) for which in _SWEEP_CURVES.values()},
        }
        for (w, p, s), by in sorted(curves.items(), key=_table_order)
    ]
    _write(args, records)
    print(f"{len(records)} experiments written to {args.out}")


def _table_order(item: tuple[tuple[str, str, int], Any]) -> tuple[int, int, int]:
    (w, p, s), _ = item
    return WORKLOADS.index(w), POLICY_ORDER.index(p), s


def compare(ours_path: str, theirs_path: str) -> None:
    """Print how two tables differ per (workload, policy), and FGD's lead at 130 %."""
    ours, theirs = read_table(ours_path), read_table(theirs_path)
    print(f"{'workload':24} {'policy':17} seeds  max|diff| (seed, %)   max|mean diff|")
    for d in compare_tables(ours, theirs):
        where = f"({d.where[0]}, {d.where[1]})" if d.where else "-"
        print(
            f"{d.workload:24} {d.policy:17} {len(d.seeds):5}  {d.max_per_seed:9.2f} "
            f"{where:12} {d.max_of_means:10.3f}"
        )
    keys = {r.key for r in ours} & {r.key for r in theirs}
    for label, table in (("ours", ours), ("published", theirs)):
        for workload in sorted({k[0] for k in keys}):
            means = {}
            for policy in POLICY_ORDER:
                rows = [r for r in table if r.key in keys and r.key[:2] == (workload, policy)]
                if rows:
                    means[policy] = mean_rows(rows).get(130, math.nan)
            fgd = means.get("06-FGD")
            if fgd is None:
                continue
            leads = ", ".join(f"{p[3:]} {fgd - m:+.2f}" for p, m in means.items() if p != "06-FGD")
            print(f"FGD lead at 130 % ({label}) {workload}: {leads}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", action="append", help="default, cpu050, ... (repeatable)")
    parser.add_argument("--policy", action="append", help="06-FGD or FGD, ... (repeatable)")
    parser.add_argument("--seed", action="append", type=int, help="tuning seed (repeatable)")
    parser.add_argument("--rng", choices=("go", "ksched"), default="go")
    parser.add_argument("--grid", action="store_true", help="17 workloads x 6 policies x 10 seeds")
    parser.add_argument("--out", default="fgd_alloc.csv", help="analysis_allo_discrete rows")
    parser.add_argument("--frag-out", help="analysis_frag_discrete rows")
    parser.add_argument("--frag-ratio-out", help="analysis_frag_ratio_discrete rows")
    parser.add_argument("--stats", help="JSON: per run CPU, peak RSS, failed pods, cost per pod")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    parser.add_argument("--trace", type=Path, default=TRACE, help="the openb CSV folder")
    parser.add_argument("--compare", nargs=2, metavar=("OURS", "PUBLISHED"))
    parser.add_argument("--from-sweep", metavar="TABLE", help="a ksched sweep table of gpu cells")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compare:
        compare(*args.compare)
    elif args.from_sweep:
        from_sweep(args)
    elif args.one:
        Path(args.json).write_text(json.dumps(run_one(args)))
    else:
        run_grid(args)


if __name__ == "__main__":
    main()
