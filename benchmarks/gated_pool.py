"""Throughput while the unschedulable pool holds gated pods.

Every bind is an AssignedPodAdd event that offers the pool's pods to the queueing hints;
gated pods whose gating plugin does not register the event are passed over. One node,
``--gated`` pods with a scheduling gate that never lifts, then ``--pods`` light pods;
reports pods/s (median of ``--repeat`` runs) for 0 gated pods and for ``--gated``.

    python benchmarks/gated_pool.py --gated 10000 --pods 2000
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import anyio

from ksched import InMemoryCluster, Scheduler
from ksched.config import parse_config
from ksched.testing import make_node, make_pod


async def run_once(gated: int, pods: int) -> float:
    cluster = InMemoryCluster()
    node = make_node("n1").capacity(cpu="1000", memory="1000Gi", pods=pods + 10).obj()
    await cluster.add_node(node)
    await cluster.add(make_pod(f"g{i}").scheduling_gates("wait").obj() for i in range(gated))
    async with Scheduler.open(parse_config({}), cluster) as sched:
        with anyio.fail_after(60):
            while sched.queue.where(f"default/g{gated - 1}") != "gated" and gated:
                await anyio.sleep(0.01)
        start = time.perf_counter()
        await cluster.add(make_pod(f"p{i}").req(cpu="10m").obj() for i in range(pods))
        with anyio.fail_after(600):
            for i in range(pods):
                await cluster.wait_bound(f"default/p{i}")
        return pods / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gated", type=int, default=10000)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    rates: dict[int, list[float]] = {0: [], args.gated: []}
    for _ in range(args.repeat):  # interleaved
        for gated in rates:
            rates[gated].append(anyio.run(run_once, gated, args.pods))
    result = {
        "workload": "one node; N gated pods held in the pool, then light pods scheduled",
        "pods": args.pods,
        "repeat": args.repeat,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "podsPerSecondMedian": {str(g): round(statistics.median(r), 1) for g, r in rates.items()},
        "podsPerSecond": {str(g): [round(x, 1) for x in r] for g, r in rates.items()},
    }
    text = json.dumps(result, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
