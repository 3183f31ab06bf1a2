"""One protocol per extension point.

# staging/src/k8s.io/kube-scheduler/framework/interface.go
Each method may be a plain ``def`` or an ``async def``; the Framework finds out which
once, when the profile is built. Plugins return ``None`` for success.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from ..api import Pod
from ._cycle_state import CycleState
from ._events import ClusterEventWithHint
from ._status import Status
from ._table import BoolArray, IntArray, NodeTable
from ._types import NodeInfo, PodInfo

if TYPE_CHECKING:
    from ._handle import Handle
    from ._pod_index import PodIndex

__all__ = [
    "BindPlugin",
    "ClosablePlugin",
    "EnqueueExtensions",
    "FilterPlugin",
    "NodeToStatus",
    "PermitPlugin",
    "Plugin",
    "PodGroup",
    "PodGroupPlugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "SharedLister",
]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


@attrs.define(eq=False, slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue, with its attempt bookkeeping.

    ``timestamp`` is when it last entered the queue (or last failed); ``initial_attempt``
    when it was first tried. ``unschedulable_plugins`` are the plugins that rejected its
    last attempt, ``pending_plugins`` those that said Pending.
    """

    pod_info: PodInfo
    timestamp: float = 0.0
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = attrs.field(factory=set)
    pending_plugins: set[str] = attrs.field(factory=set)
    gated: bool = False
    gating_plugin: str = ""
    consecutive_errors: int = 0
    backoff_expiry: float = 0.0
    sequence: int = 0

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod


@attrs.frozen
class PreFilterResult:
    """PreFilter's narrowing of the nodes to evaluate. ``None`` node_names: all nodes."""

    node_names: frozenset[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@attrs.frozen
class PostFilterResult:
    """A PostFilter's answer: the node to nominate (preemption)."""

    nominated_node_name: str | None = None


class NodeToStatus:
    """Each node's Filter verdict, with a status for the nodes not listed."""

    __slots__ = ("_absent", "_statuses")

    def __init__(self, absent: Status | None = None) -> None:
        self._statuses: dict[str, Status] = {}
        from ._status import Code

        self._absent = absent or Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def set(self, node: str, status: Status) -> None:
        self._statuses[node] = status

    def update(self, statuses: Iterable[tuple[str, Status]]) -> None:
        """Set many nodes' statuses at once."""
        self._statuses.update(statuses)

    def get(self, node: str) -> Status:
        return self._statuses.get(node, self._absent)

    def set_absent(self, status: Status) -> None:
        self._absent = status

    @property
    def absent(self) -> Status:
        return self._absent

    def items(self) -> Iterable[tuple[str, Status]]:
        return self._statuses.items()

    def values(self) -> Iterable[Status]:
        return self._statuses.values()

    def __len__(self) -> int:
        return len(self._statuses)

    def __contains__(self, node: str) -> bool:
        return node in self._statuses


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has a unique ``name``."""

    name: str


@runtime_checkable
class ClosablePlugin(Plugin, Protocol):
    """A plugin holding resources (timers, subscriptions, connections) to release.

    The scheduler calls ``close()`` once when it shuts down, in reverse start order
    (the last profile's last plugin first), within the shutdown grace period. It may be
    a plain ``def`` or an ``async def``; an exception is logged, never raised.
    """

    def close(self) -> Awaitable[None] | None: ...


class PreEnqueuePlugin(Plugin, Protocol):
    """Runs before a pod enters activeQ. Non-success holds the pod (gated) until an
    update or event lets it through again; it is never lost."""

    def pre_enqueue(self, pod: Pod) -> Status | Awaitable[Status | None] | None: ...


class QueueSortPlugin(Plugin, Protocol):
    """Orders activeQ. Exactly one per profile."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


class PreFilterExtensions(Protocol):
    """Incremental updates of a PreFilter's state when preemption or nominated pods
    add or remove pods from a node in a what-if evaluation."""

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...


class PreFilterPlugin(Plugin, Protocol):
    """Runs once per attempt before Filter. Returns None (success), a PreFilterResult
    narrowing the nodes, or a Status: SKIP (the plugin's Filter is skipped for this pod),
    UNSCHEDULABLE / UNSCHEDULABLE_AND_UNRESOLVABLE (the attempt fails on every node),
    ERROR."""

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


class FilterPlugin(Plugin, Protocol):
    """Runs per node; the first failing plugin decides the node's status.
    UNSCHEDULABLE_AND_UNRESOLVABLE tells preemption not to try the node."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


class BatchFilterPlugin(FilterPlugin, Protocol):
    """A Filter plugin that can also judge every node at once.

    ``filter_batch`` returns a boolean mask over ``table``'s rows, True where ``filter``
    would pass the node (success or SKIP), or None when it has no batch form for this pod
    (the framework then calls ``filter`` per node). It must agree with ``filter`` exactly;
    ``filter`` still gives the reasons for the nodes it rejects. Called only when
    ``table.exact``.
    """

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None: ...


class BatchFilterStatuses(Protocol):
    """Optional on a BatchFilterPlugin: the statuses ``filter`` gives the nodes of ``rows``
    (all rejected by ``filter_batch``), in ``rows`` order, equal to ``filter`` on each."""

    def filter_batch_statuses(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> Sequence[Status | None]: ...


class PostFilterPlugin(Plugin, Protocol):
    """Runs only when no node is feasible, in order, until one succeeds (preemption)."""

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]: ...


class PreScorePlugin(Plugin, Protocol):
    """Runs once before Score with the feasible nodes. SKIP: the plugin does not score."""

    def pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None: ...


class ScoreExtensions(Protocol):
    def normalize_score(
        self, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None: ...


class ScorePlugin(Plugin, Protocol):
    """Scores a feasible node (0..100 after normalization); weighted and summed."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


class BatchScorePlugin(ScorePlugin, Protocol):
    """A Score plugin that can also score many nodes at once.

    ``score_batch`` returns the scores of ``table``'s ``rows`` (int64, in ``rows`` order),
    equal to ``score`` on each, or None to be scored per node for this pod. Called only
    when ``table.exact``.
    """

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None: ...


class BatchScoreExtensions(ScoreExtensions, Protocol):
    """NormalizeScore over an array of scores (in place), equal to ``normalize_score``."""

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> None: ...


class ReservePlugin(Plugin, Protocol):
    """Reserve runs in order after a node is chosen; on any failure (here or later)
    Unreserve runs on every Reserve plugin in reverse order. Unreserve must be idempotent."""

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


class PermitPlugin(Plugin, Protocol):
    """Approves, rejects, or delays (``Status.wait(timeout)``) the binding of a pod."""

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


class BindPlugin(Plugin, Protocol):
    """The first Bind plugin that does not return SKIP binds the pod."""

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


class PodGroup(Protocol):
    """A pod group as the pod-group cycle sees it."""

    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def min_count(self) -> int: ...


class PodGroupPlugin(Plugin, Protocol):
    """Places pod groups in one pod-group cycle (upstream PlacementFeasible, with the
    questions the cycle asks about the group)."""

    def pod_group(self, pod: Pod) -> PodGroup | None:
        """The group the cycle should place with ``pod``, or None (scheduled alone)."""
        ...

    def unscheduled_members(self, group: Any) -> list[Pod]: ...

    def scheduled_count(self, group: Any) -> int: ...

    def placement_feasible(self, group: Any, remaining: int, scheduled: int) -> Status:
        """Unschedulable: the group cannot reach its minimum; Wait: it still may;
        Success: it has."""
        ...


class EnqueueExtensions(Plugin, Protocol):
    """The cluster events that may make a pod this plugin rejected schedulable."""

    def events_to_register(self) -> Sequence[ClusterEventWithHint]: ...


class SharedLister(Protocol):
    """Read access to the cycle's snapshot of nodes."""

    def list(self) -> Sequence[NodeInfo]: ...

    def get(self, node_name: str) -> NodeInfo | None: ...

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]: ...

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]: ...

    @property
    def pod_index(self) -> PodIndex | None:
        """The snapshot's pod index (pods by label, per-node counts), if it keeps one."""


PluginFactory = Callable[[Any, "Handle"], Plugin]
"""``factory(args, handle) -> plugin``; args is the plugin's pluginConfig (a dict, or None)."""
