"""backoffQ arithmetic against upstream backoff_queue.go / backoff_queue_test.go."""

from __future__ import annotations

import pytest

from ksched.framework import PodInfo
from ksched.plugins.priority_sort import PrioritySort
from ksched.queue import QueuedPod, backoff_duration_ns
from ksched.queue._backoff import NS, BackoffQueue, to_ns
from ksched.testing import make_pod

MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1


@pytest.mark.parametrize(
    ("initial", "maximum", "count", "want"),
    [
        pytest.param(1, 32, 0, 0, id="no backoff"),
        pytest.param(1, 32, 16, 32, id="normal"),
        pytest.param(1, MAX_INT32, 32, MAX_INT32, id="overflow_32bit"),
        pytest.param(1, MAX_INT64, 64, MAX_INT64, id="overflow_64bit"),
    ],
)
def test_backoff_queue_calculate_backoff_duration(
    initial: int, maximum: int, count: int, want: int
) -> None:
    """TestBackoffQueue_calculateBackoffDuration (nanoseconds)."""
    assert backoff_duration_ns(count, initial, maximum) == want


@pytest.mark.parametrize(
    ("count", "want"), [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (6, 10), (30, 10), (100, 10)]
)
def test_default_backoff_sequence(count: int, want: int) -> None:
    """podInitialBackoffSeconds 1, podMaxBackoffSeconds 10: 1, 2, 4, 8, 10, 10, ..."""
    assert backoff_duration_ns(count, to_ns(1), to_ns(10)) == want * NS


def _entry(name: str, timestamp: float, priority: int = 0, plugins: bool = True) -> QueuedPod:
    return QueuedPod(
        pod_info=PodInfo.of(make_pod(name).priority(priority).obj()),
        timestamp=timestamp,
        unschedulable_plugins={"plugin"} if plugins else set(),
        unschedulable_count=1,
    )


def _queue(
    pop_from_backoff_q: bool = True, initial: float = 1, maximum: float = 10
) -> BackoffQueue:
    less = PrioritySort().less
    return BackoffQueue(
        initial=initial,
        maximum=maximum,
        active_less=lambda a, b: less(a, b),
        pop_from_backoff_q=pop_from_backoff_q,
    )


NOW = 1000.0


def _pods() -> dict[str, QueuedPod]:
    return {
        "pod0": _entry("pod0", NOW - 2),
        "pod1": _entry("pod1", NOW + 1),
        "pod2": _entry("pod2", NOW - 2, plugins=False),
        "pod3": _entry("pod3", NOW + 1, plugins=False),
    }


@pytest.mark.parametrize("pop_from_backoff_q", [True, False])
@pytest.mark.parametrize(
    ("in_backoff", "want"),
    [
        pytest.param([], [], id="Both queues empty, no pods moved to activeQ"),
        pytest.param(["pod0", "pod1"], ["pod0"], id="Pods only in backoffQ, some pods moved to activeQ"),  # noqa: E501 - upstream case name
        pytest.param(["pod2", "pod3"], ["pod2"], id="Pods only in errorBackoffQ, some pods moved to activeQ"),  # noqa: E501 - upstream case name
        pytest.param(["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"], id="Pods in both queues, some pods moved to activeQ"),  # noqa: E501 - upstream case name
        pytest.param(["pod0", "pod2"], ["pod0", "pod2"], id="Pods in both queues, all pods moved to activeQ"),  # noqa: E501 - upstream case name
        pytest.param(["pod1", "pod3"], [], id="Pods in both queues, no pods moved to activeQ"),
    ],
)  # fmt: skip
def test_backoff_queue_pop_each_backoff_completed(
    pop_from_backoff_q: bool, in_backoff: list[str], want: list[str]
) -> None:
    """TestBackoffQueue_popEachBackoffCompleted."""
    pods = _pods()
    bq = _queue(pop_from_backoff_q)
    for name in in_backoff:
        bq.add(pods[name])
    got = [e.pod.name for e in bq.pop_all_completed(to_ns(NOW))]
    assert got == want
    assert len(bq) == len(in_backoff) - len(want)


def _ordering_pods() -> list[QueuedPod]:
    return [
        _entry("pod0", NOW, priority=1),
        _entry("pod1", NOW - 1, priority=1),
        _entry("pod2", NOW - 2 + 0.001, priority=2),
        _entry("pod3", NOW - 2, priority=1),
        _entry("pod4", NOW - 2, priority=2),
        _entry("pod5", NOW - 3, priority=1),
    ]


def test_backoff_queue_ordering() -> None:
    """TestBackoffQueueOrdering/"Pods with the same window are ordered by priority if
    PopFromBackoffQ is enabled"."""
    bq = _queue(True)
    for entry in _ordering_pods():
        bq.add(entry)
    assert [e.pod.name for e in bq.pop_all_completed(to_ns(NOW))] == [
        "pod5",
        "pod4",
        "pod2",
        "pod3",
    ]


def test_backoff_queue_ordering_without_pop_from_backoff_q() -> None:
    """TestBackoffQueueOrdering/"Pods priority doesn't matter if PopFromBackoffQ is
    disabled": by raw expiry (pod4 and pod3 tie; pod2 expires 1 ms later)."""
    bq = _queue(False)
    for entry in _ordering_pods():
        bq.add(entry)
    got = [e.pod.name for e in bq.pop_all_completed(to_ns(NOW))]
    assert got[0] == "pod5" and set(got[1:3]) == {"pod3", "pod4"} and got[3] == "pod2"


@pytest.mark.parametrize(
    ("failed_at", "now", "backing_off"),
    [
        pytest.param(10.0, 10.99, True, id="before the expiry"),
        pytest.param(10.0, 11.0, True, id="expiry 11 is in the current window"),
        pytest.param(10.0, 11.5, True, id="still in the window of 11"),
        pytest.param(10.0, 12.0, False, id="next window"),
        pytest.param(10.7, 11.5, True, id="expiry 11.7 truncated to 11"),
        pytest.param(10.7, 12.0, False, id="11.7 truncated, over at 12"),
    ],
)
def test_is_entity_backing_off_with_window(failed_at: float, now: float, backing_off: bool) -> None:
    """isEntityBackingoff: expiry = Truncate(Timestamp + backoff, 1s); backing off while the
    expiry is not before Truncate(now, 1s)."""
    entry = _entry("p", failed_at)
    assert _queue(True).is_backing_off(entry, to_ns(now)) is backing_off
    assert entry.backoff_expiry == 11.0


def test_is_entity_backing_off_without_window() -> None:
    entry = _entry("p", 10.7)
    bq = _queue(False)
    assert bq.is_backing_off(entry, to_ns(11.69))
    assert bq.is_backing_off(entry, to_ns(11.7))
    assert not bq.is_backing_off(entry, to_ns(11.700000001))


def test_zero_max_backoff_disables_backoff() -> None:
    entry = _entry("p", NOW)
    assert not _queue(maximum=0).is_backing_off(entry, to_ns(NOW))


def test_error_count_takes_precedence() -> None:
    entry = _entry("p", NOW)
    entry.unschedulable_count = 4
    entry.consecutive_errors = 1
    bq = _queue(True)
    assert bq.expiry_ns(entry) == to_ns(NOW + 1)
