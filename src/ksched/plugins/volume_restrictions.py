"""VolumeRestrictions: in-tree disks one node cannot share, and ReadWriteOncePod claims.

# pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from ksched import Pod
from ksched.api import Volume
from ksched.framework import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    PodInfo,
    QueueingHint,
    Status,
)
from ksched.framework.batch import VOLUMES, SignFragment, volumes_signer

__all__ = ["ERR_REASON_DISK_CONFLICT", "ERR_REASON_RWOP_CONFLICT", "VolumeRestrictions"]


NAME: Final = "VolumeRestrictions"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT: Final = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)


def _conflicts(volume: Volume, other: Pod) -> bool:
    """isVolumeConflict: the same disk, not mounted read-only by both (EBS: any mount)."""
    for existing in other.spec.volumes:
        gce, egce = volume.gce_persistent_disk, existing.gce_persistent_disk
        if gce and egce and gce.pd_name == egce.pd_name and not (gce.read_only and egce.read_only):
            return True
        aws, eaws = volume.aws_elastic_block_store, existing.aws_elastic_block_store
        if aws and eaws and aws.volume_id == eaws.volume_id:
            return True
        iscsi, eiscsi = volume.iscsi, existing.iscsi
        if (
            iscsi
            and eiscsi
            and iscsi.iqn == eiscsi.iqn
            and not (iscsi.read_only and eiscsi.read_only)
        ):
            return True
        rbd, erbd = volume.rbd, existing.rbd
        if (
            rbd
            and erbd
            and set(rbd.monitors) & set(erbd.monitors)
            and (rbd.pool, rbd.image) == (erbd.pool, erbd.image)
            and not (rbd.read_only and erbd.read_only)
        ):
            return True
    return False


def _needs_check(volume: Volume) -> bool:
    return bool(
        volume.gce_persistent_disk or volume.aws_elastic_block_store or volume.rbd or volume.iscsi
    )


def satisfies_volume_conflicts(pod: Pod, pods: Sequence[Pod]) -> bool:
    """No disk of ``pod`` is used by one of ``pods`` in a conflicting way."""
    for volume in pod.spec.volumes:
        if _needs_check(volume) and any(_conflicts(volume, other) for other in pods):
            return False
    return True


@attrs.define(eq=False)
class _PreFilterState:
    """The pod's ReadWriteOncePod claim names and how many placed pods use them."""

    rwop_claims: frozenset[str]
    conflicting_refs: int = 0

    def update_with(self, pod: Pod, sign: int) -> None:
        uses = sum(
            1
            for v in pod.spec.volumes
            if v.persistent_volume_claim is not None
            and v.persistent_volume_claim.claim_name in self.rwop_claims
        )
        self.conflicting_refs += sign * uses

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.rwop_claims, self.conflicting_refs)


class VolumeRestrictions:
    """Rejects nodes where a disk of the pod is already mounted conflictingly, and every
    node while a ReadWriteOncePod claim of the pod is used by a placed pod."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._cluster: Any = handle.cluster

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> VolumeRestrictions:
        return cls(handle)

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        return ((VOLUMES, volumes_signer(pod)),)

    def _used_by_placed_pods(self, namespace: str, claims: frozenset[str]) -> int:
        """IsPVCUsedByPods, counted once per claim, over the pods of the snapshot."""
        used: set[str] = set()
        for node_info in self._handle.snapshot.list():
            for info in node_info.pods:
                p = info.pod
                if p.namespace != namespace:
                    continue
                for v in p.spec.volumes:
                    src = v.persistent_volume_claim
                    if src is not None and src.claim_name in claims:
                        used.add(src.claim_name)
        return len(used)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if not pod.spec.volumes:
            return SKIP
        needs_check = any(_needs_check(v) for v in pod.spec.volumes)
        rwop: set[str] = set()
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is None:
                continue
            name = v.persistent_volume_claim.claim_name
            pvc = self._cluster.get("PersistentVolumeClaim", f"{pod.namespace}/{name}")
            if pvc is None:
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    (f'persistentvolumeclaim "{name}" not found',),
                )
            if "ReadWriteOncePod" in pvc.access_modes:
                rwop.add(pvc.name)
        claims = frozenset(rwop)
        refs = self._used_by_placed_pods(pod.namespace, claims) if claims else 0
        if not needs_check and refs == 0:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(claims, refs))
        return None

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def _state(self, state: CycleState) -> _PreFilterState | Status:
        data: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if data is None:
            return Status(Code.ERROR, (f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState',))
        return data

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        data = self._state(state)
        if isinstance(data, Status):
            return data
        data.update_with(pod_to_add.pod, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        data = self._state(state)
        if isinstance(data, Status):
            return data
        data.update_with(pod_to_remove.pod, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not satisfies_volume_conflicts(pod, [i.pod for i in node_info.pods]):
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,))
        data = self._state(state)
        if isinstance(data, Status):
            return data
        if data.conflicting_refs > 0:
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_RWOP_CONFLICT,))
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                self.is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                self.is_schedulable_after_pvc_added,
            ),
        ]

    def is_schedulable_after_pvc_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if new is None or new.metadata.namespace != pod.namespace:
            return QueueingHint.SKIP
        for v in pod.spec.volumes:
            if v.persistent_volume_claim and v.persistent_volume_claim.claim_name == new.name:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(old, Pod) or old.namespace != pod.namespace:
            return QueueingHint.SKIP
        if not satisfies_volume_conflicts(pod, [old]):
            return QueueingHint.QUEUE
        claims = {
            v.persistent_volume_claim.claim_name
            for v in pod.spec.volumes
            if v.persistent_volume_claim is not None
        }
        for v in old.spec.volumes:
            if v.persistent_volume_claim and v.persistent_volume_claim.claim_name in claims:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP
