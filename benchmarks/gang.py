"""Gang scheduling under contention: gangs of 8 on 500 nodes, demand twice the capacity.

Nodes are scheduler_perf's default node (4 cpu, 32Gi, 110 pods). Every gang is a PodGroup
(minMember = gang size) whose members request ``--member-cpu`` (default 3: one member per
node, so 500 nodes hold 62 gangs and 4 members of a 63rd, a partial fit that tempts the
losers to reserve). ``--demand 2`` submits gangs for twice the member slots. All PodGroups
and pods are created at once; the run ends when the scheduler is idle (or ``--settle-timeout``).

Reports, per run and as medians of ``--repeat`` runs:
- gangs/s and pods/s: completed gangs and their bound pods over the time to the last bind;
- held_seconds_incomplete: the total time members of gangs that did not complete held a
  node (reserved at Permit until released), summed over members; the goal is near zero;
- settle_s: from the first pod created until the scheduler went idle.

    python benchmarks/gang.py --nodes 500 --gang-size 8 --demand 2 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

import ksched
from ksched.api import ObjectMeta
from ksched.plugins.coscheduling import POD_GROUP_LABEL
from ksched.testing import make_node, make_pod

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled: [{name: Coscheduling}]
        disabled: [{name: PrioritySort}, {name: DefaultPreemption}]
"""

NODE_CPU = 4


class Holds:
    """Wall-clock reservations at Permit, per pod: start on WaitingOnPermit, end on a verdict."""

    def __init__(self) -> None:
        self.open: dict[str, float] = {}
        self.closed: list[tuple[str, float, float]] = []
        self.bound: dict[str, float] = {}
        self.attempts = 0

    def observe(self, event: ksched.SchedulingEvent) -> None:
        now = time.perf_counter()
        if event.kind == "WaitingOnPermit":
            self.open[event.pod] = now
        elif event.kind in ("PermitRejected", "PermitAllowed"):
            start = self.open.pop(event.pod, None)
            if start is not None:
                self.closed.append((event.pod, start, now))
        elif event.kind == "Bound":
            self.bound[event.pod] = now
        elif event.kind == "Unschedulable":
            self.attempts += 1


def gang_of(pod_key: str) -> str:
    return pod_key.rpartition("-m")[0].partition("/")[2]


async def run_once(
    nodes: int, gang_size: int, member_cpu: int, demand: float, seed: int, settle_timeout: float
) -> dict[str, Any]:
    cluster = ksched.InMemoryCluster()
    holds = Holds()
    slots = nodes * (NODE_CPU // member_cpu)
    capacity_gangs = slots // gang_size
    gangs = round(slots * demand / gang_size)
    config = ksched.load_config(CONFIG)
    async with ksched.Scheduler.open(
        config, cluster, observer=holds.observe, seed=seed
    ) as scheduler:
        for i in range(nodes):
            cluster.apply(make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj())
        start = time.perf_counter()
        for g in range(gangs):
            name = f"gang-{g:04d}"
            cluster.apply(
                ksched.PodGroup(
                    metadata=ObjectMeta(name=name, namespace="default", creation_timestamp=0.0),
                    min_member=gang_size,
                )
            )
            for m in range(gang_size):
                pod = (
                    make_pod(f"{name}-m{m}")
                    .label(POD_GROUP_LABEL, name)
                    .req(cpu=str(member_cpu), memory="1Gi")
                    .obj()
                )
                cluster.apply(pod)
        settled = True
        with anyio.move_on_after(settle_timeout) as scope:
            while True:
                await anyio.sleep(0.01)
                await anyio.wait_all_tasks_blocked()
                if scheduler.idle:
                    break
        if scope.cancelled_caught:
            settled = False
        end = time.perf_counter()
        waiting_at_end = len(scheduler.waiting_pods)
    bound_by_gang: dict[str, int] = {}
    for key in holds.bound:
        bound_by_gang[gang_of(key)] = bound_by_gang.get(gang_of(key), 0) + 1
    complete = {g for g, n in bound_by_gang.items() if n >= gang_size}
    partial = {g for g, n in bound_by_gang.items() if n < gang_size}
    intervals = holds.closed + [(pod, t, end) for pod, t in holds.open.items()]
    held_incomplete = sum(e - s for pod, s, e in intervals if gang_of(pod) not in complete)
    holds_incomplete = sum(1 for pod, _, _ in intervals if gang_of(pod) not in complete)
    longest_incomplete = max(
        (e - s for pod, s, e in intervals if gang_of(pod) not in complete), default=0.0
    )
    bound_pods = sum(bound_by_gang[g] for g in complete)
    last_bind = max(holds.bound.values(), default=start)
    elapsed = max(last_bind - start, 1e-9)
    return {
        "gangs": gangs,
        "capacity_gangs": capacity_gangs,
        "complete_gangs": len(complete),
        "partially_bound_gangs": len(partial),
        "gangs_per_second": len(complete) / elapsed,
        "pods_per_second": bound_pods / elapsed,
        "time_to_last_bind_s": elapsed,
        "settle_s": end - start,
        "settled": settled,
        "waiting_at_end": waiting_at_end,
        "held_seconds_incomplete": held_incomplete,
        "holds_incomplete": holds_incomplete,
        "longest_hold_incomplete_s": longest_incomplete,
        "unschedulable_attempts": holds.attempts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--gang-size", type=int, default=8)
    parser.add_argument("--member-cpu", type=int, default=3, help="cpu per member (node: 4)")
    parser.add_argument("--demand", type=float, default=2.0, help="gangs submitted / capacity")
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--settle-timeout", type=float, default=120.0)
    parser.add_argument(
        "--out", type=Path, default=None, help="results JSON (default results/gang_<nodes>.json)"
    )
    args = parser.parse_args()
    runs = [
        anyio.run(
            run_once,
            args.nodes,
            args.gang_size,
            args.member_cpu,
            args.demand,
            i,
            args.settle_timeout,
            backend=args.backend,
        )
        for i in range(args.repeat)
    ]

    def median(key: str) -> float:
        return float(statistics.median(float(r[key]) for r in runs))

    result = {
        "workload": "GangContention",
        "nodes": args.nodes,
        "gangSize": args.gang_size,
        "memberCpu": args.member_cpu,
        "demand": args.demand,
        "gangs": runs[0]["gangs"],
        "capacityGangs": runs[0]["capacity_gangs"],
        "backend": args.backend,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "gangs_per_second_median": median("gangs_per_second"),
        "pods_per_second_median": median("pods_per_second"),
        "held_seconds_incomplete_median": median("held_seconds_incomplete"),
        "settle_s_median": median("settle_s"),
        "complete_gangs_median": median("complete_gangs"),
        "runs": runs,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    out = args.out or Path(__file__).parent / "results" / f"gang_{args.nodes}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
