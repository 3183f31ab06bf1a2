"""KubeCluster: the ClusterStore over kube-apiserver.

Watch caches feed an InMemoryCluster used as the indexer, so listeners see exactly the
add/update/delete events the embedded cluster emits. Writes go to the API server:
bind in the binding task, status and Events through the writer task.

# pkg/scheduler/framework/plugins/defaultbinder/default_binder.go (POST pods/binding),
# framework/preemption/preemption.go PreemptPod (DisruptionTarget condition, reason
# PreemptionByScheduler, "<scheduler>: preempting to accommodate a higher priority pod",
# then delete), client-go discovery (a group the server does not serve is skipped);
# volumebinding/binder.go bindAPIUpdate (PVs and PVCs updated with the scheduler's
# assumed version; a newer cached object is awaited before checkBindings reads it).
"""

from __future__ import annotations

import logging
import random
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import attrs
import httpx

from .._errors import KschedError
from ..api import (
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
    Service,
    StatefulSet,
    Taint,
)
from ..cluster import ClusterListener, EventRecorder, InMemoryCluster, SyncBinder, object_key
from ..cluster._store import VolumeUpdateError
from ._client import ApiError, ApiNotFoundError, ConflictError, KubeClient
from ._reflector import RESOURCES, Reflector, Resource
from ._writer import Writer, micro_time

__all__ = ["KubeCluster", "NodeChangedError", "NotLeaderError"]

log = logging.getLogger("ksched.kube")


class NotLeaderError(KschedError, RuntimeError):
    """A write was refused because this scheduler does not hold the lease."""


