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
from typing import TYPE_CHECKING

from ...api import Pod
from .._calls import FilterOutcome, ScoreOutcome
from .._cycle_state import CycleState
from .._status import Code, Status
from .._table import IntArray, NodeTable
from .._types import NodeInfo, PodInfo
from ._filter import BatchFilter
from ._nominated_verdicts import NominatedVerdicts
from ._row_cache import RowCache
from ._score import BatchScore

if TYPE_CHECKING:
    from .._runtime import Framework

__all__ = ["FastPaths"]


class FastPaths:
    """One profile's fast paths and what they keep."""

    def __init__(self, fw: Framework) -> None:
        self.fw = fw
        self.batching = True
        """Use plugins' batch forms when the snapshot's table allows (off: per node only)."""
        self.verdict_cache = True
        """Keep Filter verdicts between cycles when the pod's Filters are node-local
        (nominated nodes' two-pass verdicts, every row's verdict for pods that fit nowhere)."""
        self.use_row_cache = True
        """Read kept masks and columns for equal pods (off: batch forms every cycle)."""
        self.row_cache = RowCache()
        """Filter masks and Score columns kept per pod key between cycles."""
        self.nominated = NominatedVerdicts(fw.set.node_local_filters, fw.set.row_key)
        """Per node: the two-pass Filter verdict, for pods whose Filters are node-local."""
        self._filter = BatchFilter(self)
        self._score = BatchScore(self)

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
        fw = self.fw
        if table is None:
            if not self.verdict_cache or nominated_for is None or fw.filters_async:
                return None
            return fw.filter_nodes_inline(
                state, pod, nodes, start, limit, nominated_for, self.filter_with_nominated_sync
            )
        if not self.batching or not fw.set.filter_batch or not table.exact:
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
        if not self.batching or not table.exact:
            return None
        return await self._score.score(state, pod, nodes, table, rows, row_key, plugin_scores)

    def filter_with_nominated_sync(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: Sequence[PodInfo]
    ) -> Status:
        """The two-pass Filter on a node holding nominated pods (all Filters plain
        ``def``). When every Filter that runs for the pod is node-local, the verdict is
        kept per node and read back while the node, its nominated pods and what those
        Filters read of the pod stay the same."""
        verdicts, fw = self.nominated, self.fw
        key = verdicts.key(state, pod, fw.set.filter_plugins) if self.verdict_cache else None
        if key is not None:
            kept = verdicts.get(node_info, nominated, pod, key)
            if kept is not None:
                return kept
        status = fw.run_filter_with_nominated_pods_sync(state, pod, node_info, nominated)
        if key is not None and status.code is not Code.ERROR:
            verdicts.put(node_info, nominated, pod, key, status)
        return status
