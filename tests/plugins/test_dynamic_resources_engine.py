"""DynamicResources in the running engine: the in-memory resourceclaim controller, claims
written at PreBind, in-flight allocations released by a Permit timeout, and pods without
claims left alone."""

from __future__ import annotations

from typing import Any

import anyio
import attrs
import pytest
from trio.testing import MockClock

from ksched.api import Pod, ResourceClaim, read_object
from ksched.cluster import InMemoryCluster
from ksched.config import PluginRef, PluginSet, Profile, SchedulerConfig
from ksched.framework import Code, CycleState, Status
from ksched.scheduler import Scheduler
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

DRIVER = "gpu.example.com"


def objects(devices: int = 1) -> list[Any]:
    docs: list[dict[str, Any]] = [
        {
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
        {
            "kind": "ResourceSlice",
            "metadata": {"name": "n1-gpu"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "n1",
                "pool": {"name": "n1", "resourceSliceCount": 1},
                "devices": [{"name": f"gpu-{i}"} for i in range(devices)],
            },
        },
        {
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu"},
            "spec": {
                "spec": {
                    "devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}
                }
            },
        },
    ]
    return [read_object(d) for d in docs]


def gpu_pod(name: str, template: str = "one-gpu") -> Pod:
    pod = read_object(
        {
            "kind": "Pod",
            "metadata": {"name": name, "uid": f"uid-{name}"},
            "spec": {
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
            },
        }
    )
    assert isinstance(pod, Pod)
    return pod


def claim_of(cluster: InMemoryCluster, pod_key: str) -> ResourceClaim | None:
    pod = cluster.get_pod(pod_key)
    assert pod is not None and pod.status.resource_claim_statuses
    name = pod.status.resource_claim_statuses[0].resource_claim_name
    assert name is not None
    return cluster.get_resource_claim(pod.namespace, name)


def test_controller_makes_claims_from_templates_and_releases_them() -> None:
    cluster = InMemoryCluster()
    cluster.apply(gpu_pod("early"))  # its template does not exist yet
    early = cluster.get_pod("default/early")
    assert early is not None and early.status.resource_claim_statuses == ()
    for obj in objects():
        cluster.apply(obj)
    claim = claim_of(cluster, "default/early")
    assert claim is not None
    assert claim.name.startswith("early-gpu-") and len(claim.name) == len("early-gpu-") + 5
    assert claim.metadata.owner_references[0].uid == "uid-early"
    assert claim.spec.requests[0].device_class_name == "gpu"
    cluster.remove("Pod", "default/early")
    assert cluster.get_resource_claim("default", claim.name) is None


def test_replacing_a_pending_pod_keeps_its_generated_claim() -> None:
    """A pod replaced without its status (a scenario's update step) gets the name of the
    claim made for it back; the claim, with whatever it holds, stays."""
    cluster = InMemoryCluster()
    for obj in objects():
        cluster.apply(obj)
    cluster.apply(gpu_pod("p"))
    claim = claim_of(cluster, "default/p")
    assert claim is not None
    held = attrs.evolve(claim, metadata=attrs.evolve(claim.metadata, labels={"held": "yes"}))
    cluster.apply(held)
    cluster.apply(gpu_pod("p"))
    again = claim_of(cluster, "default/p")
    assert again is held


async def test_prebind_writes_allocation_and_reservation() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(make_node("n1").capacity(cpu="8", memory="8Gi", pods=110).obj())
    await cluster.add(objects())
    async with Scheduler.open(None, cluster):
        await cluster.add_pod(gpu_pod("p"))
        bound = await cluster.wait_bound("default/p", timeout=10)
        assert bound.spec.node_name == "n1"
        claim = claim_of(cluster, "default/p")
        assert claim is not None and claim.status.allocation is not None
        assert [
            (d.request, d.driver, d.pool, d.device) for d in claim.status.allocation.devices
        ] == [("g", DRIVER, "n1", "gpu-0")]
        assert [r.uid for r in claim.status.reserved_for] == ["uid-p"]


class WaitPermit:
    """Holds "first" at Permit for ``timeout`` seconds once, then turns it away."""

    name = "WaitPermit"

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.waited = False

    def new(self, args: Any, handle: Any) -> WaitPermit:
        return self

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.name != "first":
            return None
        if not self.waited:
            self.waited = True
            return Status.wait(self.timeout)
        return Status(Code.UNSCHEDULABLE, ("not now",))


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
async def test_in_flight_allocation_holds_the_device_until_permit_times_out() -> None:
    """Reserve puts "first"'s allocation in flight: "second" finds no free device while
    "first" waits at Permit. The timeout at 30 s unreserves it, but as upstream no event
    DynamicResources registers says so (no claim changed: the allocation was only in
    flight), so "second" waits for the unschedulable pool's leftover flush (5 min, checked
    every 30 s), and then gets the GPU."""
    cluster = InMemoryCluster()
    await cluster.add_node(make_node("n1").capacity(cpu="8", memory="8Gi", pods=110).obj())
    await cluster.add(objects(devices=1))
    refs = (
        PluginRef("PrioritySort"),
        PluginRef("DynamicResources"),
        PluginRef("WaitPermit"),
        PluginRef("DefaultBinder"),
    )
    config = SchedulerConfig(profiles=(Profile(plugins={"multiPoint": PluginSet(enabled=refs)}),))
    permit = WaitPermit(timeout=30.0)
    async with Scheduler.open(config, cluster, registry={"WaitPermit": permit.new}) as sched:
        await cluster.add_pod(gpu_pod("first"))
        await anyio.wait_all_tasks_blocked()
        await cluster.add_pod(gpu_pod("second"))
        await anyio.wait_all_tasks_blocked()
        second = cluster.get_pod("default/second")
        assert second is not None and second.spec.node_name is None
        assert sched.records[gpu_pod("second").uid].attempts == 1
        start = anyio.current_time()
        with pytest.raises(TimeoutError):
            await cluster.wait_bound("default/second", timeout=60)
        first = cluster.get_pod("default/first")
        assert first is not None and first.spec.node_name is None  # unreserved at 30 s
        bound = await cluster.wait_bound("default/second", timeout=400)
        assert bound.spec.node_name == "n1"
        # rejected at 0 s, so not yet 5 min old at the 300 s check: flushed at 330 s
        assert anyio.current_time() - start == 330.0
        claim = claim_of(cluster, "default/second")
        assert claim is not None and [r.uid for r in claim.status.reserved_for] == ["uid-second"]
        held = claim_of(cluster, "default/first")
        assert held is not None and held.status.allocation is None


async def test_pods_without_claims_schedule_as_before_in_the_default_profile() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(make_node("n1").capacity(cpu="8", memory="8Gi", pods=110).obj())
    async with Scheduler.open(None, cluster) as sched:
        assert "DynamicResources" in sched.frameworks["default-scheduler"].points["preFilter"]
        await cluster.add_pod(make_pod("plain").req(cpu="1").obj())
        assert (await cluster.wait_bound("default/plain", timeout=10)).spec.node_name == "n1"
