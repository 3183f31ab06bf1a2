"""InMemoryCluster: an embedded cluster for the scheduler.

It keeps everything in dicts and notifies listeners synchronously, so a change is visible
to the scheduler before the call that made it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import anyio
import attrs

from .._errors import NotFoundError
from ..api import (
    SYSTEM_PRIORITY_CLASSES,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    DeviceClass,
    KubeObject,
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
    Service,
    StatefulSet,
    StorageClass,
)
from ..api._assign import assigned, is_assigned_copy
from ._resourceclaims import make_template_claims, release_claims
from ._store import KINDS, ClusterListener, EventRecorder, SyncBinder, object_key

__all__ = ["InMemoryCluster", "RecordedEvent"]

_DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
_BETA_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"


@attrs.frozen
class RecordedEvent:
    """An Event the scheduler recorded (as kube-scheduler's event recorder would write it)."""

    regarding: str
    related: str | None
    type: str
    reason: str
    action: str
    note: str


@attrs.define(eq=False)
class InMemoryCluster:
    """An embedded cluster: objects in memory, listeners notified at once.

    Pods get their priority resolved from PriorityClasses when added (as admission
    does): ``priorityClassName`` (the built-in ``system-node-critical`` and
    ``system-cluster-critical`` included), else the ``globalDefault`` class, else 0.
    """

    _objects: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    _listeners: list[ClusterListener] = attrs.field(factory=list)
    _bound: dict[str, anyio.Event] = attrs.field(factory=dict)
    evicted: list[str] = attrs.field(factory=list)
    """Keys of the pods evicted by preemption, in order."""
    conditions: dict[str, Mapping[str, str]] = attrs.field(factory=dict)
    """Pod key -> its last PodScheduled condition (type, status, reason, message)."""
    events: list[RecordedEvent] = attrs.field(factory=list)
    """Events the scheduler recorded, in order."""
    keep_events: bool = True
    """Whether the scheduler hands its Events to ``record_event`` (a simulation, which
    never reports them, keeps none: one per bound pod adds up at scale)."""

    # ---- reading ------------------------------------------------------------------

    def subscribe(self, listener: ClusterListener) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: ClusterListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def objects(self, kind: str) -> list[Any]:
        return list(self._objects.get(kind, {}).values())

    def objects_by_key(self, kind: str) -> Mapping[str, Any]:
        """The objects of ``kind`` by key: a live view, to read at once, not to keep."""
        return self._objects.get(kind, {})

    def nodes(self) -> list[Node]:
        return self.objects("Node")

    def pods(self) -> list[Pod]:
        return self.objects("Pod")

    def get(self, kind: str, key: str) -> Any | None:
        return self._objects.get(kind, {}).get(key)

    def get_pod(self, key: str) -> Pod | None:
        pod: Pod | None = self.get("Pod", key)
        return pod

    def get_node(self, name: str) -> Node | None:
        node: Node | None = self.get("Node", name)
        return node

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        ns: Namespace | None = self.get("Namespace", namespace)
        return ns.labels if ns is not None else None

    def pod_groups(self, namespace: str) -> list[PodGroup]:
        return [g for g in self.objects("PodGroup") if g.metadata.namespace == namespace]

    def get_pod_group(self, namespace: str, name: str) -> PodGroup | None:
        group: PodGroup | None = self.get("PodGroup", f"{namespace}/{name}")
        return group

    def pdbs(self) -> list[PodDisruptionBudget]:
        return self.objects("PodDisruptionBudget")

    def services(self, namespace: str) -> list[Service]:
        return [s for s in self.objects("Service") if s.metadata.namespace == namespace]

    def replication_controllers(self, namespace: str) -> list[ReplicationController]:
        return [
            s for s in self.objects("ReplicationController") if s.metadata.namespace == namespace
        ]

    def replica_sets(self, namespace: str) -> list[ReplicaSet]:
        return [s for s in self.objects("ReplicaSet") if s.metadata.namespace == namespace]

    def stateful_sets(self, namespace: str) -> list[StatefulSet]:
        return [s for s in self.objects("StatefulSet") if s.metadata.namespace == namespace]

    def priority_classes(self) -> list[PriorityClass]:
        return self.objects("PriorityClass")

    # storage: the volume plugins' listers
    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        pvc: PersistentVolumeClaim | None = self.get("PersistentVolumeClaim", f"{namespace}/{name}")
        return pvc

    def get_pv(self, name: str) -> PersistentVolume | None:
        pv: PersistentVolume | None = self.get("PersistentVolume", name)
        return pv

    def get_storage_class(self, name: str) -> StorageClass | None:
        sc: StorageClass | None = self.get("StorageClass", name)
        return sc

    def get_csi_node(self, name: str) -> CSINode | None:
        csi_node: CSINode | None = self.get("CSINode", name)
        return csi_node

    def get_csi_driver(self, name: str) -> CSIDriver | None:
        driver: CSIDriver | None = self.get("CSIDriver", name)
        return driver

    def csi_storage_capacities(self) -> list[CSIStorageCapacity]:
        return self.objects("CSIStorageCapacity")

    def device_classes(self) -> list[DeviceClass]:
        return self.objects("DeviceClass")

    def get_device_class(self, name: str) -> DeviceClass | None:
        found: DeviceClass | None = self.get("DeviceClass", name)
        return found

    def resource_slices(self) -> list[ResourceSlice]:
        return self.objects("ResourceSlice")

    def resource_claims(self) -> list[ResourceClaim]:
        return self.objects("ResourceClaim")

    def get_resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        found: ResourceClaim | None = self.get("ResourceClaim", f"{namespace}/{name}")
        return found

    async def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Write a claim's status (allocation, reservedFor). Raises NotFoundError when the
        claim is gone or was replaced by another with the same name."""
        current = self.get_resource_claim(claim.namespace, claim.name)
        if current is None or current.uid != claim.uid:
            raise NotFoundError(f"resourceclaim {claim.key}: not found")
        self.apply(claim)
        return claim

    # ---- writing ------------------------------------------------------------------

    def _notify(self, kind: str, old: Any, new: Any) -> None:
        for listener in list(self._listeners):
            listener(kind, old, new)

    def default_storage_class(self, claim: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """A new claim without ``storageClassName`` gets the default class, as the
        DefaultStorageClass admission plugin gives it (the newest of several defaults;
        plugin/pkg/admission/storage/storageclass/setdefault, GetDefaultClass)."""
        if self.get("PersistentVolumeClaim", claim.key) is not None:
            return claim  # admission runs on create only
        defaults = [
            c
            for c in self.objects("StorageClass")
            if c.metadata.annotations.get(_DEFAULT_CLASS_ANNOTATION) == "true"
            or c.metadata.annotations.get(_BETA_DEFAULT_CLASS_ANNOTATION) == "true"
        ]
        if not defaults:
            return claim
        # The newest; of equally new ones, the first by name.
        newest = min(
            defaults, key=lambda c: (-(c.metadata.creation_timestamp or 0.0), c.metadata.name)
        )
        return attrs.evolve(claim, storage_class_name=newest.metadata.name)

    def resolve_priority(self, pod: Pod) -> Pod:
        """The pod with ``spec.priority`` (and preemption policy) from its PriorityClass."""
        classes: dict[str, PriorityClass] = self._objects.get("PriorityClass", {})
        if not classes and not pod.spec.priority_class_name:
            return pod  # no class to take a value from, no system class named
        chosen: PriorityClass | None = None
        if pod.spec.priority_class_name:
            chosen = classes.get(pod.spec.priority_class_name)
        elif pod.spec.priority is None:
            chosen = next((c for c in classes.values() if c.global_default), None)
        if chosen is None and pod.spec.priority_class_name in SYSTEM_PRIORITY_CLASSES:
            chosen = PriorityClass(
                name=pod.spec.priority_class_name,
                value=SYSTEM_PRIORITY_CLASSES[pod.spec.priority_class_name],
            )
        if chosen is None:
            return pod
        spec = attrs.evolve(
            pod.spec,
            priority=chosen.value if pod.spec.priority is None else pod.spec.priority,
            priority_class_name=pod.spec.priority_class_name or chosen.name,
            preemption_policy=pod.spec.preemption_policy or chosen.preemption_policy,
        )
        return attrs.evolve(pod, spec=spec)

    def apply(self, obj: KubeObject) -> None:
        """Create or replace an object and notify the listeners."""
        kind = KINDS[type(obj)]
        if isinstance(obj, Pod):
            obj = self.resolve_priority(obj)
            obj, claims = make_template_claims(self, obj)  # the resourceclaim controller
            for claim in claims:
                self.apply(claim)
        elif isinstance(obj, PersistentVolumeClaim) and obj.storage_class_name is None:
            obj = self.default_storage_class(obj)
        store = self._objects.setdefault(kind, {})
        key = object_key(obj)
        old = store.get(key)
        store[key] = obj
        self._notify(kind, old, obj)
        if isinstance(obj, Pod):
            if obj.spec.node_name:
                waiters = self._bound.pop(key, None)  # only pods someone waits for have one
                if waiters is not None:
                    waiters.set()
        elif isinstance(obj, ResourceClaimTemplate):  # pods that waited for it get claims
            for pod in self.pods():
                if (
                    pod.namespace == obj.metadata.namespace
                    and make_template_claims(self, pod)[0] is not pod
                ):
                    self.apply(pod)

    def remove(self, kind: str, key: str) -> Any:
        """Delete an object and notify the listeners. Raises NotFoundError."""
        store = self._objects.get(kind, {})
        if key not in store:
            raise NotFoundError(f"{kind} {key}: not found")
        old = store.pop(key)
        self._notify(kind, old, None)
        if isinstance(old, Pod) and old.spec.resource_claims:
            updates, deletes = release_claims(self, old)
            for claim in updates:
                self.apply(claim)
            for claim_key in deletes:
                self.remove("ResourceClaim", claim_key)
        return old

    async def add_node(self, node: Node) -> None:
        self.apply(node)

    async def add_pod(self, pod: Pod) -> None:
        self.apply(pod)

    async def add(self, objects: Iterable[KubeObject]) -> None:
        for obj in objects:
            self.apply(obj)

    async def delete_pod(self, key: str) -> None:
        self.remove("Pod", key)

    async def delete_node(self, name: str) -> None:
        self.remove("Node", name)

    # ---- the scheduler's writes -----------------------------------------------------

    async def bind(self, pod: Pod, node_name: str) -> None:
        """Set ``spec.nodeName``. Raises NotFoundError if the pod is gone."""
        self.bind_now(pod, node_name)

    def bind_now(self, pod: Pod, node_name: str) -> None:
        """``bind`` without a checkpoint: the store is in memory, so binding never waits."""
        key = pod.key  # a pod's store key (object_key)
        pods: dict[str, Pod] = self._objects.get("Pod", {})
        current = pods.get(key)
        if current is None or current.uid != pod.uid:
            raise NotFoundError(f"pod {key}: not found")
        if current.spec.node_name:
            raise ValueError(f"pod {key}: already bound to {current.spec.node_name}")
        if pod.spec.node_name == node_name and is_assigned_copy(pod, current):
            bound = pod  # the scheduler's assumed pod is exactly what the binding writes
        else:
            bound = assigned(current, node_name)
        if bound.status.nominated_node_name is not None:
            bound = attrs.evolve(bound, status=attrs.evolve(bound.status, nominated_node_name=None))
        self.conditions.pop(key, None)
        # A binding changes no field admission sets (priority, claims): store and notify.
        pods[key] = bound
        self._notify("Pod", current, bound)
        waiters = self._bound.pop(key, None)
        if waiters is not None:
            waiters.set()

    async def evict(self, pod: Pod) -> None:
        """Delete a pod (preemption)."""
        current = self.get_pod(pod.key)
        if current is None or current.uid != pod.uid:
            raise NotFoundError(f"pod {pod.key}: not found")
        self.evicted.append(pod.key)
        self.remove("Pod", pod.key)

    async def update_pod_status(
        self,
        pod: Pod,
        *,
        nominated_node_name: str | None,
        condition: Mapping[str, str] | None,
    ) -> None:
        current = self.get_pod(pod.key)
        if current is None:
            return
        if condition is not None:
            self.conditions[pod.key] = dict(condition)
        if current.status.nominated_node_name != nominated_node_name:
            status = attrs.evolve(current.status, nominated_node_name=nominated_node_name)
            self.apply(attrs.evolve(current, status=status))

    def record_event(
        self,
        regarding: Pod,
        related: Pod | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        related_key = related.key if related is not None else None
        self.events.append(
            RecordedEvent(regarding.key, related_key, event_type, reason, action, note)
        )

    @property
    def event_recorder(self) -> EventRecorder | None:
        """This store, unless it keeps no Events (``keep_events=False``)."""
        return self if self.keep_events else None

    @property
    def sync_binder(self) -> SyncBinder | None:
        """This store's ``bind_now``, unless a subclass binds otherwise (its own ``bind``)."""
        return self if type(self).bind is InMemoryCluster.bind else None

    # ---- waiting ------------------------------------------------------------------

    def _bound_event(self, key: str) -> anyio.Event:
        event = self._bound.get(key)
        if event is None:
            event = self._bound[key] = anyio.Event()
        return event

    async def wait_bound(self, key: str, timeout: float | None = None) -> Pod:
        """Wait until the pod ``namespace/name`` is bound; returns it.

        Raises TimeoutError after ``timeout`` seconds.
        """
        pod = self.get_pod(key)
        if pod is not None and pod.spec.node_name:
            return pod
        with anyio.fail_after(timeout):
            while True:
                await self._bound_event(key).wait()
                bound = self.get_pod(key)
                if bound is not None and bound.spec.node_name:
                    return bound
