"""NodeVolumeLimits: a node's CSI attach limit per driver is not exceeded.

# pkg/scheduler/framework/plugins/nodevolumelimits/csi.go, utils.go (isCSIMigrationOn,
# volumeLimits); in-tree names from k8s.io/csi-translation-lib/plugins.
The limits come from the CSINode's ``drivers[].allocatable.count`` and the node's
``attachable-volumes-*`` allocatable; in-tree disks count under their CSI driver where
the CSINode says the plugin is migrated.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ksched import Node, Pod
from ksched.api import (
    ANN_MIGRATED_PLUGINS,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    Volume,
    claim_class,
    csi_attach_limit_key,
    ephemeral_claim_owner_error,
    pod_claim_names,
)
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

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "IN_TREE_DRIVERS", "NodeVolumeLimits"]

_NEW_VOLUMES: Final = "NodeVolumeLimits/newVolumes"
_KNOWN_MAX: Final = 65536

NAME: Final = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
ATTACHABLE_PREFIX = "attachable-volumes-"
AWS_EBS, GCE_PD = "kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"
AZURE_DISK, CINDER = "kubernetes.io/azure-disk", "kubernetes.io/cinder"
IN_TREE_DRIVERS: Final[Mapping[str, str]] = {
    AWS_EBS: "ebs.csi.aws.com",
    GCE_PD: "pd.csi.storage.gke.io",
    AZURE_DISK: "disk.csi.azure.com",
    CINDER: "cinder.csi.openstack.org",
}
"""In-tree plugin -> the CSI driver its volumes migrate to."""
_IN_TREE_PLUGINS: Final = frozenset(IN_TREE_DRIVERS)


class _LookupError(Exception):
    def __init__(self, message: str, not_found: bool) -> None:
        super().__init__(message)
        self.not_found = not_found


def _in_tree(source: Volume | PersistentVolume) -> tuple[str, str] | None:
    """(in-tree plugin, CSI volume handle) of a migratable in-tree source."""
    if source.aws_elastic_block_store is not None:
        # KubernetesVolumeIDToEBSVolumeID: aws://zone/vol-id names the volume vol-id.
        volume_id = source.aws_elastic_block_store.volume_id
        if volume_id.startswith("aws://"):
            volume_id = volume_id.removeprefix("aws://").partition("/")[2].strip("/")
        return AWS_EBS, volume_id
    if source.gce_persistent_disk is not None:
        disk = source.gce_persistent_disk.pd_name
        return GCE_PD, f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{disk}"
    if source.azure_disk is not None:
        return AZURE_DISK, source.azure_disk.disk_uri
    if source.cinder is not None:
        return CINDER, source.cinder.volume_id
    return None


def _migrated_plugins(csi_node: CSINode | None) -> frozenset[str]:
    """isCSIMigrationOn's inputs: the in-tree plugins the CSINode lists as migrated."""
    if csi_node is None:
        return _NOTHING_MIGRATED
    return _migrated_from(csi_node.metadata.annotations.get(ANN_MIGRATED_PLUGINS, ""))


@functools.lru_cache(maxsize=64)
def _migrated_from(annotation: str) -> frozenset[str]:
    if not annotation:
        return _NOTHING_MIGRATED
    return frozenset(annotation.split(",")) & _IN_TREE_PLUGINS


# One object for "none", so caches can compare the sets by identity.
_NOTHING_MIGRATED: Final[frozenset[str]] = frozenset()


# GetCSIAttachLimitKey per driver, computed once: filters ask for it per volume per node.
_limit_key = functools.lru_cache(maxsize=256)(csi_attach_limit_key)


def _counts_volume(volume: Volume) -> bool:
    return (
        volume.persistent_volume_claim is not None
        or volume.ephemeral is not None
        or _in_tree(volume) is not None
    )


