"""What a run measures: binds over time, attempt latencies, throughput windows, peak RSS.

# test/integration/scheduler_perf/util.go throughputCollector (run, collect)
The collector is the scheduler's observer: one call per event, a few dict operations, no
polling. Throughput is computed afterwards from the bind timestamps with upstream's
sampling rule: a tick every second from the start of the measured op; the first tick that
sees a scheduled pod only sets the baseline; a tick with no new pod is skipped and the next
sample is repeated for the skipped ticks; percentiles are ``sorted[ceil(n*p/100)-1]``.

# scheduler_perf.go waitUntilPodsScheduledInNamespace, runWorkload (createPods)
The measured op ends when upstream's wait notices its last pod bound: the wait polls
every second from the moment the op's pods are created (the first poll at once), and the
collector samples until then, so a tick between the last bind and that poll still counts
the pods bound last (``poll_end``).
"""

from __future__ import annotations

import math
import resource
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence

import anyio
import attrs

from ..scheduler import SchedulingEvent

__all__ = [
    "Collector",
    "Throughput",
    "histogram_data",
    "peak_rss_bytes",
    "percentile",
    "poll_end",
    "throughput_samples",
    "unsampled",
]

SAMPLE_INTERVAL = 1.0
"""throughputSampleInterval."""

WAIT_POLL_INTERVAL = 1.0
"""The period of waitUntilPodsScheduledInNamespace's poll."""

_OUTCOMES = frozenset({"Bound", "Unschedulable", "SchedulerError", "WaitingOnPermit"})


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Upstream's percentile of an ascending list: ``values[ceil(n*p/100)-1]``."""
    if not sorted_values:
        return 0.0
    n = len(sorted_values)
    return sorted_values[max(0, math.ceil(n * p / 100) - 1)]


def throughput_samples(
    bind_times: Sequence[float], start: float, end: float, interval: float = SAMPLE_INTERVAL
) -> list[float]:
    """Pods/s samples as upstream's collector would take them between ``start`` and ``end``.

    ``bind_times`` ascending. Ticks at ``start + k*interval`` up to ``end``.
    """
    samples: list[float] = []
    last_count = 0
    last_time = start
    started = False
    skipped = 0
    i = 0
    n = len(bind_times)
    tick = start + interval
    while tick <= end + 1e-9:
        while i < n and bind_times[i] <= tick:
            i += 1
        scheduled = i
        if scheduled > 0:
            if not started:
                started = True
                last_count, last_time = scheduled, tick
            elif scheduled == last_count:
                skipped += 1
            else:
                rate = (scheduled - last_count) / (tick - last_time)
                samples.extend([rate] * (skipped + 1))
                last_count, last_time, skipped = scheduled, tick, 0
        tick += interval
    return samples


def poll_end(created: float, last_bind: float, interval: float = WAIT_POLL_INTERVAL) -> float:
    """When upstream's wait, polling every ``interval`` from ``created`` (at once first),
    first sees the pod bound at ``last_bind``: the end of the measured op's window."""
    if last_bind <= created:
        return created
    return created + math.ceil((last_bind - created) / interval - 1e-9) * interval


def unsampled(bind_times: Sequence[float], start: float, end: float) -> int:
    """How many binds fall after the last whole 1 s tick of ``start``..``end``: no sample
    sees them (upstream's collector stops with the measured op). A workload whose pods
    bind in a burst at its end (PreemptionBasic: every pod preempts first, then all bind)
    can leave most of them there."""
    last_tick = start + math.floor((end - start) / SAMPLE_INTERVAL + 1e-9) * SAMPLE_INTERVAL
    return sum(1 for t in bind_times if t > last_tick)


def _bucket_quantile(q: float, bounds: Sequence[float], counts: Sequence[float]) -> float:
    """Prometheus' bucketQuantile over per-bucket counts (the last bucket: +Inf): linear
    interpolation inside the bucket holding the rank; the highest finite bound when the
    rank falls in +Inf (component-base testutil HistogramVec.Quantile)."""
    total = sum(counts)
    rank = q * total
    cumulative = 0.0
    for i, count in enumerate(counts):
        if cumulative + count >= rank and count > 0:
            if i == len(bounds):
                return bounds[-1]
            start = bounds[i - 1] if i > 0 else 0.0
            if i == 0 and bounds[0] <= 0:
                return bounds[0]
            return start + (bounds[i] - start) * ((rank - cumulative) / count)
        cumulative += count
    return bounds[-1] if bounds else 0.0


