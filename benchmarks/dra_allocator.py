"""DynamicResources cost per pod at 5000 nodes x 8 devices.

Every node has one ResourceSlice of driver ``gpu.example.com`` with 8 GPUs (attributes
``model``, ``numa``; capacity ``memory``); half the nodes carry ``a100``, half ``t4``. The
DeviceClass ``a100`` selects ``device.attributes["gpu.example.com"].model == "a100"``.
Each pod has one ResourceClaim asking for ``--count`` A100s with at least 40Gi
(a second CEL selector on the claim). Measured, per pod, with the plugin's own methods:

- PreFilter + Filter on every node (the allocator on each node), the first pod (every CEL
  verdict computed) and later pods (verdicts cached while the slices stay the same);
- the same with ``--used`` of the A100s already allocated to other claims;
- Filter up to numFeasibleNodesToFind at 5000 nodes (500 feasible), as a cycle does.

Times are process CPU time (the work is single-threaded), steadier than wall time on a
shared machine.

    python benchmarks/dra_allocator.py [--nodes 5000] [--devices 8] [--pods 20]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from ksched import InMemoryCluster
from ksched.api import (
    AllocationResult,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ObjectMeta,
    Pod,
    PodResourceClaim,
    PodSpec,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourcePool,
    ResourceSlice,
)
from ksched.framework import CycleState, NodeInfo
from ksched.plugins.dynamic_resources import DynamicResources
from ksched.testing import make_node

DRIVER = "gpu.example.com"
GI = 1024**3


class _Handle:
    def __init__(self, cluster: InMemoryCluster) -> None:
        self.cluster = cluster


def _cluster(nodes: int, devices: int, used: float) -> tuple[InMemoryCluster, list[NodeInfo]]:
    cluster = InMemoryCluster()
    infos = []
    cluster.apply(
        DeviceClass(
            metadata=ObjectMeta(name="a100", namespace=""),
            selectors=(
                f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "a100"',
            ),
        )
    )
    taken: list[DeviceRequestAllocationResult] = []
    for i in range(nodes):
        name = f"node-{i}"
        node = make_node(name).capacity(cpu="32", memory="128Gi", pods="110").obj()
        cluster.apply(node)
        infos.append(NodeInfo.of(node))
        model = "a100" if i % 2 == 0 else "t4"
        devs = tuple(
            Device(
                name=f"gpu-{d}",
                attributes={"model": DeviceAttribute(model), "numa": DeviceAttribute(d // 4)},
                capacity={"memory": Fraction((80 if d % 2 else 40) * GI)},
            )
            for d in range(devices)
        )
        cluster.apply(
            ResourceSlice(
                metadata=ObjectMeta(name=f"{name}-{DRIVER}", namespace=""),
                driver=DRIVER,
                pool=ResourcePool(name=name, generation=1, resource_slice_count=1),
                node_name=name,
                devices=devs,
            )
        )
        if model == "a100":
            n_used = int(devices * used)
            taken.extend(
                DeviceRequestAllocationResult(
                    request="r", driver=DRIVER, pool=name, device=f"gpu-{d}"
                )
                for d in range(n_used)
            )
    if taken:
        cluster.apply(
            ResourceClaim(
                metadata=ObjectMeta(name="others", uid="others"),
                status=ResourceClaimStatus(allocation=AllocationResult(devices=tuple(taken))),
            )
        )
    return cluster, infos


def _pod(cluster: InMemoryCluster, i: int, count: int) -> Pod:
    claim = ResourceClaim(
        metadata=ObjectMeta(name=f"claim-{i}", uid=f"claim-{i}"),
        spec=ResourceClaimSpec(
            requests=(
                DeviceRequest(
                    name="gpu",
                    device_class_name="a100",
                    count=count,
                    selectors=(
                        f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0',
                    ),
                ),
            )
        ),
    )
    cluster.apply(claim)
    return Pod(
        metadata=ObjectMeta(name=f"pod-{i}", uid=f"pod-{i}"),
        spec=PodSpec(
            resource_claims=(PodResourceClaim(name="gpu", resource_claim_name=claim.name),)
        ),
    )


def _one(
    pl: DynamicResources, pod: Pod, infos: list[NodeInfo], stop_after: int | None
) -> tuple[float, int]:
    start = time.process_time()
    state = CycleState()
    assert pl.pre_filter(state, pod, infos) is None
    feasible = 0
    for info in infos:
        if pl.filter(state, pod, info) is None:
            feasible += 1
            if stop_after is not None and feasible >= stop_after:
                break
    return time.process_time() - start, feasible


def _run(nodes: int, devices: int, pods: int, count: int, used: float) -> dict[str, Any]:
    cluster, infos = _cluster(nodes, devices, used)
    pl = DynamicResources.new(None, _Handle(cluster))  # type: ignore[arg-type]
    cold, feasible = _one(pl, _pod(cluster, 0, count), infos, None)
    warm = [_one(pl, _pod(cluster, i, count), infos, None)[0] for i in range(1, pods)]
    early = [_one(pl, _pod(cluster, pods + i, count), infos, 500)[0] for i in range(pods)]
    return {
        "used_fraction": used,
        "feasible_nodes": feasible,
        "first_pod_all_nodes_ms": cold * 1e3,
        "later_pods_all_nodes_ms": statistics.median(warm) * 1e3,
        "later_pods_us_per_node": statistics.median(warm) / nodes * 1e6,
        "later_pods_500_feasible_ms": statistics.median(early) * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--pods", type=int, default=20)
    parser.add_argument("--count", type=int, default=1)
    args = parser.parse_args()
    runs = [_run(args.nodes, args.devices, args.pods, args.count, used) for used in (0.0, 0.75)]
    out = {
        "nodes": args.nodes,
        "devices_per_node": args.devices,
        "devices_per_claim": args.count,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "runs": runs,
    }
    path = Path(__file__).parent / "results" / f"dra_allocator_{args.nodes}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    for r in runs:
        print(
            f"used {r['used_fraction']:.0%}: first pod {r['first_pod_all_nodes_ms']:.0f} ms, "
            f"later pods {r['later_pods_all_nodes_ms']:.1f} ms over all nodes "
            f"({r['later_pods_us_per_node']:.1f} us/node), "
            f"{r['later_pods_500_feasible_ms']:.1f} ms to 500 feasible nodes"
        )


if __name__ == "__main__":
    main()
