"""Reading storage manifests and pods' ``spec.volumes`` into the object model.

Errors name the object and the field, as every reader in ``_manifest`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _fields as _m
from ._fields import _Fields
from ._model import ObjectMeta
from ._quantity import InvalidQuantityError, quantity_value
from ._storage import (
    ClaimRef,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
)
from ._volume import (
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CinderVolumeSource,
    CSIVolumeSource,
    EphemeralVolumeSource,
    GCEPersistentDiskVolumeSource,
    ISCSIVolumeSource,
    PersistentVolumeClaimVolumeSource,
    RBDVolumeSource,
    Volume,
)

__all__ = ["STORAGE_NAMESPACED", "STORAGE_READERS", "read_volumes"]

ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
VOLUME_MODES = ("Filesystem", "Block")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
PV_PHASES = ("Pending", "Available", "Bound", "Released", "Failed")
PVC_PHASES = ("Pending", "Bound", "Lost")


def _meta(f: _Fields, *, namespaced: bool) -> ObjectMeta:
    meta: ObjectMeta = _m._metadata(f.sub("metadata"), namespaced=namespaced)
    return meta


def _storage(f: _Fields, field: str) -> int | None:
    res = f.resources(field)
    return res.get("storage")


def _quantity(f: _Fields, field: str) -> int | None:
    raw = f.data.get(field)
    if raw is None:
        return None
    try:
        return quantity_value("storage", raw)
    except InvalidQuantityError:
        raise f.fail(field, f"invalid quantity {raw!r}") from None


def _access_modes(f: _Fields) -> tuple[str, ...]:
    modes = f.strings("accessModes")
    for i, mode in enumerate(modes):
        if mode not in ACCESS_MODES:
            raise f.fail(
                f"accessModes[{i}]", f"unsupported value {mode!r} (expected one of {ACCESS_MODES})"
            )
    return modes


# ---- volume sources (shared by pods and PVs) -------------------------------------------


def _gce(f: _Fields) -> GCEPersistentDiskVolumeSource:
    return GCEPersistentDiskVolumeSource(pd_name=f.text("pdName"), read_only=f.flag("readOnly"))


def _aws(f: _Fields) -> AWSElasticBlockStoreVolumeSource:
    return AWSElasticBlockStoreVolumeSource(
        volume_id=f.text("volumeID"), read_only=f.flag("readOnly")
    )


def _azure(f: _Fields) -> AzureDiskVolumeSource:
    return AzureDiskVolumeSource(
        disk_name=f.text("diskName"), disk_uri=f.text("diskURI"), read_only=f.flag("readOnly")
    )


def _cinder(f: _Fields) -> CinderVolumeSource:
    return CinderVolumeSource(volume_id=f.text("volumeID"), read_only=f.flag("readOnly"))


def _csi(f: _Fields) -> CSIVolumeSource:
    return CSIVolumeSource(
        driver=f.text("driver"), volume_handle=f.text("volumeHandle"), read_only=f.flag("readOnly")
    )


def _opt(f: _Fields, field: str, reader: Callable[[_Fields], Any]) -> Any:
    return reader(f.sub(field)) if f.data.get(field) is not None else None


def _volume(f: _Fields) -> Volume:
    name = f.text("name")
    if not name:
        raise f.fail("name", "required")
    sources = [k for k in f.data if k != "name"]
    if len(sources) > 1:
        raise f.fail(sources[1], f"a volume has one source, got {sources}")
    kind = sources[0] if sources else "emptyDir"
    pvc = None
    if kind == "persistentVolumeClaim":
        src = f.sub(kind)
        claim = src.text("claimName")
        if not claim:
            raise src.fail("claimName", "required")
        pvc = PersistentVolumeClaimVolumeSource(claim_name=claim, read_only=src.flag("readOnly"))
    ephemeral = None
    if kind == "ephemeral":
        spec = f.sub(kind).sub("volumeClaimTemplate").sub("spec")
        ephemeral = EphemeralVolumeSource(storage_class_name=spec.opt_str("storageClassName"))
    iscsi = None
    if kind == "iscsi":
        src = f.sub(kind)
        iscsi = ISCSIVolumeSource(
            target_portal=src.text("targetPortal"),
            iqn=src.text("iqn"),
            lun=src.integer("lun", 0) or 0,
            read_only=src.flag("readOnly"),
        )
    rbd = None
    if kind == "rbd":
        src = f.sub(kind)
        rbd = RBDVolumeSource(
            monitors=src.strings("monitors"),
            image=src.text("image"),
            pool=src.text("pool", "rbd") or "rbd",
            read_only=src.flag("readOnly"),
        )
    return Volume(
        name=name,
        kind=kind,
        persistent_volume_claim=pvc,
        ephemeral=ephemeral,
        gce_persistent_disk=_opt(f, "gcePersistentDisk", _gce),
        aws_elastic_block_store=_opt(f, "awsElasticBlockStore", _aws),
        azure_disk=_opt(f, "azureDisk", _azure),
        cinder=_opt(f, "cinder", _cinder),
        iscsi=iscsi,
        rbd=rbd,
        csi=_opt(f, "csi", _csi),
    )


def read_volumes(spec: _Fields) -> tuple[Volume, ...]:
    """A pod's ``spec.volumes``."""
    return tuple(_volume(v) for v in spec.items("volumes"))