def histogram_data(
    bounds: Sequence[float], before: Sequence[float], after: Sequence[float]
) -> dict[str, float] | None:
    """util.go collectHistogramVec: a histogram's data items over a window, in
    milliseconds (``before``/``after``: counts per bucket, +Inf last, then the sum).
    None when nothing was observed in the window."""
    delta = [a - b for a, b in zip(after, before, strict=True)]
    counts, total = delta[:-1], delta[-1]
    n = sum(counts)
    if n <= 0:
        return None
    ms = 1000.0
    return {
        "Perc50": _bucket_quantile(0.50, bounds, counts) * ms,
        "Perc90": _bucket_quantile(0.90, bounds, counts) * ms,
        "Perc95": _bucket_quantile(0.95, bounds, counts) * ms,
        "Perc99": _bucket_quantile(0.99, bounds, counts) * ms,
        "Average": total / n * ms,
    }


@attrs.frozen(kw_only=True)
class Throughput:
    """SchedulingThroughput: average and percentiles of the 1 s samples, in pods/s.

    ``samples`` 0 means the measured phase was shorter than two sample intervals; the
    figures are then the overall rate (measured pods / measured time) so short runs still
    report a number.
    """

    average: float
    perc50: float
    perc90: float
    perc95: float
    perc99: float
    samples: int

    @classmethod
    def of(cls, bind_times: Sequence[float], start: float, end: float) -> Throughput:
        samples = sorted(throughput_samples(bind_times, start, end))
        if not samples:
            elapsed = (bind_times[-1] - start) if bind_times else 0.0
            rate = len(bind_times) / elapsed if elapsed > 0 else 0.0
            return cls(average=rate, perc50=rate, perc90=rate, perc95=rate, perc99=rate, samples=0)
        return cls(
            average=math.fsum(samples) / len(samples),
            perc50=percentile(samples, 50),
            perc90=percentile(samples, 90),
            perc95=percentile(samples, 95),
            perc99=percentile(samples, 99),
            samples=len(samples),
        )


