"""Preemption's dry runs go across nodes at once when a Filter waits, with the same result.

Upstream runs the dry runs of DefaultPreemption in parallel across nodes (bounded by the
parallelism). ksched does so when some Filter plugin is ``async`` (plain ones gain nothing
on one event loop); nodes start in order and the results are replayed in order, so the
victims and the nominated node are those of visiting the nodes one by one.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from ksched import InMemoryCluster, Pod, Scheduler, parse_config
from ksched.framework import Status
from ksched.testing import make_node, make_pod


class Waits:
    """An async Filter that passes every node after yielding; counts the dry runs (calls
    on a node copy, not the snapshot's NodeInfo) in flight at once."""

    name = "Waits"

    def __init__(self) -> None:
        self.handle: Any = None
        self.in_flight = 0
        self.most_in_flight = 0

    async def filter(self, state: Any, pod: Pod, node_info: Any) -> Status | None:
        dry_run = node_info is not self.handle.snapshot.get(node_info.name)
        self.in_flight += dry_run
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await anyio.lowlevel.checkpoint()
        self.in_flight -= dry_run
        return None


def _bind(plugin: Waits, handle: Any) -> Waits:
    plugin.handle = handle
    return plugin


async def _preempt(parallelism: int) -> tuple[list[str], str, str, int]:
    """(evicted pods, nominated node, node the preemptor bound to, most dry runs at once)."""
    waits = Waits()
    config = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "parallelism": parallelism,
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"filter": {"enabled": [{"name": "Waits"}]}},
                }
            ],
        }
    )
    cluster = InMemoryCluster()
    for i in range(30):
        cluster.apply(make_node(f"node-{i}").capacity(cpu="4", memory="16Gi", pods=110).obj())
        for j in range(4):
            low = make_pod(f"low-{i}-{j}").priority(j % 3).req(cpu="1", memory="1Gi")
            cluster.apply(low.node(f"node-{i}").obj())
    nominated: list[str] = []
    evicted: list[str] = []

    def observe(event: Any) -> None:
        if event.kind == "Preempted":
            evicted.append(event.pod)
        if event.kind == "Unschedulable" and not nominated:
            pod = cluster.get_pod("default/vip")
            if pod is not None and pod.status.nominated_node_name:
                nominated.append(pod.status.nominated_node_name)

    async with Scheduler.open(
        config,
        cluster,
        registry={"Waits": lambda args, handle: _bind(waits, handle)},
        seed=9,
        observer=observe,
    ):
        waits.most_in_flight = 0
        cluster.apply(make_pod("vip").priority(100).req(cpu="2", memory="1Gi").obj())
        bound = await cluster.wait_bound("default/vip", timeout=30)
    assert bound.spec.node_name is not None
    return (
        sorted(evicted),
        nominated[0] if nominated else "",
        bound.spec.node_name,
        (waits.most_in_flight),
    )


@pytest.mark.anyio
async def test_parallel_dry_runs_choose_what_one_by_one_chooses() -> None:
    one_by_one = await _preempt(parallelism=1)
    parallel = await _preempt(parallelism=16)
    assert one_by_one[:3] == parallel[:3]
    evicted, _nominated, node, _ = parallel
    # The two lowest-priority pods of one node make room for 2 cpu.
    assert len(evicted) == 2
    assert all(key.startswith(f"default/low-{node.split('-')[1]}-") for key in evicted)
    assert one_by_one[3] == 1
    assert parallel[3] > 1
