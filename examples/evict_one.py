"""A PostFilter plugin written against the typed Handle: evict the one pod that frees a node.

EvictOne is a minimal preemption: when no node fits a pod, it looks for a node where
removing a single lower-priority pod makes room, replaying the profile's own Filter
plugins (with the pods nominated to the node) through the Handle, evicts that pod and
nominates the node. The docs' plugin guide walks through it.

python examples/evict_one.py            # asyncio
python examples/evict_one.py --trio     # the same code on trio
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

import anyio

import ksched
from ksched import Pod
from ksched.framework import (
    Code,
    CycleState,
    Handle,
    NodeInfo,
    NodeToStatus,
    PostFilterResult,
    Status,
)
from ksched.testing import make_node, make_pod


class EvictOne:
    """PostFilter: evict one lower-priority pod where that alone lets the pod fit."""

    name = "EvictOne"

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> EvictOne:
        return cls(handle)

    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        handle = self.handle
        for node_info in handle.snapshot.list():
            # Nodes a Filter rejected as unresolvable cannot be helped by evicting.
            if statuses.get(node_info.name).code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                continue
            for victim in sorted(node_info.pods, key=lambda p: p.pod.priority):
                if victim.pod.priority >= pod.priority:
                    break
                if await self._fits_without(state, pod, node_info, victim.pod):
                    await handle.cluster.evict(victim.pod)
                    handle.record_event(
                        victim.pod,
                        "Preempted",
                        f"Preempted by pod {pod.uid} on node {node_info.name}",
                        related=pod,
                        action="Preempting",
                    )
                    return PostFilterResult(nominated_node_name=node_info.name), None
        return None, Status(Code.UNSCHEDULABLE, ("no single pod to evict",))

    async def _fits_without(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, victim: Pod
    ) -> bool:
        """Replay the profile's Filter on a copy of the node without ``victim``."""
        handle = self.handle
        trial_state = state.clone()
        trial = node_info.clone()
        removed = next(p for p in trial.pods if p.pod.uid == victim.uid)
        trial.remove_pod(victim)
        if handle.pre_filter_extensions_active(trial_state):
            status = handle.run_pre_filter_extension_remove_pod(trial_state, pod, removed, trial)
            if not status.is_success:
                return False
        status = await handle.run_filter_plugins_with_nominated_pods(trial_state, pod, trial)
        return status.is_success


CONFIG = ksched.parse_config(
    {
        "profiles": [
            {
                "plugins": {
                    "postFilter": {"enabled": [{"name": "EvictOne"}], "disabled": [{"name": "*"}]}
                }
            }
        ]
    }
)


async def main() -> list[str]:
    cluster = ksched.InMemoryCluster()
    registry = {"EvictOne": EvictOne.new}
    async with ksched.Scheduler.open(CONFIG, cluster, registry=registry, seed=1):
        await cluster.add_node(make_node("n1").capacity(cpu="2", memory="4Gi", pods=10).obj())
        await cluster.add_pod(make_pod("batch").priority(1).req(cpu="1500m").obj())
        await cluster.wait_bound("default/batch", timeout=5)
        await cluster.add_pod(make_pod("web").priority(100).req(cpu="1").obj())
        web = await cluster.wait_bound("default/web", timeout=15)
    lines = [f"evicted: {', '.join(cluster.evicted)}", f"web -> {web.spec.node_name}"]
    lines += [f"event: {e.reason} {e.regarding}: {e.note}" for e in cluster.events]
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trio", action="store_true", help="run on trio instead of asyncio")
    backend = "trio" if parser.parse_args().trio else "asyncio"
    for line in anyio.run(main, backend=backend):
        print(line)
