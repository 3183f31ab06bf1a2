"""The Handle each profile's plugins receive: the engine seen from a plugin."""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence

from ..api import Pod
from ..cluster import ClusterStore
from ..framework import (
    CycleState,
    Extender,
    NodeInfo,
    Plugin,
    PodInfo,
    SharedLister,
    Status,
    WaitingPod,
)
from ..framework.runtime import Framework, MetricsRecorder
from ._observer import Observer
from ._state import SchedulerState

__all__ = ["FrameworkHandle"]


class FrameworkHandle:
    """One profile's implementation of :class:`ksched.framework.Handle`."""

    def __init__(self, state: SchedulerState, observer: Observer, profile_name: str) -> None:
        self._state = state
        self._observer = observer
        self._profile_name = profile_name
        self._framework: Framework | None = None

    def attach(self, framework: Framework | None) -> FrameworkHandle:
        """Attach the profile's framework once it is built (plugins get the handle first)."""
        if framework is not None:
            self._framework = framework
        return self

    @property
    def framework(self) -> Framework:
        if self._framework is None:
            raise RuntimeError(f"profile {self._profile_name!r}: the framework is not built yet")
        return self._framework

    # ---- the engine ------------------------------------------------------------------

    @property
    def profile_name(self) -> str:
        return self._profile_name

    @property
    def snapshot(self) -> SharedLister:
        return self._state.snapshot

    @property
    def cluster(self) -> ClusterStore:
        return self._state.cluster

    @property
    def rng(self) -> random.Random:
        return self._state.rng

    @property
    def parallelism(self) -> int:
        return self._state.config.parallelism

    def now(self) -> float:
        return self._state.now()

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        return self._state.cluster.namespace_labels(namespace)

    @property
    def metrics(self) -> MetricsRecorder | None:
        return self._observer.metrics

    @property
    def extenders(self) -> Sequence[Extender]:
        return self._state.extenders

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
        self._observer.record_event(
            regarding, reason, note, related=related, event_type=event_type, action=action
        )

    # ---- waiting pods ----------------------------------------------------------------

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._state.waiting_pods.get(uid)

    def iterate_waiting_pods(self) -> Iterable[WaitingPod]:
        return iter(self._state.waiting_pods)

    def reject_waiting_pod(self, uid: str, plugin: str, message: str) -> bool:
        waiting = self._state.waiting_pods.get(uid)
        if waiting is None:
            return False
        waiting.reject(plugin, message)
        return True

    # ---- the nominator and the queue --------------------------------------------------

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        return self._state.queue.nominated_pods_for_node(node_name)

    def nominated_node_names(self) -> Collection[str]:
        """The nodes that have pods nominated to them (a live view)."""
        return self._state.queue.nominated_node_names()

    def activate(self, pods: Iterable[Pod]) -> None:
        self._state.queue.activate(list(pods))

    # ---- the profile -----------------------------------------------------------------

    def plugins_at(self, point: str) -> Sequence[tuple[str, Plugin]]:
        return self.framework.plugins_at(point)

    @property
    def filters_wait(self) -> bool:
        return self.framework.filters_async

    def pre_filter_extensions_active(self, state: CycleState) -> bool:
        return self.framework.pre_filter_extensions_active(state)

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        nominated = self._state.queue.nominated_pods_for_node(node_info.name)
        return await self.framework.run_filter_with_nominated_pods(state, pod, node_info, nominated)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self.framework.run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self.framework.run_pre_filter_extension_remove_pod(
            state, pod, pod_to_remove, node_info
        )