def peak_rss_bytes() -> int:
    """The process's peak resident set size (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class Collector:
    """The scheduler observer of a run: counts binds per namespace, times attempts.

    Attempt latency: when an outcome event carries ``details["attempt_start"]`` (the
    loop-clock time its scheduling attempt began), latency is ``event.time - attempt_start``.
    Otherwise it is estimated from the serial loop: while the measured pods queue up, the
    gap between two consecutive attempt outcomes is the later attempt's duration.
    ``latency_estimated`` says which was used.

    The measured window covers the pods of its namespaces whose labels match its selector
    (startCollectingMetrics); ``labels_of`` looks a pod's labels up by key when a selector
    is set.
    """

    def __init__(self, labels_of: Callable[[str], Mapping[str, str] | None] | None = None) -> None:
        self.bound: dict[str, int] = {}
        self.unschedulable: dict[str, set[str]] = {}
        self.outcomes: dict[str, int] = {}
        """Bound and unschedulable outcomes per namespace, counted as they come."""
        self.labels_of = labels_of
        self.on_bound: dict[str, Callable[[str], None]] = {}
        """Per namespace: called with the pod key of each bind (steadyState)."""
        self._window: frozenset[str] = frozenset()
        self._selector: Mapping[str, str] = {}
        self.measured_start = 0.0
        self.bind_times: list[float] = []
        self.latencies: list[float] = []
        self.latency_estimated = False
        self.attempts = 0
        self._last_outcome: float | None = None
        self._waiting: set[str] = set()
        self._waiters: list[tuple[str, int, bool | None, anyio.Event]] = []

    # ---- observer -----------------------------------------------------------------

    def __call__(self, event: SchedulingEvent) -> None:
        kind = event.kind
        if kind not in _OUTCOMES:
            return
        key = event.pod
        ns = key.partition("/")[0]
        measured = ns in self._window and self._selected(key)
        if kind != "WaitingOnPermit":
            self.outcomes[ns] = self.outcomes.get(ns, 0) + 1
        if kind == "Bound":
            self.bound[ns] = self.bound.get(ns, 0) + 1
            pending = self.unschedulable.get(ns)
            if pending:
                pending.discard(key)
            if measured:
                self.bind_times.append(event.time)
            callback = self.on_bound.get(ns)
            if callback is not None:
                callback(key)
            if self._waiters:
                self._wake(ns)
            if key in self._waiting:
                # Its attempt ended at WaitingOnPermit; the bind is the gang's release.
                self._waiting.discard(key)
                return
        elif kind == "WaitingOnPermit":
            self._waiting.add(key)
        else:
            self.unschedulable.setdefault(ns, set()).add(key)
            if self._waiters:
                self._wake(ns)
        if not self._window:  # attempts of every pod count, as upstream's histograms do
            return
        self.attempts += 1
        start = event.details.get("attempt_start")
        if start is not None:
            self.latencies.append(event.time - start)
        else:
            self.latency_estimated = True
            last = self._last_outcome
            if last is not None:
                self.latencies.append(event.time - last)
            self._last_outcome = event.time

    def _selected(self, key: str) -> bool:
        if not self._selector:
            return True
        labels = self.labels_of(key) if self.labels_of is not None else None
        if labels is None:
            return False
        return all(labels.get(k) == v for k, v in self._selector.items())

    # ---- phases -------------------------------------------------------------------

    @property
    def measured_ns(self) -> str | None:
        """The measured namespace (the first, when the window has several); None: idle."""
        return min(self._window) if self._window else None

    @measured_ns.setter
    def measured_ns(self, namespace: str | None) -> None:
        self._window = frozenset() if namespace is None else frozenset({namespace})
        self._selector = {}

    @property
    def measuring(self) -> bool:
        return bool(self._window)

    def start_measuring(
        self, namespaces: str | Iterable[str], selector: Mapping[str, str] | None = None
    ) -> None:
        """Begin the measured phase for the pods of ``namespaces`` matching ``selector``."""
        names = [namespaces] if isinstance(namespaces, str) else list(namespaces)
        self._window = frozenset(names)
        self._selector = dict(selector or {})
        self.measured_start = anyio.current_time()
        self._last_outcome = self.measured_start
        self.bind_times.clear()
        self.latencies.clear()
        self.attempts = 0
        self.latency_estimated = False

    def stop_measuring(self) -> float:
        """End the measured phase; returns its end time."""
        self.measured_ns = None
        self._last_outcome = None
        return anyio.current_time()

    def attempted(self, namespace: str) -> int:
        return self.bound.get(namespace, 0) + len(self.unschedulable.get(namespace, ()))

    async def wait_for(self, namespace: str, count: int, *, attempted: bool = False) -> None:
        """Until ``count`` pods of ``namespace`` are bound (or attempted, when ``attempted``)."""
        if self._reached(namespace, count, attempted):
            return
        event = anyio.Event()
        self._waiters.append((namespace, count, attempted, event))
        await event.wait()

    async def wait_outcomes(self, namespace: str, count: int) -> None:
        """Until ``namespace`` has seen ``count`` bound or unschedulable outcomes in all."""
        if self.outcomes.get(namespace, 0) >= count:
            return
        event = anyio.Event()
        self._waiters.append((namespace, count, None, event))
        await event.wait()

    def _reached(self, namespace: str, count: int, attempted: bool | None) -> bool:
        if attempted is None:
            have = self.outcomes.get(namespace, 0)
        elif attempted:
            have = self.attempted(namespace)
        else:
            have = self.bound.get(namespace, 0)
        return have >= count

    def _wake(self, namespace: str) -> None:
        keep: list[tuple[str, int, bool | None, anyio.Event]] = []
        for waiter in self._waiters:
            ns, count, attempted, event = waiter
            if ns == namespace and self._reached(ns, count, attempted):
                event.set()
            else:
                keep.append(waiter)
        self._waiters = keep
