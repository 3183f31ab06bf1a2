"""Upstream's volume workloads (volume/performance-config.yaml) at 500 and 5000 nodes.

Runs SchedulingInTreePVs, SchedulingMigratedInTreePVs and SchedulingCSIPVs, each run its own
``python -m ksched.bench`` process, interleaved (round r runs every workload once, the order
rotated each round) so machine noise spreads evenly. Writes every run, the median and the
spread (min-max) of SchedulingThroughput per workload to ``results/volume_scale.json``.

    python benchmarks/volume_scale.py                    # 5000 nodes, 3 rounds
    python benchmarks/volume_scale.py --nodes 500 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FILE = HERE / "workloads" / "volume" / "performance-config.yaml"
TESTS = ("SchedulingInTreePVs", "SchedulingMigratedInTreePVs", "SchedulingCSIPVs")


def run_one(name: str, backend: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "ksched.bench", str(FILE), "--name", name]
    cmd += ["--backend", backend, "--output", "json"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=1800)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, choices=(500, 5000), default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", default="asyncio")
    parser.add_argument("--tests", nargs="+", choices=TESTS, default=list(TESTS))
    parser.add_argument("--out", default=str(HERE / "results" / "volume_scale.json"))
    args = parser.parse_args()
    workload = f"{args.nodes}Nodes"
    tests = tuple(args.tests)
    runs: dict[str, list[float]] = {t: [] for t in tests}
    raw: list[dict[str, Any]] = []
    for r in range(args.rounds):
        order = tests[r % len(tests) :] + tests[: r % len(tests)]
        for test in order:
            result = run_one(f"{test}/{workload}", args.backend)
            pods = result["throughput"]["average"]
            runs[test].append(pods)
            raw.append({"round": r, "test": test, "result": result})
            print(f"round {r} {test}/{workload}: {pods:.1f} pods/s", flush=True)
    summary = {
        t: {"median": statistics.median(v), "min": min(v), "max": max(v), "runs": v}
        for t, v in runs.items()
    }
    doc = {
        "file": "volume/performance-config.yaml",
        "workload": workload,
        "backend": args.backend,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "summary": summary,
        "runs": raw,
    }
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    for t, s in summary.items():
        print(f"{t}/{workload}: median {s['median']:.1f} ({s['min']:.1f}-{s['max']:.1f}) pods/s")


if __name__ == "__main__":
    main()