# ---- kinds ---------------------------------------------------------------------------


def _claim_ref(f: _Fields) -> ClaimRef:
    return ClaimRef(
        name=f.text("name"), namespace=f.text("namespace") or "default", uid=f.text("uid")
    )


def _pv(f: _Fields) -> PersistentVolume:
    spec, status = f.sub("spec"), f.sub("status")
    affinity = None
    if spec.data.get("nodeAffinity") is not None:
        na = spec.sub("nodeAffinity")
        if na.data.get("required") is not None:
            affinity = _m.read_node_selector(na.sub("required"))
    return PersistentVolume(
        metadata=_meta(f, namespaced=False),
        capacity=_storage(spec, "capacity") or 0,
        access_modes=_access_modes(spec),
        volume_mode=spec.choice("volumeMode", VOLUME_MODES, "Filesystem") or "Filesystem",
        storage_class_name=spec.text("storageClassName"),
        node_affinity=affinity,
        claim_ref=_opt(spec, "claimRef", _claim_ref),
        phase=status.choice("phase", PV_PHASES, "Available") or "Available",
        csi=_opt(spec, "csi", _csi),
        aws_elastic_block_store=_opt(spec, "awsElasticBlockStore", _aws),
        gce_persistent_disk=_opt(spec, "gcePersistentDisk", _gce),
        azure_disk=_opt(spec, "azureDisk", _azure),
        cinder=_opt(spec, "cinder", _cinder),
    )


def _pvc(f: _Fields) -> PersistentVolumeClaim:
    spec, status = f.sub("spec"), f.sub("status")
    return PersistentVolumeClaim(
        metadata=_meta(f, namespaced=True),
        access_modes=_access_modes(spec),
        storage_class_name=spec.opt_str("storageClassName"),
        volume_name=spec.text("volumeName"),
        request=_storage(spec.sub("resources"), "requests"),
        selector=_m._opt_label_selector(spec, "selector"),
        volume_mode=spec.choice("volumeMode", VOLUME_MODES, "Filesystem") or "Filesystem",
        phase=status.choice("phase", PVC_PHASES, "Pending") or "Pending",
    )


def _topology_term(f: _Fields) -> TopologySelectorTerm:
    return TopologySelectorTerm(
        match_label_expressions=tuple(
            (e.text("key"), e.strings("values")) for e in f.items("matchLabelExpressions")
        )
    )


def _storage_class(f: _Fields) -> StorageClass:
    return StorageClass(
        metadata=_meta(f, namespaced=False),
        provisioner=f.text("provisioner"),
        volume_binding_mode=f.choice("volumeBindingMode", BINDING_MODES, "Immediate"),
        allowed_topologies=tuple(_topology_term(t) for t in f.items("allowedTopologies")),
    )


def _csi_node(f: _Fields) -> CSINode:
    drivers = []
    for d in f.sub("spec").items("drivers"):
        count = d.sub("allocatable").integer("count") if d.data.get("allocatable") else None
        if count is not None and count < 0:
            raise d.fail("allocatable.count", f"must not be negative, got {count}")
        drivers.append(
            CSINodeDriver(
                name=d.text("name"),
                node_id=d.text("nodeID"),
                allocatable_count=count,
                topology_keys=d.strings("topologyKeys"),
            )
        )
    return CSINode(metadata=_meta(f, namespaced=False), drivers=tuple(drivers))


def _csi_driver(f: _Fields) -> CSIDriver:
    spec = f.sub("spec")
    return CSIDriver(
        metadata=_meta(f, namespaced=False),
        attach_required=spec.flag("attachRequired", True),
        storage_capacity=spec.flag("storageCapacity"),
    )


def _capacity(f: _Fields) -> CSIStorageCapacity:
    return CSIStorageCapacity(
        metadata=_meta(f, namespaced=True),
        storage_class_name=f.text("storageClassName"),
        node_topology=_m._opt_label_selector(f, "nodeTopology"),
        capacity=_quantity(f, "capacity"),
        maximum_volume_size=_quantity(f, "maximumVolumeSize"),
    )


STORAGE_READERS: dict[str, Callable[[_Fields], Any]] = {
    "PersistentVolume": _pv,
    "PersistentVolumeClaim": _pvc,
    "StorageClass": _storage_class,
    "CSINode": _csi_node,
    "CSIDriver": _csi_driver,
    "CSIStorageCapacity": _capacity,
}
STORAGE_NAMESPACED = frozenset({"PersistentVolumeClaim", "CSIStorageCapacity"})
