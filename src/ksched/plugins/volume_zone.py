"""VolumeZone: a bound PV's zone and region labels must match the node's.

# pkg/scheduler/framework/plugins/volumezone/volume_zone.go; LabelZonesToSet from
# k8s.io/cloud-provider/volume/helpers (a label may list zones joined by "__").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from ksched import Pod
from ksched.api import claim_class
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
    QueueingHint,
    Status,
)
from ksched.framework.batch import VOLUMES, SignFragment, volumes_signer

__all__ = ["ERR_REASON_CONFLICT", "TOPOLOGY_LABELS", "VolumeZone"]


NAME: Final = "VolumeZone"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS: Final = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA = {BETA_REGION: REGION, BETA_ZONE: ZONE}


@attrs.frozen
class _PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


@attrs.frozen
class _State:
    topologies: tuple[_PVTopology, ...]

    def clone(self) -> _State:
        return self


def _zones(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: zones joined by ``__``; None when one of them is empty."""
    zones = [z.strip() for z in value.split("__")]
    if not value or any(not z for z in zones):
        return None
    return frozenset(zones)


def _unresolvable(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


class VolumeZone:
    """Keeps pods whose bound PVs carry zone/region labels on nodes in those zones."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._cluster: Any = handle.cluster

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> VolumeZone:
        return cls(handle)

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        return ((VOLUMES, volumes_signer(pod)),)

    def _pv_topologies(self, pod: Pod) -> tuple[_PVTopology, ...] | Status:
        """getPVbyPod: the zone labels of the PVs bound to the pod's claims."""
        out: list[_PVTopology] = []
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is None:
                continue
            claim = v.persistent_volume_claim.claim_name
            if not claim:
                return _unresolvable("PersistentVolumeClaim had no name")
            pvc = self._cluster.get("PersistentVolumeClaim", f"{pod.namespace}/{claim}")
            if pvc is None:
                return _unresolvable(f'persistentvolumeclaim "{claim}" not found')
            if not pvc.volume_name:
                sc_name = claim_class(pvc)
                if not sc_name:
                    return _unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                sc = self._cluster.get("StorageClass", sc_name)
                if sc is None:
                    return _unresolvable(f'storageclass.storage.k8s.io "{sc_name}" not found')
                if sc.volume_binding_mode is None:
                    return _unresolvable(f'VolumeBindingMode not set for StorageClass "{sc_name}"')
                if sc.volume_binding_mode == "WaitForFirstConsumer":
                    continue  # unbound: VolumeBinding places it
                return _unresolvable("PersistentVolume had no name")
            pv = self._cluster.get("PersistentVolume", pvc.volume_name)
            if pv is None:
                return _unresolvable(f'persistentvolume "{pvc.volume_name}" not found')
            for key in TOPOLOGY_LABELS:
                value = pv.metadata.labels.get(key)
                if value is None:
                    continue
                zones = _zones(value)
                if zones is not None:  # an unparsable label is ignored
                    out.append(_PVTopology(pv.name, key, zones))
        return tuple(out)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if not pod.spec.volumes:
            return SKIP
        topologies = self._pv_topologies(pod)
        if isinstance(topologies, Status):
            return topologies
        if not topologies:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.spec.volumes:
            return None
        data: _State | None = state.get(PRE_FILTER_STATE_KEY)
        if data is None:
            topologies = self._pv_topologies(pod)  # no PreFilter ran: compute here
            if isinstance(topologies, Status):
                return topologies
        else:
            topologies = data.topologies
        labels = node_info.node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node without zone labels: a single-zone cluster
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(_GA.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return _unresolvable(ERR_REASON_CONFLICT)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD),
                self.is_schedulable_after_storage_class_added,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
                self.is_schedulable_after_pvc_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update),
                self.is_schedulable_after_pv_change,
            ),
        ]

    def is_schedulable_after_pvc_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when the claim is one of the pod's."""
        if new is None or new.metadata.namespace != pod.namespace:
            return QueueingHint.SKIP
        for v in pod.spec.volumes:
            if v.persistent_volume_claim and v.persistent_volume_claim.claim_name == new.name:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_storage_class_added(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """Only a WaitForFirstConsumer class lets an unbound claim through."""
        if new is not None and new.volume_binding_mode == "WaitForFirstConsumer":
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_pv_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue for a new PV, or one whose zone or region labels changed."""
        if old is None or new is None:
            return QueueingHint.QUEUE
        for key in TOPOLOGY_LABELS:
            if old.metadata.labels.get(key) != new.metadata.labels.get(key):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP
