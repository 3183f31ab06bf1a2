"""``ksched gpu``: the openb trace replayed as the FGD study's experiments, and their curves.

    ksched gpu run --trace DIR --workload default --policy FGD --seed 42 --table out.csv
    ksched gpu plot out.csv --kind alloc --plot alloc.png

``run`` prints what the experiment measured (pods, clones, failures by kind, GPU allocation
and fragmentation at 100 and 130 % of arrived workload) and writes the artifact's table rows;
``plot`` draws a table (ksched's or the artifact's published one) in the paper's form.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_gpu_parser"]

_DEFAULT_TRACE = "../shared/traces/openb"


def add_gpu_parser(sub: Any) -> None:
    """Register ``ksched gpu`` on an argparse sub-parsers object."""
    gpu = sub.add_parser("gpu", help="GPU pools: replay the openb trace, plot its curves")
    gpu_sub = gpu.add_subparsers(dest="gpu_command", required=True, metavar="COMMAND")
    run = gpu_sub.add_parser(
        "run",
        help="one experiment of the FGD study on the openb trace",
        description="Submit a workload of the openb trace pod by pod (tuned to --tune of the "
        "GPU capacity, as the FGD artifact does) and measure GPU allocation and fragmentation.",
    )
    run.add_argument(
        "--trace",
        type=Path,
        default=Path(_DEFAULT_TRACE),
        metavar="DIR",
        help=f"folder of the openb CSVs (default {_DEFAULT_TRACE})",
    )
    run.add_argument(
        "--workload",
        default="default",
        help="pod list: default, cpu050, gpushare40, ... or a CSV path",
    )
    run.add_argument(
        "--nodes",
        default="openb_node_list_gpu_node.csv",
        help="node list in the trace folder, or a CSV path",
    )
    run.add_argument(
        "--policy",
        default="FGD",
        help="Random, DotProd, GpuClustering, GpuPacking, BestFit or FGD (or 06-FGD ...)",
    )
    run.add_argument("--seed", type=int, default=42, help="tuning seed (default 42)")
    run.add_argument(
        "--tune",
        type=float,
        default=1.3,
        help="target GPU request as a share of capacity (default 1.3; 0: keep)",
    )
    run.add_argument(
        "--rng",
        choices=("go", "ksched"),
        default="go",
        help="go: Go's math/rand, the artifact's draws (default); ksched: numpy",
    )
    run.add_argument("--no-shuffle", action="store_true", help="submit in name order")
    run.add_argument(
        "--popularity-threshold",
        type=int,
        default=95,
        help="typical pods: percent of pods covered (default 95)",
    )
    run.add_argument("--increase-step", type=int, default=1, help="typical pods per round")
    run.add_argument(
        "--gpu-res-weight",
        type=float,
        default=0.0,
        help="typical pods: extra weight per whole GPU (default 0)",
    )
    run.add_argument(
        "--no-cpu-pods", action="store_true", help="typical pods: leave CPU-only pods out"
    )
    run.add_argument("--table", metavar="FILE", help="write the analysis_allo_discrete row")
    run.add_argument("--frag-table", metavar="FILE", help="write the analysis_frag_discrete row")
    run.add_argument(
        "--frag-ratio-table", metavar="FILE", help="write the analysis_frag_ratio_discrete row"
    )
    run.add_argument("--plot", metavar="FILE", help="draw unallocated GPUs (needs matplotlib)")
    run.add_argument("--output", "-o", choices=("table", "json"), default="table")
    run.set_defaults(run=_run)
    plot = gpu_sub.add_parser("plot", help="draw a table of the study in the paper's form")
    plot.add_argument("table", metavar="TABLE", help="an analysis_*_discrete.csv file")
    plot.add_argument("--kind", choices=("alloc", "frag", "frag_ratio"), default="alloc")
    plot.add_argument("--workload", default="openb_pod_list_default")
    plot.add_argument("--plot", metavar="FILE", required=True, help="the image to write")
    plot.set_defaults(run=_plot)


def _csv(trace: Path, name: str, prefix: str) -> Path:
    if name.endswith(".csv"):
        path = Path(name)
        return path if path.is_absolute() or path.exists() else trace / name
    return trace / f"{prefix}{name.removeprefix(prefix)}.csv"


def _run(args: argparse.Namespace) -> int:
    from ..gpu import (
        ExperimentConfig,
        TypicalPodsConfig,
        WorkloadConfig,
        read_nodes,
        read_pods,
        run_experiment,
        to_nodes,
        to_pods,
    )

    pods_csv = _csv(args.trace, args.workload, "openb_pod_list_")
    config = ExperimentConfig(
        policy=args.policy,
        workload=WorkloadConfig(
            tune=args.tune, seed=args.seed, shuffle=not args.no_shuffle, rng=args.rng
        ),
        typical=TypicalPodsConfig(
            is_involved_cpu_pods=not args.no_cpu_pods,
            pod_popularity_threshold=args.popularity_threshold,
            pod_increase_step=args.increase_step,
            gpu_res_weight=args.gpu_res_weight,
        ),
    )
    if args.plot:
        from ..gpu._plot import _pyplot

        _pyplot()  # fail before the run, not after it
    nodes = to_nodes(read_nodes(_csv(args.trace, args.nodes, "")), source=str(args.nodes))
    pods = to_pods(read_pods(pods_csv), source=str(pods_csv))
    result = run_experiment(nodes, pods, config)
    summary = _summary(result, pods_csv.stem, args)
    _write_tables(result, summary["workload"], args)
    if args.output == "json":
        json.dump(summary, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for key, value in summary.items():
            print(f"{key:24} {value}")
    return 0


def _summary(result: Any, workload: str, args: argparse.Namespace) -> dict[str, Any]:
    alloc, frag = result.curve.allocation(), result.curve.fragmentation()
    return {
        "workload": workload,
        "policy": result.policy,
        "seed": args.seed,
        "tune": args.tune,
        "rng": args.rng,
        "pods": len(result.workload.pods),
        "clones": len(result.workload.pods) - result.workload.originals,
        "typical_pods": len(result.typical),
        "typical_share_pct": round(100 * result.typical_share, 2),
        "bound": result.bound,
        "failed": result.failed,
        "failed_by_kind": result.failed_by_kind,
        "unallocated_gpus": round(result.unallocated_gpu_milli / 1000, 3),
        "fully_free_gpus": result.fully_free_gpus,
        "alloc_pct_at_100": alloc.get(100),
        "alloc_pct_at_130": alloc.get(130),
        "frag_pct_at_130": frag.get(130),
        "cpu_seconds": round(result.cpu_seconds, 2),
    }


def _write_tables(result: Any, workload: str, args: argparse.Namespace) -> None:
    from ..gpu._table import TableRow, write_table

    wanted = (
        (args.table, result.curve.allocation),
        (args.frag_table, result.curve.fragmentation),
        (args.frag_ratio_table, result.curve.fragmentation_ratio),
    )
    for path, values in wanted:
        if not path:
            continue
        row = TableRow(
            workload=workload,
            policy=result.policy,
            tune=str(args.tune),
            seed=args.seed,
            total_gpus=result.curve.total_gpus if path == args.table else None,
            values=values(),
        )
        write_table(path, [row])
    if args.plot:
        from ..gpu._plot import plot_curves

        alloc_row = TableRow(
            workload=workload,
            policy=result.policy,
            tune=str(args.tune),
            seed=args.seed,
            total_gpus=result.curve.total_gpus,
            values=result.curve.allocation(),
        )
        plot_curves([alloc_row], "alloc", args.plot)


def _plot(args: argparse.Namespace) -> int:
    from ..gpu._plot import plot_curves
    from ..gpu._table import read_table

    rows = [r for r in read_table(args.table) if r.workload == args.workload]
    if not rows:
        raise ValueError(f"{args.table}: no row of workload {args.workload!r}")
    plot_curves(rows, args.kind, args.plot)
    return 0
