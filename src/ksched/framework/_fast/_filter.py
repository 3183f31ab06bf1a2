"""Filter over the NodeTable: batch masks, kept masks, kept verdicts, nominated sweeps.

# pkg/scheduler/schedule_one.go findNodesThatPassFilters, framework.go RunFilterPlugins
The same outcome as the per-node reference path (``Framework._filter_nodes``): the same
feasible nodes in the same order, the same count of examined nodes, and each rejected
node the status the per-node chain gives it. A pass declines (None) when no Filter has a
batch form for the pod, or a node is not in the table.

The ways through it, fastest first:

1. a pod like an earlier one whose Filters are all node-local: the mask kept for its key,
   with the rows changed since judged again (``RowCache.mask``);
2. the whole-table mask, from the kept verdicts of every row or from the batch forms, read
   from ``start`` without statuses while some node passes;
3. the positions in the order the per-node path examines them: nodes holding nominated
   pods and plugins without a batch form judged one by one (nominated verdicts kept per
   node and swept across cycles), the others read from the mask; the rejected nodes'
   statuses from the kept verdicts or the batch forms.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence

import attrs
import numpy as np

from ...api import Pod
from .._calls import FilterOutcome, PluginCall, fault_status, is_mask, run_filters_sync
from .._cycle_state import CycleState
from .._interfaces import NodeToStatus
from .._metrics import MetricsRecorder
from .._parallel import run_chunked
from .._plugin_metrics import FILTER, call_timed
from .._status import SUCCESS, Code, Status
from .._table import BoolArray, IntArray, NodeRows, NodeTable
from .._types import NodeInfo, PodInfo
from ._kept import Kept
from ._nominated_verdicts import RowVerdicts, Sweep
from ._reference import ReferencePath
from ._rejections import batch_rejections, index_in, listed, merge_found
from ._scan import first_passing_rows

__all__ = ["BatchFilter"]


_NO_ROWS: IntArray = np.zeros(0, dtype=np.int64)
_NO_VERDICTS: BoolArray = np.zeros(0, dtype=np.bool_)
_NO_ROWS.flags.writeable = _NO_VERDICTS.flags.writeable = False  # shared: replaced, never filled


@attrs.define(eq=False, slots=True)
class _Pass:
    """One pod's batch Filter pass: its inputs and what the steps found so far."""

    state: CycleState
    pod: Pod
    table: NodeTable
    filters: Sequence[PluginCall]
    start: int
    limit: int
    nominated_for: Callable[[str], Sequence[PodInfo]] | None
    nominated_nodes: Collection[str]
    need_statuses: bool
    recorder: MetricsRecorder | None
    key: Hashable | None = None
    """The pod's key for kept masks and verdicts (None: nothing is kept for it)."""
    mask: BoolArray | None = None
    masks: list[tuple[PluginCall, BoolArray]] = attrs.field(factory=list)
    per_node: list[PluginCall] = attrs.field(factory=list)
    kept_rows: RowVerdicts | None = None
    order: IntArray = attrs.field(factory=lambda: _NO_ROWS)
    """Table rows in the order the per-node path examines them."""
    ok: BoolArray = attrs.field(factory=lambda: _NO_VERDICTS)
    """Per position: the mask passes it."""
    special: BoolArray | None = None
    """Per position: the node holds nominated pods (judged one by one)."""
    processed: int = 0
    feasible_pos: list[int] = attrs.field(factory=list)
    found: dict[int, Status] = attrs.field(factory=dict)
    """Statuses of positions judged one by one."""
    error: Status | None = None
    decided: IntArray | None = None
    """Nominated nodes' positions a kept rejection decides."""
    sweep: Sweep | None = None

    @property
    def has_nominated(self) -> bool:
        return _has_nominated(self.nominated_for, self.nominated_nodes)


def _has_nominated(
    nominated_for: Callable[[str], Sequence[PodInfo]] | None, nominated_nodes: Collection[str]
) -> bool:
    """Whether some node examined holds nominated pods (they are then judged one by one)."""
    return nominated_for is not None and bool(nominated_nodes)


