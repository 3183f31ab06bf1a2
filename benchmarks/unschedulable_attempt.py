"""One unschedulable pod's attempt at 5000 nodes with 20 000 pods running.

The pod asks for more cpu than any node has, so every node rejects it (Filter), the
FitError message is built from all 5000 statuses, and DefaultPreemption (PostFilter) finds
no candidate. Reports the median time of an attempt (Filter + PostFilter) over repeats.

    python benchmarks/unschedulable_attempt.py --nodes 5000 --pods 20000
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import anyio
import attrs

import ksched
from ksched import FitError
from ksched.framework import CycleState
from ksched.scheduler._observer import UNOBSERVED
from ksched.testing import make_node, make_pod


async def measure(nodes: int, pods: int, repeat: int) -> dict[str, float | str]:
    cluster = ksched.InMemoryCluster()
    for i in range(nodes):
        cluster.apply(make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj())
    for i in range(pods):
        pod = make_pod(f"running-{i}").req(cpu="100m", memory="500Mi").obj()
        cluster.apply(attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=f"node-{i % nodes}")))
    big = make_pod("big").uid("big").req(cpu="9", memory="500Mi").obj()
    cluster.apply(big)
    scheduler = ksched.Scheduler(cluster=cluster, seed=1)
    scheduler.cache.update_snapshot(scheduler.snapshot)
    fw = scheduler.frameworks["default-scheduler"]
    filter_s, post_filter_s = [], []
    message = ""
    for _ in range(repeat):
        state = CycleState()
        t0 = time.perf_counter()
        found = await scheduler.algorithm.schedule_pod(fw, state, big, UNOBSERVED)
        t1 = time.perf_counter()
        assert isinstance(found, FitError)
        _, status = await fw.run_post_filter(state, big, found.statuses)
        found.post_filter_message = status.message
        message = found.message()
        t2 = time.perf_counter()
        filter_s.append(t1 - t0)
        post_filter_s.append(t2 - t1)
    return {
        "filter_ms_median": statistics.median(filter_s) * 1000,
        "post_filter_ms_median": statistics.median(post_filter_s) * 1000,
        "attempt_ms_median": statistics.median(
            a + b for a, b in zip(filter_s, post_filter_s, strict=True)
        )
        * 1000,
        "message": message,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    result = {
        "workload": "one unschedulable pod (cpu 9 on 4-cpu nodes)",
        "nodes": args.nodes,
        "runningPods": args.pods,
        "repeat": args.repeat,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        **anyio.run(measure, args.nodes, args.pods, args.repeat),
    }
    text = json.dumps(result, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
