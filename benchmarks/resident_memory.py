"""Peak RSS of a scheduler holding 5000 nodes and 60 000 bound pods.

Pods come as the harness makes them (one template, a copy per pod with its own name, uid and
node) through ``InMemoryCluster``, so the cluster store, the cache, the snapshot, the node
table and the pod index all hold them.

    python benchmarks/resident_memory.py --nodes 5000 --pods 60000
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys

import anyio
import attrs

import ksched
from ksched.testing import make_node, make_pod


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def measure(nodes: int, pods: int) -> dict[str, float | int]:
    before = _rss_mib()
    cluster = ksched.InMemoryCluster()
    async with ksched.Scheduler.open(cluster=cluster) as scheduler:
        for i in range(nodes):
            node = make_node(f"node-{i}").capacity(cpu="64", memory="256Gi", pods=110)
            cluster.apply(node.label("topology.kubernetes.io/zone", f"zone-{i % 10}").obj())
        template = make_pod("x").label("app", "web").req(cpu="100m", memory="500Mi").obj()
        for i in range(pods):
            meta = attrs.evolve(template.metadata, name=f"p-{i}", uid=f"u-{i}")
            spec = attrs.evolve(template.spec, node_name=f"node-{i % nodes}")
            cluster.apply(attrs.evolve(template, metadata=meta, spec=spec))
        scheduler.cache.update_snapshot(scheduler.snapshot)
        assert scheduler.cache.pod_count == pods
    return {"peak_rss_mib": round(_rss_mib(), 1), "rss_before_mib": round(before, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=60000)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    result = {
        "nodes": args.nodes,
        "boundPods": args.pods,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        **anyio.run(measure, args.nodes, args.pods),
    }
    text = json.dumps(result, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
