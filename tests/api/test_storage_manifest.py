"""Reading storage manifests and pods' volumes: fields, defaults, and errors that name the
object and the field."""

from __future__ import annotations

from typing import Any

import pytest

from ksched import ManifestError
from ksched.api import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    claim_class,
    load_manifests,
    read_object,
)

MANIFESTS = """
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1, labels: {topology.kubernetes.io/zone: a}}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  claimRef: {name: data, namespace: apps}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: apps, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
spec:
  accessModes: [ReadWriteOncePod]
  storageClassName: local
  volumeName: pv-1
  resources: {requests: {storage: 5Gi}}
  selector: {matchLabels: {tier: fast}}
status: {phase: Bound}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
  - matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [a, b]}]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata:
  name: n1
  annotations:
    storage.alpha.kubernetes.io/migrated-plugins: "kubernetes.io/aws-ebs,kubernetes.io/gce-pd"
spec:
  drivers:
    - name: ebs.csi.aws.com
      nodeID: i-1
      allocatable: {count: 39}
      topologyKeys: [topology.kubernetes.io/zone]
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-a, namespace: kube-system}
storageClassName: local
capacity: 100Gi
maximumVolumeSize: 20Gi
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: a}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: apps}
spec:
  containers: [{name: c}]
  volumes:
    - {name: data, persistentVolumeClaim: {claimName: data}}
    - {name: scratch, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: fast}}}}
    - {name: config, configMap: {name: settings}}
    - {name: disk, awsElasticBlockStore: {volumeID: vol-9, readOnly: true}}
"""

GI = 2**30


def test_storage_kinds_are_read() -> None:
    pv, pvc, sc, csi_node, driver, cap, pod = load_manifests(MANIFESTS)
    assert isinstance(pv, PersistentVolume)
    assert (pv.name, pv.capacity, pv.storage_class_name, pv.phase) == (
        "pv-1",
        10 * GI,
        "local",
        "Bound",
    )
    assert pv.claim_ref is not None and (pv.claim_ref.name, pv.claim_ref.namespace) == (
        "data",
        "apps",
    )
    assert pv.node_affinity is not None and pv.node_affinity.matches(
        "", {"kubernetes.io/hostname": "n1"}
    )
    assert pv.csi is not None and (pv.csi.driver, pv.csi.volume_handle) == (
        "ebs.csi.aws.com",
        "vol-1",
    )
    assert isinstance(pvc, PersistentVolumeClaim)
    assert (pvc.key, pvc.request, pvc.volume_name, pvc.access_modes) == (
        "apps/data",
        5 * GI,
        "pv-1",
        ("ReadWriteOncePod",),
    )
    assert pvc.selector is not None and pvc.selector.matches({"tier": "fast"})
    assert isinstance(sc, StorageClass) and sc.volume_binding_mode == "WaitForFirstConsumer"
    assert sc.allows({"topology.kubernetes.io/zone": "b"})
    assert not sc.allows({"topology.kubernetes.io/zone": "c"})
    assert isinstance(csi_node, CSINode)
    assert csi_node.drivers[0].allocatable_count == 39
    assert csi_node.migrated_plugins() == {"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"}
    assert isinstance(driver, CSIDriver) and driver.storage_capacity and driver.attach_required
    assert isinstance(cap, CSIStorageCapacity) and cap.metadata.namespace == "kube-system"
    assert (cap.capacity, cap.limit()) == (100 * GI, 20 * GI)
    assert isinstance(pod, Pod)
    kinds = [v.kind for v in pod.spec.volumes]
    assert kinds == ["persistentVolumeClaim", "ephemeral", "configMap", "awsElasticBlockStore"]
    aws = pod.spec.volumes[3].aws_elastic_block_store
    assert aws is not None and (aws.volume_id, aws.read_only) == ("vol-9", True)


