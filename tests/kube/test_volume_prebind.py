"""VolumeBinding's PreBind through a cluster that takes API writes (the VolumeUpdater seam),
on trio's MockClock: the bind timeout, completion woken by the caches, the failure reasons.

# volumebinding/binder.go BindPodVolumes (PollUntilContextTimeout(1s, bindTimeout)),
# bindAPIUpdate, checkBindings; volumebinding/volume_binding.go PreBind;
# apis/config/v1 defaults: bindTimeoutSeconds 600.
"""

from __future__ import annotations

from typing import Any

import anyio
import attrs
import pytest
from trio.testing import MockClock

from ksched import InMemoryCluster, Node, Pod
from ksched.api import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    ClaimRef,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from ksched.cluster._store import VolumeUpdateError
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.plugins.volume_binding import VolumeBinding
from ksched.testing import FakeHandle, make_node, make_pod

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize(
        "anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})]
    ),
]

HOSTNAME = "kubernetes.io/hostname"
CONFLICT = (
    'Operation cannot be fulfilled on persistentvolumes "pv-1": the object has been '
    "modified; please apply your changes to the latest version and try again"
)


class ApiCluster(InMemoryCluster):
    """An in-memory cluster that, like KubeCluster, takes PreBind's writes as API updates
    and leaves the binding to a controller (the test)."""

    def __init__(self, refuse: str | None = None) -> None:
        super().__init__()
        self.writes: list[Any] = []
        self.refuse = refuse

    async def update_volume(self, obj: PersistentVolume | PersistentVolumeClaim) -> None:
        if self.refuse is not None:
            raise VolumeUpdateError(self.refuse)
        self.writes.append(obj)
        self.apply(obj)


def _objects(provisioner: str) -> list[Any]:
    sc = StorageClass(
        metadata=ObjectMeta(name="sc", namespace=""),
        provisioner=provisioner,
        volume_binding_mode="WaitForFirstConsumer",
    )
    claim = PersistentVolumeClaim(
        metadata=ObjectMeta(name="data", uid="claim-uid"),
        access_modes=("ReadWriteOnce",),
        storage_class_name="sc",
        request=1 << 30,
    )
    objects: list[Any] = [sc, claim, make_node("n1").labels({HOSTNAME: "n1"}).obj()]
    if provisioner == "kubernetes.io/no-provisioner":
        affinity = NodeSelector(
            terms=(
                NodeSelectorTerm(
                    match_expressions=(
                        NodeSelectorRequirement(key=HOSTNAME, operator="In", values=("n1",)),
                    )
                ),
            )
        )
        objects.append(
            PersistentVolume(
                metadata=ObjectMeta(name="pv-1", namespace=""),
                capacity=1 << 30,
                access_modes=("ReadWriteOnce",),
                storage_class_name="sc",
                node_affinity=affinity,
            )
        )
    return objects


async def _reserved(
    cluster: ApiCluster, args: dict[str, Any] | None = None
) -> tuple[VolumeBinding, CycleState, Pod]:
    pl = VolumeBinding.new(args, FakeHandle(cluster=cluster))
    pod = make_pod("web").pvc("data").obj()
    await cluster.add_pod(pod)
    node: Node | None = cluster.get("Node", "n1")
    assert node is not None
    info = NodeInfo(node=node, name="n1")
    state = CycleState()
    assert pl.pre_filter(state, pod, [info]) is None
    assert pl.filter(state, pod, info) is None
    assert pl.reserve(state, pod, "n1") is None
    return pl, state, pod


def _claim(cluster: ApiCluster) -> PersistentVolumeClaim:
    """The claim default/data, as the cluster holds it now."""
    claim: PersistentVolumeClaim | None = cluster.get("PersistentVolumeClaim", "default/data")
    assert claim is not None
    return claim


