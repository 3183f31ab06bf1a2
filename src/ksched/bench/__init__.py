"""``ksched bench``: run kube-scheduler's scheduler_perf workloads against ksched.

Reads scheduler_perf workload files (test cases, workloads with params, object
templates), runs the chosen workloads on an embedded cluster and reports
SchedulingThroughput and attempt latency the way scheduler_perf does.
"""

from __future__ import annotations

import argparse
import json
import sys

from .._errors import KschedError
from .._gc import few_collections
from ._errors import WorkloadError
from ._metrics import Throughput
from ._ops import BACKENDS, RunResult, run
from ._report import print_table, to_json
from ._workload import Plan, TestCase, Workload, load_test_cases, plan, select

__all__ = [
    "BACKENDS",
    "Plan",
    "RunResult",
    "TestCase",
    "Throughput",
    "Workload",
    "WorkloadError",
    "configure_parser",
    "load_test_cases",
    "main",
    "plan",
    "plans",
    "run",
    "to_json",
]


def plans(path: str, name: str | None = None) -> list[Plan]:
    """Every workload of the file that ``name`` selects, planned (checked) before any runs."""
    return [plan(case, workload) for case, workload in select(load_test_cases(path), name)]


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add ``ksched bench``'s arguments to ``parser``."""
    parser.add_argument("workload_file", metavar="WORKLOAD_FILE", help="scheduler_perf config")
    parser.add_argument(
        "--name",
        metavar="TEST[/WORKLOAD]",
        help="run one test case (all its workloads) or one workload; default: all",
    )
    parser.add_argument("--backend", choices=BACKENDS, default="asyncio")
    parser.add_argument("--output", choices=("json", "table"))
    parser.add_argument("--repeat", type=int, default=1, metavar="N", help="runs per workload")
    parser.add_argument("--seed", type=int, default=0, help="tie-break seed of the scheduler")


def main(args: argparse.Namespace) -> int:
    """Run ``ksched bench``: 0 on success, 2 on a workload ksched cannot run."""
    try:
        if args.repeat < 1:
            raise WorkloadError(f"--repeat: must be at least 1, got {args.repeat}")
        selected = plans(args.workload_file, args.name)
        results: list[RunResult] = []
        with few_collections():  # as ksched simulate runs
            for p in selected:
                for i in range(args.repeat):
                    results.append(run(p, backend=args.backend, seed=args.seed + i))
    except (KschedError, OSError) as exc:
        print(f"ksched bench: error: {exc}", file=sys.stderr)
        return 2
    output = args.output or ("table" if sys.stdout.isatty() else "json")
    if output == "json":
        objects = [to_json(r) for r in results]
        json.dump(objects[0] if len(objects) == 1 else objects, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_table(results)
    return 0
