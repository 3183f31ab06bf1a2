"""Per-pod cost of the GPU-sharing plugins on the openb cluster (1213 GPU nodes).

Reads the openb trace's node and pod lists (``../shared/traces/openb``), tunes the workload
up to ``--tune`` times the cluster's GPU capacity by cloning pods drawn at random (as the
FGD artifact's ``-tune 1.3`` does, with Python's generator: this is a speed measurement,
not a reproduction), and submits the pods one at a time to ksched's Scheduler on an
InMemoryCluster: create, wait until bound or failed, delete a failed pod. The profile is the
default filters plus Open-Gpu-Share and one GPU policy (weight 1000, no other Score plugin).

Prints and writes (``--out``, default benchmarks/results/gpu_share_cycle.json) the CPU
seconds of the whole run, the CPU per pod in windows of ``--window`` pods (flat when the
cost does not grow with the pods placed), the pods bound and failed, and the peak RSS.

    .venv/bin/python benchmarks/gpu_share_cycle.py [--policy FGDScore] [--pods N]
    /usr/bin/time -v .venv/bin/python benchmarks/gpu_share_cycle.py   # RSS as the OS sees it
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import random
import resource
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

from ksched import InMemoryCluster, Scheduler, parse_config
from ksched.api import Node, Pod, read_object

HERE = Path(__file__).resolve().parent
TRACE = HERE.parents[1] / "shared" / "traces" / "openb"
POLICIES = (
    "FGDScore",
    "BestFitScore",
    "GpuPackingScore",
    "GpuClusteringScore",
    "DotProductScore",
    "RandomScore",
)


def read_nodes(path: Path) -> list[Node]:
    """openb_node_list_gpu_node.csv as the artifact's node YAML has it."""
    nodes = []
    with path.open() as f:
        for row in csv.DictReader(f):
            gpus = int(row["gpu"])
            amounts = {
                "alibabacloud.com/gpu-count": str(gpus),
                "alibabacloud.com/gpu-milli": str(gpus * 1000),
                "cpu": f"{row['cpu_milli']}m",
                "memory": f"{row['memory_mib']}Mi",
                "pods": "1001",
            }
            manifest = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": row["sn"],
                    "labels": {"alibabacloud.com/gpu-card-model": row["model"]},
                },
                "status": {"capacity": amounts, "allocatable": amounts},
            }
            node = read_object(manifest)
            assert isinstance(node, Node)
            nodes.append(node)
    return nodes


def read_pod_rows(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def make_pod(row: dict[str, str], name: str) -> Pod:
    """A pod as the artifact's pod_csv_to_yaml.py writes it."""
    annotations: dict[str, str] = {}
    if int(row["num_gpu"]) != 0:
        milli = int(row["gpu_milli"])
        annotations["alibabacloud.com/gpu-milli"] = str(min(milli, 1000) if milli > 0 else 0)
        annotations["alibabacloud.com/gpu-count"] = row["num_gpu"]
        models = "|".join(m for m in row.get("gpu_spec", "").split("|") if m)
        if models:
            annotations["alibabacloud.com/gpu-card-model"] = models
    requests = {"cpu": f"{row['cpu_milli']}m", "memory": f"{row['memory_mib']}Mi"}
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "paib-gpu", "annotations": annotations},
        "spec": {"containers": [{"name": "main", "resources": {"requests": requests}}]},
    }
    pod = read_object(manifest)
    assert isinstance(pod, Pod)
    return pod


def gpu_milli(row: dict[str, str]) -> tuple[int, int]:
    """(per-GPU milli, total milli) of a pod row."""
    if int(row["num_gpu"]) == 0:
        return 0, 0
    milli = min(int(row["gpu_milli"]), 1000)
    return milli, milli * int(row["num_gpu"])


def tuned(rows: list[dict[str, str]], capacity: int, tune: float, seed: int) -> list[Pod]:
    """The pods shuffled, then clones of random pods added until the GPU milli asked for
    would pass ``tune`` times the capacity (the artifact's tuneUpPods stop rule)."""
    rng = random.Random(seed)
    order = sorted(rows, key=lambda r: r["name"])
    pods = [make_pod(r, r["name"]) for r in order]
    rng.shuffle(pods)
    asked = sum(gpu_milli(r)[1] for r in rows)
    target = tune * capacity
    i = 0
    while True:
        row = order[rng.randrange(len(order))]
        per_gpu, total = gpu_milli(row)
        if asked + per_gpu > target:
            break
        pods.append(make_pod(row, f"{row['name']}-tuned-{i}"))
        asked += total
        i += 1
    return pods


