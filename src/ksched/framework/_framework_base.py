"""A profile's plugins, classified once; the queue side and PreFilter.

# pkg/scheduler/framework/runtime/framework.go (NewFramework, RunPreFilterPlugins,
# RunPreFilterExtensionAddPod/RemovePod)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from ..api import Pod
from ._batch import OpportunisticBatch
from ._calls import (
    ANY_EVENT,
    BatchFilter,
    PluginCall,
    ScorePluginEntry,
    bind_method,
    fault_status,
)
from ._capabilities import capabilities_of, row_key_function
from ._cycle_state import CycleState
from ._events import ClusterEventWithHint
from ._interfaces import PreFilterResult, QueuedPodInfo
from ._nominated_verdicts import NominatedVerdicts
from ._plugin_metrics import (
    PRE_FILTER,
    PRE_FILTER_EXTENSION_ADD_POD,
    PRE_FILTER_EXTENSION_REMOVE_POD,
    TimedCalls,
    call_timed,
)
from ._protocols import Plugin, PodGroupPlugin, PreFilterExtensions
from ._row_cache import RowCache
from ._signature import SignPlugin
from ._status import SUCCESS, Code, Status
from ._types import NodeInfo, PodInfo
from ._waiting import WaitingPods

__all__ = ["FrameworkBase"]


class FrameworkBase:
    """A profile's plugins per extension point, in order, with score weights; the
    queue side and PreFilter. Filter and the later points build on it."""

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

        def calls(point: str, method: str) -> list[PluginCall]:
            out = []
            for name in self.points.get(point, ()):
                call = bind_method(self.plugins[name], method)
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
        self.verdict_cache = True
        """Keep nominated nodes' Filter verdicts between cycles when the pod's Filters are
        node-local (off: both Filter passes run on every such node)."""
        self._post_filter = calls("postFilter", "post_filter")
        self._pre_score = calls("preScore", "pre_score")
        self._score: list[ScorePluginEntry] = []
        for name in self.points.get("score", ()):
            call = bind_method(self.plugins[name], "score")
            if call is None:
                continue
            ext_fn = getattr(self.plugins[name], "score_extensions", None)
            ext = ext_fn() if ext_fn else None
            self._score.append(
                ScorePluginEntry(
                    name,
                    call,
                    weights.get(name, 1),
                    ext,
                    None if call.is_async else getattr(self.plugins[name], "score_batch", None),
                    getattr(ext, "normalize_score_batch", None),
                    None if call.is_async else getattr(self.plugins[name], "uniform_score", None),
                )
            )
        self.scores_async = any(p.call.is_async for p in self._score)
        self._score_calls = [p.call for p in self._score]
        self._reserve = calls("reserve", "reserve")
        self._unreserve = calls("reserve", "unreserve")
        self._permit = calls("permit", "permit")
        self._pre_bind = calls("preBind", "pre_bind")
        self._bind = calls("bind", "bind")
        self._post_bind = calls("postBind", "post_bind")
        self._pre_bind_pre_flight = calls("preBind", "pre_bind_pre_flight")
        self._async_pre_bind = frozenset(c.plugin for c in self._pre_bind if c.is_async)
        self._binds_async = any(c.is_async for c in (*self._bind, *self._post_bind))
        self._filter_plugins = [(c.plugin, self.plugins[c.plugin]) for c in self._filter]
        declared = {name: capabilities_of(plugin) for name, plugin in self.plugins.items()}
        self._local_filters = frozenset(
            c.plugin
            for c in self._filter
            if declared[c.plugin].node_local_filter and c.plugin in self._filter_batch
        )
        """Filters with a batch form whose verdict reads only the node and the pod."""
        self._row_local_scores = frozenset(
            p.name for p in self._score if declared[p.name].node_local_score
        )
        """Score plugins whose raw score of a node reads only that node and the pod."""
        self.row_key = row_key_function(
            [
                field
                for name, caps in declared.items()
                if name in self._local_filters or name in self._row_local_scores
                for field in caps.pod_fields
            ]
        )
        """What the node-local Filters and Scores read of a pod (their declared fields):
        the key of the masks, verdicts and columns kept for equal pods."""
        self._with_nominated: dict[str, tuple[NodeInfo, int, tuple[PodInfo, ...], NodeInfo]] = {}
        """Per node: the node with its nominated pods added, kept while the node's info,
        its generation and the nominated pods are the same objects (a filter reads it)."""
        self._nominated_verdicts = NominatedVerdicts(
            frozenset(c.plugin for c in self._filter if declared[c.plugin].node_local_filter),
            self.row_key,
        )
        """Per node: the two-pass Filter verdict, for pods whose Filters are node-local."""
        self._summed_for: dict[
            frozenset[str], tuple[tuple[ScorePluginEntry, ...], frozenset[str]]
        ] = {}
        """Per set of skipped Score plugins: the row-local ones kept as one column of
        weighted sums (see Framework.run_score)."""
        self._local_filters_for: dict[frozenset[str], bool] = {}
        self.row_cache = RowCache()
        """Filter masks and Score columns kept per pod signature between cycles."""
        self.use_row_cache = True
        """Read kept masks and columns for equal pods (off: batch forms every cycle)."""
        self.batch = self._opportunistic_batch()
        """The profile's opportunistic batching, or None when a plugin cannot sign pods."""
        self.group_plugin: PodGroupPlugin | None = next(
            (
                cast(PodGroupPlugin, p)
                for p in self.plugins.values()
                if callable(getattr(p, "placement_feasible", None))
                and callable(getattr(p, "pod_group", None))
            ),
            None,
        )
        """The plugin that places pod groups in one cycle (GangScheduling), if enabled."""
        self._timed = TimedCalls()
        self._evaluated: dict[tuple[str, frozenset[str]], tuple[str, ...]] = {}

    def _filters_local(self, skip: frozenset[str]) -> bool:
        """Whether every Filter that runs (not in ``skip``) is node-local with a batch form."""
        local = self._local_filters_for.get(skip)
        if local is None:
            local = self._local_filters_for[skip] = all(
                c.plugin in self._local_filters for c in self._filter if c.plugin not in skip
            )
        return local

    # ---- per-plugin metrics -------------------------------------------------------

    def _calls(self, state: CycleState, point: str, calls: list[PluginCall]) -> list[PluginCall]:
        """``calls``, timed when the attempt is sampled for plugin metrics."""
        recorder = state.metrics
        if state.record_plugin_metrics and recorder is not None:
            return self._timed.get(point, calls, recorder)
        return calls

    def _names_evaluated(
        self, point: str, state: CycleState, evaluated: list[str]
    ) -> tuple[str, ...]:
        """PreFilter's or PreScore's ``evaluated`` plugins as the profile's kept tuple when
        every plugin ran (the ones not evaluated said SKIP), else a new one."""
        if point == PRE_FILTER:
            calls, skip = self._pre_filter, state.skip_filter_plugins
        else:
            calls, skip = self._pre_score, state.skip_score_plugins
        if len(evaluated) + len(skip) == len(calls):
            return self._evaluated_names(point, calls, skip)
        return tuple(evaluated)

    def _evaluated_names(
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
        evaluated: list[str] = []
        try:
            return await self._run_pre_filter(state, pod, nodes, evaluated)
        finally:
            if state.metrics is not None:  # instrumented_plugins.go: all but SKIP count
                state.metrics.plugin_evaluations(
                    PRE_FILTER,
                    self.profile_name,
                    self._names_evaluated(PRE_FILTER, state, evaluated),
                    1,
                )

    async def _run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], evaluated: list[str]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        result: PreFilterResult | None = None
        skipped: set[str] = set()
        narrowed_by: list[str] = []
        for call in self._calls(state, PRE_FILTER, self._pre_filter):
            try:
                out = call.fn(state, pod, nodes)
                if call.is_async:
                    out = await out
            except Exception as exc:
                evaluated.append(call.plugin)
                return None, fault_status(call.plugin, "PreFilter", exc), set()
            if out is None:  # the common answer: nothing to narrow, nothing to report
                evaluated.append(call.plugin)
                continue
            if isinstance(out, Status) and out.code is Code.SKIP:
                skipped.add(call.plugin)
                continue
            evaluated.append(call.plugin)
            if isinstance(out, Status):
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
