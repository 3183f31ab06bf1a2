"""An async service that embeds ksched: it feeds nodes and pods and prints placements.

python examples/embed_in_service.py            # asyncio
python examples/embed_in_service.py --trio     # the same code on trio
"""

from __future__ import annotations

import argparse

import anyio

import ksched
from ksched.testing import make_node, make_pod


async def feed_pods(cluster: ksched.InMemoryCluster, count: int) -> list[str]:
    """A stand-in for a job system: submits pods one by one."""
    keys = []
    for i in range(count):
        pod = make_pod(f"job-{i}").req(cpu="750m", memory="1Gi").label("app", "jobs").obj()
        await cluster.add_pod(pod)
        keys.append(pod.key)
        await anyio.sleep(0)
    return keys


async def main() -> None:
    cluster = ksched.InMemoryCluster()
    events: list[str] = []

    def observe(event: ksched.SchedulingEvent) -> None:
        if event.kind in ("Bound", "Unschedulable"):
            events.append(f"{event.kind:<13} {event.pod} {event.details.get('node') or ''}")

    async with ksched.Scheduler.open(cluster=cluster, observer=observe, seed=1) as scheduler:
        for zone, count in (("a", 2), ("b", 2)):
            for i in range(count):
                node = (
                    make_node(f"node-{zone}{i}")
                    .capacity(cpu="2", memory="8Gi", pods=110)
                    .label("topology.kubernetes.io/zone", zone)
                    .obj()
                )
                await cluster.add_node(node)
        keys = await feed_pods(cluster, 12)
        for key in keys[:8]:
            pod = await cluster.wait_bound(key, timeout=5)
            print(f"{key:<16} -> {pod.spec.node_name}")
        with anyio.move_on_after(1):
            while not scheduler.idle:
                await anyio.sleep(0.01)
        for key in keys[8:]:
            print(f"{key:<16} -> pending: {scheduler.records[key].message}")
    print(f"{sum(e.startswith('Bound') for e in events)} bound, events seen: {len(events)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trio", action="store_true", help="run on trio instead of asyncio")
    args = parser.parse_args()
    anyio.run(main, backend="trio" if args.trio else "asyncio")