def test_api_server_defaults() -> None:
    sc = read_object({"kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "p"})
    assert isinstance(sc, StorageClass) and sc.volume_binding_mode == "Immediate"
    pv = read_object({"kind": "PersistentVolume", "metadata": {"name": "v"}})
    assert isinstance(pv, PersistentVolume) and (pv.phase, pv.volume_mode) == (
        "Available",
        "Filesystem",
    )
    pvc = read_object({"kind": "PersistentVolumeClaim", "metadata": {"name": "c"}})
    assert isinstance(pvc, PersistentVolumeClaim)
    assert (pvc.phase, pvc.storage_class_name, pvc.request) == ("Pending", None, None)


def test_claim_class_prefers_the_beta_annotation() -> None:
    pvc = read_object(
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "c",
                "annotations": {"volume.beta.kubernetes.io/storage-class": "old"},
            },
            "spec": {"storageClassName": "new"},
        }
    )
    assert isinstance(pvc, PersistentVolumeClaim) and claim_class(pvc) == "old"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            {
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "c", "namespace": "ns"},
                "spec": {"accessModes": ["ReadWriteOnce", "Sometimes"]},
            },
            "PersistentVolumeClaim ns/c: spec.accessModes[1]: unsupported value 'Sometimes'",
            id="access mode",
        ),
        pytest.param(
            {
                "kind": "PersistentVolume",
                "metadata": {"name": "v"},
                "spec": {"capacity": {"storage": "ten"}},
            },
            "PersistentVolume v: spec.capacity.storage: invalid quantity 'ten'",
            id="capacity quantity",
        ),
        pytest.param(
            {"kind": "StorageClass", "metadata": {"name": "s"}, "volumeBindingMode": "Later"},
            "StorageClass s: volumeBindingMode: unsupported value 'Later'",
            id="binding mode",
        ),
        pytest.param(
            {
                "kind": "CSINode",
                "metadata": {"name": "n"},
                "spec": {"drivers": [{"name": "d", "allocatable": {"count": -1}}]},
            },
            "CSINode n: spec.drivers[0].allocatable.count: must not be negative",
            id="negative attach count",
        ),
        pytest.param(
            {"kind": "CSIStorageCapacity", "metadata": {"name": "c"}, "capacity": "lots"},
            "CSIStorageCapacity default/c: capacity: invalid quantity 'lots'",
            id="capacity",
        ),
        pytest.param(
            {
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {}}]},
            },
            "Pod default/p: spec.volumes[0].persistentVolumeClaim.claimName: required",
            id="claim name",
        ),
        pytest.param(
            {
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"volumes": [{"name": "v", "emptyDir": {}, "secret": {}}]},
            },
            "Pod default/p: spec.volumes[0].secret: a volume has one source",
            id="two sources",
        ),
        pytest.param(
            {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"volumes": [{"emptyDir": {}}]}},
            "Pod default/p: spec.volumes[0].name: required",
            id="volume name",
        ),
    ],
)
def test_errors_name_object_and_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(ManifestError) as info:
        read_object(data)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        (
            {"kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
             "spec": {"resoures": {"requests": {"storage": "1Gi"}}}},
            "spec.resoures",
        ),
        (
            {"kind": "PersistentVolume", "metadata": {"name": "v"},
             "spec": {"capacity": {"storage": "1Gi"}, "nodeAfinity": {}}},
            "spec.nodeAfinity",
        ),
        (
            {"kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "x",
             "volumeBindingMod": "WaitForFirstConsumer"},
            "volumeBindingMod",
        ),
        (
            {"kind": "CSINode", "metadata": {"name": "n"},
             "spec": {"drivers": [{"name": "d", "nodeID": "n", "allocatable": {"cnt": 1}}]}},
            "spec.drivers[0].allocatable.cnt",
        ),
    ],
    ids=["pvc", "pv", "storageclass", "csinode"],
)  # fmt: skip
def test_storage_kinds_have_strict_field_names(doc: dict[str, Any], path: str) -> None:
    from ksched.api._strict import unknown_fields

    assert unknown_fields(doc["kind"], doc) == [path]


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        (
            {"kind": "DeviceClass", "metadata": {"name": "gpu"},
             "spec": {"selectors": [{"cel": {"expresion": "true"}}]}},
            "spec.selectors[0].cel.expresion",
        ),
        (
            {"kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClass": "g"}}]}}},
            "spec.devices.requests[0].exactly.deviceClass",
        ),
        (
            {"kind": "ResourceSlice", "metadata": {"name": "s"},
             "spec": {"driver": "d", "pool": {"name": "p", "generations": 1}}},
            "spec.pool.generations",
        ),
    ],
    ids=["deviceclass", "resourceclaim", "resourceslice"],
)  # fmt: skip
def test_dra_kinds_have_strict_field_names(doc: dict[str, Any], path: str) -> None:
    from ksched.api._strict import unknown_fields

    assert unknown_fields(doc["kind"], doc) == [path]