class NodeChangedError(KschedError, RuntimeError):
    """A bind was refused before it was sent: the node was deleted, cordoned or tainted
    since the pod was placed on it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_UNSCHEDULABLE = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
"""nodeunschedulable.go: a pod that tolerates this taint may go to a cordoned node."""


@attrs.define(eq=False)
class KubeCluster:
    """The cluster as kube-apiserver serves it, behind the ClusterStore protocol.

    Build it with :meth:`open` (which starts the watches and the writer); ``may_write``
    is the leadership gate checked right before every bind and eviction.
    """

    client: KubeClient
    event_client: KubeClient
    scheduler_names: tuple[str, ...] = ("default-scheduler",)
    resources: tuple[Resource, ...] = RESOURCES
    may_write: Callable[[], bool] = lambda: True
    cache: InMemoryCluster = attrs.field(factory=InMemoryCluster)
    reflectors: dict[str, Reflector] = attrs.field(factory=dict)
    missing_groups: set[str] = attrs.field(factory=set)
    binds: int = 0
    writer: Writer = attrs.field(init=False)
    _conditions: dict[str, Mapping[str, Any]] = attrs.field(factory=dict)
    _version_waiters: dict[tuple[str, str], list[tuple[str, anyio.Event]]] = attrs.field(
        factory=dict
    )

    def __attrs_post_init__(self) -> None:
        self.writer = Writer(
            self.client,
            self.event_client,
            socket.gethostname(),
            self._current_pod,
            may_write=lambda: self.may_write(),
        )

    # ---- lifecycle ----------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def open(
        cls, client: KubeClient, event_client: KubeClient | None = None, **options: Any
    ) -> AsyncIterator[KubeCluster]:
        """Discover served groups, start one reflector per kind and the writer."""
        cluster = cls(client, event_client or client, **options)
        await cluster._discover()
        async with anyio.create_task_group() as tg:
            for reflector in cluster.reflectors.values():
                tg.start_soon(reflector.run)
            await tg.start(cluster.writer.serve)
            try:
                yield cluster
            finally:
                with anyio.CancelScope(shield=True):
                    await cluster.writer.drain(2.0)
                tg.cancel_scope.cancel()

    async def _discover(self) -> None:
        served = {"v1"}
        body = await self._until_answered("/apis")
        for group in body.get("groups") or []:
            for version in group.get("versions") or []:
                served.add(str(version.get("groupVersion")))
        read_elsewhere = {r.kind for r in self.resources if r.group_version in served}
        for resource in self.resources:
            if resource.kind in self.reflectors:
                continue  # served in a newer version, listed first
            if resource.group_version not in served:
                if resource.kind in read_elsewhere:
                    continue  # an older version is served
                if resource.group_version not in self.missing_groups:
                    log.info(
                        "%s not served by the API server: %s objects are read as none",
                        resource.group_version,
                        resource.kind,
                    )
                self.missing_groups.add(resource.group_version)
                continue
            self.reflectors[resource.kind] = Reflector(
                self.client, resource, self._apply, self._remove
            )

    async def _until_answered(self, path: str) -> Any:
        """GET ``path``, waiting out an unreachable or failing server (backoff to 30 s);
        other errors (401, 403...) raise."""
        delay = 0.8
        while True:
            try:
                return await self.client.request("GET", path)
            except ApiError as exc:
                if exc.status < 500 and exc.status != 429:
                    raise
                log.warning("API server not ready (%s); retrying", exc)
            except httpx.TransportError as exc:
                log.warning("API server unreachable (%r); retrying", exc)
            await anyio.sleep(delay * (1.0 + random.random()))
            delay = min(delay * 2.0, 30.0)

    async def wait_synced(self) -> None:
        """Wait until every served kind has been listed once."""
        for reflector in self.reflectors.values():
            await reflector.synced.wait()

    @property
    def synced(self) -> bool:
        return all(r.synced.is_set() for r in self.reflectors.values())

    # ---- the watch caches -----------------------------------------------------------

    def _apply(self, kind: str, obj: Any, raw: Mapping[str, Any]) -> None:
        if kind == "Pod":
            conditions = (raw.get("status") or {}).get("conditions") or []
            cond = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
            if cond is None:
                self._conditions.pop(obj.key, None)
            else:
                self._conditions[obj.key] = cond
        self.cache.apply(obj)
        if self._version_waiters:
            self._wake_version_waiters(kind, object_key(obj))

    def _remove(self, kind: str, key: str) -> None:
        if kind == "Pod":
            self._conditions.pop(key, None)
        if self.cache.get(kind, key) is not None:
            self.cache.remove(kind, key)
        if self._version_waiters:
            self._wake_version_waiters(kind, key)

    def resource_version(self, kind: str, key: str) -> str | None:
        """The resourceVersion of the cached object (None: not cached)."""
        reflector = self.reflectors.get(kind)
        return None if reflector is None else reflector.versions.get(key)

    def _wake_version_waiters(self, kind: str, key: str) -> None:
        waiters = self._version_waiters.get((kind, key))
        if not waiters:
            return
        current = self.resource_version(kind, key)
        for target, event in list(waiters):
            if current is None or not is_older(current, target):
                event.set()
                waiters.remove((target, event))
        if not waiters:
            del self._version_waiters[(kind, key)]

    async def wait_version(self, kind: str, key: str, resource_version: str) -> None:
        """Wait until the watch cache holds ``kind`` ``key`` at ``resource_version`` or
        newer, or no longer holds it (deleted)."""
        current = self.resource_version(kind, key)
        if current is None or not is_older(current, resource_version):
            return
        event = anyio.Event()
        entry = (resource_version, event)
        self._version_waiters.setdefault((kind, key), []).append(entry)
        try:
            await event.wait()
        finally:
            waiters = self._version_waiters.get((kind, key))
            if waiters and entry in waiters:
                waiters.remove(entry)
                if not waiters:
                    del self._version_waiters[(kind, key)]

    def _current_pod(self, key: str) -> tuple[Pod | None, Mapping[str, Any] | None]:
        return self.cache.get_pod(key), self._conditions.get(key)

    # ---- reading (the ClusterStore protocol and the plugins' helpers) -----------------

    def subscribe(self, listener: ClusterListener) -> None:
        self.cache.subscribe(listener)

    def unsubscribe(self, listener: ClusterListener) -> None:
        self.cache.unsubscribe(listener)

    def objects(self, kind: str) -> list[Any]:
        return self.cache.objects(kind)

    def get(self, kind: str, key: str) -> Any | None:
        return self.cache.get(kind, key)

    def nodes(self) -> list[Node]:
        return self.cache.nodes()

    def pods(self) -> list[Pod]:
        return self.cache.pods()

    def get_pod(self, key: str) -> Pod | None:
        return self.cache.get_pod(key)

    def get_node(self, name: str) -> Node | None:
        return self.cache.get_node(name)

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        return self.cache.namespace_labels(namespace)

    def pod_groups(self, namespace: str) -> list[PodGroup]:
        return self.cache.pod_groups(namespace)

    def get_pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self.cache.get_pod_group(namespace, name)

    def pdbs(self) -> list[PodDisruptionBudget]:
        return self.cache.pdbs()

    def services(self, namespace: str) -> list[Service]:
        return self.cache.services(namespace)

    def replication_controllers(self, namespace: str) -> list[ReplicationController]:
        return self.cache.replication_controllers(namespace)

    def replica_sets(self, namespace: str) -> list[ReplicaSet]:
        return self.cache.replica_sets(namespace)

    def stateful_sets(self, namespace: str) -> list[StatefulSet]:
        return self.cache.stateful_sets(namespace)

    def priority_classes(self) -> list[PriorityClass]:
        return self.cache.priority_classes()

    def namespaces(self) -> list[Namespace]:
        return self.cache.objects("Namespace")

    async def wait_bound(self, key: str, timeout: float | None = None) -> Pod:
        """Wait until the watch shows the pod ``namespace/name`` bound."""
        return await self.cache.wait_bound(key, timeout)

    # ---- the scheduler's writes -------------------------------------------------------

    def _guard(self, what: str) -> Callable[[], None]:
        """Raises NotLeaderError unless the lease is held: checked right before the wire."""

        def check() -> None:
            if not self.may_write():
                raise NotLeaderError(f"{what}: refused, this scheduler is not the leader")

        return check

    async def bind(self, pod: Pod, node_name: str) -> None:
        """POST pods/{name}/binding.

        Raises:
            NotFoundError: the pod is gone (404).
            ConflictError: the pod changed or is bound elsewhere (409).
            NotLeaderError: the lease is not held.
            NodeChangedError: the node was deleted, cordoned or tainted meanwhile.
        """
        leader = self._guard(f"binding pod {pod.key}")

        def guard() -> None:
            leader()
            problem = self.node_refuses(pod, node_name)
            if problem is not None:
                raise NodeChangedError(problem)

        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.metadata.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
        try:
            await self.client.request("POST", path, body=body, guard=guard)
        except ConflictError:
            # A retried POST whose first attempt went through answers 409: look.
            current = await self.client.request(
                "GET", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
            )
            meta, spec = current.get("metadata") or {}, current.get("spec") or {}
            if meta.get("uid") != pod.metadata.uid or spec.get("nodeName") != node_name:
                raise
        self.binds += 1

    def node_refuses(self, pod: Pod, node_name: str) -> str | None:
        """Why ``node_name`` may no longer take ``pod`` as the watch shows it now (deleted,
        cordoned, or a NoSchedule/NoExecute taint the pod does not tolerate), or None.

        Checked right before a bind goes on the wire, so a binding cycle that waited in
        the backlog does not bind to a node changed since its scheduling cycle. A store
        that watches no nodes (the extender's binder) checks nothing.
        """
        if "Node" not in self.reflectors:
            return None  # nodes not watched (a bind-only store): nothing to check against
        node = self.cache.get_node(node_name)
        if node is None:
            return f'node "{node_name}" not found'
        tolerations = pod.spec.tolerations
        if node.spec.unschedulable and not any(t.tolerates(_UNSCHEDULABLE) for t in tolerations):
            return f'node "{node_name}": node(s) were unschedulable'
        for taint in node.spec.taints:
            if taint.effect in ("NoSchedule", "NoExecute") and not any(
                t.tolerates(taint) for t in tolerations
            ):
                return f'node "{node_name}": node(s) had untolerated taint {taint}'
        return None

    async def update_volume(self, obj: PersistentVolume | PersistentVolumeClaim) -> None:
        """VolumeBinding's PreBind write (binder.go bindAPIUpdate): a PV's claimRef and
        bound-by-controller annotation, or a PVC's selected-node annotation.

        Upstream PUTs the whole assumed object at the cached resourceVersion; this sends
        the fields the scheduler changed as a merge patch at that resourceVersion, which
        is refused (409) just the same when the object changed, and drops no field ksched
        does not model. Returns once the watch cache holds the written version.

        Raises:
            VolumeUpdateError: refused (the server's message), unreachable, or not leader.
        """
        if isinstance(obj, PersistentVolume):
            kind, key = "PersistentVolume", obj.name
            path = f"/api/v1/persistentvolumes/{obj.name}"
            spec: dict[str, Any] = {}
            if obj.claim_ref is not None:
                ref = obj.claim_ref
                claim_key = f"{ref.namespace}/{ref.name}"
                spec["claimRef"] = {
                    "kind": "PersistentVolumeClaim",
                    "apiVersion": "v1",
                    "namespace": ref.namespace,
                    "name": ref.name,
                    "uid": ref.uid,
                    "resourceVersion": self.resource_version("PersistentVolumeClaim", claim_key)
                    or "",
                }
        else:
            kind, key = "PersistentVolumeClaim", obj.key
            path = f"/api/v1/namespaces/{obj.namespace}/persistentvolumeclaims/{obj.name}"
            spec = {}
        version = self.resource_version(kind, key)
        if version is None:
            raise VolumeUpdateError(f'{kind.lower()}s "{obj.metadata.name}" not found')
        patch: dict[str, Any] = {
            "metadata": {"resourceVersion": version, "annotations": dict(obj.metadata.annotations)}
        }
        if spec:
            patch["spec"] = spec
        try:
            body = await self.client.request(
                "PATCH",
                path,
                body=patch,
                content_type="application/merge-patch+json",
                guard=self._guard(f"updating {kind} {key}"),
            )
        except ApiError as exc:
            raise VolumeUpdateError(exc.message) from exc
        except (httpx.TransportError, NotLeaderError) as exc:
            raise VolumeUpdateError(f"updating {kind} {key}: {exc!r}") from exc
        written = str(((body or {}).get("metadata") or {}).get("resourceVersion") or "")
        if written:
            await self.wait_version(kind, key, written)

    async def evict(self, pod: Pod) -> None:
        """Preempt a victim: the DisruptionTarget condition first, then delete it.

        Raises:
            NotFoundError: the victim is already gone.
        """
        guard = self._guard(f"evicting pod {pod.key}")
        name = pod.spec.scheduler_name
        scheduler = name if name in self.scheduler_names else self.scheduler_names[0]
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        condition = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": f"{scheduler}: preempting to accommodate a higher priority pod",
            "lastTransitionTime": micro_time().split(".")[0] + "Z",
        }
        try:
            await self.client.request(
                "PATCH",
                f"{path}/status",
                body={"metadata": {"uid": pod.metadata.uid}, "status": {"conditions": [condition]}},
                content_type="application/strategic-merge-patch+json",
                guard=guard,
            )
            options = {
                "apiVersion": "v1",
                "kind": "DeleteOptions",
                "preconditions": {"uid": pod.metadata.uid},
            }
            await self.client.request("DELETE", path, body=options, guard=guard)
        except ConflictError as exc:
            raise ApiNotFoundError(404, "NotFound", f"pod {pod.key} was replaced") from exc

    async def update_pod_status(
        self,
        pod: Pod,
        *,
        nominated_node_name: str | None,
        condition: Mapping[str, str] | None,
    ) -> None:
        """Queue a status write (PodScheduled condition, nominatedNodeName); no I/O."""
        self.writer.update_pod_status(pod, nominated_node_name, condition)

    def record_event(
        self,
        regarding: Pod,
        related: Pod | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        """Queue an events.k8s.io/v1 Event about a pod; never blocks, may drop or aggregate."""
        name = regarding.spec.scheduler_name
        if related is not None and related.spec.scheduler_name in self.scheduler_names:
            name = related.spec.scheduler_name
        controller = name if name in self.scheduler_names else self.scheduler_names[0]
        self.writer.record_event(
            regarding, related, event_type, reason, action, note, controller=controller
        )

    @property
    def event_recorder(self) -> EventRecorder | None:
        """This store: Events go to the API through its writer."""
        return self

    @property
    def sync_binder(self) -> SyncBinder | None:
        """None: a bind is a request to the API."""
        return None


def is_older(version: str, than: str) -> bool:
    """Whether resourceVersion ``version`` is older than ``than`` (etcd revisions compare
    as integers, as upstream's APIObjectVersioner does; other strings are not ordered)."""
    return version.isdigit() and than.isdigit() and int(version) < int(than)
