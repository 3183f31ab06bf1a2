"""The scheduler's shared state: profiles, cache, queue, waiting pods, records.

# pkg/scheduler/scheduler.go (Scheduler, New), schedule_one.go numFeasibleNodesToFind
The parts of the loop build on :class:`SchedulerBase`, one module each, as upstream's
files split them: ``_event_handlers`` (eventhandlers.go), ``_scheduling_cycle``,
``_binding_cycle`` and ``_failure`` (schedule_one.go); ``_scheduler`` puts them together.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import attrs
import numpy as np

from .._event_loop import loop_clock
from ..api import Pod
from ..cache import Cache, Snapshot
from ..cluster import ClusterStore, InMemoryCluster
from ..config import SchedulerConfig
from ..framework import Code, Status
from ..framework.runtime import Framework, MetricsRecorder, WaitingPods
from ..queue import SchedulingQueue
from ._diagnosis import AttemptReport, FitError, SchedulingEvent
from ._handle import FrameworkHandle

if TYPE_CHECKING:
    from ..extender import ExtenderClient
from ._profiles import Registry, build_framework

__all__ = ["Failure", "PodRecord", "SchedulerBase", "num_feasible_nodes_to_find"]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to find before Filter stops.

    # schedule_one.go numFeasibleNodesToFind
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@attrs.define(eq=False)
class PodRecord:
    """What the scheduler knows of a pod it was given (for reports)."""

    attempts: int = 0
    message: str | None = None
    nominated_node: str | None = None
    first_attempt: AttemptReport | None = None


class SchedulerBase:
    """The scheduler's state and what every part of the loop shares: profile routing,
    the timeline and Events. The parts of the loop are layered on top of it."""

    def __init__(
        self,
        config: SchedulerConfig | None = None,
        cluster: ClusterStore | None = None,
        *,
        registry: Registry | None = None,
        seed: int | None = None,
        observer: Callable[[SchedulingEvent], None] | None = None,
        explain: bool | Collection[str] = False,
        plugin_timeout: float = 30.0,
        timings: bool = False,
        opportunistic_batching: bool = True,
        metrics: MetricsRecorder | None = None,
    ) -> None:
        self._now: Callable[[], float] = loop_clock()
        """The event loop's clock (``anyio.current_time`` without its per-call dispatch)."""
        self.config = config or SchedulerConfig()
        self.cluster: Any = cluster if cluster is not None else InMemoryCluster()
        self.rng = random.Random(seed)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.waiting_pods = WaitingPods()
        self.records: dict[str, PodRecord] = {}
        self.observer = observer
        self.explain = explain
        """Record what each attempt evaluated (True), or only for these pod keys."""
        self._explain_only = None if isinstance(explain, bool) else frozenset(explain)
        self.plugin_timeout = plugin_timeout
        self.timings = timings
        self.metrics = metrics
        """The Prometheus metrics, when kept (``Scheduler(metrics=SchedulerMetrics())``)."""
        self._measure = timings or metrics is not None
        """Time the extension points (for ``timings`` or the metrics)."""
        self.extenders: list[ExtenderClient] = []
        """The configured extenders (``extenders:``), called after Filter and Score."""
        if self.config.extenders:
            from ..extender import ExtenderClient

            self.extenders = [ExtenderClient.new(c) for c in self.config.extenders]
            for extender in self.extenders:
                extender.metrics = metrics
        self._profile_name = ""
        """Measure attempts: ``attempt_start`` on outcome events, seconds per extension point."""
        self.extension_point_seconds: dict[str, float] = {}
        self.attempt_seconds = 0.0
        self._attempt_started: dict[str, float] = {}
        self._next_start_node_index = 0
        self.opportunistic_batching = opportunistic_batching
        """Reuse an equal pod's ranking when it filled its node (upstream's
        OpportunisticBatching gate); a profile takes part only if all its Filter- and
        Score-side plugins sign pods."""
        self._cycle = 0
        self._tie_rng: np.random.Generator | None = None
        self._binding_tasks = 0
        self._closed = False
        self._loop_scope: anyio.CancelScope | None = None
        self._binding_tg: anyio.abc.TaskGroup | None = None
        self._record_event: Callable[..., None] | None = (
            getattr(self.cluster, "record_event", None)
            if getattr(self.cluster, "keep_events", True)
            else None
        )
        self.frameworks: dict[str, Framework] = {}
        for profile in self.config.profiles:
            handle = FrameworkHandle(self, profile.scheduler_name)
            self.frameworks[profile.scheduler_name] = build_framework(
                self.config,
                profile,
                registry=registry,
                handle_for=handle.attach,
                waiting_pods=self.waiting_pods,
            )
        self._gang_profiles = any(fw.group_plugin is not None for fw in self.frameworks.values())
        """A profile places pod groups: unscheduled pod adds are broadcast as events."""
        first = next(iter(self.frameworks.values()))
        self.queue = SchedulingQueue(
            less=first.less,
            sort_key=first.sort_key,
            pre_enqueue=self._pre_enqueue,
            registrations=self._registrations,
            initial_backoff=self.config.pod_initial_backoff_seconds,
            max_backoff=self.config.pod_max_backoff_seconds,
            clock=self._now,
        )
        self._registrations_by_profile = {
            name: fw.event_registrations() for name, fw in self.frameworks.items()
        }
        if metrics is not None:
            metrics.watch(self._metrics_state)
            self.queue.on_incoming = metrics.incoming

    # ---- profile routing --------------------------------------------------------------

    def _framework_for(self, pod: Pod) -> Framework | None:
        return self.frameworks.get(pod.spec.scheduler_name)

    def _pre_enqueue(self, pod: Pod) -> Status | None:
        fw = self._framework_for(pod)
        return fw.run_pre_enqueue(pod) if fw is not None else None

    def _registrations(self, pod: Pod) -> Mapping[str, Any]:
        return self._registrations_by_profile.get(pod.spec.scheduler_name, {})

    def _spent(
        self, point: str, since: float, status: Status | None = None, profile: str | None = None
    ) -> float:
        """Account the time since ``since`` to the extension point ``point``: in
        ``extension_point_seconds`` (with ``timings``) and in the metrics (with them,
        labelled with the point's status code); returns now."""
        now = self._now()
        if self.timings:
            seconds = self.extension_point_seconds
            seconds[point] = seconds.get(point, 0.0) + now - since
        if self.metrics is not None:
            code = "Success" if status is None else status.code.label
            name = self._profile_name if profile is None else profile
            self.metrics.extension_point(point, code, name, now - since)
        return now

    def _spent_algorithm(self, since: float) -> float:
        """Observe schedulePod's duration (scheduling_algorithm_duration_seconds)."""
        now = self._now()
        if self.metrics is not None:
            self.metrics.algorithm(now - since)
        return now

    def _metrics_state(self) -> dict[str, Any]:
        """What the state gauges read when the metrics are collected."""
        pending = self.queue.pending_counts()
        unschedulable: Counter[tuple[str, str]] = Counter()
        for qpi in self.queue.unschedulable_pods():
            profile = qpi.pod.spec.scheduler_name
            for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
                unschedulable[plugin, profile] += 1
        return {
            "pending": pending,
            "unschedulable": unschedulable,
            "cache": self.cache.sizes(),
            "tasks": {"binding": self._binding_tasks},
        }

    def record_event(
        self,
        regarding: Pod,
        reason: str,
        note: str,
        *,
        related: Pod | None = None,
        event_type: str = "Normal",
        action: str = "",
    ) -> None:
        """An Event for the cluster (kube-scheduler's recorder) and the timeline."""
        self._emit(reason, regarding, message=note)
        self.cluster_event(regarding, related, event_type, reason, action, note)

    def cluster_event(
        self,
        regarding: Pod,
        related: Pod | None,
        event_type: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        """Hand an Event to the cluster's recorder (a store without one gets none)."""
        if self._record_event is not None:
            self._record_event(regarding, related, event_type, reason, action, note)

    def _emit(self, kind: str, pod: Pod, **details: Any) -> None:
        if self.timings and kind in _ATTEMPT_OUTCOMES:
            started = self._attempt_started
            start = (
                started.get(pod.uid) if kind == "WaitingOnPermit" else started.pop(pod.uid, None)
            )
            if start is not None:
                details["attempt_start"] = start
        if self.observer is not None:
            self.observer(SchedulingEvent(kind, pod.key, self._now(), details))


FITS = Status(Code.SUCCESS)
"""A feasible node's entry in an AttemptReport."""

_ATTEMPT_OUTCOMES = frozenset({"Bound", "Unschedulable", "SchedulerError", "WaitingOnPermit"})


def is_cancel(exc: BaseException) -> bool:
    return isinstance(exc, anyio.get_cancelled_exc_class())


@attrs.define(eq=False)
class Failure:
    """Why an attempt failed, and what it does to the pod's nomination."""

    status: Status
    fit_error: FitError | None = None
    nominated: str | None = None
    clear_nomination: bool = False
