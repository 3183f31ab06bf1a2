"""Throughput sampling and percentiles as scheduler_perf's throughputCollector computes them."""

from __future__ import annotations

import pytest

from ksched import SchedulingEvent
from ksched.bench import Throughput
from ksched.bench._metrics import (
    Collector,
    histogram_data,
    percentile,
    poll_end,
    throughput_samples,
    unsampled,
)


def test_percentile_is_upstreams_ceil_index() -> None:
    values = [float(v) for v in range(1, 11)]
    # util.go collect: sorted[ceil(n*p/100)-1]
    assert (percentile(values, 50), percentile(values, 90), percentile(values, 99)) == (
        5.0,
        9.0,
        10.0,
    )
    assert percentile([], 50) == 0.0


def test_first_tick_is_the_baseline() -> None:
    # 100 pods/s for 5 s from t=10: ticks at 11..15; the tick at 11 only sets the baseline.
    binds = [10.0 + (i + 1) / 100 for i in range(500)]
    assert throughput_samples(binds, start=10.0, end=15.0) == pytest.approx([100.0] * 4)


def test_an_empty_window_repeats_the_next_sample() -> None:
    # Baseline at t=1 (10 pods), nothing new at t=2, 40 more by t=3: one rate of 20/s over
    # the two seconds, recorded twice (upstream: "record multiple samples ... if we skipped").
    binds = [0.5] * 10 + [2.5] * 40
    assert throughput_samples(binds, start=0.0, end=3.0) == [20.0, 20.0]


def test_ticks_before_any_bind_are_not_samples() -> None:
    binds = [2.5] * 5 + [3.5] * 7
    assert throughput_samples(binds, start=0.0, end=4.0) == [7.0]


def test_binds_after_the_last_tick_are_unsampled() -> None:
    # PreemptionBasic's shape: a few pods early, the burst in the last 0.7 s. The ticks at
    # 1..3 sample 11 pods; the 900 after t=3 are in no sample.
    binds = [0.5] + [1.5] * 4 + [2.5] * 6 + [3.3 + i / 10_000 for i in range(900)]
    end = binds[-1]
    assert throughput_samples(binds, start=0.0, end=end) == [4.0, 6.0]
    assert unsampled(binds, 0.0, end) == 900
    # A bind exactly on the last tick is counted by it.
    assert unsampled([0.5, 1.0, 2.0], 0.0, 2.0) == 0


def test_the_window_ends_at_the_wait_poll_that_sees_the_last_bind() -> None:
    # waitUntilPodsScheduledInNamespace polls every second from when the pods were created,
    # at once first; the collector samples until that poll returns.
    assert poll_end(created=0.3, last_bind=5.82) == pytest.approx(6.3)
    assert poll_end(created=0.3, last_bind=0.1) == 0.3  # all bound before the first poll
    assert poll_end(created=0.3, last_bind=1.3) == pytest.approx(1.3)  # on a poll: that one


def test_a_tick_before_the_poll_samples_the_tail() -> None:
    # The burst of the test above ends at 3.39; pods created at 0.2, so the wait's poll at
    # 4.2 sees it, and the collector's tick at 4.0 counts the 900 (4 ticks sampled).
    binds = [0.5] + [1.5] * 4 + [2.5] * 6 + [3.3 + i / 10_000 for i in range(900)]
    end = poll_end(created=0.2, last_bind=binds[-1])
    assert throughput_samples(binds, start=0.0, end=end) == [4.0, 6.0, 900.0]
    assert unsampled(binds, 0.0, end) == 0
    # Created at 0.6, the poll at 3.6 comes before the tick at 4: the tail stays unsampled.
    late = poll_end(created=0.6, last_bind=binds[-1])
    assert throughput_samples(binds, start=0.0, end=late) == [4.0, 6.0]
    assert unsampled(binds, 0.0, late) == 900


def test_summary_and_short_run_fallback() -> None:
    binds = [0.5] * 10 + [1.5] * 30 + [2.5] * 10 + [3.5] * 20
    summary = Throughput.of(binds, 0.0, 4.0)
    assert summary.samples == 3
    assert (summary.perc50, summary.perc99) == (20.0, 30.0)
    assert summary.average == pytest.approx(20.0)
    # Shorter than two windows: no sample; the overall rate stands in.
    short = Throughput.of([0.1, 0.2, 0.4], 0.0, 0.4)
    assert (short.samples, short.average, short.perc99) == (0, 7.5, 7.5)


def event(kind: str, pod: str, time: float, **details: object) -> SchedulingEvent:
    return SchedulingEvent(kind, pod, time, dict(details))


def test_collector_counts_binds_per_namespace_and_times_attempts() -> None:
    c = Collector()
    c.measured_ns, c.measured_start, c._last_outcome = "m", 0.0, 0.0
    c(event("Queued", "m/a", 0.0))
    c(event("Bound", "m/a", 0.5))
    c(event("Unschedulable", "other/x", 0.75))
    c(event("Bound", "m/b", 1.0))
    assert c.bound == {"m": 2}
    assert c.attempted("other") == 1
    assert c.bind_times == [0.5, 1.0]
    # No attempt start in the events: gaps between consecutive outcomes.
    assert c.latency_estimated
    assert c.latencies == [0.5, 0.25, 0.25]


def test_collector_uses_attempt_start_when_the_engine_reports_it() -> None:
    c = Collector()
    c.measured_ns = "m"
    c(event("Bound", "m/a", 2.0, attempt_start=1.75))
    assert c.latencies == [0.25]
    assert not c.latency_estimated


def test_gang_release_is_not_an_attempt() -> None:
    c = Collector()
    c.measured_ns, c._last_outcome = "m", 0.0
    c(event("WaitingOnPermit", "m/a", 1.0))
    c(event("Bound", "m/b", 2.0))
    c(event("Bound", "m/a", 2.0))
    assert c.attempts == 2 and c.latencies == [1.0, 1.0]
    assert c.bound == {"m": 2}


def test_histogram_data_over_a_window_in_milliseconds() -> None:
    # Prometheus bucketQuantile: bounds 1, 2, 4 s; in the window two samples <= 1 s and
    # two in (1, 2] (sum 5 s). Perc50: rank 2 ends the first bucket -> 1 s; Perc90: rank
    # 3.6 is 0.8 of the way through the second bucket -> 1.8 s.
    bounds = [1.0, 2.0, 4.0]
    before = [1.0, 0.0, 0.0, 0.0, 0.5]  # one earlier sample, outside the window
    after = [3.0, 2.0, 0.0, 0.0, 5.5]
    data = histogram_data(bounds, before, after)
    assert data == pytest.approx(
        {"Average": 1250.0, "Perc50": 1000.0, "Perc90": 1800.0, "Perc95": 1900.0, "Perc99": 1980.0}
    )


def test_histogram_data_of_an_empty_window_and_of_the_inf_bucket() -> None:
    bounds = [0.001, 0.002]
    assert histogram_data(bounds, [1.0, 0.0, 0.0, 0.1], [1.0, 0.0, 0.0, 0.1]) is None
    # every sample above the last bound: the quantiles read the highest finite bound
    data = histogram_data(bounds, [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 4.0, 0.04])
    assert data is not None
    assert data["Perc99"] == pytest.approx(2.0)
    assert data["Average"] == pytest.approx(10.0)
