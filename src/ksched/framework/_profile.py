"""A profile's plugins, classified once, when the profile is built.

# pkg/scheduler/framework/runtime/framework.go NewFramework
Which extension points each plugin implements, whether each method is ``async``, which
batch forms it offers and what it lets the fast paths assume (its ``Capabilities``,
``sign_pod``): decided here once and never asked again per call, as trio's
instrumentation decides once which hooks an instrument overrides.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from ._calls import BatchFilter, PluginCall, ScorePluginEntry, bind_method
from ._capabilities import Capabilities, capabilities_of, row_key_function
from ._interfaces import QueuedPodInfo
from ._protocols import Plugin, PodGroupPlugin, PreFilterExtensions
from ._signature import SignPlugin

__all__ = ["FAST_PATH_POINTS", "PluginSet", "describe_fast_paths", "fast_path_notes"]

logger = logging.getLogger("ksched.framework")

FAST_PATH_POINTS = {"preFilter": "pre_filter", "filter": "filter", "preScore": "pre_score"}
FAST_PATH_POINTS["score"] = "score"
"""The extension points whose plugins must sign pods for opportunistic batching."""


class PluginSet:
    """One profile's plugins per extension point, in order, resolved and classified."""

    def __init__(
        self,
        plugins: Mapping[str, Plugin],
        points: Mapping[str, Sequence[str]],
        weights: Mapping[str, int],
    ) -> None:
        self.plugins = dict(plugins)
        self.points = {k: list(v) for k, v in points.items()}
        self.weights = dict(weights)
        self._queue_side()
        self._filter_side()
        self._score_side(weights)
        self._binding_side()
        self._fast_path_promises()
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

    def calls(self, point: str, method: str) -> list[PluginCall]:
        """The plugins at ``point`` that have ``method``, in order."""
        out = []
        for name in self.points.get(point, ()):
            call = bind_method(self.plugins[name], method)
            if call is not None:
                out.append(call)
        return out

    def _queue_side(self) -> None:
        self.pre_enqueue = self.calls("preEnqueue", "pre_enqueue")
        sorts = self.calls("queueSort", "less")
        self.less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] | None = (
            sorts[0].fn if sorts else None
        )
        self.sort_key: Callable[[QueuedPodInfo], Any] | None = (
            getattr(self.plugins[sorts[0].plugin], "sort_key", None) if sorts else None
        )
        """The QueueSort plugin's ``sort_key`` (``less(a, b)`` iff key(a) < key(b)), if any."""

    def _filter_side(self) -> None:
        self.pre_filter = self.calls("preFilter", "pre_filter")
        self.pre_filter_ext: list[tuple[str, PreFilterExtensions]] = []
        for name in self.points.get("preFilter", ()):
            ext_fn = getattr(self.plugins[name], "pre_filter_extensions", None)
            ext = ext_fn() if ext_fn is not None else None
            if ext is not None:
                self.pre_filter_ext.append((name, ext))
        self.filter = self.calls("filter", "filter")
        self.filters_async = any(c.is_async for c in self.filter)
        self.filter_batch: dict[str, BatchFilter] = {}
        for call in self.filter:
            batch = getattr(self.plugins[call.plugin], "filter_batch", None)
            if batch is not None and not call.is_async:
                self.filter_batch[call.plugin] = batch
        self.filter_plugins = [(c.plugin, self.plugins[c.plugin]) for c in self.filter]
        self.post_filter = self.calls("postFilter", "post_filter")

    def _score_side(self, weights: Mapping[str, int]) -> None:
        self.pre_score = self.calls("preScore", "pre_score")
        self.score: list[ScorePluginEntry] = []
        for name in self.points.get("score", ()):
            plugin = self.plugins[name]
            call = bind_method(plugin, "score")
            if call is None:
                continue
            ext_fn = getattr(plugin, "score_extensions", None)
            ext = ext_fn() if ext_fn else None
            plain = not call.is_async
            self.score.append(
                ScorePluginEntry(
                    name,
                    call,
                    weights.get(name, 1),
                    ext,
                    getattr(plugin, "score_batch", None) if plain else None,
                    getattr(ext, "normalize_score_batch", None),
                    getattr(plugin, "uniform_score", None) if plain else None,
                )
            )
        self.scores_async = any(p.call.is_async for p in self.score)
        self.score_calls = [p.call for p in self.score]

    def _binding_side(self) -> None:
        self.reserve = self.calls("reserve", "reserve")
        self.unreserve = self.calls("reserve", "unreserve")
        self.permit = self.calls("permit", "permit")
        self.pre_bind = self.calls("preBind", "pre_bind")
        self.bind = self.calls("bind", "bind")
        self.post_bind = self.calls("postBind", "post_bind")
        self.pre_bind_pre_flight = self.calls("preBind", "pre_bind_pre_flight")
        self.async_pre_bind = frozenset(c.plugin for c in self.pre_bind if c.is_async)
        self.binds_async = any(c.is_async for c in (*self.bind, *self.post_bind))

    def _fast_path_promises(self) -> None:
        """What the fast paths may assume, from the plugins' own declarations."""
        declared: dict[str, Capabilities] = {
            name: capabilities_of(plugin) for name, plugin in self.plugins.items()
        }
        self.capabilities = declared
        self.node_local_filters = frozenset(
            c.plugin for c in self.filter if declared[c.plugin].node_local_filter
        )
        """Filters whose verdict reads only the node and the pod's declared fields."""
        self.kept_filters = frozenset(
            name for name in self.node_local_filters if name in self.filter_batch
        )
        """Node-local Filters with a batch form: their masks may be kept for equal pods."""
        self.node_local_scores = frozenset(
            p.name for p in self.score if declared[p.name].node_local_score
        )
        """Score plugins whose raw score of a node reads only that node and the pod."""
        self.row_key = row_key_function(
            [
                field
                for name, caps in declared.items()
                if name in self.kept_filters or name in self.node_local_scores
                for field in caps.pod_fields
            ]
        )
        """What the node-local Filters and Scores read of a pod: the key of the masks,
        verdicts and columns kept for equal pods."""
        self.signers, self.unsigned = self._signers()

    def _signers(self) -> tuple[list[SignPlugin], list[str]]:
        """The plugins that sign pods for opportunistic batching, and those at its points
        that cannot (any one of which turns batching off for the profile)."""
        signers: dict[str, SignPlugin] = {}
        unsigned: list[str] = []
        for point, method in FAST_PATH_POINTS.items():
            for name in self.points.get(point, ()):
                plugin = self.plugins[name]
                if (
                    name in signers
                    or name in unsigned
                    or not callable(getattr(plugin, method, None))
                ):
                    continue
                if isinstance(plugin, SignPlugin) and callable(plugin.sign_pod):
                    signers[name] = plugin
                else:
                    unsigned.append(name)
        return list(signers.values()), unsigned

    def notes(self) -> list[str]:
        """Why fast paths are off for this profile, plugin by plugin (empty: none is)."""
        return fast_path_notes(self)


