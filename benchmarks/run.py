"""`make bench`: run ksched's standard scheduler_perf set and write the results.

Each workload runs at 500 and 5000 nodes, ``--repeat`` times, each run in its own process
(``python -m ksched.bench``) so peak RSS belongs to that run alone. Writes
``benchmarks/results/bench.json`` (every run, medians, machine), the table at the top of
``benchmarks/RESULTS.md`` (earlier content is kept below it) and, with matplotlib,
``benchmarks/throughput.png``.

    python benchmarks/run.py                 # the standard set, 3 runs each
    python benchmarks/run.py --quick         # 500-node workloads, 1 run each (smoke test)
    python benchmarks/run.py --only Basic --repeat 5 --backend trio
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKLOADS = HERE / "workloads"
RESULTS_MD = HERE / "RESULTS.md"
RESULTS_JSON = HERE / "results" / "bench.json"
PLOT = HERE / "throughput.png"
MARK_BEGIN = "<!-- bench:begin -->"
MARK_END = "<!-- bench:end -->"

MISC = "misc/performance-config.yaml"
AFFINITY = "affinity/performance-config.yaml"
SPREAD = "topology_spreading/performance-config.yaml"
KSCHED = "ksched/performance-config.yaml"

# (file, TEST/WORKLOAD at 500 nodes, at 5000 nodes). Upstream files run unchanged; the 5000-
# node workloads are the ones upstream's CI gives a threshold.
STANDARD: list[tuple[str, str, str]] = [
    (MISC, "SchedulingBasic/500Nodes", "SchedulingBasic/5000Nodes_10000Pods"),
    (
        AFFINITY,
        "SchedulingPodAntiAffinity/500Nodes",
        "SchedulingPodAntiAffinity/5000Nodes_2000Pods",
    ),
    (AFFINITY, "SchedulingPodAffinity/500Nodes", "SchedulingPodAffinity/5000Nodes_5000Pods"),
    (AFFINITY, "SchedulingNodeAffinity/500Nodes", "SchedulingNodeAffinity/5000Nodes_10000Pods"),
    (SPREAD, "TopologySpreading/500Nodes", "TopologySpreading/5000Nodes_5000Pods"),
    (
        SPREAD,
        "PreferredTopologySpreading/500Nodes",
        "PreferredTopologySpreading/5000Nodes_5000Pods",
    ),
    (KSCHED, "PreemptionBasic/500Nodes", "PreemptionBasic/5000Nodes"),
    (MISC, "Unschedulable/500Nodes/10Init/1kPods", "Unschedulable/5kNodes/100Init/10kPods"),
    (KSCHED, "Coscheduling/500Nodes", "Coscheduling/5000Nodes"),
    (MISC, "PreemptionAsync/500Nodes", "PreemptionAsync/5000Nodes"),
]

# 5000-node workloads without a 500-node twin: more upstream thresholds, and opportunistic
# batching on and off side by side (one pod per node, every pod with the same signature).
EXTRA: list[tuple[str, str]] = [
    (MISC, "Unschedulable/5kNodes/20kInit/10kPods"),
    (KSCHED, "HostPortConflict/5000Nodes_5000Pods"),
    (KSCHED, "HostPortConflict/5000Nodes_5000Pods_OpportunisticBatchingDisabled"),
    (KSCHED, "ResourceSaturation/5000Nodes_5000Pods"),
    (KSCHED, "ResourceSaturation/5000Nodes_5000Pods_OpportunisticBatchingDisabled"),
]

# The upstream Go kube-scheduler (v1.35.4, in process, fake API client, default profile) on a
# 2-core machine like this one, pods/s.
GO_REFERENCE = {
    ("SchedulingBasic", 500): "1210-1263",
    ("SchedulingBasic", 5000): "603-731",
}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


def run_once(file: str, name: str, backend: str, seed: int) -> dict[str, Any]:
    cmd = [
        sys.executable,
        "-m",
        "ksched.bench",
        str(WORKLOADS / file),
        "--name",
        name,
        "--output",
        "json",
        "--backend",
        backend,
        "--seed",
        str(seed),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: ksched bench failed ({proc.returncode}):\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    first = runs[0]

    def med(path: tuple[str, ...]) -> float:
        values = []
        for r in runs:
            v: Any = r
            for key in path:
                v = v[key]
            values.append(float(v))
        return statistics.median(values)

    summary = {
        "testCase": first["testCase"],
        "workload": first["workload"],
        "nodes": first["nodes"],
        "measuredPods": first["measuredPods"],
        "podsPerSecondMedian": med(("throughput", "average")),
        "podsPerSecondRuns": [r["throughput"]["average"] for r in runs],
        "perc50Median": med(("throughput", "perc50")),
        "attemptLatencyP50Median": med(("attemptLatencySeconds", "perc50")),
        "attemptLatencyP99Median": med(("attemptLatencySeconds", "perc99")),
        "peakRssBytesMedian": int(med(("peakRssBytes",))),
        "threshold": first.get("threshold"),
        "batchedPodsMedian": med(("batchedPods",)) if "batchedPods" in first else None,
        "runs": runs,
    }
    if summary["threshold"]:
        summary["ratioToThreshold"] = summary["podsPerSecondMedian"] / summary["threshold"]
    return summary


def markdown(results: list[dict[str, Any]], info: dict[str, Any]) -> str:
    lines = [
        MARK_BEGIN,
        "## ksched bench: scheduler_perf workloads",
        "",
        f"Measured {info['date']} with `python benchmarks/run.py"
        f"{' --quick' if info['quick'] else ''}`: backend {info['backend']}, "
        f"Python {info['machine']['python']}, {info['machine']['cpu']} "
        f"({info['machine']['cpus']} CPUs); median of {info['repeat']} run(s) each, every run "
        "in its own process. pods/s is scheduler_perf's SchedulingThroughput average (1 s "
        "windows of the measured phase); the threshold is upstream's CI floor for the workload, "
        "with ksched's median as a ratio of it. Raw runs: `results/bench.json`.",
        "",
        "| workload | nodes | pods | pods/s (median) | runs | attempt p50 / p99 ms "
        "| peak RSS MiB | upstream threshold | ratio | Go kube-scheduler (2 cores) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        runs = " / ".join(f"{v:.0f}" for v in r["podsPerSecondRuns"])
        ratio = f"{r['ratioToThreshold']:.2f}x" if r.get("ratioToThreshold") else "-"
        ref = GO_REFERENCE.get((r["testCase"], r["nodes"]), "-")
        lines.append(
            f"| {r['testCase']}/{r['workload']} | {r['nodes']} | {r['measuredPods']} "
            f"| {r['podsPerSecondMedian']:.0f} | {runs} "
            f"| {r['attemptLatencyP50Median'] * 1000:.2f} / "
            f"{r['attemptLatencyP99Median'] * 1000:.2f} "
            f"| {r['peakRssBytesMedian'] / 2**20:.0f} | {r['threshold'] or '-'} | {ratio} "
            f"| {ref} |"
        )
    batched = [r for r in results if r.get("batchedPodsMedian")]
    if batched:
        lines.append("")
        for r in batched:
            lines.append(
                f"- {r['testCase']}/{r['workload']}: {r['batchedPodsMedian']:.0f} of "
                f"{r['measuredPods']} measured pods placed on an opportunistic-batching hint."
            )
    lines += [
        "",
        "Attempt latency runs from the start of a scheduling attempt (the engine's "
        "`attempt_start`) to its outcome: bound, unschedulable or waiting at Permit.",
        MARK_END,
        "",
    ]
    return "\n".join(lines)


def write_markdown(section: str, path: Path) -> None:
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    if MARK_BEGIN in old and MARK_END in old:
        head, _, rest = old.partition(MARK_BEGIN)
        _, _, tail = rest.partition(MARK_END)
        text = head + section + "\n" + tail.lstrip("\n")
    else:
        title, _, body = old.partition("\n")
        history = body.lstrip("\n").replace("\n# ", "\n## ")
        text = f"{title}\n\n{section}\n## History\n\n{history}"
    path.write_text(text)


def plot(results: list[dict[str, Any]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    by_case: dict[str, list[tuple[int, float]]] = {}
    for r in results:
        case = r["testCase"]
        if r["workload"].endswith("OpportunisticBatchingDisabled"):
            case += " (batching off)"
        by_case.setdefault(case, []).append((r["nodes"], r["podsPerSecondMedian"]))
    for case, points in sorted(by_case.items()):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=case)
    ax.set_xscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel("pods/s (median SchedulingThroughput average)")
    ax.set_title("ksched on scheduler_perf workloads")
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="500-node workloads, 1 run each")
    parser.add_argument("--repeat", type=int, help="runs per workload (default 3; 1 with --quick)")
    parser.add_argument("--backend", default="asyncio", choices=("asyncio", "trio", "uvloop"))
    parser.add_argument("--only", help="run only workloads whose TEST/WORKLOAD contains this")
    parser.add_argument(
        "--out", type=Path, help="write bench.json, RESULTS.md, throughput.png here instead"
    )
    args = parser.parse_args()
    repeat = args.repeat or (1 if args.quick else 3)
    selected = [
        (file, name)
        for file, small, large in STANDARD
        for name in ((small,) if args.quick else (small, large))
        if not args.only or args.only in name
    ]
    if not args.quick:
        selected += [(f, n) for f, n in EXTRA if not args.only or args.only in n]
    results = []
    for file, name in selected:
        runs = []
        for i in range(repeat):
            print(f"{name} run {i + 1}/{repeat} ...", file=sys.stderr, flush=True)
            runs.append(run_once(file, name, args.backend, seed=i))
        summary = summarize(runs)
        print(
            f"  {summary['podsPerSecondMedian']:.0f} pods/s (median)",
            file=sys.stderr,
            flush=True,
        )
        results.append(summary)
    info = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "backend": args.backend,
        "repeat": repeat,
        "quick": args.quick,
        "machine": machine(),
    }
    out_json, out_md, out_png = RESULTS_JSON, RESULTS_MD, PLOT
    if args.out is not None:
        out_json, out_md, out_png = (args.out / p.name for p in (RESULTS_JSON, RESULTS_MD, PLOT))
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps({**info, "results": results}, indent=2) + "\n")
    write_markdown(markdown(results, info), out_md)
    plotted = plot(results, out_png)
    print(f"wrote {out_json}, {out_md}" + (f", {out_png}" if plotted else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
