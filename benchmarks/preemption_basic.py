"""PreemptionBasic, in scheduler_perf's shape: nodes filled with low-priority pods, then
high-priority pods that each must preempt, measured in pods/s.

Upstream (test/integration/scheduler_perf, PreemptionBasic/500Nodes): 500 default nodes
(4 cpu, 32Gi, 110 pods), 2000 init pods from pod-low-priority.yaml (900m cpu, 500Mi,
priority 0), then 500 measured pods from pod-high-priority.yaml (3000m cpu, 500Mi,
priority 10). Each node holds 4 low pods (3.6 of 4 cpu), so every measured pod evicts 3
of them: one failed attempt that preempts and nominates, then one that binds.

Reports throughput (overall and per 1 s window, as scheduler_perf; also per second of
the process's CPU time, which other processes on a shared machine disturb less than the
wall clock), create-to-bind latency and scheduling attempt duration percentiles split by
result (scheduled / unschedulable, as upstream's scheduling_attempt_duration_seconds),
medians of ``--repeat`` runs.

    python benchmarks/preemption_basic.py --nodes 500 --init-pods 2000 --pods 500

``--ab A_SRC B_SRC`` compares two source trees in one interleaved run: each run is its
own process (``PYTHONPATH`` set to the tree's ``src``), A and B alternating (A B, B A,
...) for ``--rounds`` rounds; it reports per tree the medians and min-max of pods/s, pods
per CPU second and the failed-attempt p50, the child's CPU seconds from ``os.wait4``, the
B/A ratios of the medians, and the median and min-max of each round's own B/A.

    python benchmarks/preemption_basic.py --nodes 5000 --init-pods 20000 --pods 500 \
        --ab /tmp/base/src src --rounds 3

Each run also keeps its curve: measured pods bound and preempting attempts per 1 s window
from the creation of the measured pods, and the failed-attempt median of each fifth of the
run (the cost of a preemptor early and late). ``--plot FILE.png`` (with ``--ab``) draws the
curves of every run of both trees.

``--profile FILE`` writes cProfile stats of the measured attempts (``--profile-every N``
samples every N-th attempt, to keep the profiler's overhead off the rest); read them with
``python -m pstats FILE``. Timings of a profiled run include the profiler's overhead.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

import ksched
from ksched._gc import few_collections
from ksched.framework import QueuedPodInfo
from ksched.testing import make_node, make_pod

RESULTS = Path(__file__).parent / "results"


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _per_window(times: list[float], start: float) -> list[int]:
    """How many of ``times`` fall in each 1 s window from ``start`` (every window listed)."""
    counts = [0] * (int(max(times, default=start) - start) + 1)
    for t in times:
        counts[int(t - start)] += 1
    return counts


def _by_fifth(durations: list[float], scale: float) -> list[float]:
    """The median of each fifth of ``durations`` (in attempt order), times ``scale``."""
    n = len(durations)
    if n < 5:
        return []
    return [statistics.median(durations[k * n // 5 : (k + 1) * n // 5]) * scale for k in range(5)]


def _cpu_by_tenth(cpu_times: list[float], cpu_start: float, scale: float) -> list[float]:
    """The process CPU time spent per preempting attempt in each tenth of them (from the
    previous tenth's last attempt to this tenth's last), times ``scale``: the cost of a
    preemptor along the run, which other processes on the machine do not inflate."""
    n = len(cpu_times)
    if n < 10:
        return []
    bounds = [cpu_start] + [cpu_times[(k + 1) * n // 10 - 1] for k in range(10)]
    counts = [(k + 1) * n // 10 - k * n // 10 for k in range(10)]
    return [(bounds[k + 1] - bounds[k]) / counts[k] * scale for k in range(10)]


def _low_pod(i: int) -> ksched.Pod:
    return make_pod(f"low-{i}").req(cpu="900m", memory="500Mi").obj()


def _high_pod(i: int) -> ksched.Pod:
    return make_pod(f"high-{i}").priority(10).req(cpu="3000m", memory="500Mi").obj()


async def run_once(
    nodes: int,
    init_pods: int,
    pods: int,
    seed: int,
    profiler: cProfile.Profile | None = None,
    profile_every: int = 1,
) -> dict[str, Any]:
    """One run; with ``profiler``, every ``profile_every``-th measured attempt is profiled."""
    cluster = ksched.InMemoryCluster()
    measuring = False
    created: dict[str, float] = {}
    create_to_bind: list[float] = []
    bound_times: list[float] = []
    init_bound = 0
    preempted = 0
    # Attempt durations, from the queue handing a pod out to the end of its cycle.
    attempt_start: list[float] = [0.0]
    attempt_pod: list[str] = [""]
    failed_attempts: list[float] = []
    failed_times: list[float] = []
    failed_cpu: list[float] = []
    scheduled_attempts: list[float] = []

    def observe(event: ksched.SchedulingEvent) -> None:
        nonlocal init_bound, preempted
        now = time.perf_counter()
        if event.kind == "Bound":
            if not measuring:
                init_bound += 1
                return
            bound_times.append(now)
            start = created.pop(event.pod, None)
            if start is not None:
                create_to_bind.append(now - start)
        elif event.kind == "Preempted" and measuring:
            preempted += 1
        elif event.kind == "Unschedulable" and measuring and event.pod == attempt_pod[0]:
            failed_attempts.append(now - attempt_start[0])
            failed_times.append(now)
            failed_cpu.append(time.process_time())
            attempt_pod[0] = ""

    async with ksched.Scheduler.open(cluster=cluster, observer=observe, seed=seed) as scheduler:
        queue = scheduler.queue
        pop = queue.pop
        attempts = [0]
        profiling = [False]

        async def timed_pop(*, eager: bool = False) -> QueuedPodInfo:
            # The loop is serial: asking for the next pod ends the previous attempt.
            now = time.perf_counter()
            if profiling[0]:
                assert profiler is not None
                profiler.disable()
                profiling[0] = False
            if measuring and attempt_pod[0]:
                scheduled_attempts.append(now - attempt_start[0])
            qpi = await pop(eager=eager)
            if measuring and profiler is not None:
                attempts[0] += 1
                if attempts[0] % profile_every == 0:
                    profiling[0] = True
                    profiler.enable()
            attempt_start[0] = time.perf_counter()
            attempt_pod[0] = qpi.pod.key
            return qpi

        queue.pop = timed_pop  # type: ignore[method-assign]  # timed, on this queue only
        for i in range(nodes):
            cluster.apply(make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj())
        for i in range(init_pods):
            cluster.apply(_low_pod(i))
        while init_bound < init_pods:
            await anyio.sleep(0.01)
        measuring = True
        attempt_pod[0] = ""
        start = time.perf_counter()
        cpu_start = time.process_time()
        for i in range(pods):
            created[f"default/high-{i}"] = time.perf_counter()
            cluster.apply(_high_pod(i))
        while len(bound_times) < pods:
            await anyio.sleep(0.005)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        await anyio.sleep(0)
        assert scheduler.cache.pod_count == init_pods - preempted + pods
    binds_per_window = _per_window(bound_times, start)
    per_window = [float(v) for v in binds_per_window if v]
    ms = 1000.0
    return {
        "curve": {
            "binds_per_window": binds_per_window,
            "preemptions_per_window": _per_window(failed_times, start),
            "attempt_unschedulable_ms_by_fifth": _by_fifth(failed_attempts, ms),
            "cpu_ms_per_preemption_by_tenth": _cpu_by_tenth(failed_cpu, cpu_start, ms),
        },
        "pods_per_second": pods / elapsed,
        "pods_per_cpu_second": pods / cpu,
        "window_p50": _percentile(per_window, 0.5),
        "elapsed_s": elapsed,
        "victims": preempted,
        "attempts_unschedulable": len(failed_attempts),
        "attempts_scheduled": len(scheduled_attempts),
        "create_to_bind_p50_ms": _percentile(create_to_bind, 0.5) * ms,
        "create_to_bind_p99_ms": _percentile(create_to_bind, 0.99) * ms,
        "attempt_unschedulable_p50_ms": _percentile(failed_attempts, 0.5) * ms,
        "attempt_unschedulable_p90_ms": _percentile(failed_attempts, 0.9) * ms,
        "attempt_unschedulable_p99_ms": _percentile(failed_attempts, 0.99) * ms,
        "attempt_scheduled_p50_ms": _percentile(scheduled_attempts, 0.5) * ms,
        "attempt_scheduled_p90_ms": _percentile(scheduled_attempts, 0.9) * ms,
        "attempt_scheduled_p99_ms": _percentile(scheduled_attempts, 0.99) * ms,
    }


_AB_KEYS = (
    "pods_per_second",
    "pods_per_cpu_second",
    "attempt_unschedulable_p50_ms",
    "attempt_scheduled_p50_ms",
    "victims",
)


def run_ab(args: argparse.Namespace) -> dict[str, Any]:
    """Alternate the two trees' runs, each in its own process; medians and ratios."""
    trees = {"A": Path(args.ab[0]).resolve(), "B": Path(args.ab[1]).resolve()}
    runs: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for label in ("A", "B") if r % 2 == 0 else ("B", "A"):
                out = Path(tmp) / f"{label}{r}.json"
                command = [
                    sys.executable,
                    __file__,
                    *("--nodes", str(args.nodes), "--init-pods", str(args.init_pods)),
                    *("--pods", str(args.pods), "--backend", args.backend),
                    *("--gc", args.gc, "--repeat", "1", "--out", str(out)),
                ]
                env = dict(os.environ, PYTHONPATH=str(trees[label]))
                child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
                _, status, usage = os.wait4(child.pid, 0)
                child.returncode = os.waitstatus_to_exitcode(status)
                if child.returncode:
                    raise SystemExit(f"{label} run {r} failed ({child.returncode})")
                got = json.loads(out.read_text())
                run = {key: got[f"{key}_median"] for key in _AB_KEYS if key != "pods_per_second"}
                run["pods_per_second"] = got["pods_per_second_median"]
                run["curve"] = got["curves"][0]
                run["process_cpu_s"] = usage.ru_utime + usage.ru_stime
                run["peak_rss_bytes"] = usage.ru_maxrss * 1024
                runs[label].append(run)
                shown = {k: v for k, v in run.items() if k != "curve"}
                print(label, r, json.dumps(shown), file=sys.stderr)
    summary: dict[str, Any] = {}
    for key in (*_AB_KEYS, "process_cpu_s"):
        cell: dict[str, Any] = {}
        for label in ("A", "B"):
            values = [run[key] for run in runs[label]]
            cell[label] = {
                "median": statistics.median(values),
                "min": min(values),
                "max": max(values),
            }
        a, b = cell["A"]["median"], cell["B"]["median"]
        cell["ratio_B_over_A"] = b / a if a else None
        # Each round's own B/A (its two runs ran back to back): a load that comes and
        # goes on a shared machine moves both sides of a pair alike.
        paired = [rb[key] / ra[key] for ra, rb in zip(runs["A"], runs["B"], strict=True) if ra[key]]
        if paired:
            cell["paired_ratio_B_over_A"] = {
                "median": statistics.median(paired),
                "min": min(paired),
                "max": max(paired),
            }
        summary[key] = cell
    return {
        **_header(args),
        "rounds": args.rounds,
        "trees": {label: str(tree) for label, tree in trees.items()},
        "summary": summary,
        "runs": runs,
    }


