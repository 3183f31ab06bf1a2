"""A Handle and a snapshot for testing a plugin without a scheduler.

# pkg/scheduler/testing/framework (upstream builds its plugin tests on a real framework
# over fake listers; here the engine's side of the Handle is what is faked)
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from ..api import KubeObject, Node, Pod
from ..cluster import InMemoryCluster, RecordedEvent
from ..config import EXTENSION_POINTS
from ..framework import (
    Code,
    CycleState,
    Extender,
    FilterPlugin,
    NodeInfo,
    Plugin,
    PodInfo,
    PreFilterExtensions,
    SharedLister,
    Status,
    WaitingPod,
)

if TYPE_CHECKING:
    from ..framework.batch import PodIndex
    from ..framework.runtime import MetricsRecorder

__all__ = ["FakeHandle", "FakeSnapshot"]

_SUCCESS = Status(Code.SUCCESS)


class FakeSnapshot:
    """A cycle's snapshot over fixed node infos (a :class:`ksched.framework.SharedLister`).

    ``nodes`` are NodeInfos, used as they are, or Nodes, each given the ``pods`` bound to
    it (``spec.node_name``). It keeps no node table and no pod index, so plugins take
    their per-node paths.
    """

    def __init__(self, nodes: Iterable[Node | NodeInfo] = (), pods: Iterable[Pod] = ()) -> None:
        pods = list(pods)
        self._infos = [_node_info(n, pods) for n in nodes]
        self._by_name = {info.name: info for info in self._infos}

    def list(self) -> Sequence[NodeInfo]:
        return self._infos

    def get(self, node_name: str) -> NodeInfo | None:
        return self._by_name.get(node_name)

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        return [info for info in self._infos if info.pods_with_affinity]

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        return [info for info in self._infos if info.pods_with_required_anti_affinity]

    @property
    def pod_index(self) -> PodIndex | None:
        """None: the topology plugins count pods node by node."""
        return None


def _node_info(node: Node | NodeInfo, pods: Sequence[Pod]) -> NodeInfo:
    if isinstance(node, NodeInfo):
        return node
    return NodeInfo.of(node, [p for p in pods if p.spec.node_name == node.name])


class FakeHandle:
    """A :class:`ksched.framework.Handle` for testing a plugin without a scheduler.

    The engine's side is made of plain data a test sets up and reads back: the cluster
    (an :class:`~ksched.InMemoryCluster` holding ``objects``), the snapshot, namespace
    labels, pods nominated to nodes, pods waiting at Permit, a fixed clock and a seeded
    random source. What a plugin does through the handle is recorded: ``events``
    (``record_event``), ``activated`` (``activate``) and ``rejected``
    (``reject_waiting_pod``).

    Args:
        objects: Objects the cluster starts with (claims, PodGroups, Services...).
        nodes: The snapshot's nodes: NodeInfos as they are, or Nodes holding the
            ``pods`` bound to them. Ignored when ``snapshot`` is given.
        pods: Pods bound to the Nodes in ``nodes`` (by ``spec.node_name``).
        snapshot: The snapshot itself (a real ``ksched.cache.Snapshot``, for example).
        cluster: The cluster to use instead of a new InMemoryCluster.
        namespaces: Namespace name -> labels; other namespaces are read from the cluster.
        nominated: Node name -> pods nominated to it, highest priority first.
        plugins: The profile a plugin sees through ``plugins_at``: its plugins in order,
            each shown at the points whose method it has.
        filters: The Filter chain ``run_filter_plugins_with_nominated_pods`` runs, in
            upstream's two passes (first with the higher-or-equal priority pods in
            ``nominated`` added to the node). Defaults to the Filter plugins among
            ``plugins``; given alone, it runs a chain without showing a profile.
        extensions_active: What ``pre_filter_extensions_active`` answers; None: whether
            a PreFilter plugin among ``plugins`` has extensions.
        now: What ``now()`` returns until ``clock`` is changed.
        seed: The seed of ``rng``.
        parallelism: The fan-out width a plugin reads (the scheduler's default, 16).
        profile_name: The profile's ``schedulerName``.
        metrics: The scheduler's metrics, None when it keeps none.
        extenders: The configured extenders.
    """

    def __init__(
        self,
        objects: Iterable[KubeObject] = (),
        *,
        nodes: Iterable[Node | NodeInfo] = (),
        pods: Iterable[Pod] = (),
        snapshot: SharedLister | None = None,
        cluster: InMemoryCluster | None = None,
        namespaces: Mapping[str, Mapping[str, str]] | None = None,
        nominated: Mapping[str, Iterable[Pod]] | None = None,
        plugins: Sequence[Plugin] = (),
        filters: Sequence[FilterPlugin] | None = None,
        extensions_active: bool | None = None,
        now: float = 0.0,
        seed: int = 0,
        parallelism: int = 16,
        profile_name: str = "default-scheduler",
        metrics: MetricsRecorder | None = None,
        extenders: Sequence[Extender] = (),
    ) -> None:
        self.cluster = cluster if cluster is not None else InMemoryCluster()
        for obj in objects:
            self.cluster.apply(obj)
        self.snapshot: SharedLister = (
            snapshot if snapshot is not None else FakeSnapshot(nodes, pods)
        )
        self.namespaces = {name: dict(labels) for name, labels in (namespaces or {}).items()}
        self.nominated = {
            node: [PodInfo.of(p) for p in node_pods]
            for node, node_pods in (nominated or {}).items()
        }
        self.plugins = list(plugins)
        self.filters: list[FilterPlugin] = (
            list(filters) if filters is not None else _filter_plugins(self.plugins)
        )
        self.extensions_active = extensions_active
        self.clock = now
        self.rng = random.Random(seed)
        self.parallelism = parallelism
        self.profile_name = profile_name
        self.metrics = metrics
        self.extenders = extenders
        self.waiting: dict[str, WaitingPod] = {}
        """Pods waiting at Permit, by uid (see :meth:`add_waiting_pod`)."""
        self.events: list[RecordedEvent] = []
        self.activated: list[Pod] = []
        self.rejected: list[tuple[str, str, str]] = []
        """``(uid, plugin, message)`` of each ``reject_waiting_pod`` call."""

    # ---- the engine ------------------------------------------------------------------

    def now(self) -> float:
        return self.clock

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        if namespace in self.namespaces:
            return self.namespaces[namespace]
        return self.cluster.namespace_labels(namespace)

    def record_event(
        self,
        regarding: Pod,
        reason: str,
        note: str,
        *,
        related: Pod | None = None,
        event_type: str = "Normal",
        action: str = "",
    ) -> None:
        related_key = related.key if related is not None else None
        self.events.append(
            RecordedEvent(regarding.key, related_key, event_type, reason, action, note)
        )

    # ---- waiting pods ----------------------------------------------------------------

    def add_waiting_pod(
        self, pod: Pod, node_name: str = "", pending: Mapping[str, float] | None = None
    ) -> WaitingPod:
        """Make ``pod`` wait at Permit on ``node_name`` for the ``pending`` plugins
        (plugin name -> deadline on the loop's clock)."""
        waiting = WaitingPod(pod=pod, node_name=node_name, pending=dict(pending or {}))
        self.waiting[pod.uid] = waiting
        return waiting

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting.get(uid)

    def iterate_waiting_pods(self) -> Iterable[WaitingPod]:
        return list(self.waiting.values())

    def reject_waiting_pod(self, uid: str, plugin: str, message: str) -> bool:
        """Reject the pod and drop it from ``waiting`` (no binding cycle holds it here)."""
        self.rejected.append((uid, plugin, message))
        waiting = self.waiting.pop(uid, None)
        if waiting is None:
            return False
        waiting.reject(plugin, message)
        return True

    # ---- the nominator and the queue --------------------------------------------------

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        return self.nominated.get(node_name, [])

    def activate(self, pods: Iterable[Pod]) -> None:
        self.activated.extend(pods)

    # ---- the profile -----------------------------------------------------------------

    def plugins_at(self, point: str) -> Sequence[tuple[str, Plugin]]:
        method = EXTENSION_POINTS.get(point)
        if method is None:
            return []
        return [(p.name, p) for p in self.plugins if callable(getattr(p, method, None))]

    @property
    def filters_wait(self) -> bool:
        return any(inspect.iscoroutinefunction(p.filter) for p in self.filters)

    def pre_filter_extensions_active(self, state: CycleState) -> bool:
        if self.extensions_active is not None:
            return self.extensions_active
        return bool(self._extensions(state))

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        # framework.go RunFilterPluginsWithNominatedPods: a first pass with the
        # higher-or-equal priority pods nominated to the node added, then one without.
        added = [
            p
            for p in self.nominated_pods_for_node(node_info.name)
            if p.pod.priority >= pod.priority and p.pod.uid != pod.uid
        ]
        if added:
            state_with, info_with = state.clone(), node_info.clone()
            for pod_info in added:
                info_with.add_pod(pod_info)
                status = self.run_pre_filter_extension_add_pod(state_with, pod, pod_info, info_with)
                if not status.is_success:
                    return Status(Code.ERROR, status.reasons, status.plugin)
            status = await self.run_filter_plugins(state_with, pod, info_with)
            if not status.is_success:
                return status
        return await self.run_filter_plugins(state, pod, node_info)

    async def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """The ``filters`` on the node as given, in order; the first that does not
        succeed decides (upstream's PluginsRunner.RunFilterPlugins)."""
        for plugin in self.filters:
            if plugin.name in state.skip_filter_plugins:
                continue
            try:
                result = plugin.filter(state, pod, node_info)
                status = await result if inspect.isawaitable(result) else result
            except Exception as exc:  # as the framework does: a fault is an Error status
                return _fault(plugin.name, "Filter", exc)
            if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
                return status.with_plugin(plugin.name)
        return _SUCCESS

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        for name, ext in self._extensions(state):
            try:
                status = ext.add_pod(state, pod, pod_to_add, node_info)
            except Exception as exc:
                return _fault(name, "AddPod", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(name)
        return _SUCCESS

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        for name, ext in self._extensions(state):
            try:
                status = ext.remove_pod(state, pod, pod_to_remove, node_info)
            except Exception as exc:
                return _fault(name, "RemovePod", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(name)
        return _SUCCESS

    def _extensions(self, state: CycleState) -> list[tuple[str, PreFilterExtensions]]:
        """The AddPod/RemovePod of the shown PreFilter plugins this cycle did not skip."""
        found = []
        for name, plugin in self.plugins_at("preFilter"):
            if name in state.skip_filter_plugins:
                continue
            extensions = getattr(plugin, "pre_filter_extensions", None)
            ext = extensions() if extensions is not None else None
            if ext is not None:
                found.append((name, ext))
        return found


def _filter_plugins(plugins: Sequence[Plugin]) -> list[FilterPlugin]:
    return [cast("FilterPlugin", p) for p in plugins if callable(getattr(p, "filter", None))]


def _fault(plugin: str, point: str, exc: Exception) -> Status:
    message = f'running "{plugin}" {point} plugin: {type(exc).__name__}: {exc}'
    return Status(Code.ERROR, (message,), plugin=plugin)
