"""Storage objects: PersistentVolume, PersistentVolumeClaim, StorageClass, CSI objects.

# k8s.io/api/core/v1 (PersistentVolume, PersistentVolumeClaim), k8s.io/api/storage/v1
# (StorageClass, CSINode, CSIDriver, CSIStorageCapacity); the helpers below are
# component-helpers/storage/{volume,ephemeral} and pkg/volume/util GetCSIAttachLimitKey.
Storage sizes are bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import attrs

from ._model import ObjectMeta, Pod
from ._selectors import LabelSelector, NodeSelector
from ._volume import (
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CinderVolumeSource,
    CSIVolumeSource,
    GCEPersistentDiskVolumeSource,
    Volume,
)

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_MIGRATED_PLUGINS",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_CLASS",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSIStorageCapacity",
    "ClaimRef",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "TopologySelectorTerm",
    "claim_class",
    "csi_attach_limit_key",
    "ephemeral_claim_name",
    "ephemeral_claim_owner_error",
    "pod_claim_names",
    "stateful_set_claim_name",
    "volume_class",
]

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
"""The beta annotation that still wins over ``storageClassName``."""
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
_RESOURCE_NAME_LIMIT = 63


@attrs.frozen(kw_only=True)
class ClaimRef:
    """The claim a PV is bound (or pre-bound) to."""

    name: str
    namespace: str = "default"
    uid: str = ""


@attrs.frozen(kw_only=True)
class PersistentVolume:
    """core/v1 PersistentVolume (cluster-scoped)."""

    metadata: ObjectMeta
    capacity: int = 0
    """``spec.capacity.storage`` in bytes."""
    access_modes: tuple[str, ...] = ()
    volume_mode: str = "Filesystem"
    storage_class_name: str = ""
    node_affinity: NodeSelector | None = None
    """``spec.nodeAffinity.required``."""
    claim_ref: ClaimRef | None = None
    phase: str = "Available"
    csi: CSIVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    cinder: CinderVolumeSource | None = None

    @property
    def name(self) -> str:
        return self.metadata.name


@attrs.frozen(kw_only=True)
class PersistentVolumeClaim:
    """core/v1 PersistentVolumeClaim. ``storage_class_name`` None: not set."""

    metadata: ObjectMeta
    access_modes: tuple[str, ...] = ()
    storage_class_name: str | None = None
    volume_name: str = ""
    request: int | None = None
    """``spec.resources.requests.storage`` in bytes (None: not requested)."""
    selector: LabelSelector | None = None
    volume_mode: str = "Filesystem"
    phase: str = "Pending"

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def key(self) -> str:
        return self.metadata.key


@attrs.frozen(kw_only=True)
class TopologySelectorTerm:
    """One term of ``allowedTopologies``: every (key, values) must match (ANDed)."""

    match_label_expressions: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(key) in values for key, values in self.match_label_expressions)


@attrs.frozen(kw_only=True)
class StorageClass:
    """storage.k8s.io/v1 StorageClass."""

    metadata: ObjectMeta
    provisioner: str = ""
    volume_binding_mode: str | None = "Immediate"
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()

    @property
    def name(self) -> str:
        return self.metadata.name

    def allows(self, labels: Mapping[str, str]) -> bool:
        """upstream MatchTopologySelectorTerms: no terms match every node; else any term."""
        return not self.allowed_topologies or any(
            t.matches(labels) for t in self.allowed_topologies
        )


@attrs.frozen(kw_only=True)
class CSINodeDriver:
    """A CSI driver on a node; ``allocatable_count`` is its attach limit (None: none)."""

    name: str
    node_id: str = ""
    allocatable_count: int | None = None
    topology_keys: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class CSINode:
    """storage.k8s.io/v1 CSINode: named as its node; the drivers installed there."""

    metadata: ObjectMeta
    drivers: tuple[CSINodeDriver, ...] = ()

    @property
    def name(self) -> str:
        return self.metadata.name

    def migrated_plugins(self) -> frozenset[str]:
        raw = self.metadata.annotations.get(ANN_MIGRATED_PLUGINS, "")
        return frozenset(raw.split(",")) if raw else frozenset()


@attrs.frozen(kw_only=True)
class CSIDriver:
    """storage.k8s.io/v1 CSIDriver: ``storage_capacity`` opts into capacity checks."""

    metadata: ObjectMeta
    attach_required: bool = True
    storage_capacity: bool = False

    @property
    def name(self) -> str:
        return self.metadata.name


@attrs.frozen(kw_only=True)
class CSIStorageCapacity:
    """storage.k8s.io/v1 CSIStorageCapacity (namespaced): free space seen from a topology."""

    metadata: ObjectMeta
    storage_class_name: str
    node_topology: LabelSelector | None = None
    capacity: int | None = None
    maximum_volume_size: int | None = None

    def limit(self) -> int | None:
        """Upstream volumeLimit: the maximum volume size when set, else the capacity."""
        return self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity


def claim_class(pvc: PersistentVolumeClaim) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation, then ``storageClassName``."""
    ann = pvc.metadata.annotations.get(ANN_STORAGE_CLASS)
    if ann is not None:
        return ann
    return pvc.storage_class_name or ""


def volume_class(pv: PersistentVolume) -> str:
    """GetPersistentVolumeClass: the beta annotation, then ``storageClassName``."""
    ann = pv.metadata.annotations.get(ANN_STORAGE_CLASS)
    return ann if ann is not None else pv.storage_class_name


def ephemeral_claim_name(pod: Pod, volume: Volume) -> str:
    """The PVC of a generic ephemeral volume: ``<pod name>-<volume name>``."""
    return f"{pod.name}-{volume.name}"


def ephemeral_claim_owner_error(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """VolumeIsForPod: the error when ``pvc`` is not controlled by ``pod`` (None: it is)."""
    for owner in pvc.metadata.owner_references:
        if owner.controller and owner.uid == pod.uid:
            return None
    return f"PVC {pvc.key} was not created for pod {pod.key} (pod is not owner)"


def pod_claim_names(pod: Pod) -> list[tuple[str, bool]]:
    """(claim name, is ephemeral) for each PVC-backed volume of ``pod``."""
    out: list[tuple[str, bool]] = []
    for vol in pod.spec.volumes:
        if vol.persistent_volume_claim is not None:
            out.append((vol.persistent_volume_claim.claim_name, False))
        elif vol.ephemeral is not None:
            out.append((ephemeral_claim_name(pod, vol), True))
    return out


def stateful_set_claim_name(template: str, stateful_set: str, ordinal: int) -> str:
    """The claim a StatefulSet's ``volumeClaimTemplates`` entry makes for a replica.

    The controller that creates these claims is not part of ksched yet: scenarios give the
    claims, named this way, next to the pods.
    """
    return f"{template}-{stateful_set}-{ordinal}"


def csi_attach_limit_key(driver: str) -> str:
    """GetCSIAttachLimitKey: the node resource holding ``driver``'s attach limit."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LIMIT:
        digest = hashlib.sha1(driver.encode(), usedforsecurity=False).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver
