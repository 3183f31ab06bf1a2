"""What the extension points exchange: queued pods, PreFilter and PostFilter results,
each node's Filter verdict, the snapshot's lister.

# staging/src/k8s.io/kube-scheduler/framework/interface.go
The protocols plugins implement are in ``_protocols`` (the author's) and
``_batch_protocols`` (the batch forms).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs
import numpy as np

from ..api import Pod
from ._status import Code, Status
from ._table import IntArray
from ._types import NodeInfo, PodInfo

if TYPE_CHECKING:
    from ._pod_index import PodIndex

__all__ = [
    "NodeToStatus",
    "PostFilterResult",
    "PreFilterResult",
    "QueuedPodInfo",
    "SharedLister",
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


class SharedLister(Protocol):
    """Read access to the cycle's snapshot of nodes."""

    def list(self) -> Sequence[NodeInfo]: ...

    def get(self, node_name: str) -> NodeInfo | None: ...

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]: ...

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]: ...

    @property
    def pod_index(self) -> PodIndex | None:
        """The snapshot's pod index (pods by label, per-node counts), if it keeps one."""
