"""kube-scheduler's metrics, with upstream's names, labels and buckets, per Scheduler.

# pkg/scheduler/metrics/metrics.go, profile_metrics.go
One :class:`SchedulerMetrics` per Scheduler, on its own ``CollectorRegistry`` (or the
embedder's), so two schedulers in one process never collide. The engine records into
plain per-label accumulators (a bucket index and two additions per observation, no
lock: everything runs on the one event loop); they become prometheus_client metric
families when the registry is collected. The gauges that describe state (pending pods by
queue, unschedulable pods by plugin, cache sizes, running tasks) are read from the
scheduler at collection time too, so they cost nothing on the hot path. docs/metrics.md
lists where ksched's set differs from upstream's.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from .._errors import ConfigError

__all__ = [
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "SchedulerMetrics",
    "exponential_buckets",
]

PLUGIN_METRICS_SAMPLE_PERCENT = 10
"""The share of scheduling attempts whose plugin calls are timed (schedule_one.go
pluginMetricsSamplePercent)."""


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """component-base ExponentialBuckets: ``count`` bounds from ``start``, each ``factor``
    times the last (multiplied in turn, as client_golang does, so the bounds' last digits
    are upstream's: 1.5000000000000002e-05 for 0.00001 * 1.5)."""
    bounds: list[float] = []
    for _ in range(count):
        bounds.append(start)
        start *= factor
    return bounds


class _Counter:
    """A counter by label values."""

    def __init__(self, name: str, help: str, labels: Sequence[str] = ()) -> None:
        self.name, self.help, self.labels = name, help, list(labels)
        self.values: dict[tuple[str, ...], float] = {} if labels else {(): 0.0}

    def inc(self, key: tuple[str, ...], amount: float = 1.0) -> None:
        self.values[key] = self.values.get(key, 0.0) + amount

    def family(self) -> Metric:
        out = CounterMetricFamily(self.name, self.help, labels=self.labels)
        for key, value in self.values.items():
            out.add_metric(list(key), value)
        return out


class _Histogram:
    """A histogram by label values: per key, counts per bucket (the last: +Inf) and sum."""

    def __init__(
        self, name: str, help: str, buckets: Sequence[float], labels: Sequence[str] = ()
    ) -> None:
        self.name, self.help, self.labels = name, help, list(labels)
        self.bounds = list(buckets)
        self.series: dict[tuple[str, ...], list[float]] = {}
        if not labels:  # a metric without labels is shown from the start, at zero
            self.series[()] = [0.0] * (len(self.bounds) + 2)

    def observe(self, key: tuple[str, ...], value: float) -> None:
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = [0.0] * (len(self.bounds) + 2)
        series[bisect.bisect_left(self.bounds, value)] += 1
        series[-1] += value

    def family(self) -> Metric:
        out = HistogramMetricFamily(self.name, self.help, labels=self.labels)
        for key, series in self.series.items():
            cumulative, buckets = 0.0, []
            for bound, count in zip((*self.bounds, float("inf")), series[:-1], strict=True):
                cumulative += count
                buckets.append((_bound_text(bound), cumulative))
            out.add_metric(list(key), buckets, series[-1])
        return out


class _EvaluationCounter:
    """scheduler_plugin_evaluation_total, kept by call group: one addition per extension
    point and attempt (a tuple of plugins, all evaluated ``count`` times), split into one
    series per plugin when collected.

    The framework passes the same tuple object for the same group attempt after attempt,
    so a group is found by the tuple's identity (no hashing of its contents); an entry
    holds its tuple, so the identity cannot be reused while the entry lives.
    """

    _MAX_GROUPS = 4096

    def __init__(self, name: str, help: str) -> None:
        self.name, self.help = name, help
        self.groups: dict[int, list[Any]] = {}
        """id(plugins) -> [plugins, point, profile, count]."""
        self.overflow: dict[tuple[str, str, tuple[str, ...]], int] = {}

    def add(self, point: str, profile: str, plugins: tuple[str, ...], count: int) -> None:
        entry = self.groups.get(id(plugins))
        if entry is not None and entry[0] is plugins and entry[1] == point and entry[2] == profile:
            entry[3] += count
        elif entry is None and len(self.groups) < self._MAX_GROUPS:
            self.groups[id(plugins)] = [plugins, point, profile, count]
        else:
            key = (point, profile, plugins)
            self.overflow[key] = self.overflow.get(key, 0) + count

    def family(self) -> Metric:
        totals: dict[tuple[str, str, str], int] = {}
        groups = [(p, pt, pr, n) for p, pt, pr, n in self.groups.values()]
        groups += [(p, pt, pr, n) for (pt, pr, p), n in self.overflow.items()]
        for plugins, point, profile, count in groups:
            for plugin in plugins:
                key = (plugin, point, profile)
                totals[key] = totals.get(key, 0) + count
        out = CounterMetricFamily(
            self.name, self.help, labels=["plugin", "extension_point", "profile"]
        )
        for key, value in totals.items():
            out.add_metric(list(key), value)
        return out


def _bound_text(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(float(bound))


class _Families(Collector):
    def __init__(self, owner: SchedulerMetrics) -> None:
        self._owner = owner

    def collect(self) -> Iterator[Metric]:
        yield from self._owner.families()


class SchedulerMetrics:
    """The metrics of one Scheduler.

    Args:
        registry: where the metrics are registered; a new registry when None.
        plugin_sample_percent: the share of scheduling attempts (0-100) whose plugin
            calls are timed into ``scheduler_plugin_execution_duration_seconds``;
            upstream's 10 by default.
        rng: the random source that picks those attempts; ``random.Random(0)`` when None,
            so a simulation's metrics are the same on every run.

    Raises:
        ConfigError: ``plugin_sample_percent`` is not an integer from 0 to 100.
    """

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        plugin_sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT,
        rng: random.Random | None = None,
    ) -> None:
        if (
            isinstance(plugin_sample_percent, bool)
            or not isinstance(plugin_sample_percent, int)
            or not 0 <= plugin_sample_percent <= 100
        ):
            raise ConfigError(
                f"SchedulerMetrics: plugin_sample_percent: must be an integer from 0 to 100, "
                f"not {plugin_sample_percent!r}"
            )
        self.plugin_sample_percent = plugin_sample_percent
        self._rng = rng if rng is not None else random.Random(0)
        self.registry = registry if registry is not None else CollectorRegistry()
        ms = exponential_buckets(0.001, 2, 15)
        self.schedule_attempts = _Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
        )
        self.scheduling_attempt_duration = _Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ms,
            ["result", "profile"],
        )
        self.scheduling_algorithm_duration = _Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            ms,
        )
        self.preemption_victims = _Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            exponential_buckets(1, 2, 7),
        )
        self.preemption_attempts = _Counter(
            "scheduler_preemption_attempts", "Total preemption attempts in the cluster till now"
        )
        self.pod_scheduling_sli_duration = _Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
            "queue and might involve multiple scheduling attempts.",
            exponential_buckets(0.01, 2, 20),
            ["attempts"],
        )
        self.pod_scheduling_attempts = _Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            exponential_buckets(1, 2, 5),
        )
        self.framework_extension_point_duration = _Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            exponential_buckets(0.0001, 2, 12),
            ["extension_point", "status", "profile"],
        )
        self.plugin_execution_duration = _Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            exponential_buckets(0.00001, 1.5, 20),
            ["plugin", "extension_point", "status"],
        )
        self.plugin_evaluation = _EvaluationCounter(
            "scheduler_plugin_evaluation",
            "Number of attempts to schedule pods by each plugin and the extension point "
            "(available only in PreFilter, Filter, PreScore, and Score).",
        )
        self.queue_incoming_pods = _Counter(
            "scheduler_queue_incoming_pods",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
        )
        self.permit_wait_duration = _Histogram(
            "scheduler_permit_wait_duration_seconds",
            "Duration of waiting on permit.",
            ms,
            ["result"],
        )
        self.extender_request_duration = _Histogram(
            "scheduler_extender_request_duration_seconds",
            "Duration of a call to a scheduler extender, by the extender (its urlPrefix), "
            "the verb (filter, prioritize, preempt, bind) and the result (success, error, "
            "timeout). ksched's own: kube-scheduler has no extender metrics.",
            exponential_buckets(0.0001, 2, 17),
            ["extender", "verb", "result"],
        )
        # Pod-group cycles (GenericWorkload; metrics.go podGroupScheduleAttempts,
        # podGroupSchedulingLatency, PodGroupSchedulingAlgorithmLatency).
        self.podgroup_schedule_attempts = _Counter(
            "scheduler_podgroup_schedule_attempts",
            "Number of attempts to schedule pod group, by the result. 'unschedulable' means "
            "a pod group could not be scheduled, while 'error' means an internal scheduler "
            "problem.",
            ["result", "profile"],
        )
        self.podgroup_scheduling_attempt_duration = _Histogram(
            "scheduler_podgroup_scheduling_attempt_duration_seconds",
            "Pod group scheduling attempt latency in seconds",
            ms,
            ["result", "profile"],
        )
        self.podgroup_scheduling_algorithm_duration = _Histogram(
            "scheduler_podgroup_scheduling_algorithm_duration_seconds",
            "Pod group scheduling algorithm latency in seconds",
            ms,
        )
        self._recorded: list[_Counter | _Histogram | _EvaluationCounter] = [
            self.schedule_attempts,
            self.scheduling_attempt_duration,
            self.scheduling_algorithm_duration,
            self.preemption_victims,
            self.preemption_attempts,
            self.pod_scheduling_sli_duration,
            self.pod_scheduling_attempts,
            self.framework_extension_point_duration,
            self.plugin_execution_duration,
            self.plugin_evaluation,
            self.queue_incoming_pods,
            self.permit_wait_duration,
            self.extender_request_duration,
            self.podgroup_schedule_attempts,
            self.podgroup_scheduling_attempt_duration,
            self.podgroup_scheduling_algorithm_duration,
        ]
        self._state: Callable[[], Mapping[str, Any]] | None = None
        self.registry.register(_Families(self))

    # ---- wiring -------------------------------------------------------------------------

    def watch(self, read_state: Callable[[], Mapping[str, Any]]) -> None:
        """Read the state gauges through ``read_state`` when collected."""
        self._state = read_state

    # ---- recording (profile_metrics.go) ---------------------------------------------------

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """PodScheduled / PodUnschedulable / PodScheduleError: ``result`` is
        ``scheduled``, ``unschedulable`` or ``error``."""
        self.schedule_attempts.inc((result, profile))
        self.scheduling_attempt_duration.observe((result, profile), seconds)

    def algorithm(self, seconds: float) -> None:
        """schedulePod's duration (scheduling_algorithm_duration_seconds)."""
        self.scheduling_algorithm_duration.observe((), seconds)

    def pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        """A pod-group cycle ended (PodGroupScheduled and friends): ``result`` is
        ``scheduled``, ``unschedulable``, ``waiting_on_preemption`` or ``error``."""
        self.podgroup_schedule_attempts.inc((result, profile))
        self.podgroup_scheduling_attempt_duration.observe((result, profile), seconds)

    def pod_group_algorithm(self, seconds: float) -> None:
        """How long placing a pod group's members took (the pod-group algorithm)."""
        self.podgroup_scheduling_algorithm_duration.observe((), seconds)

    def scheduled(self, attempts: int, since_first_queued: float) -> None:
        """A pod bound: its attempts and its SLI duration (attempts label as upstream:
        the count, ``15+`` past 15)."""
        self.pod_scheduling_attempts.observe((), attempts)
        label = str(attempts) if attempts < 15 else "15+"
        self.pod_scheduling_sli_duration.observe((label,), since_first_queued)

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        self.framework_extension_point_duration.observe((point, status, profile), seconds)

    def incoming(self, queue: str, event: str) -> None:
        self.queue_incoming_pods.inc((queue, event))

    def preemption(self, victims: int) -> None:
        """A preemption attempt and, when it chose a node, how many victims it took."""
        self.preemption_attempts.inc(())
        if victims:
            self.preemption_victims.observe((), victims)

    def permit_wait(self, result: str, seconds: float) -> None:
        self.permit_wait_duration.observe((result,), seconds)

    def extender_request(self, extender: str, verb: str, result: str, seconds: float) -> None:
        """A call to an extender ended (``result``: success, error or timeout)."""
        self.extender_request_duration.observe((extender, verb, result), seconds)

    # ---- per plugin (framework.go run*Plugin, instrumented_plugins.go) -------------------

    def sample_plugin_metrics(self) -> bool:
        """Whether the attempt starting now times its plugin calls: true for
        ``plugin_sample_percent`` % of attempts (upstream: ``rand.Intn(100) < 10``)."""
        percent = self.plugin_sample_percent
        if percent == 0:
            return False
        return percent == 100 or self._rng.randrange(100) < percent

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """One plugin call in a sampled attempt: a per-node call, or one batch call over
        all nodes (docs/metrics.md says what that means for Filter and Score)."""
        histogram = self.plugin_execution_duration  # _Histogram.observe, inlined: hot
        key = (plugin, point, status)
        series = histogram.series.get(key)
        if series is None:
            series = histogram.series[key] = [0.0] * (len(histogram.bounds) + 2)
        series[bisect.bisect_left(histogram.bounds, seconds)] += 1
        series[-1] += seconds

    def plugin_evaluations(
        self, point: str, profile: str, plugins: tuple[str, ...], count: int
    ) -> None:
        """Each of ``plugins`` evaluated ``count`` times at ``point`` in one attempt."""
        if plugins and count:
            self.plugin_evaluation.add(point, profile, plugins, count)

    # ---- collection -----------------------------------------------------------------------

    def histogram_totals(
        self, name: str, labels: Mapping[str, str] | None = None
    ) -> tuple[list[float], list[float]]:
        """A histogram's bucket bounds and its counts summed over the series whose labels
        match ``labels`` (all series when None): a count per bucket, the last for +Inf,
        then the sum of the observed values.

        Raises:
            KeyError: no histogram of that name (without ``_bucket``/``_count`` suffix).
        """
        for metric in self._recorded:
            if isinstance(metric, _Histogram) and metric.name == name:
                break
        else:
            raise KeyError(name)
        want = [
            (metric.labels.index(k), v) for k, v in (labels or {}).items() if k in metric.labels
        ]
        if labels and len(want) != len(labels):
            return list(metric.bounds), [0.0] * (len(metric.bounds) + 2)
        total = [0.0] * (len(metric.bounds) + 2)
        for key, series in metric.series.items():
            if all(key[i] == v for i, v in want):
                for i, x in enumerate(series):
                    total[i] += x
        return list(metric.bounds), total

    def families(self) -> Iterator[Metric]:
        """Every metric family, as the registry collects them."""
        for metric in self._recorded:
            yield metric.family()
        if self._state is None:
            return
        state = self._state()
        gauges: list[tuple[str, str, list[str], Mapping[Any, float]]] = [
            (
                "scheduler_pending_pods",
                "Number of pending pods, by the queue type.",
                ["queue"],
                state["pending"],
            ),
            (
                "scheduler_unschedulable_pods",
                "The number of unschedulable pods broken down by plugin name.",
                ["plugin", "profile"],
                state["unschedulable"],
            ),
            (
                "scheduler_cache_size",
                "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                ["type"],
                state["cache"],
            ),
            (
                "scheduler_tasks",
                "Number of running tasks split by the work they do such as binding "
                "(kube-scheduler's scheduler_goroutines).",
                ["operation"],
                state["tasks"],
            ),
        ]
        for name, help_text, labels, values in gauges:
            gauge = GaugeMetricFamily(name, help_text, labels=labels)
            for key, value in values.items():
                gauge.add_metric(list(key) if isinstance(key, tuple) else [key], value)
            yield gauge
