"""Cost of each default-profile plugin, per node (Filter, Score) and per pod (PreFilter,
PreScore, NormalizeScore), at 5000 nodes with a resident pod load.

The plugins are the ones the default profile builds (a Scheduler's framework, not run);
their per-node methods are called directly over every node of the cache's snapshot, each
for a pod that makes the plugin work (topology spread constraints for PodTopologySpread,
pod anti-affinity for InterPodAffinity...) and for a plain pod (requests only), which
most plugins skip. Every figure is the median of ``--repeat`` passes after one warm-up.

Cluster: nodes with hostname, zone (10) and instance-type labels, 32 cpu / 128Gi / 110
pods, 8 images each from a pool of 50; every 10th node has a PreferNoSchedule taint,
every 20th a NoSchedule one, every 50th is cordoned. Resident pods (default 10000) spread
round-robin, labelled by app (100 apps) in 10 namespaces; 10 % use host ports, 5 %
required pod anti-affinity on hostname, 5 % preferred pod affinity on zone.

    python benchmarks/plugin_costs.py --nodes 5000 --pods 10000 --repeat 5
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import numpy as np

import ksched
from ksched.api import (
    Affinity,
    LabelSelector,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PreferredSchedulingTerm,
    WeightedPodAffinityTerm,
)
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.framework.batch import NodeTable
from ksched.testing import PodBuilder, make_node, make_pod

RESULTS = Path(__file__).parent / "results"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
INSTANCE = "node.kubernetes.io/instance-type"
ZONES = 10
APPS = 100
NAMESPACES = 10
IMAGES = 50
MB = 1024 * 1024


# ---- the cluster ----------------------------------------------------------------------------


def _image(i: int) -> str:
    return f"registry.example/img-{i % IMAGES}:v1"


def build_nodes(count: int) -> list[ksched.Node]:
    nodes = []
    for i in range(count):
        b = (
            make_node(f"node-{i}")
            .labels(
                {
                    HOSTNAME: f"node-{i}",
                    ZONE: f"zone-{i % ZONES}",
                    INSTANCE: ("m5.large", "m5.xlarge", "c5.2xlarge")[i % 3],
                }
            )
            .capacity(cpu="32", memory="128Gi", pods=110)
        )
        for k in range(8):
            b = b.image(_image(i * 3 + k * 7), (50 + (i * 13 + k * 97) % 950) * MB)
        if i % 10 == 0:
            b = b.taint("dedicated", "batch", "PreferNoSchedule")
        if i % 20 == 5:
            b = b.taint("gpu", "true", "NoSchedule")
        if i % 50 == 7:
            b = b.unschedulable()
        nodes.append(b.obj())
    return nodes


def build_resident_pods(count: int, nodes: int) -> list[ksched.Pod]:
    pods = []
    for i in range(count):
        app = f"app-{i % APPS}"
        b = (
            make_pod(f"resident-{i}", namespace=f"ns-{i % NAMESPACES}")
            .labels({"app": app, "tier": ("web", "db", "cache")[i % 3]})
            .container({"cpu": f"{100 + (i % 9) * 100}m", "memory": "512Mi"}, image=_image(i))
            .node(f"node-{(i * 7919) % nodes}")
        )
        if i % 10 == 3:
            b = b.host_port(8000 + i % 20)
        if i % 20 == 1:
            b = b.pod_affinity(HOSTNAME, {"app": app}, anti=True)
        if i % 20 == 2:
            b = b.affinity(_preferred_pod_affinity({"app": f"app-{(i + 10) % APPS}"}, ZONE, 30))
        pods.append(b.obj())
    return pods


# ---- the pods that exercise each plugin ------------------------------------------------------


def _preferred_pod_affinity(labels: dict[str, str], key: str, weight: int) -> Affinity:
    term = PodAffinityTerm(topology_key=key, label_selector=LabelSelector(match_labels=labels))
    return Affinity(
        pod_affinity=PodAffinity(preferred=(WeightedPodAffinityTerm(weight=weight, term=term),))
    )


def _plain(name: str) -> PodBuilder:
    return (
        make_pod(name, namespace="ns-7")
        .labels({"app": "app-7", "tier": "web"})
        .req(cpu="500m", memory="1Gi")
    )


def plain_pod() -> ksched.Pod:
    return _plain("plain").obj()


def representative_pods(nodes: int) -> dict[str, ksched.Pod]:
    """Plugin name -> a pod that gives the plugin's every method work to do."""
    node_affinity = NodeAffinity(
        required=NodeSelector(
            terms=(
                NodeSelectorTerm(
                    match_expressions=(
                        NodeSelectorRequirement(
                            key=ZONE, operator="In", values=tuple(f"zone-{z}" for z in range(5))
                        ),
                    )
                ),
            )
        ),
        preferred=(
            PreferredSchedulingTerm(
                weight=10,
                preference=NodeSelectorTerm(
                    match_expressions=(
                        NodeSelectorRequirement(
                            key=INSTANCE, operator="In", values=("m5.xlarge", "c5.2xlarge")
                        ),
                    )
                ),
            ),
            PreferredSchedulingTerm(
                weight=5,
                preference=NodeSelectorTerm(
                    match_expressions=(
                        NodeSelectorRequirement(key=ZONE, operator="In", values=("zone-1",)),
                    )
                ),
            ),
        ),
    )
    anti = PodAffinityTerm(
        topology_key=HOSTNAME, label_selector=LabelSelector(match_labels={"app": "app-7"})
    )
    preferred = WeightedPodAffinityTerm(
        weight=50,
        term=PodAffinityTerm(
            topology_key=ZONE, label_selector=LabelSelector(match_labels={"app": "app-17"})
        ),
    )
    inter_pod = Affinity(
        pod_affinity=PodAffinity(preferred=(preferred,)),
        pod_anti_affinity=PodAntiAffinity(required=(anti,)),
    )
    images = (
        make_pod("images", namespace="ns-7")
        .labels({"app": "app-7"})
        .container({"cpu": "500m", "memory": "1Gi"}, image=_image(3))
        .container({"cpu": "100m"}, image=_image(11))
        .obj()
    )
    return {
        "NodeUnschedulable": plain_pod(),
        "NodeName": _plain("named").node(f"node-{nodes // 2}").obj(),
        "TaintToleration": _plain("tolerates")
        .toleration("dedicated", "batch", "PreferNoSchedule")
        .obj(),
        "NodeAffinity": _plain("node-affinity")
        .affinity(Affinity(node_affinity=node_affinity))
        .obj(),
        "NodePorts": _plain("ports").host_port(8001).host_port(9000).obj(),
        "NodeResourcesFit": plain_pod(),
        "PodTopologySpread": _plain("spread")
        .spread(1, ZONE, {"app": "app-7"})
        .spread(1, HOSTNAME, {"app": "app-7"}, when_unsatisfiable="ScheduleAnyway")
        .obj(),
        "InterPodAffinity": _plain("inter-pod").affinity(inter_pod).obj(),
        "NodeResourcesBalancedAllocation": plain_pod(),
        "ImageLocality": images,
    }


