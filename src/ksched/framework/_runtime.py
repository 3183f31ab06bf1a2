"""The Framework: runs one profile's plugins at each extension point.

# pkg/scheduler/framework/runtime/framework.go
This module is the reference path: each ``run_*`` method runs the plugins of one point as
upstream's RunXPlugins does, node by node where it judges nodes, and defines the
outcome. Beside it, :mod:`._fast` holds the fast paths (batch forms over the NodeTable,
kept masks and columns, kept sums, uniform scores, nominated verdicts): ``find_feasible``
and ``run_score`` ask them first, and they return the same outcome or decline.
Differential tests pin one to the other at that boundary.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence

import anyio
import numpy as np

from ..api import Pod
from ._calls import (
    ANY_EVENT,
    MAX_PERMIT_TIMEOUT,
    FilterOutcome,
    PluginCall,
    ScoreOutcome,
    ScorePluginEntry,
    fault_status,
    int_scores,
    invoke,
    run_filters_sync,
)
from ._cycle_state import CycleState
from ._events import ClusterEventWithHint
from ._fast import FastPaths
from ._fast._opportunistic import OpportunisticBatch
from ._interfaces import NodeToStatus, PostFilterResult, PreFilterResult, QueuedPodInfo
from ._metrics import MetricsRecorder
from ._parallel import run_chunked
from ._plugin_metrics import (
    BIND,
    FILTER,
    PERMIT,
    POST_BIND,
    POST_FILTER,
    PRE_BIND,
    PRE_BIND_PRE_FLIGHT,
    PRE_FILTER,
    PRE_FILTER_EXTENSION_ADD_POD,
    PRE_FILTER_EXTENSION_REMOVE_POD,
    PRE_SCORE,
    RESERVE,
    SCORE,
    UNRESERVE,
    TimedCalls,
    call_timed,
)
from ._profile import PluginSet
from ._protocols import Plugin, PreFilterExtensions
from ._score_steps import checked_scores, normalized
from ._status import SKIP, SUCCESS, Code, Status
from ._table import IntArray, NodeTable
from ._types import NodeInfo, PodInfo
from ._waiting import WaitingPod, WaitingPods

__all__ = ["FilterOutcome", "Framework", "ScoreOutcome"]

logger = logging.getLogger("ksched.framework")

_WITH_NOMINATED_LIMIT = 10_000


class Framework:
    """One profile: its plugins per extension point, in order, with score weights."""

    # Slots: a setting that does not exist here (a fast-path switch, which lives on
    # ``fast``) is an error, not a silent new attribute.
    __slots__ = (
        "_evaluated",
        "_timed",
        "_with_nominated",
        "batch",
        "fast",
        "filters_async",
        "group_plugin",
        "has_filter_plugins",
        "has_post_filter_plugins",
        "has_score_plugins",
        "parallelism",
        "percentage_of_nodes_to_score",
        "plugins",
        "points",
        "profile_name",
        "row_key",
        "scores_async",
        "set",
        "sort_key",
        "waiting_pods",
        "weights",
    )

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
        self.set = p = PluginSet(plugins, points, weights)
        self.plugins, self.points, self.weights = p.plugins, p.points, p.weights
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.parallelism = parallelism
        self.waiting_pods = waiting_pods
        self.filters_async, self.scores_async = p.filters_async, p.scores_async
        # Which points have plugins at all (read once per cycle; the set never changes).
        self.has_filter_plugins = bool(p.filter)
        self.has_score_plugins = bool(p.score)
        self.has_post_filter_plugins = bool(p.post_filter)
        self.group_plugin, self.sort_key, self.row_key = p.group_plugin, p.sort_key, p.row_key
        self.batch = OpportunisticBatch(p.signers) if not p.unsigned else None
        """The profile's opportunistic batching, or None when a plugin cannot sign pods."""
        self.fast = FastPaths(self)
        """The fast paths beside this reference path (their switches are on it)."""
        self._with_nominated: dict[str, tuple[NodeInfo, int, tuple[PodInfo, ...], NodeInfo]] = {}
        """Per node: the node with its nominated pods added, kept while the node's info,
        its generation and the nominated pods are the same objects (a memo of a copy,
        never of a verdict)."""
        self._timed = TimedCalls()
        self._evaluated: dict[tuple[str, frozenset[str]], tuple[str, ...]] = {}
        notes = p.notes()
        # A plugin that turns a fast path off for the whole profile is said at INFO; the
        # ones that do so only for the pods they filter, at DEBUG.
        profile_wide = [n for n in notes if "opportunistic batching" in n]
        if profile_wide:
            logger.info("profile %r: %s", profile_name, "; ".join(profile_wide))
        if len(notes) > len(profile_wide):
            logger.debug("profile %r: %s", profile_name, "; ".join(notes))

    # ---- the profile ----------------------------------------------------------------

    @property
    def use_row_cache(self) -> bool:
        """Whether kept masks and columns are read for equal pods (``fast.use_row_cache``)."""
        return self.fast.kept.use_row_cache

    def plugins_at(self, point: str) -> list[tuple[str, Plugin]]:
        """The enabled plugins at an extension point, in the order they run."""
        return [(name, self.plugins[name]) for name in self.points.get(point, ())]

    def calls_for(self, state: CycleState, point: str, calls: list[PluginCall]) -> list[PluginCall]:
        """``calls``, timed when the attempt is sampled for plugin metrics."""
        recorder = state.metrics
        if state.record_plugin_metrics and recorder is not None:
            return self._timed.get(point, calls, recorder)
        return calls

    def evaluated_names(
        self, point: str, calls: list[PluginCall], skip: frozenset[str]
    ) -> tuple[str, ...]:
        """The plugins at ``point`` that are not skipped, kept per skip set."""
        key = (point, skip)
        names = self._evaluated.get(key)
        if names is None:
            names = tuple(c.plugin for c in calls if c.plugin not in skip)
            if len(self._evaluated) < 1024:  # skip sets are few; never grow without bound
                self._evaluated[key] = names
        return names

    def _count_evaluations(
        self, point: str, state: CycleState, evaluated: list[str], count: int = 1
    ) -> None:
        """instrumented_plugins.go: the plugins that ran at ``point`` (all but SKIP)."""
        metrics = state.metrics
        if metrics is None:
            return
        if point == PRE_FILTER:
            calls, skip = self.set.pre_filter, state.skip_filter_plugins
        else:
            calls, skip = self.set.pre_score, state.skip_score_plugins
        if len(evaluated) + len(skip) == len(calls):  # every plugin ran or skipped
            names = self.evaluated_names(point, calls, skip)
        else:
            names = tuple(evaluated)
        metrics.plugin_evaluations(point, self.profile_name, names, count)

    # ---- queue side -----------------------------------------------------------------

    @property
    def less(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        """The profile's QueueSort ``less``."""
        assert self.set.less is not None
        return self.set.less

    def run_pre_enqueue(self, pod: Pod) -> Status | None:
        """PreEnqueue plugins in order; the first non-success gates the pod."""
        for call in self.set.pre_enqueue:
            try:
                status: Status | None = call.fn(pod)
            except Exception as exc:
                return fault_status(call.plugin, "PreEnqueue", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(call.plugin)
        return None

    def event_registrations(self) -> dict[str, Sequence[ClusterEventWithHint]]:
        """Plugin name -> the events it registered (EnqueueExtensions)."""
        out: dict[str, Sequence[ClusterEventWithHint]] = {}
        for name, plugin in self.plugins.items():
            fn = getattr(plugin, "events_to_register", None)
            # A plugin that does not say which events concern it is woken by any event.
            out[name] = list(fn()) if fn is not None else [ANY_EVENT]
        return out

    # ---- PreFilter ------------------------------------------------------------------

    async def run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """PreFilter plugins in order: (narrowing, status, plugins that rejected).

        A plugin returning SKIP has its Filter skipped for this pod. The first rejection
        or error stops the run. # framework.go RunPreFilterPlugins
        """
        evaluated: list[str] = []
        result: PreFilterResult | None = None
        skipped: set[str] = set()
        narrowed_by: list[str] = []
        try:
            for call in self.calls_for(state, PRE_FILTER, self.set.pre_filter):
                try:
                    out = call.fn(state, pod, nodes)
                    if call.is_async:
                        out = await out
                except Exception as exc:
                    evaluated.append(call.plugin)
                    return None, fault_status(call.plugin, "PreFilter", exc), set()
                if out is None:  # the usual answer: nothing to narrow, nothing to skip
                    evaluated.append(call.plugin)
                    continue
                if isinstance(out, Status) and out.code is Code.SKIP:
                    skipped.add(call.plugin)
                    continue
                evaluated.append(call.plugin)
                if isinstance(out, Status) and not out.is_success:
                    status = out.with_plugin(call.plugin)
                    return None, status, {call.plugin} if status.is_rejected else set()
                if isinstance(out, PreFilterResult):
                    if out.node_names is not None:
                        narrowed_by.append(call.plugin)
                    result = out if result is None else result.merge(out)
                    if result.node_names is not None and not result.node_names:
                        return None, _narrowed_to_none(narrowed_by, call.plugin), set(narrowed_by)
            state.skip_filter_plugins = frozenset(skipped)
            return result, SUCCESS, set()
        finally:
            self._count_evaluations(PRE_FILTER, state, evaluated)

    def pre_filter_extensions_active(self, state: CycleState) -> bool:
        """Whether a PreFilter plugin that ran for this cycle has AddPod/RemovePod."""
        return bool(self._extensions_for(state))

    def _extensions_for(self, state: CycleState) -> list[tuple[str, PreFilterExtensions]]:
        skip = state.skip_filter_plugins
        return [(n, e) for n, e in self.set.pre_filter_ext if n not in skip]

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._run_extension(
            state, "add_pod", PRE_FILTER_EXTENSION_ADD_POD, "AddPod", pod, pod_to_add, node_info
        )

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._run_extension(
            state,
            "remove_pod",
            PRE_FILTER_EXTENSION_REMOVE_POD,
            "RemovePod",
            pod,
            pod_to_remove,
            node_info,
        )

    def _run_extension(
        self,
        state: CycleState,
        method: str,
        point: str,
        label: str,
        pod: Pod,
        other: PodInfo,
        node_info: NodeInfo,
    ) -> Status:
        """AddPod or RemovePod of the PreFilter plugins that ran, in order; the first
        non-success stops (timed in sampled attempts)."""
        recorder = state.metrics if state.record_plugin_metrics else None
        for name, ext in self._extensions_for(state):
            fn: Callable[..., Status | None] = getattr(ext, method)
            try:
                if recorder is None:
                    status = fn(state, pod, other, node_info)
                else:
                    status = call_timed(recorder, name, point, fn, state, pod, other, node_info)
            except Exception as exc:
                return fault_status(name, label, exc)
            if status is not None and not status.is_success:
                return status.with_plugin(name)
        return SUCCESS

    # ---- Filter ---------------------------------------------------------------------

    def run_filter_sync(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter plugins on one node, inline; the first failure decides.

        Only valid when no Filter plugin is async (``filters_async`` is False).
        """
        return run_filters_sync(
            self.calls_for(state, FILTER, self.set.filter), state, pod, node_info
        )

    async def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter plugins on one node; the first failure decides. # RunFilterPlugins"""
        if not self.filters_async:
            return self.run_filter_sync(state, pod, node_info)
        skip = state.skip_filter_plugins
        for call in self.calls_for(state, FILTER, self.set.filter):
            if call.plugin in skip:
                continue
            try:
                status: Status | None = await invoke(call, state, pod, node_info)
            except Exception as exc:
                return fault_status(call.plugin, "Filter", exc)
            if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
                return status.with_plugin(call.plugin)
        return SUCCESS

    async def run_filter_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: Sequence[PodInfo]
    ) -> Status:
        """Filter as upstream's two passes when higher-or-equal priority pods are
        nominated to the node: first with them added, then without.

        # framework.go RunFilterPluginsWithNominatedPods
        """
        added = self.with_nominated_pods(state, pod, node_info, nominated)
        if isinstance(added, Status):
            return added
        if added is not None:
            status = await self.run_filter(added[0], pod, added[1])
            if not status.is_success:
                return status
        return await self.run_filter(state, pod, node_info)

    def run_filter_with_nominated_pods_sync(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: Sequence[PodInfo]
    ) -> Status:
        """:meth:`run_filter_with_nominated_pods` for profiles whose Filters are all sync."""
        added = self.with_nominated_pods(state, pod, node_info, nominated)
        if isinstance(added, Status):
            return added
        if added is not None:
            status = self.run_filter_sync(added[0], pod, added[1])
            if not status.is_success:
                return status
        return self.run_filter_sync(state, pod, node_info)

    def with_nominated_pods(
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
        return state, self._node_with(node_info, candidates)

    def _node_with(self, node_info: NodeInfo, candidates: tuple[PodInfo, ...]) -> NodeInfo:
        """A copy of ``node_info`` with ``candidates`` added (kept while they stand)."""
        kept = self._with_nominated.get(node_info.name)
        if (
            kept is not None
            and kept[0] is node_info
            and kept[1] == node_info.generation
            and len(kept[2]) == len(candidates)
            and all(a is b for a, b in zip(kept[2], candidates, strict=True))
        ):
            return kept[3]
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
        return info_with

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

        The fast paths are asked first: with ``table`` (the snapshot's, holding every node
        of ``nodes``) they judge all nodes at once; ``nominated_nodes`` names the nodes
        that have nominated pods. Without ``need_statuses`` the rejected nodes' statuses
        may be left out while some node is feasible.

        # schedule_one.go findNodesThatPassFilters
        """
        outcome = await self.fast.find_feasible(
            state, pod, nodes, table, start, limit, nominated_for, nominated_nodes,
            need_statuses, row_key,
        )  # fmt: skip
        if outcome is None:
            outcome = await self._filter_nodes(state, pod, nodes, start, limit, nominated_for)
        if state.metrics is not None and self.set.filter:
            # Every Filter plugin that is not skipped counts each node examined (upstream
            # counts a node's plugins up to its first rejection: docs/metrics.md).
            names = self.evaluated_names(FILTER, self.set.filter, state.skip_filter_plugins)
            state.metrics.plugin_evaluations(FILTER, self.profile_name, names, outcome.processed)
        return outcome

    async def _filter_nodes(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        start: int,
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None,
    ) -> FilterOutcome:
        """Each node in turn from ``start``: the reference path. A chain of plain ``def``
        Filters runs inline; an async one is fanned out across nodes.

        # schedule_one.go findNodesThatPassFilters
        """
        n = len(nodes)
        if not self.set.filter:
            take = min(limit, n)
            feasible = [nodes[(start + i) % n] for i in range(take)]
            return FilterOutcome(feasible, NodeToStatus(), take, set())
        if self.filters_async:
            return await self._filter_nodes_fanned(state, pod, nodes, start, limit, nominated_for)
        two_pass = self.run_filter_with_nominated_pods_sync
        return self.filter_nodes_inline(state, pod, nodes, start, limit, nominated_for, two_pass)

    def filter_nodes_inline(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        start: int,
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None,
        two_pass: Callable[[CycleState, Pod, NodeInfo, Sequence[PodInfo]], Status],
    ) -> FilterOutcome:
        """:meth:`_filter_nodes` for plain Filters: inline, node after node; a node with
        nominated pods is judged by ``two_pass`` (the fast paths give theirs)."""
        n = len(nodes)
        feasible = []
        statuses = NodeToStatus()
        rejecting: set[str] = set()
        calls = self.calls_for(state, FILTER, self.set.filter)
        error: Status | None = None
        for i in range(n):
            info = nodes[(start + i) % n]
            nominated = nominated_for(info.name) if nominated_for is not None else None
            if nominated:
                status = two_pass(state, pod, info, nominated)
            else:
                status = run_filters_sync(calls, state, pod, info)
            if status.is_success:
                feasible.append(info)
                if len(feasible) >= limit:
                    break
            elif status.code is Code.ERROR:
                error = status
                break
            else:
                statuses.set(info.name, status)
                rejecting.add(status.plugin)
        return FilterOutcome(feasible, statuses, len(feasible) + len(statuses), rejecting, error)

    async def _filter_nodes_fanned(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        start: int,
        limit: int,
        nominated_for: Callable[[str], Sequence[PodInfo]] | None,
    ) -> FilterOutcome:
        """:meth:`_filter_nodes` with async Filters: at most ``parallelism`` nodes at once,
        in order, until ``limit`` pass."""
        n = len(nodes)
        found: list[NodeInfo | None] = [None] * n
        failed: dict[int, Status] = {}
        error: Status | None = None
        count = 0

        async def check(i: int) -> bool:
            nonlocal error, count
            info = nodes[(start + i) % n]
            nominated = nominated_for(info.name) if nominated_for is not None else ()
            status = await self.run_filter_with_nominated_pods(state, pod, info, nominated)
            if status.is_success:
                if count >= limit:
                    return False
                found[i], count = info, count + 1
                return count < limit
            if status.code is Code.ERROR:
                error = status
                return False
            failed[i] = status
            return True

        await run_chunked(n, self.parallelism, check)
        # Statuses in evaluation order, whatever order the workers finished in.
        statuses = NodeToStatus()
        statuses.update((nodes[(start + i) % n].name, failed[i]) for i in sorted(failed))
        feasible = [info for info in found if info is not None]
        rejecting = {status.plugin for status in failed.values()}
        return FilterOutcome(feasible, statuses, len(feasible) + len(failed), rejecting, error)

    # ---- PostFilter -----------------------------------------------------------------

    async def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter in order until one succeeds (or errors). # RunPostFilterPlugins"""
        calls = self.calls_for(state, POST_FILTER, self.set.post_filter)
        sampled = state.record_plugin_metrics
        # The Filter and AddPod/RemovePod calls a PostFilter makes (preemption's dry runs)
        # are part of its observation, not timed one by one: docs/metrics.md.
        state.record_plugin_metrics = False
        reasons: list[str] = []
        last: Status | None = None
        try:
            for call in calls:
                try:
                    result, status = await invoke(call, state, pod, statuses)
                except Exception as exc:
                    return None, fault_status(call.plugin, "PostFilter", exc)
                status = SUCCESS if status is None else status.with_plugin(call.plugin)
                if status.is_success:
                    return result, status
                if status.code is not Code.UNSCHEDULABLE and status.code is not (
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                ):
                    return None, status
                reasons.extend(status.reasons)
                last = status
        finally:
            state.record_plugin_metrics = sampled
        code = last.code if last is not None else Code.UNSCHEDULABLE
        return None, Status(code, tuple(reasons), plugin=last.plugin if last else "")

    # ---- PreScore / Score -----------------------------------------------------------

    async def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """PreScore plugins in order; SKIP skips the plugin's Score. # RunPreScorePlugins"""
        evaluated: list[str] = []
        skipped: set[str] = set()
        try:
            for call in self.calls_for(state, PRE_SCORE, self.set.pre_score):
                try:
                    result = call.fn(state, pod, nodes)
                    if call.is_async:
                        result = await result
                    status: Status | None = result
                except Exception as exc:
                    evaluated.append(call.plugin)
                    return fault_status(call.plugin, "PreScore", exc)
                if status is not None and status.code is Code.SKIP:
                    skipped.add(call.plugin)
                    continue
                evaluated.append(call.plugin)
                if status is not None and not status.is_success:
                    return status.with_plugin(call.plugin)
            state.skip_score_plugins = frozenset(skipped)
            return SUCCESS
        finally:
            self._count_evaluations(PRE_SCORE, state, evaluated)

    async def run_score(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        table: NodeTable | None = None,
        rows: IntArray | None = None,
        row_key: Hashable | None = None,
        plugin_scores: bool = True,
    ) -> ScoreOutcome:
        """Score, NormalizeScore, weight, total. # framework.go RunScorePlugins

        With ``table`` and the nodes' ``rows`` in it, the fast paths score all nodes at
        once (``row_key``: the pod's key for kept columns). Without ``plugin_scores`` only
        the total is asked for: the fast paths may then leave out the scores of plugins
        they add to the total together.
        """
        skip = state.skip_score_plugins
        if state.metrics is not None and self.set.score:
            # instrumented_plugins.go: each plugin that is not skipped scores every node.
            names = self.evaluated_names(SCORE, self.set.score_calls, skip)
            state.metrics.plugin_evaluations(SCORE, self.profile_name, names, len(nodes))
        if table is not None and rows is not None:
            fast = await self.fast.score(state, pod, nodes, table, rows, row_key, plugin_scores)
            if fast is not None:
                return fast
        recorder = state.metrics if state.record_plugin_metrics else None
        total = np.zeros(len(nodes), dtype=np.int64)
        per_plugin: dict[str, IntArray] = {}
        for sp in self.set.score:
            if sp.name in skip:
                continue
            try:
                values = await self.score_nodes(sp, state, pod, nodes, recorder)
            except Exception as exc:
                return ScoreOutcome.failed(fault_status(sp.name, "Score", exc))
            done = normalized(sp, state, pod, nodes, values, recorder)
            if isinstance(done, Status):
                return ScoreOutcome.failed(done)
            failed = checked_scores(sp.name, done)
            if failed is not None:
                return ScoreOutcome.failed(failed)
            total += done if sp.weight == 1 else done * sp.weight
            per_plugin[sp.name] = done
        return ScoreOutcome(nodes, per_plugin, total)

    async def score_nodes(
        self,
        sp: ScorePluginEntry,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        recorder: MetricsRecorder | None,
    ) -> IntArray:
        """One plugin's raw scores of ``nodes``, node by node (fanned out when async)."""
        call = sp.call
        if recorder is not None:
            call = self._timed.get(SCORE, self.set.score_calls, recorder)[self.set.score.index(sp)]
        if not call.is_async:
            fn = call.fn
            return int_scores([fn(state, pod, info) for info in nodes])
        scores: list[int] = [0] * len(nodes)

        async def one(i: int) -> bool:
            scores[i] = await invoke(call, state, pod, nodes[i])
            return True

        await run_chunked(len(nodes), self.parallelism, one)
        return int_scores(scores)

    # ---- Reserve / Permit -----------------------------------------------------------

    async def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Reserve plugins in order; the first failure stops. # RunReservePluginsReserve"""
        for call in self.calls_for(state, RESERVE, self.set.reserve):
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return fault_status(call.plugin, "Reserve", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(call.plugin)
        return SUCCESS

    async def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve on every Reserve plugin in reverse order; faults are contained."""
        with anyio.CancelScope(shield=True):
            for call in reversed(self.calls_for(state, UNRESERVE, self.set.unreserve)):
                with contextlib.suppress(Exception):  # one failing Unreserve must not stop the rest
                    pending = call.fn(state, pod, node_name)
                    if call.is_async:
                        await pending

    async def run_permit(
        self, state: CycleState, pod: Pod, node_name: str, now: float
    ) -> tuple[Status, WaitingPod | None]:
        """Permit in order: any rejection rejects; any Wait makes the pod wait.

        Returns (status, waiting pod or None). Timeouts are capped at 15 minutes.
        # framework.go RunPermitPlugins
        """
        pending: dict[str, float] = {}
        timeouts: dict[str, float] = {}
        for call in self.calls_for(state, PERMIT, self.set.permit):
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return fault_status(call.plugin, "Permit", exc), None
            if status is None or status.is_success:
                continue
            if status.code is Code.WAIT:
                timeout = min(max(status.timeout, 0.0), MAX_PERMIT_TIMEOUT)
                pending[call.plugin] = now + timeout
                timeouts[call.plugin] = timeout
                continue
            return status.with_plugin(call.plugin), None
        if pending:
            waiting = WaitingPod(pod=pod, node_name=node_name, pending=pending, timeouts=timeouts)
            return Status(Code.WAIT), waiting
        return SUCCESS, None

    # ---- binding --------------------------------------------------------------------

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """PreBindPreFlight: the PreBind plugins that say SKIP (nothing to do for this pod
        on this node) are skipped at PreBind. # runtime/framework.go RunPreBindPreFlights

        Any other answer, or a fault, leaves the plugin's PreBind to run and report."""
        skip: list[str] = []
        for call in self.calls_for(state, PRE_BIND_PRE_FLIGHT, self.set.pre_bind_pre_flight):
            try:
                status: Status | None = call.fn(state, pod, node_name)
            except Exception:
                continue
            if status is not None and status.code is Code.SKIP:
                skip.append(call.plugin)
        state.skip_pre_bind_plugins = frozenset(skip)

    def binds_inline(self, state: CycleState) -> bool:
        """Whether every PreBind (not skipped), Bind and PostBind plugin for this attempt is
        a plain ``def``: the binding cycle then cannot wait on anything."""
        if self.set.binds_async:
            return False
        async_pre_bind = self.set.async_pre_bind
        return not async_pre_bind or async_pre_bind <= state.skip_pre_bind_plugins

    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBind plugins in order; the first failure stops. # RunPreBindPlugins"""
        for call in self.calls_for(state, PRE_BIND, self.set.pre_bind):
            if call.plugin in state.skip_pre_bind_plugins:
                continue
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return fault_status(call.plugin, "PreBind", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(call.plugin)
        return SUCCESS

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first Bind plugin that does not SKIP decides. # RunBindPlugins"""
        for call in self.calls_for(state, BIND, self.set.bind):
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return fault_status(call.plugin, "Bind", exc)
            if status is not None and status.code is Code.SKIP:
                continue
            return SUCCESS if status is None else status.with_plugin(call.plugin)
        return SKIP

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """PostBind plugins in order; informational, faults ignored. # RunPostBindPlugins"""
        for call in self.calls_for(state, POST_BIND, self.set.post_bind):
            with contextlib.suppress(Exception):
                pending = call.fn(state, pod, node_name)
                if call.is_async:
                    await pending


def _narrowed_to_none(narrowed_by: list[str], plugin: str) -> Status:
    """PreFilter results that together leave no node (framework.go RunPreFilterPlugins)."""
    if len(narrowed_by) == 1:
        message = f"node(s) didn't satisfy plugin {narrowed_by[0]}"
    else:
        message = (
            f"node(s) didn't satisfy plugin(s) [{', '.join(sorted(narrowed_by))}] simultaneously"
        )
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,), plugin=plugin)
