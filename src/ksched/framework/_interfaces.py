"""One protocol per extension point.

# staging/src/k8s.io/kube-scheduler/framework/interface.go
Each method may be a plain ``def`` or an ``async def``; the Framework finds out which
once, when the profile is built. Plugins return ``None`` for success.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs
import numpy as np

from ..api import Pod
from ._cycle_state import CycleState
from ._events import ClusterEventWithHint
from ._status import Code, Status
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
    "UniformScorePlugin",
]

_UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
"""The status of nodes a NodeToStatus does not list, unless told otherwise."""

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
    """Each node's Filter verdict, with a status for the nodes not listed.

    A batch Filter pass hands its rejections over in a compact form (:meth:`of_rows`):
    row numbers and one index per node into a few distinct Status objects. They are
    spelled out into a dict only when a caller reads or changes them node by node;
    :meth:`counts` and ``len`` work on the compact form (a diagnosis of 5000 nodes
    counts its few distinct statuses, not its nodes).
    """

    __slots__ = ("_absent", "_rows", "_statuses")

    def __init__(self, absent: Status | None = None) -> None:
        self._statuses: dict[str, Status] = {}
        self._rows: _Rows | None = None
        self._absent = absent or _UNRESOLVABLE

    @classmethod
    def of_rows(
        cls,
        names: Sequence[str],
        index: Mapping[str, int],
        rows: IntArray,
        which: IntArray,
        distinct: Sequence[Status],
    ) -> NodeToStatus:
        """Node ``names[rows[i]]`` has status ``distinct[which[i]]``, listed in ``rows``
        order (``index``: row by name, the inverse of ``names``; rows are distinct)."""
        statuses = cls()
        statuses._rows = _Rows(names, index, rows, which, distinct)
        return statuses

    def _spelled_out(self) -> dict[str, Status]:
        rows = self._rows
        if rows is not None:
            self._rows = None
            names, distinct = rows.names, rows.distinct
            self._statuses = dict(
                zip(
                    map(names.__getitem__, rows.rows.tolist()),
                    map(distinct.__getitem__, rows.which.tolist()),
                    strict=True,
                )
            )
        return self._statuses

    def set(self, node: str, status: Status) -> None:
        self._spelled_out()[node] = status

    def update(self, statuses: Iterable[tuple[str, Status]] | NodeToStatus) -> None:
        """Set many nodes' statuses at once (another NodeToStatus: its listed nodes)."""
        if isinstance(statuses, NodeToStatus):
            if statuses._rows is not None and not self._statuses and self._rows is None:
                self._rows = statuses._rows  # adopted as it is: neither side changes it
                return
            statuses = statuses.items()
        self._spelled_out().update(statuses)

    def get(self, node: str) -> Status:
        rows = self._rows
        if rows is None:
            return self._statuses.get(node, self._absent)
        found = rows.find(node)
        return self._absent if found is None else found

    def set_absent(self, status: Status) -> None:
        self._absent = status

    @property
    def absent(self) -> Status:
        return self._absent

    def items(self) -> Iterable[tuple[str, Status]]:
        return self._spelled_out().items()

    def values(self) -> Iterable[Status]:
        return self._spelled_out().values()

    def counts(self) -> list[tuple[Status, int]]:
        """Each distinct Status object among the listed nodes and how many nodes have it."""
        rows = self._rows
        if rows is not None:
            times = np.bincount(rows.which, minlength=len(rows.distinct)).tolist()
            return [(s, k) for s, k in zip(rows.distinct, times, strict=True) if k]
        values = self._statuses.values()
        distinct = {id(s): s for s in values}
        return [(distinct[key], k) for key, k in Counter(map(id, values)).items()]

    def __len__(self) -> int:
        rows = self._rows
        return len(self._statuses) if rows is None else len(rows.rows)

    def __contains__(self, node: str) -> bool:
        rows = self._rows
        if rows is None:
            return node in self._statuses
        return rows.find(node) is not None


@attrs.define(eq=False, slots=True)
class _Rows:
    """NodeToStatus's compact form (see :meth:`NodeToStatus.of_rows`)."""

    names: Sequence[str]
    index: Mapping[str, int]
    rows: IntArray
    which: IntArray
    distinct: Sequence[Status]
    by_row: list[int] | None = None
    """Per table row, the index into ``distinct`` (-1: not listed); made on first lookup."""

    def find(self, node: str) -> Status | None:
        row = self.index.get(node)
        if row is None:
            return None
        by_row = self.by_row
        if by_row is None:
            table = np.full(len(self.names), -1, dtype=np.int64)
            table[self.rows] = self.which
            self.by_row = by_row = table.tolist()
        k = by_row[row]
        return None if k < 0 else self.distinct[k]


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


class BatchFilterStatusGroups(Protocol):
    """Optional on a BatchFilterPlugin, preferred to ``filter_batch_statuses``: the same
    statuses grouped, as ``(distinct, which)`` where row ``rows[i]`` gets
    ``distinct[which[i]]``; each entry of ``distinct`` is used by some row."""

    def filter_batch_status_groups(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> tuple[Sequence[Status | None], IntArray]: ...


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


class UniformScorePlugin(BatchScorePlugin, Protocol):
    """A batch Score plugin that can tell, without scoring, when every node gets the same
    score for a pod.

    ``uniform_score`` returns the score (after NormalizeScore, before the weight) that
    every row of ``table`` would get, or None when rows may differ or it cannot tell
    cheaply. Called after PreScore, only when the framework needs just the nodes' totals.
    """

    def uniform_score(self, state: CycleState, pod: Pod, table: NodeTable) -> int | None: ...


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