# ---- measuring ---------------------------------------------------------------------------


def _timed(fn: Callable[[], Any], repeat: int) -> float:
    """Median seconds of ``repeat`` calls of ``fn`` after one warm-up, with GC off."""
    fn()
    samples = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
    finally:
        gc.enable()
    return statistics.median(samples)


def _sync(plugin: Any, method: str) -> Callable[..., Any] | None:
    fn = getattr(plugin, method, None)
    if fn is None or not callable(fn):
        return None
    if inspect.iscoroutinefunction(fn):
        raise SystemExit(f"{plugin.name}.{method} is async; this benchmark times plain methods")
    return fn  # type: ignore[no-any-return]


def _skipped(out: Any) -> bool:
    return isinstance(out, Status) and out.code is Code.SKIP


def measure_plugin(
    plugin: Any,
    points: dict[str, set[str]],
    pod: ksched.Pod,
    nodes: Sequence[NodeInfo],
    repeat: int,
    table: NodeTable,
) -> dict[str, Any]:
    """Per-pod and per-node costs (µs) of the plugin's methods for ``pod``; ``None`` where
    the plugin skips (its PreFilter/PreScore returned Skip) or lacks the method."""
    name = plugin.name
    us = 1e6
    n = len(nodes)
    row: dict[str, Any] = {"plugin": name, "pod": pod.name}
    state = CycleState()

    pre_filter = _sync(plugin, "pre_filter") if name in points["preFilter"] else None
    filter_fn = _sync(plugin, "filter") if name in points["filter"] else None
    filter_skipped = False
    if pre_filter is not None:
        out = pre_filter(state, pod, nodes)
        filter_skipped = _skipped(out)
        row["pre_filter_us"] = _timed(lambda: pre_filter(CycleState(), pod, nodes), repeat) * us
        row["pre_filter_skip"] = filter_skipped
    if filter_fn is not None and not filter_skipped:
        feasible = 0
        for info in nodes:
            status = filter_fn(state, pod, info)
            feasible += status is None or status.code is Code.SUCCESS

        def run_filter() -> None:
            for info in nodes:
                filter_fn(state, pod, info)

        row["filter_us_per_node"] = _timed(run_filter, repeat) * us / n
        row["feasible_nodes"] = feasible
        filter_batch = getattr(plugin, "filter_batch", None)
        if filter_batch is not None and filter_batch(state, pod, table) is not None:
            row["filter_batch_us_per_node"] = (
                _timed(lambda: filter_batch(state, pod, table), repeat) * us / n
            )
    elif filter_fn is not None:
        row["filter_us_per_node"] = None

    pre_score = _sync(plugin, "pre_score") if name in points["preScore"] else None
    score_fn = _sync(plugin, "score") if name in points["score"] else None
    score_skipped = False
    if pre_score is not None:
        out = pre_score(state, pod, nodes)
        score_skipped = _skipped(out)
        row["pre_score_us"] = _timed(lambda: pre_score(CycleState(), pod, nodes), repeat) * us
        row["pre_score_skip"] = score_skipped
    if score_fn is not None and not score_skipped:
        scores = {info.name: score_fn(state, pod, info) for info in nodes}

        def run_score() -> None:
            for info in nodes:
                score_fn(state, pod, info)

        row["score_us_per_node"] = _timed(run_score, repeat) * us / n
        score_batch = getattr(plugin, "score_batch", None)
        rows = np.arange(n, dtype=np.int64)
        if score_batch is not None and score_batch(state, pod, table, rows) is not None:
            row["score_batch_us_per_node"] = (
                _timed(lambda: score_batch(state, pod, table, rows), repeat) * us / n
            )
        ext_of = _sync(plugin, "score_extensions")
        ext = ext_of() if ext_of is not None else None
        normalize = _sync(ext, "normalize_score") if ext is not None else None
        if normalize is not None:
            row["normalize_us"] = _timed(lambda: normalize(state, pod, dict(scores)), repeat) * us
    elif score_fn is not None:
        row["score_us_per_node"] = None
    return row


