"""Framework overhead: the engine's decision against a bare loop over the same plugin bodies.

The cluster is SchedulingBasic's (default nodes, pods of 100m / 500Mi, the default profile).
For each pod, both sides make the same decision on the same snapshot:

- framework: ``SchedulingAlgorithm.schedule_pod`` (PreFilter, Filter with the rotating start and
  numFeasibleNodesToFind, PreScore, Score, NormalizeScore, weights, host selection);
- reference: a plain loop that calls the same plugins' methods directly, with no statuses, no
  skip bookkeeping, no error handling and no diagnosis.

Both run the batch forms (``--path batch``) or the per-node methods (``--path per-node``). The
chosen node is then assumed in the cache (outside the timed part), so the cluster fills up the
same way for both. The ratio framework / reference is the framework's overhead.

    python benchmarks/overhead.py --nodes 5000 --init-pods 1000 --pods 2000
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Mapping
from typing import Any

import anyio
import attrs
import numpy as np

import ksched
from ksched.framework import CycleState, Status
from ksched.framework.runtime import Framework
from ksched.scheduler import num_feasible_nodes_to_find
from ksched.scheduler._observer import UNOBSERVED
from ksched.testing import make_node, make_pod


def _cluster(nodes: int, init_pods: int) -> ksched.Scheduler:
    cluster = ksched.InMemoryCluster()
    for i in range(nodes):
        cluster.apply(make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj())
    scheduler = ksched.Scheduler(cluster=cluster, seed=1)
    for i in range(init_pods):
        _place(scheduler, make_pod(f"init-{i}").req(cpu="100m", memory="500Mi").obj(), i % nodes)
    return scheduler


def _place(scheduler: ksched.Scheduler, pod: ksched.Pod, node: int | str) -> None:
    name = node if isinstance(node, str) else f"node-{node}"
    scheduler.cache.assume_pod(attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=name)))
    scheduler.cache.update_snapshot(scheduler.snapshot)


def _plugins(fw: Framework, point: str, method: str) -> list[Any]:
    return [
        getattr(fw.plugins[n], method)
        for n in fw.points.get(point, ())
        if hasattr(fw.plugins[n], method)
    ]


def reference_decision(
    scheduler: ksched.Scheduler, fw: Framework, pod: ksched.Pod, start: int, batch: bool
) -> tuple[str, int]:
    """The same plugin bodies in a bare loop. Returns (node, examined nodes)."""
    # The default profile's in-tree plugins: plain def methods, with batch forms.
    plugins: Mapping[str, Any] = fw.plugins
    state = CycleState()
    nodes = scheduler.snapshot.list()
    skip_filter = set()
    for name in fw.points.get("preFilter", ()):
        result = plugins[name].pre_filter(state, pod, nodes)
        if isinstance(result, Status) and result.code.name == "SKIP":
            skip_filter.add(name)
    state.skip_filter_plugins = frozenset(skip_filter)
    n = len(nodes)
    limit = num_feasible_nodes_to_find(scheduler.config.percentage_of_nodes_to_score, n)
    filters = [plugins[name] for name in fw.points["filter"] if name not in skip_filter]
    table = scheduler.snapshot.table
    if batch:
        mask = np.ones(n, dtype=np.bool_)
        for plugin in filters:
            mask &= plugin.filter_batch(state, pod, table)
        order = np.concatenate((np.arange(start, n), np.arange(0, start)))
        passing = np.flatnonzero(mask[order])[:limit]
        rows = order[passing]
        examined = int(passing[-1]) + 1
        feasible = [nodes[r] for r in rows.tolist()]
    else:
        feasible = []
        examined = n
        for i in range(n):
            info = nodes[(start + i) % n]
            if all(p.filter(state, pod, info) is None for p in filters):
                feasible.append(info)
                if len(feasible) >= limit:
                    examined = i + 1
                    break
        rows = np.array([table.index[i.name] for i in feasible], dtype=np.int64)
    skip_score = set()
    for name in fw.points.get("preScore", ()):
        result = plugins[name].pre_score(state, pod, feasible)
        if isinstance(result, Status) and result.code.name == "SKIP":
            skip_score.add(name)
    total = np.zeros(len(feasible), dtype=np.int64)
    for name in fw.points["score"]:
        if name in skip_score:
            continue
        plugin = plugins[name]
        ext = plugin.score_extensions()
        if batch:
            scores = plugin.score_batch(state, pod, table, rows)
            if ext is not None:
                ext.normalize_score_batch(state, pod, scores)
        else:
            by_node = {info.name: plugin.score(state, pod, info) for info in feasible}
            if ext is not None:
                ext.normalize_score(state, pod, by_node)
            scores = np.fromiter(by_node.values(), dtype=np.int64, count=len(feasible))
        total += scores * fw.weights.get(name, 1)
    return feasible[int(np.argmax(total))].name, examined


async def measure(nodes: int, init_pods: int, pods: int, batch: bool) -> dict[str, float]:
    scheduler = _cluster(nodes, init_pods)
    fw = scheduler.frameworks["default-scheduler"]
    fw.fast.batching = batch
    framework_s = reference_s = 0.0
    for i in range(pods):
        pod = make_pod(f"pod-{i}").uid(f"uid-{i}").req(cpu="100m", memory="500Mi").obj()
        start = scheduler.state.next_start_node_index
        t0 = time.perf_counter()
        chosen = await scheduler.algorithm.schedule_pod(fw, CycleState(), pod, UNOBSERVED)
        t1 = time.perf_counter()
        _node, examined = reference_decision(scheduler, fw, pod, start, batch)
        t2 = time.perf_counter()
        framework_s += t1 - t0
        reference_s += t2 - t1
        assert isinstance(chosen, str)
        assert (scheduler.state.next_start_node_index - start) % nodes == examined % nodes
        _place(scheduler, pod, chosen)
    return {
        "framework_us_per_pod": framework_s / pods * 1e6,
        "reference_us_per_pod": reference_s / pods * 1e6,
        "ratio": framework_s / reference_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--init-pods", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--path", choices=("batch", "per-node", "both"), default="both")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    paths = ("batch", "per-node") if args.path == "both" else (args.path,)
    result: dict[str, Any] = {
        "workload": "SchedulingBasic decisions (default profile)",
        "nodes": args.nodes,
        "initPods": args.init_pods,
        "pods": args.pods,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "repeat": args.repeat,
    }
    for path in paths:
        pods = args.pods if path == "batch" else max(100, args.pods // 10)
        runs = [
            anyio.run(measure, args.nodes, args.init_pods, pods, path == "batch")
            for _ in range(args.repeat)
        ]
        result[path] = {
            "pods": pods,
            "framework_us_per_pod_median": statistics.median(
                r["framework_us_per_pod"] for r in runs
            ),
            "reference_us_per_pod_median": statistics.median(
                r["reference_us_per_pod"] for r in runs
            ),
            "ratio_median": statistics.median(r["ratio"] for r in runs),
            "ratios": [r["ratio"] for r in runs],
        }
    text = json.dumps(result, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