def plot_curves(report: dict[str, Any], out: Path) -> None:
    """The A/B report's runs over time: preemptions and binds per 1 s window, one line
    per run, the two trees in two colours (A dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(9, 9.5))
    top = fig.add_subplot(3, 1, 1)
    bottom = fig.add_subplot(3, 1, 2, sharex=top)
    cost = fig.add_subplot(3, 1, 3)
    styles = {"A": ("tab:gray", "--"), "B": ("tab:blue", "-")}
    for label, runs in report["runs"].items():
        colour, line = styles[label]
        tree = Path(report["trees"][label]).parent.name or report["trees"][label]
        for k, run in enumerate(runs):
            curve = run["curve"]
            name = f"{label} ({tree})" if k == 0 else None
            for axis, key in ((top, "preemptions_per_window"), (bottom, "binds_per_window")):
                values = curve[key]
                axis.plot(range(len(values)), values, line, color=colour, label=name, lw=1.2)
            tenths = curve.get("cpu_ms_per_preemption_by_tenth") or []
            cost.plot(range(1, len(tenths) + 1), tenths, line, color=colour, marker="o", lw=1.2)
    top.set_ylabel("preempting attempts / s")
    bottom.set_ylabel("pods bound / s")
    bottom.set_xlabel("seconds since the measured pods were created (wall clock)")
    cost.set_ylabel("CPU ms per preempting attempt")
    cost.set_xlabel("tenth of the run's preempting attempts (process CPU time, all tasks)")
    cost.set_ylim(bottom=0)
    top.set_title(
        f"PreemptionBasic {report['nodes']} nodes, {report['initPods']} init pods, "
        f"{report['measuredPods']} measured (gc: {report['gc']}), 1 s windows"
    )
    top.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _header(args: argparse.Namespace) -> dict[str, Any]:
    """What every results file of this script starts with: the workload and the machine."""
    return {
        "workload": "PreemptionBasic",
        "nodes": args.nodes,
        "initPods": args.init_pods,
        "measuredPods": args.pods,
        "backend": args.backend,
        "gc": getattr(args, "gc", "default"),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--init-pods", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=500)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=None, help="default: results/preemption_basic_<nodes>.json"
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="write cProfile stats of the measured attempts here (timings then include "
        "the profiler's overhead)",
    )
    parser.add_argument(
        "--profile-every", type=int, default=1, help="profile only every N-th attempt"
    )
    parser.add_argument(
        "--ab",
        nargs=2,
        metavar=("A_SRC", "B_SRC"),
        default=None,
        help="compare two source trees (their src directories) in one interleaved run",
    )
    parser.add_argument("--rounds", type=int, default=3, help="A/B rounds (with --ab)")
    parser.add_argument(
        "--plot",
        type=Path,
        default=None,
        help="with --ab: draw each run's preemptions and binds per 1 s window to this PNG",
    )
    parser.add_argument(
        "--gc",
        choices=("default", "few"),
        default="default",
        help="few: rare cyclic garbage collections, as ksched bench and ksched simulate run",
    )
    args = parser.parse_args()
    if args.ab is not None:
        report = run_ab(args)
        out = args.out or RESULTS / f"preemption_basic_{args.nodes}_ab.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        json.dump(report["summary"], sys.stdout, indent=2)
        sys.stdout.write("\n")
        if args.plot is not None:
            plot_curves(report, args.plot)
        return
    profiler = cProfile.Profile() if args.profile is not None else None
    with few_collections() if args.gc == "few" else contextlib.nullcontext():
        runs = [
            anyio.run(
                run_once,
                args.nodes,
                args.init_pods,
                args.pods,
                i,
                profiler,
                args.profile_every,
                backend=args.backend,
            )
            for i in range(args.repeat)
        ]
    if profiler is not None:
        profiler.dump_stats(args.profile)
    result: dict[str, Any] = {
        **_header(args),
        "implementation": platform.python_implementation(),
        "processor": platform.processor() or platform.machine(),
        "repeat": args.repeat,
        "pods_per_second_median": statistics.median(r["pods_per_second"] for r in runs),
        "pods_per_second_runs": [r["pods_per_second"] for r in runs],
    }
    result["curves"] = [r["curve"] for r in runs]
    for key in runs[0]:
        if key not in ("pods_per_second", "curve"):
            result[f"{key}_median"] = statistics.median(r[key] for r in runs)
    result["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = args.out or RESULTS / f"preemption_basic_{args.nodes}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
