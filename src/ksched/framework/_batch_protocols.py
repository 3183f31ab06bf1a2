"""The batch forms of Filter and Score: all nodes at once, over the snapshot's NodeTable.

A batch form must give exactly the per-node method's results (the per-node method stays
the definition and gives the reasons); the framework prefers it when present and the
table is exact. Differential tests pin one to the other. All are plain ``def``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..api import Pod
from ._cycle_state import CycleState
from ._protocols import FilterPlugin, ScoreExtensions, ScorePlugin
from ._status import Status
from ._table import BoolArray, IntArray, NodeTable

__all__ = [
    "BatchFilterPlugin",
    "BatchFilterStatusGroups",
    "BatchFilterStatuses",
    "BatchScoreExtensions",
    "BatchScorePlugin",
    "UniformScorePlugin",
]


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
