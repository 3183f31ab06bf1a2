"""The ClusterStore seam: the one contract between the engine and a cluster.

The scheduler learns about objects through change notifications (like informers) and
writes back through ``bind``, ``evict``, ``update_pod_status`` and its Event recorder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from .._errors import KschedError
from ..api import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    DaemonSet,
    Deployment,
    DeviceClass,
    Job,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    SchedulingPodGroup,
    Service,
    StatefulSet,
    StorageClass,
    Workload,
)

__all__ = [
    "KINDS",
    "ClusterListener",
    "ClusterStore",
    "EventRecorder",
    "SyncBinder",
    "VolumeUpdateError",
    "VolumeUpdater",
    "object_key",
]

ClusterListener = Callable[[str, Any, Any], None]
"""``listener(kind, old, new)``: ``old`` is None for an add, ``new`` None for a delete."""

KINDS: dict[type, str] = {
    Node: "Node",
    Pod: "Pod",
    PriorityClass: "PriorityClass",
    PodDisruptionBudget: "PodDisruptionBudget",
    PodGroup: "PodGroup",
    Namespace: "Namespace",
    Service: "Service",
    ReplicationController: "ReplicationController",
    ReplicaSet: "ReplicaSet",
    StatefulSet: "StatefulSet",
    PersistentVolume: "PersistentVolume",
    PersistentVolumeClaim: "PersistentVolumeClaim",
    StorageClass: "StorageClass",
    CSINode: "CSINode",
    CSIDriver: "CSIDriver",
    CSIStorageCapacity: "CSIStorageCapacity",
    Deployment: "Deployment",
    DaemonSet: "DaemonSet",
    Job: "Job",
    DeviceClass: "DeviceClass",
    ResourceSlice: "ResourceSlice",
    ResourceClaim: "ResourceClaim",
    ResourceClaimTemplate: "ResourceClaimTemplate",
    Workload: "Workload",
    SchedulingPodGroup: "SchedulingPodGroup",
}


def object_key(obj: Any) -> str:
    """``namespace/name`` for namespaced objects, ``name`` for cluster-scoped ones."""
    if isinstance(obj, (PriorityClass, Namespace)):  # a tuple: cheaper than a union
        return obj.name
    meta = obj.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


class EventRecorder(Protocol):
    """Where the scheduler's Events go (``Scheduled``, ``FailedScheduling``, ``Preempted``)."""

    def record_event(
        self,
        regarding: Pod,
        related: Pod | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        """Record an Event. Must not block: a cluster queues it for a writer that
        rate-limits and aggregates."""


class SyncBinder(Protocol):
    """A bind that completes at once, without I/O (an in-memory store)."""

    def bind_now(self, pod: Pod, node_name: str) -> None:
        """Set ``spec.nodeName`` now; raises as ``ClusterStore.bind`` does."""


class ClusterStore(Protocol):
    """What the scheduler needs from a cluster.

    Reads come from the store's caches (no I/O); changes reach the scheduler through the
    subscribed listener, called on the event loop. The writes are the scheduler's only
    I/O, made from binding cycles and failure handling, never from the scheduling cycle.
    A store also says what it can do beyond that (``event_recorder``, ``sync_binder``);
    the engine asks once, when it is built.
    """

    def subscribe(self, listener: ClusterListener) -> None:
        """Call ``listener(kind, old, new)`` for every later change."""

    def unsubscribe(self, listener: ClusterListener) -> None:
        """Stop calling ``listener``."""

    def nodes(self) -> list[Node]: ...

    def pods(self) -> list[Pod]: ...

    def get_pod(self, key: str) -> Pod | None: ...

    def get(self, kind: str, key: str) -> Any | None:
        """The object of ``kind`` (``"PodGroup"``...) at ``namespace/name`` (or ``name``)."""

    def objects(self, kind: str) -> list[Any]:
        """Every object of ``kind`` the cluster holds (``"Service"``, ``"PodGroup"``...)."""

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None: ...

    async def bind(self, pod: Pod, node_name: str) -> None: ...

    async def evict(self, pod: Pod) -> None:
        """Delete a preemption victim (a cluster also marks it DisruptionTarget first)."""

    async def update_pod_status(
        self, pod: Pod, *, nominated_node_name: str | None, condition: Mapping[str, str] | None
    ) -> None:
        """Write the pod's nominated node and its PodScheduled condition."""

    @property
    def event_recorder(self) -> EventRecorder | None:
        """Where the scheduler's Events go; None when this cluster keeps none (the engine
        then makes none)."""

    @property
    def sync_binder(self) -> SyncBinder | None:
        """A bind that never waits, when the cluster has one (DefaultBinder then binds in
        the scheduling loop); None: binds go through ``bind``."""


class VolumeUpdateError(KschedError, RuntimeError):
    """A PreBind volume write the API server refused or could not take (its message)."""


@runtime_checkable
class VolumeUpdater(Protocol):
    """A cluster that takes VolumeBinding's PreBind writes through its API.

    The PV controller and the provisioners, not the scheduler, then finish the binding;
    the scheduler watches for that through the store's caches.
    """

    async def update_volume(self, obj: PersistentVolume | PersistentVolumeClaim) -> None:
        """Write a PV's claimRef and annotations, or a PVC's annotations, as ``obj`` has
        them over the cached object (refused if it changed since). Returns once the
        store's cache holds the written version (or a newer one).

        Raises:
            VolumeUpdateError: the server refused the write or could not be reached.
        """
