"""ksched against the Go kube-scheduler v1.35.4, interleaved on one machine.

The Go side is ``go-scheduler-perfbench -mode e2e`` (upstream kube-scheduler driven in
process through a fake clientset, ../shared/kube); the ksched side is ``ksched bench`` on
``workloads/ksched/go-comparison.yaml``, the same SchedulingBasic shapes (node-default
and pod-default templates, nodes in 10 zones, initPods bound first). Each round runs Go
then ksched (or the reverse on odd rounds) for every shape, each in its own process, so
drift of the machine hits both alike. Reports pods/s (scheduler_perf's average
throughput), attempt percentiles where each side gives them, and peak RSS (``wait4``).

    python benchmarks/go_compare.py --rounds 3
    python benchmarks/go_compare.py --shapes 5000Nodes_10000Pods --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKLOAD = HERE / "workloads" / "ksched" / "go-comparison.yaml"
ASSETS = Path(os.environ.get("KSCHED_KUBE_ASSETS", HERE.parent.parent / "shared" / "kube"))
GO = ASSETS / "go-scheduler-perfbench"

SHAPES: dict[str, tuple[int, int, int]] = {
    "500Nodes_10000Pods": (500, 500, 10_000),
    "5000Nodes_10000Pods": (5000, 1000, 10_000),
    "5000Nodes_50000Pods": (5000, 5000, 50_000),
    "50000Nodes_10000Pods": (50_000, 1000, 10_000),
}

_GO_LINE = re.compile(r"throughput\(avg\)=([\d.]+) pods/s.*?p50=([\d.]+) p90=([\d.]+) p99=([\d.]+)")


def _peak_rss(cmd: list[str], timeout: float) -> tuple[str, float, int]:
    """Like :func:`_run` but reads the child's own peak RSS with ``os.wait4``."""
    start = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=devnull, text=True)
        assert proc.stdout is not None
        deadline = start + timeout
        chunks: list[str] = []
        while True:
            line = proc.stdout.readline()
            if not line:
                break
            chunks.append(line)
            if time.perf_counter() > deadline:
                proc.kill()
                raise SystemExit(f"timed out after {timeout}s: {' '.join(cmd)}")
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode})")
    return "".join(chunks), wall, usage.ru_maxrss * 1024


def run_go(shape: str, timeout: float) -> dict[str, Any]:
    nodes, init, measure = SHAPES[shape]
    cmd = [str(GO), "-mode", "e2e", "-nodes", str(nodes), "-init-pods", str(init)]
    cmd += ["-measure-pods", str(measure)]
    out, wall, rss = _peak_rss(cmd, timeout)
    match = _GO_LINE.search(out)
    if match is None:
        raise SystemExit(f"go: no throughput line in:\n{out[-2000:]}")
    pods_s, p50, p90, p99 = (float(x) for x in match.groups())
    return {"pods_per_s": pods_s, "p50": p50, "p90": p90, "p99": p99, "rss": rss, "wall": wall}


def run_ksched(shape: str, backend: str, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "ksched.bench", str(WORKLOAD), "--name"]
    cmd += [f"GoComparison/{shape}", "--output", "json", "--backend", backend, "--seed", "1"]
    out, wall, rss = _peak_rss(cmd, timeout)
    data = json.loads(out)
    run = data[0] if isinstance(data, list) else data
    throughput = run["throughput"]
    return {
        "pods_per_s": float(throughput["average"]),
        "p50": float(throughput.get("perc50", 0.0)),
        "p90": float(throughput.get("perc90", 0.0)),
        "p99": float(throughput.get("perc99", 0.0)),
        "rss": rss,
        "wall": wall,
    }


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", default="asyncio", choices=("asyncio", "trio", "uvloop"))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "go_compare.json")
    args = parser.parse_args()
    if not GO.exists():
        raise SystemExit(f"{GO} not found: set KSCHED_KUBE_ASSETS to the folder holding it")
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {
        s: {"go": [], "ksched": []} for s in args.shapes
    }
    for round_ in range(args.rounds):
        for shape in args.shapes:
            order = ("go", "ksched") if round_ % 2 == 0 else ("ksched", "go")
            for side in order:
                result = (
                    run_go(shape, args.timeout)
                    if side == "go"
                    else run_ksched(shape, args.backend, args.timeout)
                )
                runs[shape][side].append(result)
                print(
                    f"round {round_ + 1} {shape:<22} {side:<7} {result['pods_per_s']:9.1f} pods/s"
                    f"  rss {result['rss'] / 2**20:7.1f} MiB",
                    flush=True,
                )
    report: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "backend": args.backend,
        },
        "shapes": {},
    }
    for shape, sides in runs.items():
        go = [r["pods_per_s"] for r in sides["go"]]
        ks = [r["pods_per_s"] for r in sides["ksched"]]
        ratios = [k / g for k, g in zip(ks, go, strict=True)]
        report["shapes"][shape] = {
            "go_pods_per_s": _summary(go),
            "ksched_pods_per_s": _summary(ks),
            "ratio_per_round": _summary(ratios),
            "go_rss_mib": _summary([r["rss"] / 2**20 for r in sides["go"]]),
            "ksched_rss_mib": _summary([r["rss"] / 2**20 for r in sides["ksched"]]),
            "runs": sides,
        }
        print(
            f"{shape:<22} go {statistics.median(go):8.1f}  ksched {statistics.median(ks):8.1f}"
            f"  ratio {statistics.median(ratios):5.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
