"""Storage objects for the volume plugin tests, shaped like upstream's test helpers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ksched.api import (
    ANN_BIND_COMPLETED,
    ClaimRef,
    CSINode,
    CSINodeDriver,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

GI = 2**30


def pv(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    capacity: int = 0,
    storage_class: str = "",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    claim: str | None = None,
    claim_uid: str = "",
    hostnames: tuple[str, ...] = (),
    affinity: NodeSelector | None = None,
    phase: str = "Available",
    **sources: Any,
) -> PersistentVolume:
    if hostnames:
        req = NodeSelectorRequirement(key="kubernetes.io/hostname", operator="In", values=hostnames)
        affinity = NodeSelector(terms=(NodeSelectorTerm(match_expressions=(req,)),))
    return PersistentVolume(
        metadata=ObjectMeta(name=name, namespace="", labels=dict(labels or {})),
        capacity=capacity,
        access_modes=modes,
        storage_class_name=storage_class,
        node_affinity=affinity,
        claim_ref=ClaimRef(name=claim, namespace="default", uid=claim_uid) if claim else None,
        phase=phase,
        **sources,
    )


def pvc(
    name: str,
    *,
    volume: str = "",
    storage_class: str | None = None,
    request: int | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    bound: bool = False,
    namespace: str = "default",
    uid: str = "",
    annotations: Mapping[str, str] | None = None,
    phase: str = "Pending",
) -> PersistentVolumeClaim:
    ann = dict(annotations or {})
    if bound:
        ann[ANN_BIND_COMPLETED] = "yes"
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid, annotations=ann),
        access_modes=modes,
        storage_class_name=storage_class,
        volume_name=volume,
        request=request,
        phase="Bound" if bound else phase,
    )


def storage_class(
    name: str, mode: str | None = "Immediate", provisioner: str = "", **kw: Any
) -> StorageClass:
    return StorageClass(
        metadata=ObjectMeta(name=name, namespace=""),
        provisioner=provisioner,
        volume_binding_mode=mode,
        **kw,
    )


def csi_node(name: str, limits: Mapping[str, int | None], migrated: str = "") -> CSINode:
    ann = {"storage.alpha.kubernetes.io/migrated-plugins": migrated} if migrated else {}
    drivers = tuple(CSINodeDriver(name=d, allocatable_count=c) for d, c in limits.items())
    return CSINode(metadata=ObjectMeta(name=name, namespace="", annotations=ann), drivers=drivers)