class NodeVolumeLimits:
    """Rejects nodes where the pod's new CSI volumes would pass a driver's attach limit."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._cluster: Any = handle.cluster
        # Volumes not yet provisioned count under a handle no real volume has.
        self._random_prefix = secrets.token_hex(16)
        # Placed pod (by identity) -> (pod, migrated plugins, objects read, its volumes): reused
        # while every object read is still the one the cluster holds.
        self._known: dict[int, tuple[Pod, frozenset[str], list[Any], dict[str, str]]] = {}
        self._node_limits: dict[str, tuple[Node, CSINode | None, dict[str, int], int]] = {}

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeVolumeLimits:
        return cls(handle)

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        return ((VOLUMES, volumes_signer(pod)),)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if not pod.spec.volumes:
            return SKIP
        if any(_counts_volume(v) for v in pod.spec.volumes):
            return None
        return SKIP

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.spec.volumes:
            return None
        node = node_info.node
        csi_node: CSINode | None = self._cluster.get("CSINode", node.name)
        migrated = _migrated_plugins(csi_node)
        # The pod's own volumes depend on the node only through its migrated plugins: read
        # once per cycle for each such set.
        per_cycle: dict[frozenset[str], dict[str, str] | Status] | None = state.get(_NEW_VOLUMES)
        if per_cycle is None:
            per_cycle = {}
            state.write(_NEW_VOLUMES, per_cycle)
        known = per_cycle.get(migrated)
        if known is None:
            found: dict[str, str] = {}
            try:
                self._attachable(pod, migrated, True, found)
                known = found
            except _LookupError as exc:
                code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if exc.not_found else Code.ERROR
                known = Status(code, (str(exc),))
            per_cycle[migrated] = known
        if isinstance(known, Status):
            return known
        if not known:
            return None
        limits, smallest = self._limits(node, csi_node)
        if not limits:
            return None
        # Each volume of a placed pod adds at most one attached volume: when even all of
        # them and all new ones fit under the smallest limit, no limit can be exceeded.
        placed = 0
        for info in node_info.pods:
            placed += len(info.pod.spec.volumes)
        if len(known) + placed <= smallest:
            return None
        new = dict(known)
        attached: dict[str, str] = {}
        for info in node_info.pods:
            if not info.pod.spec.volumes:
                continue
            try:
                attached.update(self._placed_volumes(info.pod, migrated))
            except _LookupError as exc:
                return Status(Code.ERROR, (str(exc),))
        attached_count: dict[str, int] = {}
        for unique, key in attached.items():
            new.pop(unique, None)  # a volume already attached for another pod counts once
            attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))
        return None

    def _limits(self, node: Node, csi_node: CSINode | None) -> tuple[Mapping[str, int], int]:
        """volumeLimits: attach limits by resource key and the smallest, kept while the node
        and its CSINode stay the same objects."""
        entry = self._node_limits.get(node.name)
        if entry is not None and entry[0] is node and entry[1] is csi_node:
            return entry[2], entry[3]
        limits = {
            k: v for k, v in node.status.allocatable.items() if k.startswith(ATTACHABLE_PREFIX)
        }
        if csi_node is not None:
            for driver in csi_node.drivers:
                if driver.allocatable_count is not None:
                    limits[_limit_key(driver.name)] = driver.allocatable_count
        if len(self._node_limits) >= _KNOWN_MAX:
            self._node_limits.clear()
        smallest = min(limits.values(), default=0)
        self._node_limits[node.name] = (node, csi_node, limits, smallest)
        return limits, smallest

    def _placed_volumes(self, pod: Pod, migrated: frozenset[str]) -> dict[str, str]:
        """The attachable volumes of a pod on the node, reused while nothing it read changed."""
        entry = self._known.get(id(pod))
        if entry is not None and entry[0] is pod and entry[1] is migrated:
            get = self._cluster.get
            if all(get(kind, key) is obj for kind, key, obj in entry[2]):
                return entry[3]
        reads: list[Any] = []
        result: dict[str, str] = {}
        self._attachable(pod, migrated, False, result, reads)
        if len(self._known) >= _KNOWN_MAX:
            self._known.clear()
        self._known[id(pod)] = (pod, migrated, reads, result)
        return result

    def _get(self, kind: str, key: str, reads: list[Any] | None) -> Any:
        obj = self._cluster.get(kind, key)
        if reads is not None:
            reads.append((kind, key, obj))
        return obj

    def _attachable(
        self,
        pod: Pod,
        migrated: frozenset[str],
        new_pod: bool,
        result: dict[str, str],
        reads: list[Any] | None = None,
    ) -> None:
        """filterAttachableVolumes: ``driver/handle`` -> attach limit key, into ``result``."""
        claims = iter(pod_claim_names(pod))
        for volume in pod.spec.volumes:
            if volume.persistent_volume_claim is None and volume.ephemeral is None:
                inline = _in_tree(volume)
                if inline is not None and inline[0] in migrated:
                    driver = IN_TREE_DRIVERS[inline[0]]
                    result[f"{driver}/{inline[1]}"] = _limit_key(driver)
                continue
            name, ephemeral = next(claims)
            if not name:
                raise _LookupError("PersistentVolumeClaim had no name", False)
            pvc = self._get("PersistentVolumeClaim", f"{pod.namespace}/{name}", reads)
            if pvc is None:
                if new_pod:
                    raise _LookupError(
                        f'looking up PVC {pod.namespace}/{name}: persistentvolumeclaim "{name}" '
                        "not found",
                        True,
                    )
                continue
            if ephemeral and (err := ephemeral_claim_owner_error(pod, pvc)) is not None:
                raise _LookupError(err, False)
            driver, handle = self._driver_info(migrated, pvc, reads)
            if driver and handle:
                result[f"{driver}/{handle}"] = _limit_key(driver)

    def _driver_info(
        self, migrated: frozenset[str], pvc: PersistentVolumeClaim, reads: list[Any] | None
    ) -> tuple[str, str]:
        """getCSIDriverInfo: the claim's driver and volume handle ("" when not counted)."""
        pv: PersistentVolume | None = (
            self._get("PersistentVolume", pvc.volume_name, reads) if pvc.volume_name else None
        )
        if pv is None:
            return self._driver_info_from_class(migrated, pvc, reads)
        if pv.csi is not None:
            return pv.csi.driver, pv.csi.volume_handle
        in_tree = _in_tree(pv)
        if in_tree is None or in_tree[0] not in migrated:
            return "", ""
        return IN_TREE_DRIVERS[in_tree[0]], in_tree[1]

    def _driver_info_from_class(
        self, migrated: frozenset[str], pvc: PersistentVolumeClaim, reads: list[Any] | None
    ) -> tuple[str, str]:
        sc_name = claim_class(pvc)
        if not sc_name:
            return "", ""  # no class: an immediate claim, bound before scheduling
        sc = self._get("StorageClass", sc_name, reads)
        if sc is None:
            return "", ""
        handle = f"{self._random_prefix}-{pvc.namespace}/{pvc.name}"
        if sc.provisioner in IN_TREE_DRIVERS:
            if sc.provisioner not in migrated:
                return "", ""
            return IN_TREE_DRIVERS[sc.provisioner], handle
        return sc.provisioner, handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                self.is_schedulable_after_pod_deleted,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                self.is_schedulable_after_pvc_added,
            ),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when a placed pod with an attachable volume went away."""
        if not isinstance(old, Pod) or not old.spec.volumes or not old.spec.node_name:
            return QueueingHint.SKIP
        if any(_counts_volume(v) for v in old.spec.volumes):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_pvc_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if new is None or new.metadata.namespace != pod.namespace:
            return QueueingHint.SKIP
        if any(name == new.name for name, _ in pod_claim_names(pod)):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
