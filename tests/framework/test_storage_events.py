"""Storage objects' changes become cluster events: upstream's EventResource names, and the
scheduler's handler requeueing a pod only through the plugins that registered them."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from trio.testing import MockClock

from ksched import InMemoryCluster, Scheduler
from ksched.api import (
    CSINode,
    CSINodeDriver,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
)
from ksched.framework import ActionType, ClusterEvent, EventResource
from ksched.simulate import check_scenario
from ksched.testing import make_node, make_pod


@pytest.mark.parametrize(
    ("kind", "resource"),
    [
        ("PersistentVolume", EventResource.PERSISTENT_VOLUME),
        ("PersistentVolumeClaim", EventResource.PERSISTENT_VOLUME_CLAIM),
        ("StorageClass", EventResource.STORAGE_CLASS),
        ("CSINode", EventResource.CSI_NODE),
        ("CSIDriver", EventResource.CSI_DRIVER),
        ("CSIStorageCapacity", EventResource.CSI_STORAGE_CAPACITY),
        ("Service", EventResource.SERVICE),
        ("Pod", None),
        ("Node", None),
        ("ConfigMap", None),
    ],
)
def test_kind_to_event_resource(kind: str, resource: EventResource | None) -> None:
    assert EventResource.for_kind(kind) is resource


def test_registration_matches_storage_updates() -> None:
    registered = ClusterEvent(EventResource.CSI_NODE, ActionType.ADD | ActionType.UPDATE)
    assert registered.matches(ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE_OTHER))
    assert not registered.matches(ClusterEvent(EventResource.CSI_DRIVER, ActionType.ADD))


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
@pytest.mark.anyio
async def test_pvc_created_later_requeues_the_pod() -> None:
    # VolumeRestrictions and NodeVolumeLimits register PersistentVolumeClaim/Add with a hint
    # naming the pod's claim: creating it lets the pod through at once, well before the
    # 5-minute flush of the unschedulable pool.
    cluster = InMemoryCluster()
    cluster.apply(make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    cluster.apply(
        CSINode(
            metadata=ObjectMeta(name="n1", namespace=""),
            drivers=(CSINodeDriver(name="csi.example.com", allocatable_count=4),),
        )
    )
    async with Scheduler.open(cluster=cluster):
        await cluster.add_pod(make_pod("web").pvc("data").obj())
        await anyio.sleep(30)
        web = cluster.get_pod("default/web")
        assert web is not None and web.spec.node_name is None
        start = anyio.current_time()
        cluster.apply(
            PersistentVolumeClaim(
                metadata=ObjectMeta(
                    name="data", annotations={"pv.kubernetes.io/bind-completed": "yes"}
                ),
                volume_name="pv-data",
            )
        )
        cluster.apply(
            PersistentVolume(metadata=ObjectMeta(name="pv-data", namespace=""), phase="Bound")
        )
        bound = await cluster.wait_bound("default/web", timeout=60)
        assert bound.spec.node_name == "n1"
        assert anyio.current_time() - start < 15  # the backoff, not the flush


def test_scenario_deletes_cluster_scoped_storage_objects_by_name(tmp_path: Path) -> None:
    # A PV deleted while a pod waits for it: the pod stays pending; then a new PV binds it.
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    result = check_scenario(path)
    assert result.passed, result.detail


SCENARIO = """
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {name: delete-pv}
objects:
  - {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}},
     status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
  - {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: local},
     provisioner: kubernetes.io/no-provisioner, volumeBindingMode: WaitForFirstConsumer}
  - {apiVersion: v1, kind: PersistentVolume, metadata: {name: pv-small},
     spec: {capacity: {storage: 1Mi}, accessModes: [ReadWriteOnce], storageClassName: local}}
  - {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data},
     spec: {accessModes: [ReadWriteOnce], storageClassName: local,
            resources: {requests: {storage: 1Gi}}}}
  - {apiVersion: v1, kind: Pod, metadata: {name: web},
     spec: {containers: [{name: c}],
            volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}}
steps:
  - advance: 5s
  - expect: {placements: {default/web: null}}
    delete: [{kind: PersistentVolume, name: pv-small}]
  - create:
      - {apiVersion: v1, kind: PersistentVolume, metadata: {name: pv-big},
         spec: {capacity: {storage: 2Gi}, accessModes: [ReadWriteOnce], storageClassName: local}}
  - advance: 5s
expect:
  placements: {default/web: n1}
"""
