"""A pod's volumes: the sources the volume plugins read.

# k8s.io/api/core/v1 Volume, VolumeSource. Only the sources a scheduler plugin looks at
# have fields (claims, generic ephemeral volumes, and the in-tree disks that
# VolumeRestrictions and NodeVolumeLimits count); any other source keeps its kind name.
"""

from __future__ import annotations

import attrs

__all__ = [
    "AWSElasticBlockStoreVolumeSource",
    "AzureDiskVolumeSource",
    "CSIVolumeSource",
    "CinderVolumeSource",
    "EphemeralVolumeSource",
    "GCEPersistentDiskVolumeSource",
    "ISCSIVolumeSource",
    "PersistentVolumeClaimVolumeSource",
    "RBDVolumeSource",
    "Volume",
]


@attrs.frozen(kw_only=True)
class PersistentVolumeClaimVolumeSource:
    """A volume backed by the claim ``claim_name`` in the pod's namespace."""

    claim_name: str
    read_only: bool = False


@attrs.frozen(kw_only=True)
class EphemeralVolumeSource:
    """A generic ephemeral volume: its PVC is named ``<pod>-<volume>`` and owned by the pod."""

    storage_class_name: str | None = None


@attrs.frozen(kw_only=True)
class GCEPersistentDiskVolumeSource:
    """An in-tree GCE persistent disk (counted by VolumeRestrictions, NodeVolumeLimits)."""

    pd_name: str
    read_only: bool = False


@attrs.frozen(kw_only=True)
class AWSElasticBlockStoreVolumeSource:
    """An in-tree AWS EBS volume (counted by VolumeRestrictions, NodeVolumeLimits)."""

    volume_id: str
    read_only: bool = False


@attrs.frozen(kw_only=True)
class AzureDiskVolumeSource:
    """An in-tree Azure disk (counted by NodeVolumeLimits when migrated to CSI)."""

    disk_name: str
    disk_uri: str
    read_only: bool = False


@attrs.frozen(kw_only=True)
class CinderVolumeSource:
    """An in-tree Cinder volume (counted by NodeVolumeLimits when migrated to CSI)."""

    volume_id: str
    read_only: bool = False


@attrs.frozen(kw_only=True)
class ISCSIVolumeSource:
    """An iSCSI disk: one read-write mount per IQN (VolumeRestrictions)."""

    target_portal: str
    iqn: str
    lun: int = 0
    read_only: bool = False


@attrs.frozen(kw_only=True)
class RBDVolumeSource:
    """A Ceph RBD image: one read-write mount per monitors/pool/image (VolumeRestrictions)."""

    monitors: tuple[str, ...]
    image: str
    pool: str = "rbd"
    read_only: bool = False


@attrs.frozen(kw_only=True)
class CSIVolumeSource:
    """A CSI source: inline in a pod (``driver`` only) or a PV's (with its handle)."""

    driver: str
    volume_handle: str = ""
    read_only: bool = False


@attrs.frozen(kw_only=True)
class Volume:
    """One entry of ``spec.volumes``; exactly one source is set (``kind`` names it)."""

    name: str
    kind: str = "emptyDir"
    """The source's field name: ``persistentVolumeClaim``, ``ephemeral``, ``secret``..."""
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    csi: CSIVolumeSource | None = None