def fast_path_notes(plugins: PluginSet) -> list[str]:
    """What each plugin turns off in the fast paths, and why."""
    notes = [
        f"plugin {name!r} turns opportunistic batching off: it does not sign pods (sign_pod)"
        for name in plugins.unsigned
    ]
    for call in plugins.filter:
        name = call.plugin
        if name in plugins.kept_filters:
            continue
        why = (
            "its Filter is async"
            if call.is_async
            else "it declares no node-local Filter (Capabilities)"
            if name not in plugins.node_local_filters
            else "it has no filter_batch form"
        )
        notes.append(f"plugin {name!r} turns kept Filter masks off for the pods it filters: {why}")
    return notes


_BATCH_FORMS = (
    "filter_batch",
    "filter_batch_statuses",
    "filter_batch_status_groups",
    "score_batch",
    "uniform_score",
)
_POINT_METHODS = {
    "preEnqueue": "pre_enqueue",
    **FAST_PATH_POINTS,
    "postFilter": "post_filter",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
}


def describe_fast_paths(plugin: object) -> tuple[dict[str, Any], list[str]]:
    """What a plugin (or its class) offers the fast paths, and what it turns off for its
    profile and why: for ``ksched plugins``. Read from its declarations only."""
    caps = capabilities_of(plugin)
    has = {m: callable(getattr(plugin, m, None)) for m in _POINT_METHODS.values()}
    offered: dict[str, Any] = {
        "batchForms": [m for m in _BATCH_FORMS if callable(getattr(plugin, m, None))],
        "nodeLocal": [
            point
            for point, flag in (
                ("filter", caps.node_local_filter),
                ("score", caps.node_local_score),
            )
            if flag
        ],
        "podFields": [f.key for f in caps.pod_fields],
        "signsPods": callable(getattr(plugin, "sign_pod", None)),
        "async": [
            point
            for point, method in _POINT_METHODS.items()
            if has[method] and inspect.iscoroutinefunction(getattr(plugin, method))
        ],
    }
    off: list[str] = []
    filter_side = any(has[m] for m in FAST_PATH_POINTS.values())
    if filter_side and not offered["signsPods"]:
        off.append("opportunistic batching, for its whole profile: it does not sign pods")
    if has["filter"]:
        if "filter" in offered["async"]:
            off.append("kept Filter masks and verdicts, for pods it filters: its Filter is async")
        elif not caps.node_local_filter:
            off.append("kept Filter masks and verdicts, for pods it filters: not node-local")
        elif "filter_batch" not in offered["batchForms"]:
            off.append("kept Filter masks, for pods it filters: no filter_batch form")
    return offered, off
