"""The fast paths beside the reference path: the same outcome, or they decline.

# pkg/scheduler/framework/runtime/framework.go (what RunFilterPlugins and RunScorePlugins
# decide), runtime/signature.go (equal pods read the same)
``Framework.find_feasible`` and ``Framework.run_score`` ask these first when the snapshot's
NodeTable is given. Each returns exactly what the reference path would (the differential
tests pin one to the other), or None when it cannot, and the reference path runs.

What they keep between cycles rests on the plugins' own promises (``Capabilities``):
Filter masks, every row's Filter verdict and raw Score columns per pod key
(``_row_cache``), the two-pass verdicts on nodes holding nominated pods
(``_nominated_verdicts``); opportunistic batching's rankings (``_opportunistic``) rest
on ``sign_pod``. The switches below turn one of them off (the differential tests flip
them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence

from ...api import Pod
from .._calls import FilterOutcome, ScoreOutcome
from .._cycle_state import CycleState
from .._table import IntArray, NodeTable
from .._types import NodeInfo, PodInfo
from ._filter import BatchFilter
from ._kept import Kept
from ._nominated_verdicts import NominatedVerdicts
from ._reference import ReferencePath
from ._row_cache import RowCache
from ._score import BatchScore

__all__ = ["FastPaths"]


class FastPaths:
    """One profile's fast paths and what they keep (``kept``, with its switches)."""

    def __init__(self, fw: ReferencePath) -> None:
        self.fw = fw
        nominated = NominatedVerdicts(fw.set.node_local_filters, fw.set.row_key)
        self.kept = Kept(RowCache(), nominated)
        self._filter = BatchFilter(fw, self.kept)
        self._score = BatchScore(fw, self.kept)

    # The switches, for the differential tests (see ``Kept``).

    @property
    def batching(self) -> bool:
        return self.kept.batching

    @batching.setter
    def batching(self, on: bool) -> None:
        self.kept.batching = on

    @property
    def verdict_cache(self) -> bool:
        return self.kept.verdict_cache

    @verdict_cache.setter
    def verdict_cache(self, on: bool) -> None:
        self.kept.verdict_cache = on

    @property
    def use_row_cache(self) -> bool:
        return self.kept.use_row_cache

    @use_row_cache.setter
    def use_row_cache(self, on: bool) -> None:
        self.kept.use_row_cache = on

    async def find_feasible(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        table: NodeTable | None,
        start: int,
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None,
        nominated_nodes: Collection[str],
        need_statuses: bool,
        row_key: Hashable | None,
    ) -> FilterOutcome | None:
        """``Framework.find_feasible`` over the table, or without one (a few nodes, such
        as the nominated node alone) with the nominated nodes' kept verdicts; None when
        neither applies (declined)."""
        fw, kept = self.fw, self.kept
        if table is None:
            if not kept.verdict_cache or nominated_for is None or fw.filters_async:
                return None
            two_pass = self._filter.with_nominated_sync
            return fw.filter_nodes_inline(state, pod, nodes, start, limit, nominated_for, two_pass)
        if not kept.batching or not fw.set.filter_batch or not table.exact:
            return None
        return await self._filter.find_feasible(
            state, pod, nodes, table, start, limit, nominated_for, nominated_nodes,
            need_statuses, row_key,
        )  # fmt: skip

    async def score(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        table: NodeTable,
        rows: IntArray,
        row_key: Hashable | None,
        plugin_scores: bool,
    ) -> ScoreOutcome | None:
        """``Framework.run_score`` over the table, or None (declined)."""
        if not self.kept.batching or not table.exact:
            return None
        return await self._score.score(state, pod, nodes, table, rows, row_key, plugin_scores)