def typical_pods(rows: list[dict[str, str]], threshold: float = 95.0) -> list[dict[str, Any]]:
    """GetTypicalPods (CPU pods involved, step 1, no GPU weight) over the original pods."""
    counts: Counter[tuple[int, int, int, str]] = Counter()
    for row in rows:
        per_gpu, _ = gpu_milli(row)
        count = int(row["num_gpu"])
        model = "|".join(m for m in row.get("gpu_spec", "").split("|") if m) if count else ""
        counts[(int(row["cpu_milli"]), per_gpu if count else 0, count, model)] += 1
    total = float(sum(counts.values()))
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    chosen, cum = [], 0.0
    for spec, n in ranked:
        if cum >= threshold * total / 100.0:
            break
        chosen.append((spec, n / total))
        cum += n
    share = cum / total
    return [
        {"milliCpu": c, "milliGpu": g, "gpuNumber": k, "gpuType": t, "percentage": p / share}
        for (c, g, k, t), p in chosen
    ]


def config(policy: str, typical: list[dict[str, Any]], preemption: bool = True) -> Any:
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {
            "preFilter": {"enabled": [{"name": "Open-Gpu-Share"}]},
            "filter": {"enabled": [{"name": "Open-Gpu-Share"}]},
            "preScore": {"disabled": [{"name": "*"}]},
            "score": {"disabled": [{"name": "*"}], "enabled": [{"name": policy, "weight": 1000}]},
            "reserve": {"enabled": [{"name": "Open-Gpu-Share"}]},
            "preBind": {"enabled": [{"name": "Open-Gpu-Share"}]},
        },
    }
    if not preemption:
        profile["plugins"]["postFilter"] = {"disabled": [{"name": "*"}]}
    if policy == "RandomScore":
        profile["plugins"]["preScore"]["enabled"] = [{"name": policy}]
    if policy == "FGDScore":
        profile["pluginConfig"] = [{"name": policy, "args": {"typicalPods": typical}}]
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": 100,
            "profiles": [profile],
        }
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    nodes = read_nodes(args.trace / "openb_node_list_gpu_node.csv")
    rows = read_pod_rows(args.trace / f"openb_pod_list_{args.workload}.csv")
    capacity = 1000 * sum(n.status.capacity["alibabacloud.com/gpu-count"] for n in nodes)
    pods = tuned(rows, capacity, args.tune, args.seed)[: args.pods or None]
    typical = typical_pods(rows)
    cluster = InMemoryCluster(keep_events=False)
    bound = failed = 0
    windows: list[float] = []
    async with Scheduler.open(
        config(args.policy, typical, args.preemption), cluster=cluster
    ) as scheduler:
        await cluster.add(nodes)
        await anyio.wait_all_tasks_blocked()
        started = window_start = time.process_time()
        for i, pod in enumerate(pods, 1):
            await cluster.add_pod(pod)
            await anyio.wait_all_tasks_blocked()
            current = cluster.get_pod(pod.key)
            if current is not None and current.spec.node_name:
                bound += 1
            else:
                failed += 1
                await cluster.delete_pod(pod.key)
            if i % args.window == 0:
                now = time.process_time()
                windows.append((now - window_start) / args.window)
                window_start = now
        total = time.process_time() - started
        batch = scheduler.frameworks["default-scheduler"].batch
        batching = dict(batch.stats) if batch is not None else {}
    per_pod_us = [round(w * 1e6, 1) for w in windows]
    return {
        "policy": args.policy,
        "preemption": args.preemption,
        "workload": args.workload,
        "nodes": len(nodes),
        "pods": len(pods),
        "bound": bound,
        "failed": failed,
        "typical_pods": len(typical),
        "cpu_seconds": round(total, 2),
        "cpu_per_pod_us": round(total / len(pods) * 1e6, 1),
        "window": args.window,
        "cpu_per_pod_us_by_window": per_pod_us,
        "first_to_last_window": round(per_pod_us[-1] / per_pod_us[0], 2) if per_pod_us else None,
        "median_window_us": statistics.median(per_pod_us) if per_pod_us else None,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "batching": batching,
        "python": platform.python_version(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", choices=POLICIES, default="FGDScore")
    parser.add_argument("--workload", default="default", help="openb_pod_list_<workload>.csv")
    parser.add_argument("--tune", type=float, default=1.3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--pods", type=int, default=0, help="stop after N pods (0: all)")
    parser.add_argument("--window", type=int, default=1000)
    parser.add_argument(
        "--no-preemption",
        dest="preemption",
        action="store_false",
        help="disable PostFilter (DefaultPreemption): every pod has priority 0 here",
    )
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "gpu_share_cycle.json")
    args = parser.parse_args()
    result = anyio.run(run, args)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
