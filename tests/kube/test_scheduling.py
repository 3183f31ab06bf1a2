"""ksched against a real kube-apiserver: backlog, unschedulable pods, preemption."""

from __future__ import annotations

import anyio
import httpx
import pytest

from ksched import Scheduler
from ksched.kube import KubeClient, KubeCluster, TokenBucket

from ._plane import ControlPlane
from ._support import (
    RecordingTransport,
    bound_count,
    profile_config,
    requested_milli_cpu,
    wait_until,
)
from .conftest import Api, http_client

pytestmark = pytest.mark.anyio


async def test_backlog_every_pod_bound_once_and_no_node_over_capacity(
    plane: ControlPlane, api: Api
) -> None:
    name = f"ksched-{api.ns}"
    for i in range(4):
        await api.create_node(f"{api.ns}-n{i}", cpu="1")
    for i in range(48):  # 40 fit (4 nodes x 10 x 100m); 8 stay Pending
        await api.create_pod(f"p{i}", scheduler=name)
    recorder = RecordingTransport(httpx.AsyncHTTPTransport(verify=False))
    async with (
        http_client(plane.url, transport=recorder) as http,
        KubeCluster.open(KubeClient(http, TokenBucket(0, 0)), scheduler_names=(name,)) as cluster,
    ):
        await cluster.wait_synced()
        async with Scheduler.open(profile_config(name), cluster=cluster):
            await wait_until(lambda: bound_count(cluster, api.ns) >= 40, 30)
            await anyio.sleep(0.5)  # a wrong extra bind would show up in this window
    pods = await api.pods()
    bound = [p for p in pods if p["spec"].get("nodeName")]
    assert len(bound) == 40
    assert all(recorder.bindings[p["metadata"]["name"]] == 1 for p in bound)
    assert sum(recorder.bindings.values()) == 40
    assert max(requested_milli_cpu(pods).values()) <= 1000
    pending = [p for p in pods if not p["spec"].get("nodeName")]
    conditions = [
        c for p in pending for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"
    ]
    assert len(conditions) == 8
    assert {c["reason"] for c in conditions} == {"Unschedulable"}


def _count(cluster: KubeCluster, ns: str) -> int:
    return sum(1 for p in cluster.pods() if p.namespace == ns and p.spec.node_name)


async def test_unschedulable_pod_gets_condition_and_event(plane: ControlPlane, api: Api) -> None:
    name = f"ksched-{api.ns}"
    await api.create_node(f"{api.ns}-n0", cpu="1")
    await api.create_pod("big", scheduler=name, cpu="3")
    async with (
        http_client(plane.url) as http,
        KubeCluster.open(KubeClient(http, TokenBucket(0, 0)), scheduler_names=(name,)) as cluster,
    ):
        await cluster.wait_synced()
        async with Scheduler.open(profile_config(name), cluster=cluster):

            async def has_event() -> bool:
                return any(e["reason"] == "FailedScheduling" for e in await api.events())

            await wait_until(has_event, 15)
            pod = await api.pod("big")
    cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert cond["status"] == "False"
    assert cond["reason"] == "Unschedulable"
    assert cond["message"].startswith("0/")
    assert "Insufficient cpu" in cond["message"]
    event = next(e for e in await api.events() if e["reason"] == "FailedScheduling")
    assert event["type"] == "Warning"
    assert event["action"] == "Scheduling"
    assert event["note"] == cond["message"]
    assert event["regarding"]["name"] == "big"
    assert event["reportingController"] == name


async def test_preemption_end_to_end(plane: ControlPlane, api: Api) -> None:
    name = f"ksched-{api.ns}"
    await api.create_priority_class("ksched-low", 10)
    await api.create_priority_class("ksched-high", 1000)
    node = f"{api.ns}-n0"
    await api.create_node(node, cpu="1")
    for i in range(2):
        await api.create_pod(f"low{i}", scheduler=name, cpu="500m", priority_class="ksched-low")
    async with (
        http_client(plane.url) as http,
        KubeCluster.open(KubeClient(http, TokenBucket(0, 0)), scheduler_names=(name,)) as cluster,
    ):
        await cluster.wait_synced()
        async with Scheduler.open(profile_config(name), cluster=cluster):
            await wait_until(lambda: bound_count(cluster, api.ns) == 2, 15)
            await api.create_pod("high", scheduler=name, cpu="500m", priority_class="ksched-high")

            async def nominated() -> bool:
                status = (await api.pod("high"))["status"]
                return bool(status.get("nominatedNodeName") == node)

            await wait_until(nominated, 15)
            pods = {p["metadata"]["name"]: p for p in await api.pods()}
            victims = [
                p
                for n, p in pods.items()
                if n.startswith("low") and p["metadata"].get("deletionTimestamp")
            ]
            assert len(victims) == 1
            cond = next(
                c for c in victims[0]["status"]["conditions"] if c["type"] == "DisruptionTarget"
            )
            assert cond["reason"] == "PreemptionByScheduler"
            assert cond["message"] == f"{name}: preempting to accommodate a higher priority pod"
            # No kubelet runs: finish the graceful deletion as it would.
            await api.client.request(
                "DELETE",
                f"/api/v1/namespaces/{api.ns}/pods/{victims[0]['metadata']['name']}",
                body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
            )
            bound = await cluster.wait_bound(f"{api.ns}/high", timeout=20)
            assert bound.spec.node_name == node

            async def preempted_event() -> bool:
                return any(e["reason"] == "Preempted" for e in await api.events())

            await wait_until(preempted_event, 10)
    event = next(e for e in await api.events() if e["reason"] == "Preempted")
    high_uid = (await api.pod("high"))["metadata"]["uid"]
    assert event["note"] == f"Preempted by pod {high_uid} on node {node}"
    assert event["action"] == "Preempting"
    assert event["regarding"]["name"] == victims[0]["metadata"]["name"]
    assert event["related"]["name"] == "high"
    assert event["related"]["uid"] == high_uid
