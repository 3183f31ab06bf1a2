"""The Handle: what a plugin may use of the engine. Given to plugin factories.

# staging/src/k8s.io/kube-scheduler/framework/interface.go (Handle, PodNominator,
# PluginsRunner)
One declared API for in-tree and out-of-tree plugins alike: the cycle's snapshot, the
nominator, the pods waiting at Permit, the cluster (for evictions and status writes), the
profile's own plugins, and the runners preemption needs to replay Filter on a node.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..api import Pod
from ._cycle_state import CycleState
from ._status import Status
from ._types import NodeInfo, PodInfo

if TYPE_CHECKING:
    from ..cluster import ClusterStore
    from ._interfaces import SharedLister
    from ._metrics import MetricsRecorder
    from ._protocols import Plugin
    from ._waiting import WaitingPod

__all__ = ["Extender", "Handle", "PluginFactory"]


class Extender(Protocol):
    """A configured scheduler extender, as preemption sees it (upstream framework.Extender;
    ``ksched.extender.ExtenderClient`` is the HTTP one)."""

    @property
    def name(self) -> str:
        """Its ``urlPrefix``."""

    @property
    def is_ignorable(self) -> bool:
        """An error skips the extender instead of failing the attempt."""

    @property
    def supports_preemption(self) -> bool:
        """Whether it has a ``preemptVerb``."""

    def is_interested(self, pod: Pod) -> bool:
        """Whether the pod asks for a resource it manages (every pod when it manages none)."""

    async def process_preemption(
        self,
        pod: Pod,
        victims: Mapping[str, tuple[Sequence[Pod], int]],
        nodes: SharedLister,
    ) -> dict[str, tuple[list[Pod], int]]:
        """The candidates it keeps: node -> (victims, PDB violations); raises on failure."""


class Handle(Protocol):
    """What a plugin may use of the engine. Given to plugin factories.

    The engine builds a profile's plugins before the profile itself: the profile-side
    members (``plugins_at``, ``filters_wait`` and the runners) are valid from the first
    scheduling cycle on, not inside the factory.
    """

    # ---- the engine ------------------------------------------------------------------

    @property
    def profile_name(self) -> str:
        """The ``schedulerName`` of the profile the plugin belongs to."""

    @property
    def snapshot(self) -> SharedLister:
        """The current cycle's snapshot of nodes (valid during a cycle)."""

    @property
    def cluster(self) -> ClusterStore:
        """The cluster: objects by kind, and the writes (``evict``, ``update_pod_status``)."""

    @property
    def rng(self) -> random.Random:
        """The scheduler's seeded random source (tie breaks, sampling)."""

    @property
    def parallelism(self) -> int:
        """How many workers a fan-out across nodes may use."""

    def now(self) -> float:
        """The event loop's clock, in seconds (the only clock the engine reads)."""

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        """The labels of a namespace, None when the namespace is unknown."""

    @property
    def metrics(self) -> MetricsRecorder | None:
        """The scheduler's metrics, when it keeps them (plugins may record into them)."""

    @property
    def extenders(self) -> Sequence[Extender]:
        """The configured extenders (``extenders:``), in order; empty when none."""

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
        """Record an Event about ``regarding`` (kube-scheduler's EventRecorder.Eventf)."""

    # ---- waiting pods ----------------------------------------------------------------

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The pod waiting at Permit with this uid, if any."""

    def iterate_waiting_pods(self) -> Iterable[WaitingPod]:
        """Every pod waiting at Permit."""

    def reject_waiting_pod(self, uid: str, plugin: str, message: str) -> bool:
        """Reject a waiting pod (its binding cycle runs Unreserve); False if none waits."""

    # ---- the nominator and the queue --------------------------------------------------

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """Pods nominated to this node by preemption, highest priority first."""

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move these pods (if pending in the queue) to activeQ now."""

    # ---- the profile -----------------------------------------------------------------

    def plugins_at(self, point: str) -> Sequence[tuple[str, Plugin]]:
        """The profile's enabled plugins at an extension point (``"filter"``,
        ``"preFilter"``...), in the order they run."""

    @property
    def filters_wait(self) -> bool:
        """Whether any of the profile's Filter plugins is ``async``."""

    def pre_filter_extensions_active(self, state: CycleState) -> bool:
        """Whether a PreFilter plugin that ran for this cycle has AddPod/RemovePod."""

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        """The profile's Filter on a node, as if the higher-or-equal priority pods
        nominated to it were there (upstream RunFilterPluginsWithNominatedPods)."""

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        """Tell the PreFilter plugins' extensions that ``pod_to_add`` joined the node."""

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        """Tell the PreFilter plugins' extensions that ``pod_to_remove`` left the node."""


PluginFactory = Callable[[Any, Handle], "Plugin"]
"""``factory(args, handle) -> plugin``; args is the plugin's pluginConfig (a dict, or None)."""