async def run(args: argparse.Namespace) -> dict[str, Any]:
    cluster = ksched.InMemoryCluster()
    t0 = time.perf_counter()
    for node in build_nodes(args.nodes):
        cluster.apply(node)
    for pod in build_resident_pods(args.pods, args.nodes):
        cluster.apply(pod)
    # The scheduler is built (profiles, cache, snapshot) but not run.
    scheduler = ksched.Scheduler(cluster=cluster, seed=0)
    scheduler.cache.update_snapshot(scheduler.snapshot)
    nodes = list(scheduler.snapshot.list())
    setup_s = time.perf_counter() - t0
    assert len(nodes) == args.nodes
    assert sum(len(info.pods) for info in nodes) == args.pods
    framework = scheduler.frameworks["default-scheduler"]
    points = {
        p: set(framework.points.get(p, ())) for p in ("preFilter", "filter", "preScore", "score")
    }
    wanted = representative_pods(args.nodes)
    rows = []
    plain_rows = []
    for name, plugin in framework.plugins.items():
        if not any(name in names for names in points.values()):
            continue
        pod = wanted.get(name, plain_pod())
        table = scheduler.snapshot.table
        rows.append(measure_plugin(plugin, points, pod, nodes, args.repeat, table))
        plain_rows.append(measure_plugin(plugin, points, plain_pod(), nodes, args.repeat, table))
    return {
        "setup_s": setup_s,
        "weights": {name: framework.weights.get(name) for name in points["score"]},
        "representative": rows,
        "plain": plain_rows,
    }