class BatchFilter:
    """A profile's batch Filter passes (see the module docstring)."""

    def __init__(self, fw: ReferencePath, kept: Kept) -> None:
        self.fw = fw
        self.set = fw.set
        self.kept = kept
        self._local_for: dict[frozenset[str], bool] = {}

    def _filters_local(self, skip: frozenset[str]) -> bool:
        """Whether every Filter that runs (not in ``skip``) is node-local with a batch form."""
        local = self._local_for.get(skip)
        if local is None:
            kept = self.set.kept_filters
            local = self._local_for[skip] = all(
                c.plugin in kept for c in self.set.filter if c.plugin not in skip
            )
        return local

    async def find_feasible(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        table: NodeTable,
        start: int,
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None,
        nominated_nodes: Collection[str],
        need_statuses: bool,
        row_key: Hashable | None,
    ) -> FilterOutcome | None:
        """Filter with batch masks; None when no plugin has a batch form for this pod."""
        recorder = state.metrics if state.record_plugin_metrics else None
        filters = self.fw.calls_for(state, FILTER, self.set.filter)
        # Verdicts can be kept by row for this pod's key: every Filter reads its own node.
        key: Hashable | None = None
        skip = state.skip_filter_plugins
        if row_key is not None and recorder is None and nodes is table.infos:
            key = (row_key, skip) if self._filters_local(skip) else None
        paths = self.kept
        has_nominated = _has_nominated(nominated_for, nominated_nodes)
        keeps_mask = key is not None and paths.use_row_cache
        if keeps_mask and not need_statuses and not has_nominated:
            fast = self._from_kept_mask(state, pod, table, filters, key, start, limit)
            if fast is not None:
                return fast
        p = _Pass(state, pod, table, filters, start, limit, nominated_for, nominated_nodes,
                  need_statuses, recorder, key)  # fmt: skip
        if p.key is not None and paths.verdict_cache:
            p.kept_rows = self._kept_row_verdicts(p)
        if p.kept_rows is not None:
            p.mask = p.kept_rows.mask()
        else:
            self._batch_masks(p)
        if p.mask is None:
            return None
        if keeps_mask and not need_statuses and not has_nominated and not p.per_node:
            paths.row_cache.keep_mask(p.key, table, p.mask)
        if nodes is table.infos and not p.per_node and not has_nominated and not need_statuses:
            scanned = first_passing_rows(p.mask, start, limit)
            if scanned is not None:
                return _feasible_rows(table, *scanned)
        if not self._order(p, nodes):
            return None
        await self._examine(p)
        statuses, rejecting = NodeToStatus(), set[str]()
        if need_statuses or not p.feasible_pos:
            statuses, rejecting = await self._rejections(p)
        feasible_rows = p.order[p.feasible_pos]
        infos = NodeRows(table.infos, feasible_rows)
        return FilterOutcome(infos, statuses, p.processed, rejecting, p.error, feasible_rows)

    def with_nominated_sync(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: Sequence[PodInfo]
    ) -> Status:
        """The two-pass Filter on a node holding nominated pods (all Filters plain
        ``def``). When every Filter that runs for the pod is node-local, the verdict is
        kept per node and read back while the node, its nominated pods and what those
        Filters read of the pod stay the same."""
        verdicts, fw = self.kept.nominated, self.fw
        key = verdicts.key(state, pod, self.set.filter_plugins) if self.kept.verdict_cache else None
        if key is not None:
            known = verdicts.get(node_info, nominated, pod, key)
            if known is not None:
                return known
        status = fw.run_filter_with_nominated_pods_sync(state, pod, node_info, nominated)
        if key is not None and status.code is not Code.ERROR:
            verdicts.put(node_info, nominated, pod, key, status)
        return status

    # ---- the whole-table mask -----------------------------------------------------

    def _from_kept_mask(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        filters: Sequence[PluginCall],
        key: Hashable,
        start: int,
        limit: int,
    ) -> FilterOutcome | None:
        """The hot path for a pod like an earlier one: the kept mask, only the rows changed
        since judged again (the whole-table scan is the same as below)."""
        infos = table.infos

        def judge(row: int) -> bool | None:
            status = run_filters_sync(filters, state, pod, infos[row])
            return None if status.code is Code.ERROR else status.is_success

        kept = self.kept.row_cache.mask(key, table, judge)
        if kept is None:
            return None
        scanned = first_passing_rows(kept[0], start, limit, kept[1])
        return _feasible_rows(table, *scanned) if scanned is not None else None

    def _kept_row_verdicts(self, p: _Pass) -> RowVerdicts | None:
        """Every row's verdict, kept once a cycle needed every node's status (a pod that
        fits nowhere): only the rows changed since are judged again."""
        state, pod, filters, infos = p.state, p.pod, p.filters, p.table.infos

        def judge_status(row: int) -> Status:
            return run_filters_sync(filters, state, pod, infos[row])

        return self.kept.nominated.row_verdicts(p.key, p.table, judge_status)

    def _batch_masks(self, p: _Pass) -> None:
        """Each active Filter's batch mask (ANDed into ``p.mask``), or the plugin goes to
        ``p.per_node`` when it has none for this pod (or a faulty one)."""
        skip = p.state.skip_filter_plugins
        batches = self.set.filter_batch
        for call in p.filters:
            if call.plugin in skip:
                continue
            batch = batches.get(call.plugin)
            result = None
            if batch is not None:
                try:
                    if p.recorder is None:
                        result = batch(p.state, p.pod, p.table)
                    else:
                        result = call_timed(
                            p.recorder, call.plugin, FILTER, batch, p.state, p.pod, p.table
                        )
                except Exception:
                    result = None  # the per-node method reports the fault
                if result is not None and not is_mask(result, len(p.table)):
                    result = None  # not a mask over the table: judge per node
            if result is None:
                p.per_node.append(call)
            else:
                p.masks.append((call, result))
                p.mask = result if p.mask is None else p.mask & result

    # ---- the positions in evaluation order ----------------------------------------

    def _order(self, p: _Pass, nodes: Sequence[NodeInfo]) -> bool:
        """The examined rows in order from ``start``, their mask, and the nominated
        nodes among them; False when a node is not in the table."""
        table = p.table
        n = len(nodes)
        if nodes is table.infos:
            rows = np.arange(n, dtype=np.int64)
        else:
            index = table.index
            try:
                rows = np.fromiter((index[info.name] for info in nodes), np.int64, n)
            except KeyError:
                return False
        p.order = np.concatenate((rows[p.start :], rows[: p.start])) if p.start else rows
        assert p.mask is not None
        p.ok = p.mask[p.order]
        if p.has_nominated:
            special = self.kept.nominated.nominated_rows(table, p.nominated_nodes)[p.order]
            p.special = special if special.any() else None
        return True

    async def _examine(self, p: _Pass) -> None:
        """Walk the positions until ``limit`` pass: fills the feasible positions, the
        statuses judged one by one, the examined count and the first error."""
        n = len(p.order)
        if not p.per_node and p.special is None:
            passing = p.ok.nonzero()[0]
            if 0 < p.limit <= len(passing):
                passing = passing[: p.limit]
                p.processed = int(passing[-1]) + 1
            else:
                p.processed = n
            p.feasible_pos = passing.tolist()
        elif self.fw.filters_async:
            await self._examine_fanned(p)
        else:
            self._examine_inline(p)

    def _examine_inline(self, p: _Pass) -> None:
        """Plain Filters: the candidate positions in order, nominated nodes by their kept
        verdicts (a sweep), the plugins without a batch form by the per-node chain."""
        p.processed = len(p.order)
        candidates = p.ok if p.special is None else p.ok | p.special
        if p.special is not None and self.kept.verdict_cache:
            p.sweep = self.kept.nominated.sweep(
                p.state, p.pod, self.set.filter_plugins, p.table, p.nominated_nodes
            )
            if p.sweep is not None and not p.per_node and p.sweep.rejects:
                # Kept rejections are taken as arrays; other nominated nodes one by one.
                decided_mask = p.sweep.rejected_at(p.order, p.special)
                candidates = candidates & ~decided_mask
                p.decided = decided_mask.nonzero()[0]
        infos = p.table.infos
        for pos in candidates.nonzero()[0].tolist():
            info = infos[p.order[pos]]
            if p.special is not None and p.special[pos]:
                status = self._nominated_verdict(p, info)
            else:
                status = run_filters_sync(p.per_node, p.state, p.pod, info)
            if status.is_success:
                p.feasible_pos.append(pos)
                if len(p.feasible_pos) >= p.limit:
                    p.processed = pos + 1
                    break
            elif status.code is Code.ERROR:
                p.error, p.processed = status, pos + 1
                break
            else:
                p.found[pos] = status

    def _nominated_verdict(self, p: _Pass, info: NodeInfo) -> Status:
        """The two-pass verdict on a node holding nominated pods: swept, kept, or judged."""
        assert p.nominated_for is not None
        swept = p.sweep.get(info.name) if p.sweep is not None else None
        if swept is not None:
            return swept
        status = self.with_nominated_sync(p.state, p.pod, info, p.nominated_for(info.name))
        return p.sweep.keep(info.name, status) if p.sweep is not None else status

    async def _examine_fanned(self, p: _Pass) -> None:
        """Async Filters: the per-node chain fanned out over the candidate positions, in
        order, until ``limit`` pass."""
        infos = p.table.infos
        ordered = [infos[r] for r in p.order.tolist()]
        candidates = (p.ok if p.special is None else p.ok | p.special).nonzero()[0].tolist()
        passed: list[int] = []
        examined: list[int] = []

        async def check(i: int) -> bool:
            pos = candidates[i]
            info = ordered[pos]
            if p.special is not None and p.special[pos]:
                assert p.nominated_for is not None
                nominated = p.nominated_for(info.name)
                status = await self.fw.run_filter_with_nominated_pods(
                    p.state, p.pod, info, nominated
                )
            else:
                status = await _run_filters(p.per_node, p.state, p.pod, info)
            if len(passed) >= p.limit or p.error is not None:
                return False
            examined.append(pos)
            if status.is_success:
                passed.append(pos)
                return len(passed) < p.limit
            if status.code is Code.ERROR:
                p.error = status
                return False
            p.found[pos] = status
            return True

        await run_chunked(len(candidates), self.fw.parallelism, check)
        p.feasible_pos.extend(sorted(passed))
        stopped = len(passed) >= p.limit or p.error is not None
        p.processed = max(examined) + 1 if stopped and examined else len(ordered)

    # ---- the rejected nodes' statuses ---------------------------------------------

    async def _rejections(self, p: _Pass) -> tuple[NodeToStatus, set[str]]:
        """The statuses of the examined nodes that did not pass, and the rejecting plugins."""
        rejected = (~p.ok[: p.processed]).nonzero()[0]
        if p.special is not None:
            rejected = rejected[~p.special[rejected]]
        if p.per_node:
            return await self._rejections_per_node(p, rejected)
        if p.kept_rows is None and p.key is not None and self.kept.verdict_cache:
            p.kept_rows = self._keep_row_verdicts(p)
        if p.decided is not None:
            p.decided = p.decided[p.decided < p.processed]
        if p.kept_rows is not None:
            positions, which, distinct = self._kept_rejections(p, p.kept_rows)
        else:
            positions, which, distinct = batch_rejections(
                self.fw.plugins, p.state, p.pod, p.table, p.order, rejected, p.masks
            )
            if p.decided is not None and len(p.decided):
                assert p.sweep is not None
                positions, which = p.sweep.merge(positions, which, distinct, p.decided, p.order)
            if p.found:  # nominated nodes judged one by one: merge in position order
                positions, which = merge_found(positions, which, distinct, p.found)
        table = p.table
        statuses = NodeToStatus.of_rows(
            table.names, table.index, p.order[positions], which, distinct
        )
        return statuses, {status.plugin for status in distinct}

    async def _rejections_per_node(
        self, p: _Pass, rejected: IntArray
    ) -> tuple[NodeToStatus, set[str]]:
        """A per-node plugin may come first in the chain: ask the whole chain."""
        infos, found = p.table.infos, p.found
        for pos in rejected.tolist():
            info = infos[p.order[pos]]
            if self.fw.filters_async:
                status = await self.fw.run_filter(p.state, p.pod, info)
            else:
                status = run_filters_sync(p.filters, p.state, p.pod, info)
            if not status.is_success:
                found[pos] = status
        statuses = NodeToStatus()
        names = p.table.names
        statuses.update((names[p.order[pos]], found[pos]) for pos in sorted(found))
        return statuses, {status.plugin for status in found.values()}

    def _kept_rejections(
        self, p: _Pass, kept: RowVerdicts
    ) -> tuple[IntArray, IntArray, list[Status]]:
        """Each examined position's status index in one array: the kept verdicts, the
        nominated nodes' own in their place."""
        at = kept.at(p.order, p.processed)
        if p.special is not None:
            at[p.special[: p.processed]] = -1
        distinct = list(kept.distinct)
        if p.decided is not None and len(p.decided):
            assert p.sweep is not None
            p.sweep.scatter(at, distinct, p.decided, p.order)
        for pos, status in p.found.items():
            at[pos] = index_in(distinct, status)
        return listed(at, distinct)

    def _keep_row_verdicts(self, p: _Pass) -> RowVerdicts | None:
        """The batch forms' verdicts on every row, kept for the pod's key; None when a
        status is missing or an error (the pass then reports as it does without them)."""
        assert p.mask is not None
        table = p.table
        rows = np.arange(len(table), dtype=np.int64)
        rejected = (~p.mask).nonzero()[0]
        positions, which, distinct = batch_rejections(
            self.fw.plugins, p.state, p.pod, table, rows, rejected, p.masks
        )
        if len(positions) != len(rejected) or any(s.code is Code.ERROR for s in distinct):
            return None
        by_row = np.full(len(table), -1, dtype=np.int64)
        by_row[rejected] = which
        return self.kept.nominated.keep_row_verdicts(p.key, table, by_row, distinct)


def _feasible_rows(table: NodeTable, processed: int, feasible_rows: IntArray) -> FilterOutcome:
    """A mask scan's outcome: feasible rows, no statuses."""
    return FilterOutcome(
        NodeRows(table.infos, feasible_rows), NodeToStatus(), processed, set(), None, feasible_rows
    )


async def _run_filters(
    calls: Sequence[PluginCall], state: CycleState, pod: Pod, node_info: NodeInfo
) -> Status:
    """``calls`` (some async) on one node, in order; the first failure decides."""
    skip = state.skip_filter_plugins
    for call in calls:
        if call.plugin in skip:
            continue
        try:
            result = call.fn(state, pod, node_info)
            if call.is_async:
                result = await result
            status: Status | None = result
        except Exception as exc:
            return fault_status(call.plugin, "Filter", exc)
        if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
            return status.with_plugin(call.plugin)
    return SUCCESS
