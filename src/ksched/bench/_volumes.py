"""The storage parts of scheduler_perf ops: nodeAllocatableStrategy and pods with PVs.

# test/utils/runners.go NodeAllocatableStrategy (PrepareStrategy, PrepareDependentObjects),
# CreatePodWithPersistentVolume (bindVolume true); scheduler_perf.go getCustomVolumeFactory.
Each pod of a createPods op with PV and PVC templates gets claim ``pvc-<i>`` bound to volume
``<namespace>-vol-<i>``, and one volume ``vol`` using the claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..api import (
    ANN_MIGRATED_PLUGINS,
    ClaimRef,
    CSINode,
    CSINodeDriver,
    Node,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimVolumeSource,
    Pod,
    Volume,
    quantity_value,
)
from ._errors import WorkloadError
from ._template import ObjectTemplate

__all__ = ["NodeAllocatable", "PodVolumes", "pod_volumes", "read_node_allocatable"]


@attrs.frozen
class NodeAllocatable:
    """nodeAllocatableStrategy: node allocatable entries, and a CSINode per node."""

    allocatable: Mapping[str, int] = attrs.field(factory=dict)
    csi_allocatable: Mapping[str, int | None] = attrs.field(factory=dict)
    migrated_plugins: tuple[str, ...] = ()

    def prepare(self, node: Node) -> Node:
        status = attrs.evolve(
            node.status, allocatable={**node.status.allocatable, **self.allocatable}
        )
        return attrs.evolve(node, status=status)

    def csi_node(self, node: Node) -> CSINode:
        ann = {ANN_MIGRATED_PLUGINS: ",".join(self.migrated_plugins)}
        drivers = tuple(
            CSINodeDriver(name=d, node_id=node.name, allocatable_count=c)
            for d, c in self.csi_allocatable.items()
        )
        return CSINode(
            metadata=ObjectMeta(name=node.name, namespace="", annotations=ann), drivers=drivers
        )


def read_node_allocatable(raw: Any, where: str) -> NodeAllocatable | None:
    """The op's ``nodeAllocatableStrategy`` (None when absent)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise WorkloadError(f"{where}: nodeAllocatableStrategy: expected a mapping")
    allocatable: dict[str, int] = {}
    for name, value in (raw.get("nodeAllocatable") or {}).items():
        try:
            allocatable[str(name)] = quantity_value(str(name), value)
        except ValueError:
            raise WorkloadError(
                f"{where}: nodeAllocatableStrategy.nodeAllocatable.{name}: invalid quantity "
                f"{value!r}"
            ) from None
    csi: dict[str, int | None] = {}
    for driver, spec in (raw.get("csiNodeAllocatable") or {}).items():
        count = spec.get("count") if isinstance(spec, Mapping) else None
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            raise WorkloadError(
                f"{where}: nodeAllocatableStrategy.csiNodeAllocatable.{driver}.count: "
                f"expected an integer, got {count!r}"
            )
        csi[str(driver)] = count
    migrated = tuple(str(p) for p in raw.get("migratedPlugins") or ())
    return NodeAllocatable(allocatable, csi, migrated)


class PodVolumes:
    """The PV and PVC templates of a createPods op; each is read once."""

    def __init__(self, pv: ObjectTemplate, pvc: ObjectTemplate) -> None:
        self.pv_template, self.pvc_template = pv, pvc
        self._bases: tuple[PersistentVolumeClaim, PersistentVolume] | None = None

    def _base(self) -> tuple[PersistentVolumeClaim, PersistentVolume]:
        if self._bases is None:
            pvc = self.pvc_template.build({}, name="base", namespace="base")
            pv = self.pv_template.build({}, name="base", namespace=None)
            if not isinstance(pvc, PersistentVolumeClaim) or not isinstance(pv, PersistentVolume):
                raise WorkloadError(
                    f"{self.pvc_template.path}, {self.pv_template.path}: expected a "
                    "PersistentVolumeClaim and a PersistentVolume"
                )
            self._bases = pvc, pv
        return self._bases

    def objects(self, pod: Pod, index: int) -> tuple[PersistentVolumeClaim, PersistentVolume, Pod]:
        """Claim, volume and pod for the op's ``index``-th pod, bound to each other."""
        base_pvc, base_pv = self._base()
        ns = pod.namespace
        claim_name, volume_id = f"pvc-{index}", f"vol-{index}"
        pv_name = f"{ns}-{volume_id}"
        pvc = attrs.evolve(
            base_pvc,
            metadata=attrs.evolve(base_pvc.metadata, name=claim_name, namespace=ns),
            volume_name=pv_name,
            phase="Bound",
        )
        csi = base_pv.csi
        ebs = base_pv.aws_elastic_block_store
        if csi is not None:
            csi = attrs.evolve(csi, volume_handle=volume_id)
        elif ebs is not None:
            ebs = attrs.evolve(ebs, volume_id=volume_id)
        pv = attrs.evolve(
            base_pv,
            metadata=attrs.evolve(base_pv.metadata, name=pv_name),
            claim_ref=ClaimRef(name=claim_name, namespace=ns),
            phase="Bound",
            csi=csi,
            aws_elastic_block_store=ebs,
        )
        source = PersistentVolumeClaimVolumeSource(claim_name=claim_name)
        volume = Volume(name="vol", kind="persistentVolumeClaim", persistent_volume_claim=source)
        return pvc, pv, attrs.evolve(pod, spec=attrs.evolve(pod.spec, volumes=(volume,)))


def pod_volumes(
    pv: ObjectTemplate | None, pvc: ObjectTemplate | None, where: str
) -> PodVolumes | None:
    """The op's PV and PVC templates: both or neither."""
    if pv is None and pvc is None:
        return None
    if pv is None or pvc is None:
        raise WorkloadError(
            f"{where}: persistentVolumeTemplatePath and persistentVolumeClaimTemplatePath "
            "go together"
        )
    return PodVolumes(pv, pvc)
