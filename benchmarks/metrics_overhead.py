"""The cost of the Prometheus metrics: SchedulingBasic with metrics on vs off, interleaved.

Each run is its own process; rounds alternate the order (off/on, on/off) so drift of the
machine hits both alike. Reports scheduler_perf's average throughput, medians and the
ratio per round, and each run's CPU seconds (setup included): on a machine shared with
other work the throughput swings with the neighbours' load, while the CPU time the
metrics add per pod, ``(cpu_on - cpu_off) / pods``, barely does.

    python benchmarks/metrics_overhead.py --rounds 5
    python benchmarks/metrics_overhead.py --name SchedulingBasic/500Nodes --rounds 3
    python benchmarks/metrics_overhead.py --split

``--split`` measures the per-plugin metrics alone, in one process with metrics on: the
attempts take turns being recorded without them (no evaluation counts, never timed),
unsampled and sampled, and each scheduling cycle's CPU time (``time.thread_time``) is
kept by turn. Neighbours' load hits the three turns alike, so the differences between
their medians hold on a busy machine.
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


SPLIT_CHILD = """
import itertools, json, statistics, sys, time
from ksched.bench import _ops
from ksched.bench._workload import load_test_cases, plan, select
from ksched.framework import CycleState
from ksched.observability import SchedulerMetrics
from ksched.scheduler._scheduling_cycle import SchedulingCycle

turns = itertools.cycle(["plain", "unsampled", "sampled"])
turn = ["plain"]
spent = {"plain": [], "unsampled": [], "sampled": []}

@classmethod
def for_attempt(cls, metrics):
    turn[0] = next(turns)
    state = cls()
    if turn[0] != "plain" and metrics is not None:
        state.metrics = metrics
        state.record_plugin_metrics = turn[0] == "sampled"
    return state

CycleState.for_attempt = for_attempt
schedule_one = SchedulingCycle.schedule_one

async def timed_schedule_one(self, qpi):
    start = time.thread_time()
    await schedule_one(self, qpi)
    spent[turn[0]].append(time.thread_time() - start)

SchedulingCycle.schedule_one = timed_schedule_one
_ops.Scheduler = type("S", (_ops.Scheduler,), {})
original = _ops.Scheduler.open.__func__

@classmethod
def open_with_metrics(cls, *args, **kwargs):
    return original(cls, *args, metrics=SchedulerMetrics(), **kwargs)

_ops.Scheduler.open = open_with_metrics
case, workload = select(load_test_cases(sys.argv[1]), sys.argv[2])[0]
_ops.run(plan(case, workload), backend="asyncio")
print(json.dumps({k: statistics.median(v[200:]) * 1e6 for k, v in spent.items()}))
"""


def run_split(name: str) -> dict[str, float]:
    """Median CPU microseconds of a scheduling cycle per turn (plain, unsampled, sampled)."""
    proc = subprocess.run(
        [sys.executable, "-c", SPLIT_CHILD, str(WORKLOAD), name],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"split: {proc.stderr[-2000:]}")
    out: dict[str, float] = json.loads(proc.stdout.splitlines()[-1])
    return out


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
    parser.add_argument("--split", action="store_true", help="the per-plugin metrics alone")
    args = parser.parse_args()
    if args.split:
        rounds = [run_split(args.name) for _ in range(args.rounds)]
        for i, turns in enumerate(rounds):
            print(
                f"round {i + 1}: " + ", ".join(f"{turn} {us:.1f} us" for turn, us in turns.items()),
                flush=True,
            )
        median = {turn: statistics.median(r[turn] for r in rounds) for turn in rounds[0]}
        unsampled = median["unsampled"] - median["plain"]
        sampled = median["sampled"] - median["plain"]
        average = 0.9 * unsampled + 0.1 * sampled  # 10 % of attempts sampled
        print(
            f"per scheduling cycle: plain {median['plain']:.1f} us; unsampled "
            f"{unsampled:+.1f} us; sampled {sampled:+.1f} us; at 10 % {average:+.1f} us "
            f"({average / median['plain']:.1%})"
        )
        split_out = args.out.with_name(args.out.stem + "_split.json")
        split_out.write_text(
            json.dumps({"workload": args.name, "rounds": rounds, "median": median}, indent=2) + "\n"
        )
        return
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
