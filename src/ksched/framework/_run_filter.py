"""Filter across nodes: inline, in batch over the NodeTable, or fanned out.

# pkg/scheduler/framework/runtime/framework.go (RunFilterPlugins,
# RunFilterPluginsWithNominatedPods), schedule_one.go findNodesThatPassFilters
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence

import numpy as np

from ..api import Pod
from ._calls import (
    FilterOutcome,
    PluginCall,
    fault_status,
    is_mask,
    run_filters_sync,
)
from ._cycle_state import CycleState
from ._framework_base import FrameworkBase
from ._interfaces import (
    NodeToStatus,
)
from ._nominated_verdicts import RowVerdicts
from ._parallel import run_chunked
from ._plugin_metrics import FILTER, call_timed
from ._status import SUCCESS, Code, Status
from ._table import BoolArray, IntArray, NodeRows, NodeTable
from ._types import NodeInfo, PodInfo

__all__ = ["FilterRunner"]

_WITH_NOMINATED_LIMIT = 10_000


class FilterRunner(FrameworkBase):
    """Filter: one node, with nominated pods, and the search for feasible nodes."""

    # ---- Filter -------------------------------------------------------------------

    def run_filter_sync(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter plugins on one node, inline; the first failure decides.

        Only valid when no Filter plugin is async (``filters_async`` is False).
        """
        calls = self._filter
        if state.record_plugin_metrics:
            calls = self._calls(state, FILTER, calls)
        return run_filters_sync(calls, state, pod, node_info)

    async def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter plugins on one node; the first failure decides."""
        if not self.filters_async:
            return self.run_filter_sync(state, pod, node_info)
        return await self._run_filters(
            self._calls(state, FILTER, self._filter), state, pod, node_info
        )

    async def _run_filters(
        self, calls: Sequence[PluginCall], state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
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

    def _add_nominated(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: Sequence[PodInfo]
    ) -> tuple[CycleState, NodeInfo] | Status | None:
        """State and node with the higher-or-equal priority nominated pods added.

        None when no such pod is nominated here; a Status when an AddPod extension failed.
        # framework.go addGENominatedPods
        """
        candidates = tuple(
            p for p in nominated if p.pod.priority >= pod.priority and p.pod.uid != pod.uid
        )
        if not candidates:
            return None
        if self._extensions_for(state):
            state_with = state.clone()
            info_with = node_info.clone()
            for p in candidates:
                info_with.add_pod(p)
                status = self.run_pre_filter_extension_add_pod(state_with, pod, p, info_with)
                if not status.is_success:
                    return status
            return state_with, info_with
        # No AddPod extension runs: the state is not changed, and the node with these
        # nominated pods is the same for every pod that sees them.
        kept = self._with_nominated.get(node_info.name)
        if (
            kept is not None
            and kept[0] is node_info
            and kept[1] == node_info.generation
            and len(kept[2]) == len(candidates)
            and all(a is b for a, b in zip(kept[2], candidates, strict=True))
        ):
            return state, kept[3]
        info_with = node_info.clone()
        for p in candidates:
            info_with.add_pod(p)
        if len(self._with_nominated) >= _WITH_NOMINATED_LIMIT:
            self._with_nominated.clear()
        self._with_nominated[node_info.name] = (
            node_info,
            node_info.generation,
            candidates,
            info_with,
        )
        return state, info_with

    async def run_filter_with_nominated_pods(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        nominated: Sequence[PodInfo],
    ) -> Status:
        """Filter as upstream's two passes when higher-or-equal priority pods are
        nominated to the node: first with them added, then without.

        # framework.go RunFilterPluginsWithNominatedPods
        """
        added = self._add_nominated(state, pod, node_info, nominated)
        if isinstance(added, Status):
            return added
        if added is not None:
            status = await self.run_filter(added[0], pod, added[1])
            if not status.is_success:
                return status
        return await self.run_filter(state, pod, node_info)

    def run_filter_with_nominated_pods_sync(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        nominated: Sequence[PodInfo],
    ) -> Status:
        """:meth:`run_filter_with_nominated_pods` for profiles whose Filters are all sync.

        When every Filter that runs for the pod is node-local, the verdict is kept per
        node and read back while the node, its nominated pods and what those Filters
        read of the pod stay the same (see ``_nominated_verdicts``).
        """
        verdicts = self._nominated_verdicts
        key = verdicts.key(state, pod, self._filter_plugins) if self.verdict_cache else None
        if key is not None:
            kept = verdicts.get(node_info, nominated, pod, key)
            if kept is not None:
                return kept
        status = self._filter_with_nominated_sync(state, pod, node_info, nominated)
        if key is not None and status.code is not Code.ERROR:
            verdicts.put(node_info, nominated, pod, key, status)
        return status

    def _filter_with_nominated_sync(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        nominated: Sequence[PodInfo],
    ) -> Status:
        added = self._add_nominated(state, pod, node_info, nominated)
        if isinstance(added, Status):
            return added
        if added is not None:
            status = self.run_filter_sync(added[0], pod, added[1])
            if not status.is_success:
                return status
        return self.run_filter_sync(state, pod, node_info)

    async def find_feasible(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        start: int,
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None = None,
        nominated_nodes: Collection[str] = (),
        table: NodeTable | None = None,
        need_statuses: bool = True,
        row_key: Hashable | None = None,
    ) -> FilterOutcome:
        """Filter nodes from ``start`` (rotating) until ``limit`` feasible were found.

        With ``table`` (the snapshot's, holding every node of ``nodes``) the plugins'
        batch forms judge all nodes at once; ``nominated_nodes`` names the nodes that
        have nominated pods, which take the per-node two-pass filter. With the pod's
        ``row_key`` (``Framework.row_key``) the mask of an earlier equal pod is reused where
        rows did not change.
        # schedule_one.go findNodesThatPassFilters
        """
        outcome = await self._find_feasible(
            state,
            pod,
            nodes,
            start=start,
            limit=limit,
            nominated_for=nominated_for,
            nominated_nodes=nominated_nodes,
            table=table,
            need_statuses=need_statuses,
            row_key=row_key,
        )
        if state.metrics is not None and self._filter:
            # Every Filter plugin that is not skipped counts each node examined (upstream
            # counts a node's plugins up to its first rejection: docs/metrics.md).
            names = self._evaluated_names(FILTER, self._filter, state.skip_filter_plugins)
            state.metrics.plugin_evaluations(FILTER, self.profile_name, names, outcome.processed)
        return outcome

    async def _find_feasible(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        start: int,
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None,
        nominated_nodes: Collection[str],
        table: NodeTable | None,
        need_statuses: bool,
        row_key: Hashable | None,
    ) -> FilterOutcome:
        if table is not None and self.batching and self._filter_batch and table.exact:
            outcome = await self._find_feasible_batch(
                state,
                pod,
                nodes,
                table,
                start=start,
                limit=limit,
                nominated_for=nominated_for,
                nominated_nodes=nominated_nodes,
                need_statuses=need_statuses,
                row_key=row_key,
            )
            if outcome is not None:
                return outcome
        n = len(nodes)
        feasible: list[NodeInfo] = []
        statuses = NodeToStatus()
        rejecting: set[str] = set()
        if not self._filter:
            take = min(limit, n)
            feasible = [nodes[(start + i) % n] for i in range(take)]
            return FilterOutcome(feasible, statuses, take, rejecting)
        error: Status | None = None
        if not self.filters_async:
            calls = self._calls(state, FILTER, self._filter)
            for i in range(n):
                info = nodes[(start + i) % n]
                nominated = nominated_for(info.name) if nominated_for is not None else None
                if nominated:
                    status = self.run_filter_with_nominated_pods_sync(state, pod, info, nominated)
                else:
                    status = run_filters_sync(calls, state, pod, info)
                if status is SUCCESS:
                    feasible.append(info)
                    if len(feasible) >= limit:
                        break
                elif status.code is Code.ERROR:
                    error = status
                    break
                else:
                    statuses.set(info.name, status)
                    rejecting.add(status.plugin)
            return FilterOutcome(
                feasible, statuses, len(feasible) + len(statuses), rejecting, error
            )

        slots: list[NodeInfo | None] = [None] * n

        async def check(i: int) -> bool:
            nonlocal error
            info = nodes[(start + i) % n]
            if nominated_for is not None:
                nominated = nominated_for(info.name)
                status = await self.run_filter_with_nominated_pods(state, pod, info, nominated)
            else:
                status = await self.run_filter(state, pod, info)
            if status.is_success:
                if len(feasible) >= limit:
                    return False
                feasible.append(info)
                slots[i] = info
                return len(feasible) < limit
            if status.code is Code.ERROR:
                error = status
                return False
            failed[i] = (info.name, status)
            return True

        failed: dict[int, tuple[str, Status]] = {}
        await run_chunked(n, self.parallelism, check)
        # Statuses in evaluation order, whatever order the workers finished in.
        statuses.update(failed[i] for i in sorted(failed))
        rejecting.update(status.plugin for _, status in failed.values())
        ordered = [info for info in slots if info is not None]
        return FilterOutcome(ordered, statuses, len(ordered) + len(statuses), rejecting, error)

    async def _find_feasible_batch(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        table: NodeTable,
        *,
        start: int,
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None,
        nominated_nodes: Collection[str],
        need_statuses: bool,
        row_key: Hashable | None,
    ) -> FilterOutcome | None:
        """Filter with batch masks; None when no plugin has a batch form for this pod.

        Equal to the per-node path: the same feasible nodes in the same order, the same
        count of examined nodes; rejected nodes get their status from the per-node chain.
        """
        skip = state.skip_filter_plugins
        mask: BoolArray | None = None
        per_node: list[PluginCall] = []
        masks: list[tuple[PluginCall, BoolArray]] = []
        filters = self._calls(state, FILTER, self._filter)
        recorder = state.metrics if state.record_plugin_metrics else None
        has_nominated = nominated_for is not None and bool(nominated_nodes)
        # The hot path for a pod like an earlier one: only the rows changed since are
        # judged again (the whole-table scan is the same as below).
        # Verdicts can be kept by row for this pod's key: every Filter reads its own node.
        keyable = (
            row_key is not None
            and recorder is None
            and nodes is table.infos
            and self._filters_local(skip)
        )
        kept_key: Hashable | None = None
        if keyable and self.use_row_cache and not need_statuses and not has_nominated:
            kept_key = (row_key, skip)

            def judge(row: int) -> bool | None:
                status = run_filters_sync(filters, state, pod, table.infos[row])
                return None if status.code is Code.ERROR else status.is_success

            kept = self.row_cache.mask(kept_key, table, judge)
            if kept is not None:
                fast = self._first_passing_rows(kept[0], start, limit, kept[1])
                if fast is not None:
                    return self._fast_outcome(table, *fast)
        # Every row's verdict, kept once a cycle needed every node's status (a pod that
        # fits nowhere): only the rows changed since are judged again.
        rows_key: Hashable | None = None
        kept_rows: RowVerdicts | None = None
        if keyable and self.verdict_cache:
            rows_key = (row_key, skip)

            def judge_status(row: int) -> Status:
                return run_filters_sync(filters, state, pod, table.infos[row])

            kept_rows = self._nominated_verdicts.row_verdicts(rows_key, table, judge_status)
            if kept_rows is not None:
                mask = kept_rows.mask()
        for call in filters if kept_rows is None else ():
            if call.plugin in skip:
                continue
            batch = self._filter_batch.get(call.plugin)
            result = None
            if batch is not None:
                try:
                    if recorder is None:
                        result = batch(state, pod, table)
                    else:
                        result = call_timed(recorder, call.plugin, FILTER, batch, state, pod, table)
                except Exception:
                    result = None  # the per-node method reports the fault
                if result is not None and not is_mask(result, len(table)):
                    result = None  # not a mask over the table: judge per node
            if result is None:
                per_node.append(call)
            else:
                masks.append((call, result))
                mask = result if mask is None else mask & result
        if mask is None:
            return None
        n = len(nodes)
        if kept_key is not None and not per_node:
            self.row_cache.keep_mask(kept_key, table, mask)
        if nodes is table.infos and not per_node and not has_nominated and not need_statuses:
            fast = self._first_passing_rows(mask, start, limit)
            if fast is not None:
                return self._fast_outcome(table, *fast)
        if nodes is table.infos:
            rows = np.arange(n, dtype=np.int64)
        else:
            index = table.index
            try:
                rows = np.fromiter((index[info.name] for info in nodes), np.int64, n)
            except KeyError:
                return None
        order = np.concatenate((rows[start:], rows[:start])) if start else rows
        ok = mask[order]
        special: BoolArray | None = None
        if has_nominated:
            special = self._nominated_verdicts.nominated_rows(table, nominated_nodes)[order]
            if not special.any():
                special = None
        infos = table.infos
        feasible_pos: list[int] = []
        found: dict[int, Status] = {}
        rejecting: set[str] = set()
        error: Status | None = None
        decided: IntArray | None = None  # nominated nodes' positions a kept rejection decides
        if not per_node and special is None:
            passing = ok.nonzero()[0]
            if 0 < limit <= len(passing):
                passing = passing[:limit]
                processed = int(passing[-1]) + 1
            else:
                processed = n
            feasible_pos = passing.tolist()
        elif self.filters_async:
            processed, error = await self._check_candidates_async(
                state,
                pod,
                [infos[r] for r in order.tolist()],
                (ok if special is None else ok | special).nonzero()[0].tolist(),
                special,
                per_node,
                limit,
                nominated_for,
                feasible_pos,
                found,
            )
        else:
            processed = n
            candidates = ok if special is None else ok | special
            sweep = None
            if special is not None and self.verdict_cache:
                sweep = self._nominated_verdicts.sweep(
                    state, pod, self._filter_plugins, table, nominated_nodes
                )
                if sweep is not None and not per_node and sweep.rejects:
                    # Kept rejections are taken as arrays; other nominated nodes one by one.
                    decided_mask = sweep.rejected_at(order, special)
                    candidates = candidates & ~decided_mask
                    decided = decided_mask.nonzero()[0]
            for pos in candidates.nonzero()[0].tolist():
                info = infos[order[pos]]
                if special is not None and special[pos]:
                    assert nominated_for is not None
                    swept = sweep.get(info.name) if sweep is not None else None
                    if swept is not None:
                        status = swept
                    else:
                        status = self.run_filter_with_nominated_pods_sync(
                            state, pod, info, nominated_for(info.name)
                        )
                        if sweep is not None:
                            status = sweep.keep(info.name, status)
                else:
                    status = run_filters_sync(per_node, state, pod, info)
                if status.is_success:
                    feasible_pos.append(pos)
                    if len(feasible_pos) >= limit:
                        processed = pos + 1
                        break
                elif status.code is Code.ERROR:
                    error = status
                    processed = pos + 1
                    break
                else:
                    found[pos] = status
        statuses = NodeToStatus()
        if need_statuses or not feasible_pos:
            rejected = (~ok[:processed]).nonzero()[0]
            if special is not None:
                rejected = rejected[~special[rejected]]
            if per_node:
                # A per-node plugin may come first in the chain: ask the whole chain.
                for pos in rejected.tolist():
                    info = infos[order[pos]]
                    if self.filters_async:
                        status = await self.run_filter(state, pod, info)
                    else:
                        status = run_filters_sync(filters, state, pod, info)
                    if not status.is_success:
                        found[pos] = status
                names = table.names
                statuses.update((names[order[pos]], found[pos]) for pos in sorted(found))
                rejecting.update(status.plugin for status in found.values())
            else:
                if kept_rows is None and rows_key is not None:
                    kept_rows = self._keep_row_verdicts(state, pod, table, masks, mask, rows_key)
                if decided is not None:
                    decided = decided[decided < processed]
                if kept_rows is not None:
                    # Each examined position's status index in one array: the kept
                    # verdicts, the nominated nodes' own in their place.
                    at = kept_rows.at(order, processed)
                    if special is not None:
                        at[special[:processed]] = -1
                    distinct = list(kept_rows.distinct)
                    if decided is not None and len(decided):
                        assert sweep is not None
                        sweep.scatter(at, distinct, decided, order)
                    for pos, status in found.items():
                        at[pos] = _index_in(distinct, status)
                    batch_pos, which, distinct = _listed(at, distinct)
                else:
                    batch_pos, which, distinct = self._batch_rejections(
                        state, pod, table, order, rejected, masks
                    )
                    if decided is not None and len(decided):
                        assert sweep is not None
                        batch_pos, which = sweep.merge(batch_pos, which, distinct, decided, order)
                    if found:  # nominated nodes judged one by one: merge in position order
                        batch_pos, which = _merge_found(batch_pos, which, distinct, found)
                statuses = NodeToStatus.of_rows(
                    table.names, table.index, order[batch_pos], which, distinct
                )
                rejecting.update(status.plugin for status in distinct)
        feasible_rows = order[feasible_pos]
        return FilterOutcome(
            NodeRows(infos, feasible_rows),
            statuses,
            processed,
            rejecting,
            error,
            feasible_rows,
        )

    def _keep_row_verdicts(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        masks: Sequence[tuple[PluginCall, BoolArray]],
        mask: BoolArray,
        key: Hashable,
    ) -> RowVerdicts | None:
        """The batch forms' verdicts on every row, kept for ``key``; None when a status is
        missing or an error (the batch pass then reports as it does without them)."""
        rows = np.arange(len(table), dtype=np.int64)
        rejected = (~mask).nonzero()[0]
        positions, which, distinct = self._batch_rejections(
            state, pod, table, rows, rejected, masks
        )
        if len(positions) != len(rejected) or any(s.code is Code.ERROR for s in distinct):
            return None
        by_row = np.full(len(table), -1, dtype=np.int64)
        by_row[rejected] = which
        return self._nominated_verdicts.keep_row_verdicts(key, table, by_row, distinct)

    @staticmethod
    def _fast_outcome(table: NodeTable, processed: int, feasible_rows: IntArray) -> FilterOutcome:
        """The hot path's outcome: feasible rows, no statuses."""
        return FilterOutcome(
            NodeRows(table.infos, feasible_rows),
            NodeToStatus(),
            processed,
            set(),
            None,
            feasible_rows,
        )

    @staticmethod
    def _first_passing_rows(
        mask: BoolArray, start: int, limit: int, passing_rows: int | None = None
    ) -> tuple[int, IntArray] | None:
        """The rows of the first ``limit`` passing nodes of the whole table, examined from
        row ``start`` on (rotating), and how many rows that examined; None when none pass.
        ``passing_rows``: the mask's count of True, when known.

        The same answer as masking the rotated order, without a table-sized gather; when
        the passing rows are dense, without a table-sized scan either."""
        n = len(mask)
        if limit <= 0:
            passing_rows = 0
        elif passing_rows is None:
            passing_rows = int(np.count_nonzero(mask))  # a popcount: cheap
        if passing_rows == 0 and limit > 0:
            return None
        if limit > 0 and passing_rows > limit:
            # Look at a window after ``start`` first, widened while it holds too few: as
            # long as the passing rows would fill ``limit`` if spread evenly, and more.
            window = max(2 * limit, limit * n // passing_rows * 5 // 4) + 1024
            while start + window < n:
                head = mask[start : start + window].nonzero()[0]
                if len(head) >= limit:
                    passing = head[:limit]
                    return int(passing[-1]) + 1, passing + start
                window *= 4
        head = mask[start:].nonzero()[0]
        if 0 < limit <= len(head):
            passing = head[:limit]
        else:
            tail = _first_passing_before(mask, start, limit - len(head))
            if not len(head) and not len(tail):
                return None
            passing = np.concatenate((head, tail + (n - start)))
            if not 0 < limit <= len(passing):
                rows = passing + start
                rows[rows >= n] -= n
                return n, rows
            passing = passing[:limit]
        rows = passing + start
        rows[rows >= n] -= n
        return int(passing[-1]) + 1, rows

    async def _check_candidates_async(
        self,
        state: CycleState,
        pod: Pod,
        ordered: Sequence[NodeInfo],
        candidates: list[int],
        special: BoolArray | None,
        per_node: Sequence[PluginCall],
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None,
        feasible_pos: list[int],
        found: dict[int, Status],
    ) -> tuple[int, Status | None]:
        """Fan the per-node Filters (some async) out over the candidate positions, in
        order, until ``limit`` pass; fills ``feasible_pos`` and ``found``. Returns the
        number of positions examined and the first error."""
        passed: list[int] = []
        examined: list[int] = []
        error: Status | None = None

        async def check(i: int) -> bool:
            nonlocal error
            pos = candidates[i]
            info = ordered[pos]
            if special is not None and special[pos]:
                assert nominated_for is not None
                status = await self.run_filter_with_nominated_pods(
                    state, pod, info, nominated_for(info.name)
                )
            else:
                status = await self._run_filters(per_node, state, pod, info)
            if len(passed) >= limit or error is not None:
                return False
            examined.append(pos)
            if status.is_success:
                passed.append(pos)
                return len(passed) < limit
            if status.code is Code.ERROR:
                error = status
                return False
            found[pos] = status
            return True

        await run_chunked(len(candidates), self.parallelism, check)
        feasible_pos.extend(sorted(passed))
        stopped = len(passed) >= limit or error is not None
        return (max(examined) + 1 if stopped and examined else len(ordered)), error

    def _batch_rejections(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        order: IntArray,
        rejected: IntArray,
        masks: Sequence[tuple[PluginCall, BoolArray]],
    ) -> tuple[IntArray, IntArray, list[Status]]:
        """Statuses of the ``rejected`` positions when every active Filter has a batch form:
        each node's first rejecting plugin (in chain order) says why. Returns the positions
        in ascending order, per position the index of its status, and the distinct
        statuses (each used by some position; equal verdicts share one object)."""
        positions_of: list[IntArray] = []
        which_of: list[IntArray] = []
        distinct: list[Status] = []
        rows = order[rejected]
        undecided = np.ones(len(rows), dtype=np.bool_)
        infos = table.infos
        recorder = state.metrics if state.record_plugin_metrics else None
        for call, mask in masks:
            mine = undecided & ~mask[rows]
            if not mine.any():
                continue
            undecided &= ~mine
            positions, plugin_rows = rejected[mine], rows[mine]
            plugin = self.plugins[call.plugin]
            groups_fn = getattr(plugin, "filter_batch_status_groups", None)
            statuses_fn = getattr(plugin, "filter_batch_statuses", None)
            try:
                made: Sequence[Status | None]
                if groups_fn is not None:
                    if recorder is None:
                        made, index = groups_fn(state, pod, table, plugin_rows)
                    else:
                        made, index = call_timed(
                            recorder, call.plugin, FILTER, groups_fn, state, pod, table, plugin_rows
                        )
                else:
                    results: Sequence[Status | None]
                    if statuses_fn is None:
                        results = [call.fn(state, pod, infos[r]) for r in plugin_rows.tolist()]
                    elif recorder is None:
                        results = statuses_fn(state, pod, table, plugin_rows)
                    else:
                        results = call_timed(
                            recorder,
                            call.plugin,
                            FILTER,
                            statuses_fn,
                            state,
                            pod,
                            table,
                            plugin_rows,
                        )
                    made, index = _group_by_identity(results)
            except Exception as exc:
                fault = fault_status(call.plugin, "Filter", exc)
                return positions, np.zeros(len(positions), dtype=np.int64), [fault]
            # One tagged copy per distinct status object.
            tagged = [
                s.with_plugin(call.plugin)
                if s is not None and not s.is_success and s.code is not Code.SKIP
                else None
                for s in made
            ]
            used = np.fromiter((t is not None for t in tagged), np.bool_, len(tagged))
            renumber = np.cumsum(used, dtype=np.int64) - 1 + len(distinct)
            distinct.extend(t for t in tagged if t is not None)
            if not used.all():  # a success or skip: not a faithful batch form
                keep = used[index]
                positions, index = positions[keep], index[keep]
            positions_of.append(positions)
            which_of.append(renumber[index])
        if not positions_of:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, []
        if len(positions_of) == 1:  # already ascending: rejected is sorted
            return positions_of[0], which_of[0], distinct
        all_positions = np.concatenate(positions_of)
        by_position = np.argsort(all_positions, kind="stable")
        return all_positions[by_position], np.concatenate(which_of)[by_position], distinct


def _group_by_identity(
    results: Sequence[Status | None],
) -> tuple[list[Status | None], IntArray]:
    """``results`` as (distinct objects in first-seen order, index per result)."""
    first: dict[int, int] = {}
    made: list[Status | None] = []
    index = np.empty(len(results), dtype=np.int64)
    for i, s in enumerate(results):
        k = first.get(id(s))
        if k is None:
            k = first[id(s)] = len(made)
            made.append(s)
        index[i] = k
    return made, index


def _merge_found(
    positions: IntArray, which: IntArray, distinct: list[Status], found: dict[int, Status]
) -> tuple[IntArray, IntArray]:
    """Add the statuses ``found`` node by node (positions disjoint from ``positions``),
    keeping position order; their distinct objects join ``distinct``."""
    known = {id(s): k for k, s in enumerate(distinct)}

    def index_of(status: Status) -> int:
        k = known.get(id(status))
        if k is None:
            k = known[id(status)] = len(distinct)
            distinct.append(status)
        return k

    extra = np.fromiter(found, np.int64, len(found))
    extra_which = np.fromiter(map(index_of, found.values()), np.int64, len(found))
    all_positions = np.concatenate((positions, extra))
    by_position = np.argsort(all_positions, kind="stable")
    return all_positions[by_position], np.concatenate((which, extra_which))[by_position]


def _index_in(distinct: list[Status], status: Status) -> int:
    """The index of the ``status`` object in ``distinct``, appended when absent."""
    for k, s in enumerate(distinct):
        if s is status:
            return k
    distinct.append(status)
    return len(distinct) - 1


def _listed(at: IntArray, distinct: list[Status]) -> tuple[IntArray, IntArray, list[Status]]:
    """Per-position status indexes (-1: none) as a batch pass's rejections: the positions
    with a status, ascending, the index of each, and the distinct statuses used."""
    positions = (at >= 0).nonzero()[0]
    which = at[positions]
    used = np.bincount(which, minlength=len(distinct)).nonzero()[0]
    if len(used) == len(distinct):
        return positions, which, distinct
    renumber = np.zeros(len(distinct), dtype=np.int64)
    renumber[used] = np.arange(len(used), dtype=np.int64)
    return positions, renumber[which], [distinct[k] for k in used.tolist()]


def _first_passing_before(mask: BoolArray, stop: int, need: int) -> IntArray:
    """The passing rows before ``stop``, at least the first ``need`` of them when there
    are that many (all of them when ``need`` < 1): windows from row 0 first, as the scan
    after the start index does, so a wrapped scan does not index the whole table."""
    if need > 0:
        window = 2 * need + 1024
        while window < stop:
            found = mask[:window].nonzero()[0]
            if len(found) >= need:
                return found
            window *= 4
    return mask[:stop].nonzero()[0]