def _bind_claim(cluster: ApiCluster, volume: str) -> None:
    """The PV controller's answer: the claim names the volume, bind-completed."""
    claim = _claim(cluster)
    annotations = {**claim.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
    cluster.apply(
        attrs.evolve(
            claim,
            volume_name=volume,
            phase="Bound",
            metadata=attrs.evolve(claim.metadata, annotations=annotations),
        )
    )


async def test_static_binding_writes_the_claim_ref_and_waits_for_the_controller() -> None:
    cluster = ApiCluster()
    await cluster.add(_objects("kubernetes.io/no-provisioner"))
    pl, state, pod = await _reserved(cluster)
    start = anyio.current_time()
    result: list[Status | None] = []

    async def prebind() -> None:
        result.append(await pl.pre_bind(state, pod, "n1"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(prebind)
        await anyio.sleep(5.5)
        assert not result  # the controller has not answered
        _bind_claim(cluster, "pv-1")
    assert result == [None]
    # Woken by the cache, not by the next 1 s check.
    assert anyio.current_time() - start == pytest.approx(5.5)
    (written,) = cluster.writes
    assert isinstance(written, PersistentVolume)
    assert written.claim_ref == ClaimRef(name="data", namespace="default", uid="claim-uid")
    assert written.metadata.annotations[ANN_BOUND_BY_CONTROLLER] == "yes"


async def test_dynamic_provisioning_times_out_after_the_default_600s() -> None:
    cluster = ApiCluster()
    await cluster.add(_objects("csi.example.com"))
    pl, state, pod = await _reserved(cluster)
    start = anyio.current_time()
    status = await pl.pre_bind(state, pod, "n1")
    assert status == Status(Code.ERROR, ("binding volumes: context deadline exceeded",))
    assert anyio.current_time() - start == pytest.approx(600)
    (written,) = cluster.writes
    assert isinstance(written, PersistentVolumeClaim)
    assert written.metadata.annotations[ANN_SELECTED_NODE] == "n1"
    pl.unreserve(state, pod, "n1")
    # Unreserve dropped nothing the API holds: the claim stays annotated, as upstream.
    claim = pl.binder.get_pvc("default", "data")
    assert claim is not None and claim.metadata.annotations[ANN_SELECTED_NODE] == "n1"


async def test_bind_timeout_seconds_is_honoured() -> None:
    cluster = ApiCluster()
    await cluster.add(_objects("csi.example.com"))
    pl, state, pod = await _reserved(cluster, {"bindTimeoutSeconds": 3})
    start = anyio.current_time()
    status = await pl.pre_bind(state, pod, "n1")
    assert status is not None and status.code == Code.ERROR
    assert anyio.current_time() - start == pytest.approx(3)


async def test_provisioner_giving_up_fails_the_attempt_at_once() -> None:
    cluster = ApiCluster()
    await cluster.add(_objects("csi.example.com"))
    pl, state, pod = await _reserved(cluster)
    result: list[Status | None] = []

    async def prebind() -> None:
        result.append(await pl.pre_bind(state, pod, "n1"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(prebind)
        await anyio.sleep(2)
        claim = _claim(cluster)
        annotations = {"volume.kubernetes.io/storage-provisioner": "csi.example.com"}
        cluster.apply(
            attrs.evolve(claim, metadata=attrs.evolve(claim.metadata, annotations=annotations))
        )
    assert result == [Status(Code.ERROR, ('binding volumes: provisioning failed for PVC "data"',))]


async def test_refused_write_fails_with_the_servers_message_and_reverts() -> None:
    cluster = ApiCluster(refuse=CONFLICT)
    await cluster.add(_objects("kubernetes.io/no-provisioner"))
    pl, state, pod = await _reserved(cluster)
    assumed = pl.binder.get_pv("pv-1")
    assert assumed is not None and assumed.claim_ref is not None
    status = await pl.pre_bind(state, pod, "n1")
    assert status == Status(Code.ERROR, (CONFLICT,))
    reverted = pl.binder.get_pv("pv-1")
    assert reverted is not None and reverted.claim_ref is None
