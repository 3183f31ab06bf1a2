"""SchedulingBasic, in scheduler_perf's shape: N default nodes, then pods, measured in pods/s.

Nodes are upstream's default node (4 cpu, 32Gi, 110 pods); pods are upstream's pod-default
template (100m cpu, 500Mi memory). Each measured pod is created into the embedded cluster and
the run ends when all are bound. Reports throughput and per-attempt latency percentiles.

    python benchmarks/scheduling_basic.py --nodes 5000 --init-pods 1000 --pods 2000

With ``--base DIR/src`` it instead runs ``ksched bench`` on the GoComparison workload
(``--shape``, scheduler_perf's SchedulingBasic shapes) A/B: this tree and the base tree,
each run its own process, alternating which goes first; medians, ranges and ratios of
throughput and of the CPU seconds the child used (``os.wait4``).

    python benchmarks/scheduling_basic.py --base ../base/src --shape 5000Nodes_10000Pods
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

import ksched
from ksched.testing import make_node, make_pod


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_once(nodes: int, init_pods: int, pods: int, seed: int) -> dict[str, Any]:
    cluster = ksched.InMemoryCluster()
    attempt_started: dict[str, float] = {}
    latencies: list[float] = []
    bound_times: list[float] = []

    def observe(event: ksched.SchedulingEvent) -> None:
        if event.kind == "Bound":
            now = time.perf_counter()
            bound_times.append(now)
            start = attempt_started.pop(event.pod, None)
            if start is not None:
                latencies.append(now - start)

    async with ksched.Scheduler.open(cluster=cluster, observer=observe, seed=seed) as scheduler:
        for i in range(nodes):
            node = make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj()
            cluster.apply(node)
        for i in range(init_pods):
            cluster.apply(make_pod(f"init-{i}").req(cpu="100m", memory="500Mi").obj())
        while len(bound_times) < init_pods:
            await anyio.sleep(0.01)
        bound_times.clear()
        latencies.clear()
        start = time.perf_counter()
        cpu_start = time.process_time()
        for i in range(pods):
            key = f"default/pod-{i}"
            attempt_started[key] = time.perf_counter()
            cluster.apply(make_pod(f"pod-{i}").req(cpu="100m", memory="500Mi").obj())
        while len(bound_times) < pods:
            await anyio.sleep(0.005)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        assert scheduler.cache.pod_count == init_pods + pods
    # Throughput over 1 s windows, as scheduler_perf reports it.
    windows: dict[int, int] = {}
    for t in bound_times:
        windows[int(t - start)] = windows.get(int(t - start), 0) + 1
    per_window = [float(v) for v in windows.values()]
    return {
        "pods_per_second": pods / elapsed,
        "window_p50": _percentile(per_window, 0.5),
        "elapsed_s": elapsed,
        "cpu_s": cpu,
        "pods_per_cpu_second": pods / cpu,
        "create_to_bind_p50_ms": _percentile(latencies, 0.5) * 1000,
        "create_to_bind_p99_ms": _percentile(latencies, 0.99) * 1000,
    }


GO_COMPARISON = Path(__file__).parent / "workloads" / "ksched" / "go-comparison.yaml"
HERE = Path(__file__).resolve().parent.parent / "src"


def bench_once(src: str, shape: str, backend: str) -> dict[str, Any]:
    """One ``ksched bench`` run of GoComparison/``shape`` with ``src`` on the path."""
    cmd = [sys.executable, "-m", "ksched.bench", str(GO_COMPARISON), "--name"]
    cmd += [f"GoComparison/{shape}", "--output", "json", "--backend", backend, "--seed", "1"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": src}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} (PYTHONPATH={src}) failed")
    data = json.loads(out)
    run = data[0] if isinstance(data, list) else data
    return {
        "loadAverageBefore": round(load, 2),
        "podsPerSecond": float(run["throughput"]["average"]),
        "wallSeconds": round(time.perf_counter() - start, 2),
        "cpuSeconds": round(usage.ru_utime + usage.ru_stime, 2),
        "peakRssMiB": round(usage.ru_maxrss / 1024, 1),
    }


def ab(base: str, branch: str, shape: str, rounds: int, backend: str) -> dict[str, Any]:
    """Base and branch trees, interleaved (alternating order), with medians and ratios."""
    trees = {"base": str(Path(base).resolve()), "branch": str(Path(branch).resolve())}
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "branch": []}
    for r in range(rounds):
        for tree in ("base", "branch") if r % 2 == 0 else ("branch", "base"):
            run = bench_once(trees[tree], shape, backend)
            runs[tree].append(run)
            print(f"round {r + 1} {tree}: {run}", file=sys.stderr, flush=True)
    summary: dict[str, Any] = {}
    for tree, rs in runs.items():
        summary[tree] = {
            key: {
                "median": statistics.median(x[key] for x in rs),
                "min": min(x[key] for x in rs),
                "max": max(x[key] for x in rs),
            }
            for key in ("podsPerSecond", "cpuSeconds", "wallSeconds", "peakRssMiB")
        }
    summary["throughputRatioBranchOverBase"] = round(
        summary["branch"]["podsPerSecond"]["median"] / summary["base"]["podsPerSecond"]["median"],
        2,
    )
    summary["cpuRatioBaseOverBranch"] = round(
        summary["base"]["cpuSeconds"]["median"] / summary["branch"]["cpuSeconds"]["median"], 2
    )
    return {
        "workload": f"{GO_COMPARISON.name} GoComparison/{shape} (ksched bench --seed 1)",
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "backend": backend,
        "rounds": rounds,
        "medians": summary,
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--init-pods", type=int, default=500)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--base", default="", help="A/B against this src directory")
    parser.add_argument("--branch", default=str(HERE), help="with --base: the B tree's src")
    parser.add_argument("--shape", default="5000Nodes_10000Pods", help="with --base")
    parser.add_argument("--rounds", type=int, default=3, help="with --base")
    parser.add_argument("--out", default="", help="with --base: result file")
    args = parser.parse_args()
    if args.base:
        result = ab(args.base, args.branch, args.shape, args.rounds, args.backend)
        text = json.dumps(result, indent=2)
        if args.out:
            Path(args.out).write_text(text + "\n")
        print(text)
        return
    runs = [
        anyio.run(run_once, args.nodes, args.init_pods, args.pods, i, backend=args.backend)
        for i in range(args.repeat)
    ]
    rates = [r["pods_per_second"] for r in runs]
    result = {
        "workload": "SchedulingBasic",
        "nodes": args.nodes,
        "initPods": args.init_pods,
        "measuredPods": args.pods,
        "backend": args.backend,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "pods_per_second_median": statistics.median(rates),
        "pods_per_second_runs": rates,
        "create_to_bind_p50_ms_median": statistics.median(r["create_to_bind_p50_ms"] for r in runs),
        "create_to_bind_p99_ms_median": statistics.median(r["create_to_bind_p99_ms"] for r in runs),
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
