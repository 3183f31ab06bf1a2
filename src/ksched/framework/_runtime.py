"""The Framework: runs one profile's plugins at each extension point.

# pkg/scheduler/framework/runtime/framework.go
Plugins are classified once, when the profile is built: which extension points each
implements, whether each method is ``async``, and which offer batch forms. A chain of
plain ``def`` Filter plugins runs inline over the nodes; async ones fan out in a task
group. Batch forms (``filter_batch``, ``score_batch``) judge all nodes at once over the
snapshot's NodeTable; the per-node methods stay the definition and give the reasons.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import anyio
import attrs
import numpy as np

from ..api import Pod
from ._batch import OpportunisticBatch
from ._cycle_state import CycleState
from ._events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from ._interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeToStatus,
    Plugin,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
    QueuedPodInfo,
    ScoreExtensions,
)
from ._parallel import run_chunked
from ._signature import SignPlugin
from ._status import SUCCESS, Code, Status
from ._table import BoolArray, IntArray, NodeRows, NodeTable
from ._types import NodeInfo, PodInfo
from ._waiting import WaitingPod, WaitingPods

__all__ = ["FilterOutcome", "Framework", "ScoreOutcome"]

_ANY_EVENT = ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL))

MAX_PERMIT_TIMEOUT = 15 * 60.0
"""Upstream caps every Permit wait at 15 minutes."""


@attrs.define(eq=False, slots=True)
class _Call:
    """A plugin method, resolved and classified once."""

    plugin: str
    fn: Callable[..., Any]
    is_async: bool


def _bind(plugin: Plugin, method: str) -> _Call | None:
    fn = getattr(plugin, method, None)
    if fn is None or not callable(fn):
        return None
    return _Call(plugin.name, fn, inspect.iscoroutinefunction(fn))


async def _invoke(call: _Call, *args: Any) -> Any:
    result = call.fn(*args)
    if call.is_async:
        result = await result
    return result


def _run_filters_sync(
    calls: Sequence[_Call], state: CycleState, pod: Pod, node_info: NodeInfo
) -> Status:
    """Plain Filter methods on one node, in order; the first failure decides."""
    skip = state.skip_filter_plugins
    for call in calls:
        if call.plugin in skip:
            continue
        try:
            status: Status | None = call.fn(state, pod, node_info)
        except Exception as exc:
            return _fault(call.plugin, "Filter", exc)
        if status is not None and status.code is not Code.SUCCESS:
            if status.code is Code.SKIP:
                continue
            return status.with_plugin(call.plugin)
    return SUCCESS


def _fault(plugin: str, point: str, exc: BaseException) -> Status:
    message = f'running "{plugin}" {point} plugin: {type(exc).__name__}: {exc}'
    return Status(Code.ERROR, (message,), plugin=plugin)


BatchFilter = Callable[[CycleState, Pod, NodeTable], BoolArray | None]
BatchScore = Callable[[CycleState, Pod, NodeTable, IntArray], IntArray | None]
BatchNormalize = Callable[[CycleState, Pod, IntArray], None]


@attrs.define(eq=False, slots=True)
class _ScorePlugin:
    name: str
    call: _Call
    weight: int
    normalize: ScoreExtensions | None
    batch: BatchScore | None = None
    normalize_batch: BatchNormalize | None = None


@attrs.define(eq=False, slots=True)
class FilterOutcome:
    """What Filter found: feasible nodes (in evaluation order) and the others' statuses.

    ``processed`` counts the nodes examined. ``rows`` are the feasible nodes' NodeTable
    rows when the batch path ran. Without ``need_statuses`` the statuses of rejected
    nodes are filled in only when no node is feasible.
    """

    feasible: Sequence[NodeInfo]
    statuses: NodeToStatus
    processed: int
    unschedulable_plugins: set[str]
    error: Status | None = None
    rows: IntArray | None = None


@attrs.define(eq=False, slots=True)
class ScoreOutcome:
    """Per node: each plugin's normalized score (before weight), and the weighted total.

    Scores are arrays in ``nodes`` order; the dict views are built when asked for.
    """

    nodes: Sequence[NodeInfo]
    scores: dict[str, IntArray]
    total: IntArray
    error: Status | None = None

    @classmethod
    def failed(cls, status: Status) -> ScoreOutcome:
        return cls((), {}, np.zeros(0, dtype=np.int64), status)

    @property
    def plugin_scores(self) -> dict[str, dict[str, int]]:
        names = [info.name for info in self.nodes]
        return {
            plugin: dict(zip(names, values.tolist(), strict=True))
            for plugin, values in self.scores.items()
        }

    @property
    def totals(self) -> dict[str, int]:
        return dict(zip((info.name for info in self.nodes), self.total.tolist(), strict=True))


def _is_mask(value: object, size: int) -> bool:
    return isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.shape == (size,)


def _is_scores(value: object, size: int) -> bool:
    return isinstance(value, np.ndarray) and value.dtype == np.int64 and value.shape == (size,)


def _int_scores(values: Sequence[int]) -> IntArray:
    """Plugin scores as int64; OverflowError for a value int64 cannot hold."""
    return np.array(values, dtype=np.int64) if values else np.zeros(0, dtype=np.int64)


class Framework:
    """One profile: its plugins per extension point, in order, with score weights."""

    def __init__(
        self,
        *,
        profile_name: str,
        plugins: Mapping[str, Plugin],
        points: Mapping[str, Sequence[str]],
        weights: Mapping[str, int],
        percentage_of_nodes_to_score: int | None,
        parallelism: int,
        waiting_pods: WaitingPods,
    ) -> None:
        self.profile_name = profile_name
        self.plugins = dict(plugins)
        self.points = {k: list(v) for k, v in points.items()}
        self.weights = dict(weights)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.parallelism = parallelism
        self.waiting_pods = waiting_pods

        def calls(point: str, method: str) -> list[_Call]:
            out = []
            for name in self.points.get(point, ()):
                call = _bind(self.plugins[name], method)
                if call is not None:
                    out.append(call)
            return out

        self._pre_enqueue = calls("preEnqueue", "pre_enqueue")
        sorts = calls("queueSort", "less")
        self._less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] | None = (
            sorts[0].fn if sorts else None
        )
        self.sort_key: Callable[[QueuedPodInfo], Any] | None = (
            getattr(self.plugins[sorts[0].plugin], "sort_key", None) if sorts else None
        )
        """The QueueSort plugin's ``sort_key`` (``less(a, b)`` iff key(a) < key(b)), if any."""
        self._pre_filter = calls("preFilter", "pre_filter")
        self._pre_filter_ext: list[tuple[str, PreFilterExtensions]] = []
        for name in self.points.get("preFilter", ()):
            ext_fn = getattr(self.plugins[name], "pre_filter_extensions", None)
            ext = ext_fn() if ext_fn is not None else None
            if ext is not None:
                self._pre_filter_ext.append((name, ext))
        self._filter = calls("filter", "filter")
        self.filters_async = any(c.is_async for c in self._filter)
        self._filter_batch: dict[str, BatchFilter] = {}
        for filter_call in self._filter:
            batch = getattr(self.plugins[filter_call.plugin], "filter_batch", None)
            if batch is not None and not filter_call.is_async:
                self._filter_batch[filter_call.plugin] = batch
        self.batching = True
        """Use plugins' batch forms when the snapshot's table allows (off: per node only)."""
        self._post_filter = calls("postFilter", "post_filter")
        self._pre_score = calls("preScore", "pre_score")
        self._score: list[_ScorePlugin] = []
        for name in self.points.get("score", ()):
            call = _bind(self.plugins[name], "score")
            if call is None:
                continue
            ext_fn = getattr(self.plugins[name], "score_extensions", None)
            ext = ext_fn() if ext_fn else None
            self._score.append(
                _ScorePlugin(
                    name,
                    call,
                    weights.get(name, 1),
                    ext,
                    None if call.is_async else getattr(self.plugins[name], "score_batch", None),
                    getattr(ext, "normalize_score_batch", None),
                )
            )
        self.scores_async = any(p.call.is_async for p in self._score)
        self._reserve = calls("reserve", "reserve")
        self._unreserve = calls("reserve", "unreserve")
        self._permit = calls("permit", "permit")
        self._pre_bind = calls("preBind", "pre_bind")
        self._bind = calls("bind", "bind")
        self._post_bind = calls("postBind", "post_bind")
        self.batch = self._opportunistic_batch()
        """The profile's opportunistic batching, or None when a plugin cannot sign pods."""

    def _opportunistic_batch(self) -> OpportunisticBatch | None:
        signers: dict[str, SignPlugin] = {}
        points = {"preFilter": "pre_filter", "filter": "filter", "preScore": "pre_score"}
        points["score"] = "score"
        for point, method in points.items():
            for name in self.points.get(point, ()):
                plugin = self.plugins[name]
                if name in signers or not callable(getattr(plugin, method, None)):
                    continue
                if not isinstance(plugin, SignPlugin) or not callable(plugin.sign_pod):
                    return None
                signers[name] = plugin
        return OpportunisticBatch(list(signers.values()))

    # ---- queue side ---------------------------------------------------------------

    @property
    def less(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        """The profile's QueueSort ``less``."""
        assert self._less is not None
        return self._less

    def run_pre_enqueue(self, pod: Pod) -> Status | None:
        """PreEnqueue plugins in order; the first non-success gates the pod."""
        for call in self._pre_enqueue:
            try:
                status: Status | None = call.fn(pod)
            except Exception as exc:
                return _fault(call.plugin, "PreEnqueue", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(call.plugin)
        return None

    def event_registrations(self) -> dict[str, Sequence[ClusterEventWithHint]]:
        """Plugin name -> the events it registered (EnqueueExtensions)."""
        out: dict[str, Sequence[ClusterEventWithHint]] = {}
        for name, plugin in self.plugins.items():
            fn = getattr(plugin, "events_to_register", None)
            # A plugin that does not say which events concern it is woken by any event.
            out[name] = list(fn()) if fn is not None else [_ANY_EVENT]
        return out

    @property
    def has_filter_plugins(self) -> bool:
        return bool(self._filter)

    @property
    def has_score_plugins(self) -> bool:
        return bool(self._score)

    @property
    def has_post_filter_plugins(self) -> bool:
        return bool(self._post_filter)

    # ---- PreFilter ----------------------------------------------------------------

    async def run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """PreFilter plugins in order: (narrowing, status, plugins that rejected).

        A plugin returning SKIP has its Filter skipped for this pod. The first
        rejection or error stops the run.
        """
        result: PreFilterResult | None = None
        skipped: set[str] = set()
        narrowed_by: list[str] = []
        for call in self._pre_filter:
            try:
                out = call.fn(state, pod, nodes)
                if call.is_async:
                    out = await out
            except Exception as exc:
                return None, _fault(call.plugin, "PreFilter", exc), set()
            if isinstance(out, Status):
                if out.code is Code.SKIP:
                    skipped.add(call.plugin)
                    continue
                if not out.is_success:
                    status = out.with_plugin(call.plugin)
                    if status.is_rejected:
                        return None, status, {call.plugin}
                    return None, status, set()
            elif isinstance(out, PreFilterResult):
                if out.node_names is not None:
                    narrowed_by.append(call.plugin)
                result = out if result is None else result.merge(out)
                if result.node_names is not None and not result.node_names:
                    plugins = ", ".join(sorted(narrowed_by))
                    msg = f"node(s) didn't satisfy plugin(s) [{plugins}] simultaneously"
                    if len(narrowed_by) == 1:
                        msg = f"node(s) didn't satisfy plugin {narrowed_by[0]}"
                    return (
                        None,
                        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,), plugin=call.plugin),
                        set(narrowed_by),
                    )
        state.skip_filter_plugins = frozenset(skipped)
        return result, SUCCESS, set()

    def plugins_at(self, point: str) -> list[tuple[str, Plugin]]:
        """The enabled plugins at an extension point, in the order they run."""
        return [(name, self.plugins[name]) for name in self.points.get(point, ())]

    def pre_filter_extensions_active(self, state: CycleState) -> bool:
        """Whether a PreFilter plugin that ran for this cycle has AddPod/RemovePod."""
        return bool(self._extensions_for(state))

    def _extensions_for(self, state: CycleState) -> list[tuple[str, PreFilterExtensions]]:
        skip = state.skip_filter_plugins
        return [(n, e) for n, e in self._pre_filter_ext if n not in skip]

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        for name, ext in self._extensions_for(state):
            try:
                status = ext.add_pod(state, pod, pod_to_add, node_info)
            except Exception as exc:
                return _fault(name, "AddPod", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(name)
        return SUCCESS

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        for name, ext in self._extensions_for(state):
            try:
                status = ext.remove_pod(state, pod, pod_to_remove, node_info)
            except Exception as exc:
                return _fault(name, "RemovePod", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(name)
        return SUCCESS

    # ---- Filter -------------------------------------------------------------------

    def run_filter_sync(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter plugins on one node, inline; the first failure decides.

        Only valid when no Filter plugin is async (``filters_async`` is False).
        """
        return _run_filters_sync(self._filter, state, pod, node_info)

    async def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter plugins on one node; the first failure decides."""
        if not self.filters_async:
            return self.run_filter_sync(state, pod, node_info)
        return await self._run_filters(self._filter, state, pod, node_info)

    async def _run_filters(
        self, calls: Sequence[_Call], state: CycleState, pod: Pod, node_info: NodeInfo
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
                return _fault(call.plugin, "Filter", exc)
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
        candidates = [
            p for p in nominated if p.pod.priority >= pod.priority and p.pod.uid != pod.uid
        ]
        if not candidates:
            return None
        state_with = state.clone()
        info_with = node_info.clone()
        for p in candidates:
            info_with.add_pod(p)
            status = self.run_pre_filter_extension_add_pod(state_with, pod, p, info_with)
            if not status.is_success:
                return status
        return state_with, info_with

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
        """:meth:`run_filter_with_nominated_pods` for profiles whose Filters are all sync."""
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
    ) -> FilterOutcome:
        """Filter nodes from ``start`` (rotating) until ``limit`` feasible were found.

        With ``table`` (the snapshot's, holding every node of ``nodes``) the plugins'
        batch forms judge all nodes at once; ``nominated_nodes`` names the nodes that
        have nominated pods, which take the per-node two-pass filter.
        # schedule_one.go findNodesThatPassFilters
        """
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
            run = self.run_filter_sync
            for i in range(n):
                info = nodes[(start + i) % n]
                nominated = nominated_for(info.name) if nominated_for is not None else None
                if nominated:
                    status = self.run_filter_with_nominated_pods_sync(state, pod, info, nominated)
                else:
                    status = run(state, pod, info)
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
    ) -> FilterOutcome | None:
        """Filter with batch masks; None when no plugin has a batch form for this pod.

        Equal to the per-node path: the same feasible nodes in the same order, the same
        count of examined nodes; rejected nodes get their status from the per-node chain.
        """
        skip = state.skip_filter_plugins
        mask: BoolArray | None = None
        per_node: list[_Call] = []
        masks: list[tuple[_Call, BoolArray]] = []
        for call in self._filter:
            if call.plugin in skip:
                continue
            batch = self._filter_batch.get(call.plugin)
            result = None
            if batch is not None:
                try:
                    result = batch(state, pod, table)
                except Exception:
                    result = None  # the per-node method reports the fault
                if result is not None and not _is_mask(result, len(table)):
                    result = None  # not a mask over the table: judge per node
            if result is None:
                per_node.append(call)
            else:
                masks.append((call, result))
                mask = result if mask is None else mask & result
        if mask is None:
            return None
        n = len(nodes)
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
        if nominated_for is not None and nominated_nodes:
            marked = np.zeros(len(table), dtype=np.bool_)
            for name in nominated_nodes:
                row = table.index.get(name)
                if row is not None:
                    marked[row] = True
            special = marked[order]
            if not special.any():
                special = None
        infos = table.infos
        feasible_pos: list[int] = []
        found: dict[int, Status] = {}
        rejecting: set[str] = set()
        error: Status | None = None
        if not per_node and special is None:
            passing = np.flatnonzero(ok)
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
                np.flatnonzero(ok if special is None else ok | special).tolist(),
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
            for pos in np.flatnonzero(candidates).tolist():
                info = infos[order[pos]]
                if special is not None and special[pos]:
                    assert nominated_for is not None
                    status = self.run_filter_with_nominated_pods_sync(
                        state, pod, info, nominated_for(info.name)
                    )
                else:
                    status = _run_filters_sync(per_node, state, pod, info)
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
            rejected = np.flatnonzero(~ok[:processed])
            if special is not None:
                rejected = rejected[~special[rejected]]
            if per_node:
                # A per-node plugin may come first in the chain: ask the whole chain.
                for pos in rejected.tolist():
                    info = infos[order[pos]]
                    if self.filters_async:
                        status = await self.run_filter(state, pod, info)
                    else:
                        status = _run_filters_sync(self._filter, state, pod, info)
                    if not status.is_success:
                        found[pos] = status
            else:
                found.update(self._batch_rejections(state, pod, table, order, rejected, masks))
            names = table.names
            statuses.update((names[order[pos]], found[pos]) for pos in sorted(found))
            rejecting.update(status.plugin for status in found.values())
        feasible_rows = order[feasible_pos]
        return FilterOutcome(
            NodeRows(infos, feasible_rows),
            statuses,
            processed,
            rejecting,
            error,
            feasible_rows,
        )

    async def _check_candidates_async(
        self,
        state: CycleState,
        pod: Pod,
        ordered: Sequence[NodeInfo],
        candidates: list[int],
        special: BoolArray | None,
        per_node: Sequence[_Call],
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
        masks: Sequence[tuple[_Call, BoolArray]],
    ) -> dict[int, Status]:
        """Statuses of the ``rejected`` positions when every active Filter has a batch form:
        each node's first rejecting plugin (in chain order) says why."""
        found: dict[int, Status] = {}
        rows = order[rejected]
        undecided = np.ones(len(rows), dtype=np.bool_)
        infos = table.infos
        for call, mask in masks:
            mine = undecided & ~mask[rows]
            if not mine.any():
                continue
            undecided &= ~mine
            positions, plugin_rows = rejected[mine].tolist(), rows[mine]
            statuses_fn = getattr(self.plugins[call.plugin], "filter_batch_statuses", None)
            try:
                results: Sequence[Status | None] = (
                    statuses_fn(state, pod, table, plugin_rows)
                    if statuses_fn is not None
                    else [call.fn(state, pod, infos[r]) for r in plugin_rows.tolist()]
                )
            except Exception as exc:
                fault = _fault(call.plugin, "Filter", exc)
                return dict.fromkeys(positions, fault)
            named: dict[int, Status] = {}
            for pos, status in zip(positions, results, strict=True):
                if status is None or status.is_success or status.code is Code.SKIP:
                    continue  # cannot happen for a faithful batch form
                tagged = named.get(id(status))
                if tagged is None:
                    tagged = named[id(status)] = status.with_plugin(call.plugin)
                found[pos] = tagged
        return found

    # ---- PostFilter ---------------------------------------------------------------

    async def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter in order until one succeeds (or errors)."""
        reasons: list[str] = []
        last: Status | None = None
        for call in self._post_filter:
            try:
                outcome = call.fn(state, pod, statuses)
                if call.is_async:
                    outcome = await outcome
                result, status = outcome
            except Exception as exc:
                return None, _fault(call.plugin, "PostFilter", exc)
            status = SUCCESS if status is None else status.with_plugin(call.plugin)
            if status.is_success:
                return result, status
            if status.code is not Code.UNSCHEDULABLE and status.code is not (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return None, status
            reasons.extend(status.reasons)
            last = status
        code = last.code if last is not None else Code.UNSCHEDULABLE
        return None, Status(code, tuple(reasons), plugin=last.plugin if last else "")

    # ---- PreScore / Score ---------------------------------------------------------

    async def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        skipped: set[str] = set()
        for call in self._pre_score:
            try:
                result = call.fn(state, pod, nodes)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return _fault(call.plugin, "PreScore", exc)
            if status is None or status.is_success:
                continue
            if status.code is Code.SKIP:
                skipped.add(call.plugin)
                continue
            return status.with_plugin(call.plugin)
        state.skip_score_plugins = frozenset(skipped)
        return SUCCESS

    async def run_score(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        table: NodeTable | None = None,
        rows: IntArray | None = None,
    ) -> ScoreOutcome:
        """Score, NormalizeScore, weight, total (# framework.go RunScorePlugins).

        With ``table`` and the nodes' ``rows`` in it, plugins' batch forms score all
        nodes at once.
        """
        batch_ok = table is not None and rows is not None and self.batching and table.exact
        total = np.zeros(len(nodes), dtype=np.int64)
        per_plugin: dict[str, IntArray] = {}
        skip = state.skip_score_plugins
        for sp in self._score:
            if sp.name in skip:
                continue
            try:
                values: IntArray | None = None
                if batch_ok and sp.batch is not None:
                    assert table is not None and rows is not None
                    values = sp.batch(state, pod, table, rows)
                if values is not None and not _is_scores(values, len(nodes)):
                    raise TypeError(
                        f"score_batch returned {type(values).__name__}, "
                        f"not {len(nodes)} int64 scores"
                    )
                if values is None:
                    if sp.call.is_async:
                        values = await self._score_async(sp, state, pod, nodes)
                    else:
                        fn = sp.call.fn
                        values = _int_scores([fn(state, pod, info) for info in nodes])
            except Exception as exc:
                return ScoreOutcome.failed(_fault(sp.name, "Score", exc))
            if sp.normalize is not None:
                try:
                    if sp.normalize_batch is not None:
                        sp.normalize_batch(state, pod, values)
                        status = None
                    else:
                        by_node = dict(zip((i.name for i in nodes), values.tolist(), strict=True))
                        status = sp.normalize.normalize_score(state, pod, by_node)
                        values = _int_scores(list(by_node.values()))
                except Exception as exc:
                    return ScoreOutcome.failed(_fault(sp.name, "NormalizeScore", exc))
                if status is not None and not status.is_success:
                    return ScoreOutcome.failed(status.with_plugin(sp.name))
            out_of_range = np.flatnonzero((values > MAX_NODE_SCORE) | (values < MIN_NODE_SCORE))
            if len(out_of_range):
                value = int(values[out_of_range[0]])
                message = (
                    f"plugin {sp.name!r} returns an invalid score {value}, it should in the "
                    f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                )
                return ScoreOutcome.failed(Status(Code.ERROR, (message,), plugin=sp.name))
            total += values * sp.weight
            per_plugin[sp.name] = values
        return ScoreOutcome(nodes, per_plugin, total)

    async def _score_async(
        self, sp: _ScorePlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> IntArray:
        scores: list[int] = [0] * len(nodes)

        async def one(i: int) -> bool:
            scores[i] = await _invoke(sp.call, state, pod, nodes[i])
            return True

        await run_chunked(len(nodes), self.parallelism, one)
        return _int_scores(scores)

    # ---- Reserve / Permit ---------------------------------------------------------

    async def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for call in self._reserve:
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return _fault(call.plugin, "Reserve", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(call.plugin)
        return SUCCESS

    async def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve on every Reserve plugin in reverse order; faults are contained."""
        with anyio.CancelScope(shield=True):
            for call in reversed(self._unreserve):
                with contextlib.suppress(Exception):  # one failing Unreserve must not stop the rest
                    pending = call.fn(state, pod, node_name)
                    if call.is_async:
                        await pending

    async def run_permit(
        self, state: CycleState, pod: Pod, node_name: str, now: float
    ) -> tuple[Status, WaitingPod | None]:
        """Permit in order: any rejection rejects; any Wait makes the pod wait.

        Returns (status, waiting pod or None). Timeouts are capped at 15 minutes.
        """
        pending: dict[str, float] = {}
        timeouts: dict[str, float] = {}
        for call in self._permit:
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return _fault(call.plugin, "Permit", exc), None
            if status is None or status.is_success:
                continue
            if status.code is Code.WAIT:
                timeout = min(max(status.timeout, 0.0), MAX_PERMIT_TIMEOUT)
                pending[call.plugin] = now + timeout
                timeouts[call.plugin] = timeout
                continue
            if status.is_rejected:
                return status.with_plugin(call.plugin), None
            return status.with_plugin(call.plugin), None
        if pending:
            waiting = WaitingPod(pod=pod, node_name=node_name, pending=pending, timeouts=timeouts)
            return Status(Code.WAIT), waiting
        return SUCCESS, None

    # ---- binding ------------------------------------------------------------------

    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for call in self._pre_bind:
            if call.plugin in state.skip_pre_bind_plugins:
                continue
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return _fault(call.plugin, "PreBind", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(call.plugin)
        return SUCCESS

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first Bind plugin that does not SKIP decides."""
        for call in self._bind:
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return _fault(call.plugin, "Bind", exc)
            if status is not None and status.code is Code.SKIP:
                continue
            return SUCCESS if status is None else status.with_plugin(call.plugin)
        return Status(Code.SKIP)

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for call in self._post_bind:
            with contextlib.suppress(Exception):  # PostBind is informational
                pending = call.fn(state, pod, node_name)
                if call.is_async:
                    await pending
