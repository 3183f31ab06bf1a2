"""GangScheduling: the cost of a pod-group attempt, and gangs competing for room.

1. ``attempt``: 5000 nodes (the default profile plus GangScheduling), then ``--gangs``
   gangs of 3 one-cpu members, all pending at once; each gang is placed in one pod-group
   cycle. Reports ms per group attempt (wall time to bind every gang / gangs; every gang
   binds at its first attempt) beside ms per pod for the same number of plain pods.
2. ``compete``: 100 gangs of 8 one-cpu members on 6 nodes of 10 cpu (room for 60 pods):
   reports the time until the scheduler is idle, the pods bound (7 whole gangs = 56), the
   group attempts made, and checks that no failed gang holds capacity.

    python benchmarks/gang_native.py --nodes 5000 --gangs 300 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from typing import Any

import anyio
import attrs

from ksched import InMemoryCluster, Scheduler, SchedulingEvent
from ksched.api import GroupPolicy, ObjectMeta, Pod, SchedulingGroupRef, SchedulingPodGroup
from ksched.config import parse_config
from ksched.testing import make_node, make_pod

CONFIG = {
    "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [
            {"name": "GangScheduling"}]}}}
    ]
}  # fmt: skip


def member(name: str, group: str) -> Pod:
    pod = make_pod(name).req(cpu="1", memory="1Gi").obj()
    ref = SchedulingGroupRef(pod_group_name=group)
    return attrs.evolve(pod, spec=attrs.evolve(pod.spec, scheduling_group=ref))


def group(name: str, min_count: int) -> SchedulingPodGroup:
    return SchedulingPodGroup(
        metadata=ObjectMeta(name=name, namespace="default"), policy=GroupPolicy(min_count=min_count)
    )


async def attempt(nodes: int, gangs: int, gang: bool) -> float:
    """ms per gang (gang=True) or per 3 plain pods (False)."""
    cluster = InMemoryCluster()
    await cluster.add(
        make_node(f"n{i}").capacity(cpu="8", memory="32Gi", pods=110).obj() for i in range(nodes)
    )
    async with Scheduler.open(parse_config(CONFIG), cluster) as sched:
        pods: list[Pod] = []
        for g in range(gangs):
            if gang:
                cluster.apply(group(f"g{g}", 3))
                pods.extend(member(f"g{g}-{i}", f"g{g}") for i in range(3))
            else:
                pods.extend(
                    make_pod(f"g{g}-{i}").req(cpu="1", memory="1Gi").obj() for i in range(3)
                )
        start = time.perf_counter()
        await cluster.add(pods)
        with anyio.fail_after(600):
            for pod in pods:
                await cluster.wait_bound(pod.key)
        elapsed = time.perf_counter() - start
        assert not sched.cache.sizes()["assumed_pods"]
        return elapsed * 1000 / gangs


async def compete() -> dict[str, Any]:
    cluster = InMemoryCluster()
    attempts = 0

    def observe(event: SchedulingEvent) -> None:
        nonlocal attempts
        if event.kind == "Attempted":
            attempts += 1

    await cluster.add(
        make_node(f"n{i}").capacity(cpu="10", memory="64Gi", pods=110).obj() for i in range(6)
    )
    async with Scheduler.open(parse_config(CONFIG), cluster, observer=observe) as sched:
        for g in range(100):
            cluster.apply(group(f"g{g}", 8))
        start = time.perf_counter()
        await cluster.add(member(f"g{g}-{i}", f"g{g}") for g in range(100) for i in range(8))
        with anyio.fail_after(600):
            while not sched.idle:
                await anyio.sleep(0.005)
        elapsed = time.perf_counter() - start
        per_gang = [
            sum(
                1
                for i in range(8)
                if (p := cluster.get_pod(f"default/g{g}-{i}")) and p.spec.node_name
            )
            for g in range(100)
        ]
        held = sum(
            info.requested.milli_cpu
            for info in (sched.cache.node_info(f"n{i}") for i in range(6))
            if info
        )
        return {
            "seconds_to_idle": round(elapsed, 3),
            "pods_bound": sum(per_gang),
            "gangs_bound_whole": sum(1 for n in per_gang if n == 8),
            "gangs_bound_partly": sum(1 for n in per_gang if 0 < n < 8),
            "member_attempts": attempts,
            "assumed_pods_left": sched.cache.sizes()["assumed_pods"],
            "cpu_requested_m": held,
        }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--gangs", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    gang_ms: list[float] = []
    plain_ms: list[float] = []
    for _ in range(args.repeat):  # interleaved
        gang_ms.append(anyio.run(attempt, args.nodes, args.gangs, True))
        plain_ms.append(anyio.run(attempt, args.nodes, args.gangs, False))
    result = {
        "workload": f"{args.nodes} nodes, {args.gangs} gangs of 3 (1 cpu each), default "
        "profile + GangScheduling; plain = the same pods without a group",
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "backend": "asyncio",
        "repeat": args.repeat,
        "ms_per_group_attempt": [round(x, 3) for x in gang_ms],
        "ms_per_3_plain_pods": [round(x, 3) for x in plain_ms],
        "median_ms_per_group_attempt": round(statistics.median(gang_ms), 3),
        "median_ms_per_3_plain_pods": round(statistics.median(plain_ms), 3),
        "upstream_reported_ms_per_group_attempt": 3.7,
        "compete_100_gangs_of_8_room_for_60": anyio.run(compete),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
