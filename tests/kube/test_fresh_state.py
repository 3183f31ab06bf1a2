"""Fresh state under load: a node deleted, cordoned or tainted while a backlog drains gets
no new pod more than 1 s after the watch event reached the cache (measured: the last
binding POST to it after the event, and the event's delay after the change was made)."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import anyio
import pytest

from ksched import Scheduler
from ksched.api import Pod
from ksched.kube import KubeClient, KubeCluster, TokenBucket

from ._invariants import assert_drained
from ._plane import ControlPlane
from ._replicas import nodes_of
from ._support import profile_config, wait_until
from .conftest import Api, http_client

pytestmark = pytest.mark.anyio

PODS = 800
NODES = 8
BIND_QPS = 150.0


class TimedCluster(KubeCluster):
    """Records when each bind passed its last check (went on the wire), per node."""

    sent: dict[str, list[float]]

    def node_refuses(self, pod: Pod, node_name: str) -> str | None:
        problem = super().node_refuses(pod, node_name)
        if problem is None:
            self.sent.setdefault(node_name, []).append(time.monotonic())
        return problem


async def _create_pods(api: Api, name: str) -> None:
    async def some(start: int) -> None:
        for i in range(start, PODS, 8):
            await api.create_pod(f"p{i}", scheduler=name)

    async with anyio.create_task_group() as tg:
        for start in range(8):
            tg.start_soon(some, start)


async def test_a_changed_node_gets_no_pod_a_second_after_its_watch_event(
    plane: ControlPlane, api: Api, anyio_backend: str
) -> None:
    name = f"ksched-{api.ns}"
    nodes = [f"{api.ns}-n{i}" for i in range(NODES)]
    for node in nodes:
        await api.create_node(node, cpu="64", memory="64Gi", pods=250)
    await _create_pods(api, name)
    deleted, cordoned, tainted = nodes[:3]
    applied: dict[str, float] = {}

    def on_change(kind: str, old: Any, new: Any) -> None:
        if kind != "Node" or (new or old).name not in (deleted, cordoned, tainted):
            return
        node = (new or old).name
        if (
            new is None
            or (node == cordoned and new.spec.unschedulable)
            or (node == tainted and new.spec.taints)
        ):
            applied.setdefault(node, time.monotonic())

    async with http_client(plane.url) as http:
        client = KubeClient(http, TokenBucket(BIND_QPS, int(BIND_QPS)))
        async with TimedCluster.open(client, scheduler_names=(name,)) as cluster:
            assert isinstance(cluster, TimedCluster)
            cluster.sent = {}
            await cluster.wait_synced()
            cluster.subscribe(on_change)
            async with Scheduler.open(profile_config(name), cluster=cluster):
                await wait_until(lambda: cluster.binds >= PODS // 4, 30)
                assert cluster.binds < PODS // 2, "the drain is too fast to change nodes in"
                changed: dict[str, float] = {}
                await api.delete_node(deleted)
                changed[deleted] = time.monotonic()
                await _patch_node(api, cordoned, {"spec": {"unschedulable": True}})
                changed[cordoned] = time.monotonic()
                taint = {"key": "drain", "value": "now", "effect": "NoSchedule"}
                await _patch_node(api, tainted, {"spec": {"taints": [taint]}})
                changed[tainted] = time.monotonic()
                await wait_until(lambda: cluster.binds >= PODS, 60)
    late = {n: max(cluster.sent.get(n, [0.0])) - applied[n] for n in changed}
    delivered = {n: applied[n] - changed[n] for n in changed}
    print(
        f"\n{anyio_backend}: last bind sent after the watch event (s): "
        + ", ".join(f"{n.rsplit('-', 1)[1]} {late[n]:+.3f}" for n in changed)
        + "; change to watch event in the cache (s): "
        + ", ".join(f"{delivered[n]:.3f}" for n in changed)
    )
    assert all(t <= 1.0 for t in late.values()), late
    assert all(t <= 1.0 for t in delivered.values()), delivered
    pods = await api.pods()
    by_node: defaultdict[str, int] = defaultdict(int)
    for pod in pods:
        by_node[pod["spec"].get("nodeName") or ""] += 1
    assert by_node[""] == 0
    # What was bound to the deleted node before it went stays there (no pod GC runs).
    assert_drained([p for p in pods if p["spec"]["nodeName"] != deleted], await nodes_of(api))


async def _patch_node(api: Api, name: str, patch: dict[str, Any]) -> None:
    await api.client.request(
        "PATCH", f"/api/v1/nodes/{name}", body=patch, content_type="application/merge-patch+json"
    )
