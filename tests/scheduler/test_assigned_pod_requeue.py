"""Assigned-pod events offer every pool pod to its plugins' queueing hints
(eventhandlers.go addPodToCache / updatePodInCache with SchedulerQueueingHints on), so a
pod kept away by required anti-affinity is requeued when the blocker loses its label."""

from __future__ import annotations

import anyio
import pytest
from trio.testing import MockClock

from ksched import InMemoryCluster, Scheduler
from ksched.config import parse_config
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

HOSTNAME = "kubernetes.io/hostname"


async def until_unschedulable(sched: Scheduler, key: str) -> None:
    with anyio.fail_after(10):
        while sched.queue.where(key) != "unschedulable":
            await anyio.sleep(0.01)


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
async def test_anti_affinity_pod_is_requeued_when_the_blocker_loses_its_label() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(
        make_node("n1").label(HOSTNAME, "n1").capacity(cpu="4", memory="8Gi", pods=110).obj()
    )
    blocker = make_pod("blocker").label("color", "green").node("n1").obj()
    bystander = make_pod("bystander").label("color", "blue").node("n1").obj()
    await cluster.add([blocker, bystander])
    async with Scheduler.open(parse_config({}), cluster) as sched:
        await cluster.add_pod(
            make_pod("shy").pod_affinity(HOSTNAME, {"color": "green"}, anti=True).obj()
        )
        await until_unschedulable(sched, "default/shy")

        # A label change that matches none of its terms leaves the pod in the pool.
        cluster.apply(make_pod("bystander").label("color", "red").node("n1").obj())
        await anyio.sleep(30)
        assert sched.queue.where("default/shy") == "unschedulable"

        # The blocker's label goes away: InterPodAffinity's hint queues the pod.
        cluster.apply(make_pod("blocker").node("n1").obj())
        bound = await cluster.wait_bound("default/shy", timeout=15)
        assert bound.spec.node_name == "n1"
