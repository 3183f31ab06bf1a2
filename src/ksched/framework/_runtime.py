"""The Framework: runs one profile's plugins at each extension point.

# pkg/scheduler/framework/runtime/framework.go
Plugins are classified once, when the profile is built: which extension points each
implements, and whether each method is ``async``. A chain of plain ``def`` Filter plugins
runs inline over the nodes; async ones fan out in a task group.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
import attrs

from ..api import Pod
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
from ._status import SUCCESS, Code, Status
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


def _fault(plugin: str, point: str, exc: BaseException) -> Status:
    message = f'running "{plugin}" {point} plugin: {type(exc).__name__}: {exc}'
    return Status(Code.ERROR, (message,), plugin=plugin)


@attrs.define(eq=False, slots=True)
class _ScorePlugin:
    name: str
    call: _Call
    weight: int
    normalize: ScoreExtensions | None


@attrs.define(eq=False, slots=True)
class FilterOutcome:
    """What Filter found: feasible nodes (in evaluation order) and the others' statuses."""

    feasible: list[NodeInfo]
    statuses: NodeToStatus
    processed: int
    unschedulable_plugins: set[str]
    error: Status | None = None


@attrs.define(eq=False, slots=True)
class ScoreOutcome:
    """Per node: each plugin's normalized score (before weight), and the weighted total."""

    plugin_scores: dict[str, dict[str, int]]
    totals: dict[str, int]
    error: Status | None = None


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
        self._pre_filter = calls("preFilter", "pre_filter")
        self._pre_filter_ext: list[tuple[str, PreFilterExtensions]] = []
        for name in self.points.get("preFilter", ()):
            ext_fn = getattr(self.plugins[name], "pre_filter_extensions", None)
            ext = ext_fn() if ext_fn is not None else None
            if ext is not None:
                self._pre_filter_ext.append((name, ext))
        self._filter = calls("filter", "filter")
        self.filters_async = any(c.is_async for c in self._filter)
        self._post_filter = calls("postFilter", "post_filter")
        self._pre_score = calls("preScore", "pre_score")
        self._score: list[_ScorePlugin] = []
        for name in self.points.get("score", ()):
            call = _bind(self.plugins[name], "score")
            if call is None:
                continue
            ext_fn = getattr(self.plugins[name], "score_extensions", None)
            self._score.append(
                _ScorePlugin(name, call, weights.get(name, 1), ext_fn() if ext_fn else None)
            )
        self.scores_async = any(p.call.is_async for p in self._score)
        self._reserve = calls("reserve", "reserve")
        self._unreserve = calls("reserve", "unreserve")
        self._permit = calls("permit", "permit")
        self._pre_bind = calls("preBind", "pre_bind")
        self._bind = calls("bind", "bind")
        self._post_bind = calls("postBind", "post_bind")

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
                out = await _invoke(call, state, pod, nodes)
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
        skip = state.skip_filter_plugins
        for call in self._filter:
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

    async def run_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filter plugins on one node; the first failure decides."""
        if not self.filters_async:
            return self.run_filter_sync(state, pod, node_info)
        skip = state.skip_filter_plugins
        for call in self._filter:
            if call.plugin in skip:
                continue
            try:
                status: Status | None = await _invoke(call, state, pod, node_info)
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
    ) -> FilterOutcome:
        """Filter nodes from ``start`` (rotating) until ``limit`` feasible were found.

        # schedule_one.go findNodesThatPassFilters
        """
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
            statuses.set(info.name, status)
            rejecting.add(status.plugin)
            return True

        await run_chunked(n, self.parallelism, check)
        ordered = [info for info in slots if info is not None]
        return FilterOutcome(ordered, statuses, len(ordered) + len(statuses), rejecting, error)

    # ---- PostFilter ---------------------------------------------------------------

    async def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter in order until one succeeds (or errors)."""
        reasons: list[str] = []
        last: Status | None = None
        for call in self._post_filter:
            try:
                result, status = await _invoke(call, state, pod, statuses)
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
                status: Status | None = await _invoke(call, state, pod, nodes)
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
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> ScoreOutcome:
        """Score, NormalizeScore, weight, total (# framework.go RunScorePlugins)."""
        totals = {info.name: 0 for info in nodes}
        per_plugin: dict[str, dict[str, int]] = {}
        skip = state.skip_score_plugins
        for sp in self._score:
            if sp.name in skip:
                continue
            scores: dict[str, int] = {}
            try:
                if sp.call.is_async:
                    await self._score_async(sp, state, pod, nodes, scores)
                else:
                    fn = sp.call.fn
                    for info in nodes:
                        scores[info.name] = fn(state, pod, info)
            except Exception as exc:
                return ScoreOutcome({}, {}, _fault(sp.name, "Score", exc))
            if sp.normalize is not None:
                try:
                    status = sp.normalize.normalize_score(state, pod, scores)
                except Exception as exc:
                    return ScoreOutcome({}, {}, _fault(sp.name, "NormalizeScore", exc))
                if status is not None and not status.is_success:
                    return ScoreOutcome({}, {}, status.with_plugin(sp.name))
            for node, value in scores.items():
                if value > MAX_NODE_SCORE or value < MIN_NODE_SCORE:
                    message = (
                        f"plugin {sp.name!r} returns an invalid score {value}, it should in the "
                        f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                    )
                    return ScoreOutcome({}, {}, Status(Code.ERROR, (message,), plugin=sp.name))
                totals[node] += value * sp.weight
            per_plugin[sp.name] = scores
        return ScoreOutcome(per_plugin, totals)

    async def _score_async(
        self,
        sp: _ScorePlugin,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        scores: dict[str, int],
    ) -> None:
        async def one(i: int) -> bool:
            info = nodes[i]
            scores[info.name] = await _invoke(sp.call, state, pod, info)
            return True

        await run_chunked(len(nodes), self.parallelism, one)
        # Keep node order stable for readers.
        ordered = {info.name: scores[info.name] for info in nodes}
        scores.clear()
        scores.update(ordered)

    # ---- Reserve / Permit ---------------------------------------------------------

    async def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for call in self._reserve:
            try:
                status: Status | None = await _invoke(call, state, pod, node_name)
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
                    await _invoke(call, state, pod, node_name)

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
                status: Status | None = await _invoke(call, state, pod, node_name)
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
                status: Status | None = await _invoke(call, state, pod, node_name)
            except Exception as exc:
                return _fault(call.plugin, "PreBind", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(call.plugin)
        return SUCCESS

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first Bind plugin that does not SKIP decides."""
        for call in self._bind:
            try:
                status: Status | None = await _invoke(call, state, pod, node_name)
            except Exception as exc:
                return _fault(call.plugin, "Bind", exc)
            if status is not None and status.code is Code.SKIP:
                continue
            return SUCCESS if status is None else status.with_plugin(call.plugin)
        return Status(Code.SKIP)

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for call in self._post_bind:
            with contextlib.suppress(Exception):  # PostBind is informational
                await _invoke(call, state, pod, node_name)
