"""The cost of the Prometheus metrics: SchedulingBasic with metrics on vs off, interleaved.

Each run is its own process; rounds alternate the order (off/on, on/off) so drift of the
machine hits both alike. Reports scheduler_perf's average throughput, medians and the
ratio per round, and each run's CPU seconds (setup included): on a machine shared with
other work the throughput swings with the neighbours' load, while the CPU time the
metrics add per pod, ``(cpu_on - cpu_off) / pods``, barely does.

    python benchmarks/metrics_overhead.py --rounds 5
    python benchmarks/metrics_overhead.py --name SchedulingBasic/500Nodes --rounds 3
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOAD = HERE / "workloads" / "misc" / "performance-config.yaml"

CHILD = """
import json, sys, functools, time
from ksched.bench import _ops
from ksched.bench._workload import load_test_cases, plan, select
from ksched.observability import SchedulerMetrics
if sys.argv[3] == "on":
    _ops.Scheduler = type("S", (_ops.Scheduler,), {{}})
    original = _ops.Scheduler.open.__func__
    @classmethod
    def open_with_metrics(cls, *args, **kwargs):
        return original(cls, *args, metrics=SchedulerMetrics(), **kwargs)
    _ops.Scheduler.open = open_with_metrics
case, workload = select(load_test_cases(sys.argv[1]), sys.argv[2])[0]
cpu = time.process_time()
result = _ops.run(plan(case, workload), backend="asyncio")
cpu = time.process_time() - cpu
print(json.dumps({{"pods_per_s": result.throughput.average, "cpu_s": cpu}}))
"""


def run_once(name: str, mode: str) -> tuple[float, float]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD.format(), str(WORKLOAD), name, mode],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{mode}: {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.splitlines()[-1])
    return float(out["pods_per_s"]), float(out["cpu_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="SchedulingBasic/5000Nodes_10000Pods")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pods", type=int, default=10_000, help="pods the workload creates")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "metrics_overhead.json")
    args = parser.parse_args()
    runs: dict[str, list[float]] = {"off": [], "on": []}
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    for round_ in range(args.rounds):
        for mode in ("off", "on") if round_ % 2 == 0 else ("on", "off"):
            rate, seconds = run_once(args.name, mode)
            runs[mode].append(rate)
            cpu[mode].append(seconds)
            print(
                f"round {round_ + 1} metrics {mode:<3} {rate:8.1f} pods/s {seconds:6.2f} s CPU",
                flush=True,
            )
    ratios = [on / off for on, off in zip(runs["on"], runs["off"], strict=True)]
    extra_us = (statistics.median(cpu["on"]) - statistics.median(cpu["off"])) / args.pods * 1e6
    report = {
        "workload": args.name,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "runs": runs,
        "median_off": statistics.median(runs["off"]),
        "median_on": statistics.median(runs["on"]),
        "ratio_per_round": ratios,
        "median_ratio": statistics.median(ratios),
        "cpu_seconds": cpu,
        "median_cpu_off": statistics.median(cpu["off"]),
        "median_cpu_on": statistics.median(cpu["on"]),
        "cpu_us_per_pod_added": extra_us,
    }
    print(
        f"median off {report['median_off']:.1f}, on {report['median_on']:.1f} pods/s; "
        f"on/off {report['median_ratio']:.3f} ({min(ratios):.3f}-{max(ratios):.3f}); "
        f"CPU off {report['median_cpu_off']:.2f} s, on {report['median_cpu_on']:.2f} s: "
        f"{extra_us:+.1f} us per pod"
    )
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