# ---- output ------------------------------------------------------------------------------


def _fmt(row: dict[str, Any], key: str, digits: int) -> str:
    if key not in row:
        return "n/a"
    value = row[key]
    if value is None:
        return "skip"
    text = f"{value:,.{digits}f}"
    skip_key = {"pre_filter_us": "pre_filter_skip", "pre_score_us": "pre_score_skip"}.get(key)
    if skip_key and row.get(skip_key):
        text += " (skip)"
    return text


def markdown(rows: list[dict[str, Any]], plain: list[dict[str, Any]], nodes: int) -> str:
    plain_by = {r["plugin"]: r for r in plain}
    head = (
        "| plugin | pod | PreFilter µs/pod | Filter µs/node | PreScore µs/pod "
        "| Score µs/node | NormalizeScore µs/pod | plain pod: Filter µs/node "
        "| plain pod: Score µs/node | batch Filter µs/node | batch Score µs/node |\n"
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
    )
    lines = []
    for r in rows:
        p = plain_by.get(r["plugin"], {})
        lines.append(
            f"| {r['plugin']} | {r['pod']} | {_fmt(r, 'pre_filter_us', 1)} "
            f"| {_fmt(r, 'filter_us_per_node', 3)} | {_fmt(r, 'pre_score_us', 1)} "
            f"| {_fmt(r, 'score_us_per_node', 3)} | {_fmt(r, 'normalize_us', 1)} "
            f"| {_fmt(p, 'filter_us_per_node', 3)} | {_fmt(p, 'score_us_per_node', 3)} "
            f"| {_fmt(r, 'filter_batch_us_per_node', 3)} "
            f"| {_fmt(r, 'score_batch_us_per_node', 3)} |"
        )
    filter_total = sum(r.get("filter_us_per_node") or 0.0 for r in rows)
    score_total = sum(r.get("score_us_per_node") or 0.0 for r in rows)
    lines.append(
        f"| **sum** | | | {filter_total:.3f} | | {score_total:.3f} | | "
        f"{sum(r.get('filter_us_per_node') or 0.0 for r in plain):.3f} "
        f"| {sum(r.get('score_us_per_node') or 0.0 for r in plain):.3f} "
        f"| {sum(r.get('filter_batch_us_per_node') or 0.0 for r in rows):.3f} "
        f"| {sum(r.get('score_batch_us_per_node') or 0.0 for r in rows):.3f} |"
    )
    note = (
        f"\n{nodes} nodes; µs/node is one call of the per-node method; per-pod figures are one "
        "call over all nodes. `skip`: the plugin's PreFilter/PreScore returned Skip, so the "
        "framework does not call its Filter/Score for that pod; `n/a`: not implemented. "
        "Batch columns: the plugin's `filter_batch` / `score_batch` over all nodes at once, "
        "divided by the node count (representative pod).\n"
    )
    return head + "\n".join(lines) + "\n" + note


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000, help="resident (bound) pods")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument(
        "--out", type=Path, default=None, help="default: results/plugin_costs_<nodes>.json"
    )
    args = parser.parse_args()
    measured = anyio.run(run, args, backend=args.backend)
    result: dict[str, Any] = {
        "benchmark": "plugin_costs",
        "nodes": args.nodes,
        "residentPods": args.pods,
        "repeat": args.repeat,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        **measured,
    }
    out = args.out or RESULTS / f"plugin_costs_{args.nodes}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    sys.stdout.write(markdown(measured["representative"], measured["plain"], args.nodes))


if __name__ == "__main__":
    main()
