"""SchedulingQueue against upstream scheduling_queue_test.go (names kept as ids).

The clock is a fake moved by hand, as upstream's testingclock.FakeClock; it starts on a
whole second (1000.0) unless a test says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
import pytest

from ksched import SchedulerClosedError
from ksched.api import Pod
from ksched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PodInfo,
    QueuedPodInfo,
    QueueingHint,
    Status,
)
from ksched.framework.runtime import FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT
from ksched.plugins.priority_sort import PrioritySort
from ksched.plugins.scheduling_gates import SchedulingGates
from ksched.queue import QueuedPod, SchedulingQueue
from ksched.testing import make_node, make_pod

START = 1000.0
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
PV_ADD = ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD, "PvAdd")
LOW, MID, HIGH = 0, 100, 1000

Registrations = Mapping[str, Sequence[ClusterEventWithHint]]
Hint = Callable[[Pod, Any, Any], QueueingHint]


class FakeClock:
    """A clock moved by hand (upstream testingclock.FakeClock)."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def step(self, seconds: float) -> None:
        self.now += seconds


def always(hint: QueueingHint, calls: list[str] | None = None, name: str = "") -> Hint:
    def fn(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if calls is not None:
            calls.append(name)
        return hint

    return fn


def failing(calls: list[str], name: str = "") -> Hint:
    def fn(pod: Pod, old: Any, new: Any) -> QueueingHint:
        calls.append(name)
        raise RuntimeError("unexpected error")

    return fn


def gates_pre_enqueue(pod: Pod) -> Status | None:
    """SchedulingGates as the framework runs it (the framework names the plugin)."""
    status = SchedulingGates().pre_enqueue(pod)
    return None if status is None else status.with_plugin(SchedulingGates.name)


def new_queue(
    clock: FakeClock,
    registrations: Registrations | None = None,
    **kwargs: Any,
) -> SchedulingQueue:
    regs: dict[str, Sequence[ClusterEventWithHint]] = {
        SchedulingGates.name: SchedulingGates().events_to_register(),
        **(registrations or {}),
    }
    return SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=gates_pre_enqueue,
        registrations=lambda pod: regs,
        clock=clock,
        **kwargs,
    )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def pod(name: str, priority: int = LOW, namespace: str = "ns1", nominated: str = "") -> Pod:
    builder = make_pod(name, namespace).priority(priority)
    if nominated:
        builder = builder.nominated(nominated)
    return builder.obj()


HIGH_POD = pod("hpp", HIGH, nominated="node1")
MED_POD = pod("mpp", MID, nominated="node1")
UNSCHED_POD = pod("up", LOW, nominated="node1")


async def pop_now(q: SchedulingQueue) -> QueuedPodInfo | None:
    """What ``pop`` returns without waiting (None: it would block)."""
    got: list[QueuedPodInfo] = []

    async def take() -> None:
        got.append(await q.pop())

    async with anyio.create_task_group() as tg:
        tg.start_soon(take)
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    return got[0] if got else None


async def fail(
    q: SchedulingQueue, p: Pod, *plugins: str, pending: Sequence[str] = ()
) -> QueuedPodInfo:
    """Add ``p``, pop it and hand it back as rejected by ``plugins`` (error when none)."""
    q.add(p)
    info = await q.pop()
    assert info.pod.uid == p.uid
    info.unschedulable_plugins = set(plugins)
    info.pending_plugins = set(pending)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    return info


def names(infos: Sequence[QueuedPodInfo]) -> list[str]:
    return [i.pod.name for i in infos]


# ---- activeQ ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_priority_queue_add(clock: FakeClock) -> None:
    """TestPriorityQueue_Add: pops by priority; nominations taken from the pod status."""
    q = new_queue(clock)
    for p in (MED_POD, UNSCHED_POD, HIGH_POD):
        q.add(p)
    assert [pi.pod.name for pi in q.nominated_pods_for_node("node1")] == ["mpp", "up", "hpp"]
    assert [(await q.pop()).pod.name for _ in range(3)] == ["hpp", "mpp", "up"]


@pytest.mark.anyio
async def test_equal_priority_and_timestamp_pop_in_arrival_order(clock: FakeClock) -> None:
    q = new_queue(clock)
    for name in ("c", "a", "b"):
        q.add(pod(name))
    assert [(await q.pop()).pod.name for _ in range(3)] == ["c", "a", "b"]


@pytest.mark.anyio
async def test_pop_counts_attempts_and_cycles(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(MED_POD)
    info = await q.pop()
    assert (info.attempts, q.scheduling_cycle, q.where(MED_POD.uid)) == (1, 1, "in-flight")
    assert info.initial_attempt_timestamp == START
    assert q.get(MED_POD.uid) is info
    assert not q.is_idle()
    q.done(MED_POD.uid)
    q.done(MED_POD.uid)  # idempotent
    assert q.where(MED_POD.uid) is None
    assert q.is_idle()


@pytest.mark.anyio
async def test_pop_blocks_until_a_pod_arrives(clock: FakeClock) -> None:
    q = new_queue(clock)
    got: list[str] = []

    async def take() -> None:
        got.append((await q.pop()).pod.name)

    async with anyio.create_task_group() as tg:
        tg.start_soon(take)
        await anyio.wait_all_tasks_blocked()
        assert got == []
        q.add(MED_POD)
    assert got == ["mpp"]


@pytest.mark.anyio
async def test_pop_is_cancellable(clock: FakeClock) -> None:
    q = new_queue(clock)
    with anyio.move_on_after(0) as scope:
        await q.pop()
    assert scope.cancelled_caught
    q.add(MED_POD)
    assert (await q.pop()).pod.name == "mpp"


@pytest.mark.anyio
async def test_scheduling_queue_close(clock: FakeClock) -> None:
    """TestSchedulingQueue_Close: a waiting Pop returns once closed (here: raises)."""
    q = new_queue(clock)
    raised: list[BaseException] = []

    async def take() -> None:
        try:
            await q.pop()
        except SchedulerClosedError as exc:
            raised.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(take)
        await anyio.wait_all_tasks_blocked()
        q.close()
    assert len(raised) == 1
    q.add(MED_POD)
    with pytest.raises(SchedulerClosedError):
        await q.pop()


# ---- failures, backoff and the unschedulable pool -----------------------------------------


@pytest.mark.anyio
async def test_rejected_pod_rests_in_unschedulable_pool(clock: FakeClock) -> None:
    q = new_queue(clock)
    clock.step(2.5)
    info = await fail(q, MED_POD, "NodeResourcesFit")
    assert q.where(MED_POD.uid) == "unschedulable"
    assert isinstance(info, QueuedPod)
    assert (info.unschedulable_count, info.consecutive_errors, info.timestamp) == (1, 0, 1002.5)
    assert await pop_now(q) is None
    assert q.is_idle()


@pytest.mark.anyio
async def test_error_goes_to_backoff_and_is_not_popped_early(clock: FakeClock) -> None:
    """An attempt that failed with an error (no plugin) waits out its backoff in the error
    heap, which Pop never takes from (popBackoff pops the rejected heap only)."""
    q = new_queue(clock)
    info = await fail(q, MED_POD)
    assert q.where(MED_POD.uid) == "backoff"
    assert (info.consecutive_errors, info.backoff_expiry) == (1, 1001.0)
    assert await pop_now(q) is None
    assert q.next_wakeup() == 1002.0
    clock.step(1.5)
    q.flush_backoff_completed()
    assert q.where(MED_POD.uid) == "backoff"  # 1001 is not before Truncate(1001.5)
    clock.step(0.5)
    q.flush_backoff_completed()
    assert q.where(MED_POD.uid) == "active"


@pytest.mark.anyio
async def test_error_count_resets_after_a_rejection(clock: FakeClock) -> None:
    q = new_queue(clock)
    info = await fail(q, MED_POD)
    clock.step(5)
    q.flush_backoff_completed()
    again = await q.pop()
    again.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(again, q.scheduling_cycle)
    assert info is again and isinstance(info, QueuedPod)
    assert (info.consecutive_errors, info.unschedulable_count) == (0, 1)


BACKOFF_FLOW = [1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0]


@pytest.mark.anyio
@pytest.mark.parametrize("pop_from_backoff_q", [True, False], ids=["popFromBackoffQ", "legacy"])
async def test_back_off_flow(pop_from_backoff_q: bool) -> None:
    """TestBackOffFlow: 1, 2, 4, 8, 10, 10, 10 s; with SchedulerPopFromBackoffQ the expiry
    is truncated to its 1 s window, so the wait rounds up to the next whole second."""
    clock = FakeClock(1000.25)
    q = new_queue(clock, pop_from_backoff_q=pop_from_backoff_q)
    q.add(MED_POD)
    for step, want in enumerate(BACKOFF_FLOW):
        timestamp = clock()
        info = await q.pop()
        assert info.attempts == step + 1
        info.unschedulable_plugins.add("unsched-plugin")
        q.add_unschedulable_if_not_present(info, step)
        q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
        assert q.where(MED_POD.uid) == "backoff"
        backoff = info.backoff_expiry - timestamp
        if pop_from_backoff_q:
            backoff = float(int(backoff)) + 1.0
        assert backoff == want
        clock.step(1.0)
        q.flush_backoff_completed()
        assert q.where(MED_POD.uid) == "backoff"  # still backing off after an early flush
        clock.step(backoff)
        q.flush_backoff_completed()
        assert q.where(MED_POD.uid) == "active"


@pytest.mark.anyio
async def test_high_priority_backoff(clock: FakeClock) -> None:
    """TestHighPriorityBackoff: a rejected high-priority pod waits in backoffQ while a
    mid-priority pod in activeQ goes first."""
    mid = pod("test-midpod", MID, nominated="node1")
    high = pod("test-highpod", HIGH, nominated="node1")
    q = new_queue(clock)
    q.add(mid)
    q.add(high)
    info = await q.pop()
    assert info.pod is high
    info.unschedulable_plugins = {"fooPlugin"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
    assert q.where(high.uid) == "backoff"
    assert (await q.pop()).pod is mid


@pytest.mark.anyio
async def test_high_priority_flush_unschedulable_pods_leftover(clock: FakeClock) -> None:
    """TestHighPriorityFlushUnschedulablePodsLeftover."""
    mid = pod("test-midpod", MID, nominated="node1")
    high = pod("test-highpod", HIGH, nominated="node1")
    q = new_queue(
        clock, {"fakePlugin": [ClusterEventWithHint(NODE_ADD, always(QueueingHint.QUEUE))]}
    )
    await fail(q, high, "fakePlugin")
    await fail(q, mid, "fakePlugin")
    clock.step(300 + 1)
    q.flush_unschedulable_leftover()
    assert names([await q.pop(), await q.pop()]) == ["test-highpod", "test-midpod"]


@pytest.mark.anyio
async def test_flush_unschedulable_leftover_is_strictly_after_5_minutes(clock: FakeClock) -> None:
    q = new_queue(clock)
    info = await fail(q, MED_POD, "fakePlugin")
    clock.step(300)
    q.flush_unschedulable_leftover()
    assert q.where(MED_POD.uid) == "unschedulable"
    clock.step(1e-9)
    q.flush_unschedulable_leftover()
    assert q.where(MED_POD.uid) == "active"
    assert isinstance(info, QueuedPod)
    assert info.was_flushed_from_unschedulable


@pytest.mark.anyio
async def test_flush_unschedulable_pods_leftover_sets_flag(clock: FakeClock) -> None:
    """TestFlushUnschedulablePodsLeftoverSetsFlag."""
    q = new_queue(clock)
    info = await fail(q, MED_POD, "fakePlugin")
    assert isinstance(info, QueuedPod)
    assert not info.was_flushed_from_unschedulable
    clock.step(300 + 1)
    q.flush_unschedulable_leftover()
    again = await q.pop()
    assert again is info and info.was_flushed_from_unschedulable
    q.add_unschedulable_if_not_present(again, q.scheduling_cycle)
    assert q.where(MED_POD.uid) == "unschedulable"
    assert not info.was_flushed_from_unschedulable


@pytest.mark.anyio
@pytest.mark.parametrize(
    "max_in_unschedulable",
    [
        pytest.param(
            None, id="New priority queue by the default value of podMaxInUnschedulablePodsDuration"
        ),
        pytest.param(
            30.0, id="New priority queue by user-defined value of podMaxInUnschedulablePodsDuration"
        ),
    ],
)
async def test_priority_queue_init_pod_max_in_unschedulable_pods_duration(
    clock: FakeClock, max_in_unschedulable: float | None
) -> None:
    """TestPriorityQueue_initPodMaxInUnschedulablePodsDuration: the older failure first."""
    kwargs: dict[str, Any] = {}
    if max_in_unschedulable is not None:
        kwargs["max_in_unschedulable"] = max_in_unschedulable
    q = new_queue(clock, **kwargs)
    pod1 = pod("test-pod-1", namespace="ns1", nominated="node1")
    pod2 = pod("test-pod-2", namespace="ns2", nominated="node2")
    clock.step(-2)
    await fail(q, pod2, "fakePlugin")
    clock.step(1)
    await fail(q, pod1, "fakePlugin")
    clock.step(1 + (max_in_unschedulable or 300.0))
    q.flush_unschedulable_leftover()
    assert names([await q.pop(), await q.pop()]) == ["test-pod-2", "test-pod-1"]


@pytest.mark.anyio
async def test_recently_tried_pods_go_back(clock: FakeClock) -> None:
    """TestRecentlyTriedPodsGoBack: a pod that failed goes behind pods of equal priority."""
    q = new_queue(clock)
    pods = [pod(f"test-pod-{i}", HIGH, nominated="node1") for i in range(5)]
    for p in pods:
        q.add(p)
    clock.step(1e-6)
    p1 = await q.pop()
    p1.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p1, q.scheduling_cycle)
    clock.step(10)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
    popped = [await q.pop() for _ in range(5)]
    assert popped[4] is p1 and p1 not in popped[:4]


@pytest.mark.anyio
async def test_pod_failed_scheduling_multiple_times_does_not_block_newer_pod(
    clock: FakeClock,
) -> None:
    """TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod (with equal clock readings
    the order in which timestamps were taken decides)."""
    q = new_queue(clock)
    unsched = pod("test-pod-unscheduled", HIGH, nominated="node1")
    await fail(q, unsched, "plugin")
    clock.step(2)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
    p1 = await q.pop()
    assert p1.pod is unsched
    newer = pod("test-newer-pod", HIGH, nominated="node1")
    q.add(newer)
    p1.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p1, q.scheduling_cycle)
    clock.step(2)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
    assert (await q.pop()).pod is newer


# ---- PopFromBackoffQ ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_pop_from_backoff_q_when_active_q_is_empty(clock: FakeClock) -> None:
    q = new_queue(clock)
    info = await fail(q, HIGH_POD, "fakePlugin")
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
    assert q.where(HIGH_POD.uid) == "backoff"
    assert not q.is_idle()
    q.add(MED_POD)
    assert (await q.pop()).pod is MED_POD  # activeQ first, whatever the priority
    again = await q.pop()  # activeQ empty: backoffQ head, although still backing off
    assert again is info and info.attempts == 2


@pytest.mark.anyio
async def test_legacy_pop_never_takes_from_backoff_q(clock: FakeClock) -> None:
    q = new_queue(clock, pop_from_backoff_q=False)
    await fail(q, HIGH_POD, "fakePlugin")
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
    assert q.where(HIGH_POD.uid) == "backoff"
    assert await pop_now(q) is None


@pytest.mark.anyio
async def test_backoff_q_pops_same_window_by_priority(clock: FakeClock) -> None:
    """TestBackoffQueueOrdering, through the queue: in one 1 s window, priority decides."""
    q = new_queue(clock)
    low = pod("low", LOW)
    high = pod("high", HIGH)
    await fail(q, low, "plugin")
    clock.step(0.5)
    await fail(q, high, "plugin")  # expiry 1001.5 -> window 1001, as low's
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
    assert (q.where(low.uid), q.where(high.uid)) == ("backoff", "backoff")
    assert names([await q.pop(), await q.pop()]) == ["high", "low"]


# ---- queueing hints -----------------------------------------------------------------------


def _hint_table() -> list[Any]:
    q, s, e = QueueingHint.QUEUE, QueueingHint.SKIP, "error"
    node_label = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
    label_or_taint = ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
    node_update = ClusterEvent(EventResource.NODE, ActionType.UPDATE)
    node = make_node("n").obj()
    target = make_pod("pod1", "ns1").obj()
    other = make_pod("pod-different", "ns2").obj()
    return [
        pytest.param(
            {"fooPlugin1"}, set(), NODE_ADD, node,
            {"fooPlugin1": [(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), q)]},
            "SKIP", 0,
            id="return Queue when no queueing hint function is registered for the event",
        ),
        pytest.param(
            {"fooPlugin1"}, set(), NODE_ADD, node, {"fooPlugin1": [(NODE_ADD, e)]},
            "AFTER_BACKOFF", 1,
            id="Treat the event as Queue when QueueHintFn returns error",
        ),
        pytest.param(
            {"fooPlugin1"}, set(), UNSCHEDULABLE_TIMEOUT, None, {}, "AFTER_BACKOFF", 0,
            id="return Queue when the event is wildcard",
        ),
        pytest.param(
            {"fooPlugin1"}, set(), FORCE_ACTIVATE, target, {}, "AFTER_BACKOFF", 0,
            id="return Queue when the event is wildcard and the wildcard targets the pod to be requeued right now",  # noqa: E501 - upstream case name
        ),
        pytest.param(
            {"fooPlugin1"}, set(), FORCE_ACTIVATE, other, {}, "SKIP", 0,
            id="return Skip when the event is wildcard, but the wildcard targets a different pod",
        ),
        pytest.param(
            {"fooPlugin1", "fooPlugin3"}, {"fooPlugin2"}, NODE_ADD, node,
            {
                "fooPlugin1": [(NODE_ADD, q)],
                "fooPlugin2": [(NODE_ADD, q)],
                "fooPlugin3": [(NODE_ADD, q)],
                "fooPlugin4": [(NODE_ADD, e)],
            },
            "IMMEDIATELY", 2,
            id="interprets Queue from the Pending plugin as queueImmediately",
        ),
        pytest.param(
            {"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, node,
            {"fooPlugin1": [(NODE_ADD, s)], "fooPlugin2": [(NODE_ADD, q)]},
            "AFTER_BACKOFF", 2,
            id="interprets Queue from the Unschedulable plugin as queueAfterBackoff",
        ),
        pytest.param(
            {"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, node,
            {
                "fooPlugin1": [(NODE_ADD, s)],
                "fooPlugin2": [(NODE_ADD, s)],
                "fooPlugin3": [(NODE_ADD, q)],
            },
            "SKIP", 2,
            id="Queueing hint function that isn't from the plugin in UnschedulablePlugins/PendingPlugins is ignored",  # noqa: E501 - upstream case name
        ),
        pytest.param(
            {"fooPlugin1", "fooPlugin2"}, set(), node_label, node,
            {
                "fooPlugin1": [(node_label, q), (node_update, q), (NODE_ADD, q)],
                "fooPlugin2": [(node_label, q)],
            },
            "AFTER_BACKOFF", 1,
            id="If event is specific Node update event, queueing hint function for NodeUpdate/UpdateNodeLabel is also executed",  # noqa: E501 - upstream case name
        ),
        pytest.param(
            {"fooPlugin1"}, set(), NODE_ADD, node,
            {"fooPlugin1": [(ClusterEvent(EventResource.WILDCARD, ActionType.ADD), q)]},
            "AFTER_BACKOFF", 1,
            id="If event with '*' Resource, queueing hint function for specified Resource is also executed",  # noqa: E501 - upstream case name
        ),
        pytest.param(
            {"fooPlugin1"}, set(),
            ClusterEvent(EventResource.NODE, label_or_taint),
            node,
            {"fooPlugin1": [(ClusterEvent(EventResource.WILDCARD, ActionType.ALL), q)]},
            "AFTER_BACKOFF", 1,
            id="If event is a wildcard one, queueing hint function for all kinds of events is executed",  # noqa: E501 - upstream case name
        ),
        pytest.param(
            {"fooPlugin1"}, set(), node_update, node, {"fooPlugin1": [(node_label, q)]},
            "SKIP", 0,
            id="a general update does not match a registration for a narrower update",
        ),
        pytest.param(
            set(), set(), PV_ADD, None, {}, "AFTER_BACKOFF", 0,
            id="a pod rejected by no plugin moves on any event",
        ),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("unschedulable", "pending", "event", "new", "table", "expected", "calls"), _hint_table()
)
def test_is_pod_worth_requeuing(
    clock: FakeClock,
    unschedulable: set[str],
    pending: set[str],
    event: ClusterEvent,
    new: object,
    table: Mapping[str, Sequence[tuple[ClusterEvent, Any]]],
    expected: str,
    calls: int,
) -> None:
    """Test_isPodWorthRequeuing, with the number of hint calls upstream expects."""
    called: list[str] = []
    registrations = {
        plugin: [
            ClusterEventWithHint(
                ev,
                failing(called, plugin) if hint == "error" else always(hint, called, plugin),
            )
            for ev, hint in regs
        ]
        for plugin, regs in table.items()
    }
    q = new_queue(clock, registrations)
    info = QueuedPod(
        pod_info=PodInfo.of(make_pod("pod1", "ns1").obj()),
        unschedulable_plugins=set(unschedulable),
        pending_plugins=set(pending),
    )
    assert q._worth_requeuing(info, event, None, new).name == expected
    assert len(called) == calls


@pytest.mark.anyio
async def test_events_move_only_pods_whose_rejecting_plugins_registered(clock: FakeClock) -> None:
    q = new_queue(
        clock,
        {
            "Fit": [ClusterEventWithHint(NODE_ADD, always(QueueingHint.QUEUE))],
            "Affinity": [ClusterEventWithHint(NODE_ADD, always(QueueingHint.SKIP))],
        },
    )
    await fail(q, pod("by-fit"), "Fit")
    await fail(q, pod("by-affinity"), "Affinity")
    await fail(q, pod("by-ports"), "Ports")
    clock.step(5)
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n").obj())
    assert [q.where(p.uid) for p in (pod("by-fit"), pod("by-affinity"), pod("by-ports"))] == [
        "active",
        "unschedulable",
        "unschedulable",
    ]


@pytest.mark.anyio
async def test_move_all_goes_to_backoff_while_backing_off(clock: FakeClock) -> None:
    q = new_queue(clock, {"Fit": [ClusterEventWithHint(NODE_ADD)]})  # no hint: always Queue
    await fail(q, MED_POD, "Fit")
    clock.step(0.5)
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert q.where(MED_POD.uid) == "backoff"


@pytest.mark.anyio
async def test_pending_plugin_queue_skips_backoff(clock: FakeClock) -> None:
    q = new_queue(clock, {"Waiter": [ClusterEventWithHint(NODE_ADD)]})
    await fail(q, MED_POD, pending=["Waiter"])
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert q.where(MED_POD.uid) == "active"


def _precheck_table() -> list[Any]:
    def priority(p: Pod) -> int:
        return p.priority

    return [
        pytest.param(
            None, UNSCHEDULABLE_TIMEOUT, {"p0", "p1", "p2", "p3", "p4"}, id="nil PreEnqueueCheck"
        ),
        pytest.param(
            lambda p: priority(p) >= 2,
            UNSCHEDULABLE_TIMEOUT,
            {"p2", "p3", "p4"},
            id="move Pods with priority greater than 2",
        ),
        pytest.param(
            lambda p: priority(p) % 2 == 0 and priority(p) >= 2,
            UNSCHEDULABLE_TIMEOUT,
            {"p2", "p4"},
            id="move Pods with even priority and greater than 2",
        ),
        pytest.param(
            lambda p: priority(p) % 2 == 0 and priority(p) < 0,
            UNSCHEDULABLE_TIMEOUT,
            set(),
            id="move Pods with even and negative priority",
        ),
        pytest.param(None, PV_ADD, set(), id="no plugin is interested in the event"),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize(("precheck", "event", "want"), _precheck_table())
async def test_move_all_to_active_or_backoff_queue_pre_enqueue_checks(
    clock: FakeClock,
    precheck: Callable[[Pod], bool] | None,
    event: ClusterEvent,
    want: set[str],
) -> None:
    """TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks."""
    q = new_queue(clock)
    for i in range(5):
        await fail(q, pod(f"p{i}", i), "plugin")
    q.move_all_to_active_or_backoff(event, None, None, precheck)
    moved = {p.pod.name for p in q.pending_pods() if q.where(p.pod.uid) == "backoff"}
    assert moved == want


# ---- in-flight events ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_event_while_in_flight_requeues_the_failed_pod(clock: FakeClock) -> None:
    """An event that would have moved the pod arrives during its attempt: the failure sends
    it to backoffQ instead of the pool (determineSchedulingHintForInFlightPod)."""
    q = new_queue(clock, {"Fit": [ClusterEventWithHint(NODE_ADD, always(QueueingHint.QUEUE))]})
    q.add(MED_POD)
    info = await q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n").obj())
    info.unschedulable_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where(MED_POD.uid) == "backoff"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("registrations", "when"),
    [
        pytest.param({"Fit": [(NODE_ADD, QueueingHint.SKIP)]}, "during", id="hint says skip"),
        pytest.param(
            {"Other": [(NODE_ADD, QueueingHint.QUEUE)]}, "during", id="another plugin's event"
        ),
        pytest.param(
            {"Fit": [(NODE_ADD, QueueingHint.QUEUE)]}, "before", id="event before the pop"
        ),
    ],
)
async def test_event_while_in_flight_that_does_not_concern_the_pod(
    clock: FakeClock,
    registrations: Mapping[str, Sequence[tuple[ClusterEvent, QueueingHint]]],
    when: str,
) -> None:
    q = new_queue(
        clock,
        {
            p: [ClusterEventWithHint(ev, always(h)) for ev, h in regs]
            for p, regs in registrations.items()
        },
    )
    q.add(MED_POD)
    q.add(pod("other", HIGH))
    other = await q.pop()  # stays in flight: the log keeps what arrives from now on
    assert other.pod.name == "other"
    if when == "before":
        q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    info = await q.pop()
    assert info.pod is MED_POD
    if when == "during":
        q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    info.unschedulable_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where(MED_POD.uid) == "unschedulable"


@pytest.mark.anyio
async def test_in_flight_events_are_dropped_once_nobody_needs_them(clock: FakeClock) -> None:
    q = new_queue(clock, {"Fit": [ClusterEventWithHint(NODE_ADD)]})
    q.add(MED_POD)
    q.add(HIGH_POD)
    a = await q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    b = await q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert len(q._log) == 4
    q.done(b.pod.uid)
    assert len(q._log) == 4  # a (older) still needs both events
    q.done(a.pod.uid)
    assert q._log == []


@pytest.mark.anyio
async def test_pod_update_while_in_flight(clock: FakeClock) -> None:
    """The update is recorded for the pod (UnscheduledPod/UpdatePodLabel) and the failed
    attempt requeues the newest version of the pod."""
    label_update = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL)
    q = new_queue(clock, {"Affinity": [ClusterEventWithHint(label_update)]})
    q.add(MED_POD)
    info = await q.pop()
    newer = make_pod("mpp", "ns1").priority(MID).label("a", "b").obj()
    q.update(MED_POD, newer)
    assert q.where(MED_POD.uid) == "in-flight"
    info.unschedulable_plugins = {"Affinity"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where(MED_POD.uid) == "backoff"
    assert info.pod is newer


@pytest.mark.anyio
async def test_pod_deleted_while_in_flight_is_not_requeued(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(MED_POD)
    info = await q.pop()
    q.delete(MED_POD)
    info.unschedulable_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.where(MED_POD.uid) is None
    assert q.is_idle()


@pytest.mark.anyio
async def test_activate_in_flight_pod(clock: FakeClock) -> None:
    """Activate of an in-flight pod records ForceActivate for it alone: its failure skips
    the pool (backoffQ, as its backoff is running); another failed pod is not affected."""
    q = new_queue(clock)
    q.add(MED_POD)
    q.add(HIGH_POD)
    high = await q.pop()
    med = await q.pop()
    q.activate([MED_POD])
    for info in (high, med):
        info.unschedulable_plugins = {"Fit"}
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert (q.where(MED_POD.uid), q.where(HIGH_POD.uid)) == ("backoff", "unschedulable")


# ---- gating -------------------------------------------------------------------------------


GATED_POD = make_pod("gated", "ns1").scheduling_gates("hello world").obj()


@pytest.mark.anyio
async def test_queued_pod_info_gated_set_upon_creation_and_unset_upon_update(
    clock: FakeClock,
) -> None:
    """Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate."""
    q = new_queue(clock)
    q.add(GATED_POD)
    info = q.get(GATED_POD.uid)
    assert info is not None and info.gated and info.gating_plugin == "SchedulingGates"
    assert q.where(GATED_POD.uid) == "gated"
    assert await pop_now(q) is None
    ungated = make_pod("gated", "ns1").obj()
    q.update(GATED_POD, ungated)
    popped = await q.pop()
    assert not popped.gated and popped.pod is ungated and popped.attempts == 1


@pytest.mark.anyio
async def test_gated_pod_ignores_cluster_events(clock: FakeClock) -> None:
    """Events the gating plugin did not register for never move a gated pod, even when the
    pod's other plugins would queue it."""
    q = new_queue(clock, {"Fit": [ClusterEventWithHint(NODE_ADD)]})
    q.add(GATED_POD)
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n").obj())
    assert q.where(GATED_POD.uid) == "gated"
    q.update(
        GATED_POD, make_pod("gated", "ns1").scheduling_gates("hello world").label("a", "b").obj()
    )
    assert q.where(GATED_POD.uid) == "gated"
    info = q.get(GATED_POD.uid)
    assert info is not None and info.attempts == 0


@pytest.mark.anyio
async def test_gated_pod_is_rechecked_by_the_wildcard_flush(clock: FakeClock) -> None:
    allowed: set[str] = set()

    def pre_enqueue(p: Pod) -> Status | None:
        if p.name in allowed:
            return None
        return Status.error("not yet", plugin="Gate")

    q = SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=pre_enqueue,
        registrations=lambda p: {"Gate": []},
        clock=clock,
    )
    q.add(MED_POD)
    assert q.where(MED_POD.uid) == "gated"
    clock.step(301)
    q.flush_unschedulable_leftover()
    assert q.where(MED_POD.uid) == "gated"
    allowed.add(MED_POD.name)
    clock.step(30)
    q.flush_unschedulable_leftover()
    assert q.where(MED_POD.uid) == "active"


@pytest.mark.anyio
async def test_pre_enqueue_runs_when_entering_backoff_q(clock: FakeClock) -> None:
    """With SchedulerPopFromBackoffQ PreEnqueue runs on the way into backoffQ, not out."""
    calls: list[str] = []
    gate = {"on": False}

    def pre_enqueue(p: Pod) -> Status | None:
        calls.append(p.name)
        return Status.error("gated", plugin="Gate") if gate["on"] else None

    q = SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=pre_enqueue,
        registrations=lambda p: {"Fit": [ClusterEventWithHint(NODE_ADD)]},
        clock=clock,
    )
    await fail(q, MED_POD, "Fit")
    assert calls == ["mpp"]
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert (q.where(MED_POD.uid), calls) == ("backoff", ["mpp", "mpp"])
    gate["on"] = True
    clock.step(2)
    q.flush_backoff_completed()
    assert (q.where(MED_POD.uid), calls) == ("active", ["mpp", "mpp"])


# ---- update / delete / activate -----------------------------------------------------------


@pytest.mark.anyio
async def test_update_in_active_q_reorders(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(MED_POD)
    q.add(UNSCHED_POD)
    promoted = make_pod("up", "ns1").priority(HIGH).nominated("node1").obj()
    q.update(UNSCHED_POD, promoted)
    assert (await q.pop()).pod is promoted


@pytest.mark.anyio
async def test_update_of_unknown_pod_adds_it(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.update(MED_POD, MED_POD)
    assert q.where(MED_POD.uid) == "active"


@pytest.mark.anyio
async def test_update_of_pool_pod_asks_the_hints(clock: FakeClock) -> None:
    toleration = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATION)
    q = new_queue(clock, {"Taint": [ClusterEventWithHint(toleration)]})
    await fail(q, MED_POD, "Taint")
    relabelled = make_pod("mpp", "ns1").priority(MID).nominated("node1").label("x", "y").obj()
    q.update(MED_POD, relabelled)
    assert q.where(MED_POD.uid) == "unschedulable"
    tolerating = make_pod("mpp", "ns1").priority(MID).nominated("node1").toleration("k").obj()
    clock.step(3)
    q.update(relabelled, tolerating)
    assert q.where(MED_POD.uid) == "active"
    assert (await q.pop()).pod is tolerating


@pytest.mark.anyio
async def test_delete(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(MED_POD)
    await fail(q, HIGH_POD, "plugin")
    q.add(GATED_POD)
    for p in (MED_POD, HIGH_POD, GATED_POD):
        q.delete(p)
        assert q.where(p.uid) is None
    assert q.nominated_pods_for_node("node1") == []
    assert q.pending_pods() == []


@pytest.mark.anyio
async def test_activate(clock: FakeClock) -> None:
    """Activate moves pods from the pool and from backoffQ; unknown pods are ignored."""
    q = new_queue(clock)
    await fail(q, MED_POD, "plugin")
    await fail(q, HIGH_POD, "plugin")
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None, lambda p: p is HIGH_POD)
    assert (q.where(MED_POD.uid), q.where(HIGH_POD.uid)) == ("unschedulable", "backoff")
    q.activate([MED_POD, HIGH_POD, UNSCHED_POD])
    assert (q.where(MED_POD.uid), q.where(HIGH_POD.uid)) == ("active", "active")
    assert q.where(UNSCHED_POD.uid) is None


# ---- assigned pods ------------------------------------------------------------------------


ASSIGNED_POD_UPDATE_LABEL = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)


def _assigned_pod_updated_table() -> list[Any]:
    scale_down = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)
    label = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
    return [
        pytest.param(
            make_pod("afp", "ns1").pod_affinity("region", {"service": "securityscan"}).obj(),
            "InterPodAffinity", ASSIGNED_POD_UPDATE_LABEL,
            make_pod("lbp", "ns1").label("service", "securityscan").node("node1").obj(),
            True,
            id="Pod rejected by pod affinity is requeued with matching Pod's update",
        ),
        pytest.param(
            make_pod("afp", "ns1").pod_affinity("region", {"service": "securityscan"}).obj(),
            "InterPodAffinity", ASSIGNED_POD_UPDATE_LABEL,
            make_pod("lbp", "ns2").label("service", "securityscan").node("node1").obj(),
            False,
            id="Pod rejected by pod affinity isn't requeued with unrelated Pod's update",
        ),
        pytest.param(
            make_pod("tsp", "ns1").obj(), "PodTopologySpread", ASSIGNED_POD_UPDATE_LABEL,
            make_pod("lbp", "ns1").label("service", "securityscan").node("node1").obj(),
            True,
            id="Pod rejected by pod topology spread is requeued with Pod's update in the same namespace",  # noqa: E501 - upstream case name
        ),
        pytest.param(
            make_pod("tsp", "ns1").obj(), "PodTopologySpread", ASSIGNED_POD_UPDATE_LABEL,
            make_pod("lbp", "ns2").label("service", "securityscan").node("node1").obj(),
            False,
            id="Pod rejected by pod topology spread isn't requeued with unrelated Pod's update",
        ),
        pytest.param(
            make_pod("rp", "ns1").req(cpu="1").obj(), "NodeResourcesFit", scale_down,
            make_pod("lbp", "ns2").node("node1").obj(),
            True,
            id="Pod rejected by resource fit is requeued with assigned Pod's scale down",
        ),
        pytest.param(
            make_pod("afp", "ns1").obj(), "fakePlugin", label,
            make_pod("lbp", "unrelated").label("unrelated", "unrelated").node("node1").obj(),
            False,
            id="Pod rejected by other plugins isn't requeued with any Pod's update",
        ),
    ]  # fmt: skip


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("unsched_pod", "plugin", "event", "updated", "want_requeue"), _assigned_pod_updated_table()
)
async def test_priority_queue_assigned_pod_updated(
    clock: FakeClock,
    unsched_pod: Pod,
    plugin: str,
    event: ClusterEvent,
    updated: Pod,
    want_requeue: bool,
) -> None:
    """TestPriorityQueue_AssignedPodUpdated."""
    label = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
    scale_down = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN)
    q = new_queue(
        clock,
        {
            "fakePlugin": [ClusterEventWithHint(label)],
            "InterPodAffinity": [ClusterEventWithHint(label)],
            "PodTopologySpread": [ClusterEventWithHint(label)],
            "NodeResourcesFit": [ClusterEventWithHint(scale_down)],
        },
    )
    await fail(q, unsched_pod, plugin)
    clock.step(1 + 1)
    q.assigned_pod_updated(updated, updated, event)
    assert (q.where(unsched_pod.uid) == "active") is want_requeue


@pytest.mark.anyio
async def test_assigned_pod_added_moves_only_cross_topology_pods(clock: FakeClock) -> None:
    """TestPriorityQueue_AssignedPodAdded: pods whose affinity the new pod matches, and
    pods PodTopologySpread rejected in its namespace; not pods other plugins rejected."""
    add = ClusterEvent(EventResource.POD, ActionType.ADD)
    q = new_queue(
        clock,
        {
            name: [ClusterEventWithHint(add)]
            for name in ("InterPodAffinity", "PodTopologySpread", "NodeResourcesFit")
        },
    )
    affinity = make_pod("afp", "ns1").pod_affinity("region", {"service": "securityscan"}).obj()
    unrelated_affinity = make_pod("afp2", "ns1").pod_affinity("region", {"service": "other"}).obj()
    spread = make_pod("tsp", "ns1").obj()
    fit = make_pod("rp", "ns1").obj()
    await fail(q, affinity, "InterPodAffinity")
    await fail(q, unrelated_affinity, "InterPodAffinity")
    await fail(q, spread, "PodTopologySpread")
    await fail(q, fit, "NodeResourcesFit")
    clock.step(2)
    q.assigned_pod_added(
        make_pod("lbp", "ns1").label("service", "securityscan").node("node1").obj()
    )
    assert [q.where(p.uid) for p in (affinity, unrelated_affinity, spread, fit)] == [
        "active",
        "unschedulable",
        "active",
        "unschedulable",
    ]


# ---- nominator ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_priority_queue_nominated_pods_for_node(clock: FakeClock) -> None:
    """TestPriorityQueue_NominatedPodsForNode: a popped (in-flight) pod stays nominated."""
    q = new_queue(clock)
    for p in (MED_POD, UNSCHED_POD, HIGH_POD):
        q.add(p)
    assert (await q.pop()).pod is HIGH_POD
    listed = q.nominated_pods_for_node("node1")
    assert [pi.pod.name for pi in listed] == ["mpp", "up", "hpp"]
    assert listed[0].pod is MED_POD
    assert listed[2].pod is not HIGH_POD and listed[2].pod.uid == HIGH_POD.uid  # bare
    assert q.nominated_pods_for_node("node2") == []


@pytest.mark.anyio
async def test_priority_queue_update_nominated_pod_for_node(clock: FakeClock) -> None:
    """TestPriorityQueue_UpdateNominatedPodForNode (without the pod lister checks)."""
    q = new_queue(clock)
    q.add(MED_POD)
    q.add_nominated_pod(PodInfo.of(UNSCHED_POD), "node5")
    q.add_nominated_pod(PodInfo.of(HIGH_POD), "node2")
    want = {MED_POD.uid: "node1", HIGH_POD.uid: "node2", UNSCHED_POD.uid: "node5"}
    assert {uid: q.nominated_node(uid) for uid in want} == want
    assert (await q.pop()).pod is MED_POD
    assert {uid: q.nominated_node(uid) for uid in want} == want
    q.add_nominated_pod(PodInfo.of(HIGH_POD), "node4")
    assert q.nominated_node(HIGH_POD.uid) == "node4"
    assert [pi.pod.uid for pi in q.nominated_pods_for_node("node2")] == []
    q.delete_nominated_pod_if_exists(HIGH_POD)
    assert q.nominated_node(HIGH_POD.uid) is None
    assert q.nominated_pods_for_node("node4") == []


@pytest.mark.anyio
async def test_update_keeps_in_memory_nomination(clock: FakeClock) -> None:
    """An update naming no node on either side keeps the nomination preemption made."""
    q = new_queue(clock)
    plain = pod("p", MID)
    await fail(q, plain, "Fit")
    q.add_nominated_pod(PodInfo.of(plain), "node3")
    relabelled = make_pod("p", "ns1").priority(MID).label("a", "b").obj()
    q.update(plain, relabelled)
    assert q.nominated_node(plain.uid) == "node3"
    assert q.nominated_pods_for_node("node3")[0].pod is relabelled


# ---- introspection ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_priority_queue_pending_pods(clock: FakeClock) -> None:
    """TestPriorityQueue_PendingPods."""
    q = new_queue(clock)
    q.add(UNSCHED_POD)
    up = await q.pop()
    q.add(HIGH_POD)
    hp = await q.pop()
    q.add(MED_POD)
    for info in (up, hp):
        info.unschedulable_plugins = {"plugin"}
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    where = {p.pod.name: q.where(p.pod.uid) for p in q.pending_pods()}
    assert where == {"mpp": "active", "up": "unschedulable", "hpp": "unschedulable"}
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
    where = {p.pod.name: q.where(p.pod.uid) for p in q.pending_pods()}
    assert where == {"mpp": "active", "up": "backoff", "hpp": "backoff"}


@pytest.mark.anyio
async def test_next_wakeup(clock: FakeClock) -> None:
    q = new_queue(clock)
    assert q.next_wakeup() is None
    clock.step(0.25)
    await fail(q, MED_POD, "plugin")  # expiry Truncate(1001.25) = 1001
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT, None, None)
    assert q.next_wakeup() == 1002.0
    clock.step(2)
    assert q.next_wakeup() == clock()


@pytest.mark.anyio
async def test_add_unschedulable_ignores_a_queued_pod(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(MED_POD)
    stray = QueuedPod(pod_info=PodInfo.of(MED_POD), unschedulable_plugins={"x"})
    q.add_unschedulable_if_not_present(stray, 0)
    assert q.where(MED_POD.uid) == "active"
    assert q.get(MED_POD.uid) is not stray


@pytest.mark.anyio
@pytest.mark.parametrize("eager", [False, True])
async def test_pop_lets_other_tasks_run_before_each_pod_unless_eager(
    clock: FakeClock, eager: bool
) -> None:
    from ksched.queue._queue import POPS_PER_YIELD

    q = new_queue(clock)
    pods = 2 * POPS_PER_YIELD
    for i in range(pods):
        q.add(pod(f"p{i}"))
    turns = 0

    async def other() -> None:
        nonlocal turns
        for _ in range(10 * pods):  # bounded: cancelled long before
            turns += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        await anyio.lowlevel.checkpoint()  # the other task starts and waits its turn
        before = turns
        for _ in range(pods):
            info = await q.pop(eager=eager)
            q.done(info.pod.uid)
        ran = turns - before
        tg.cancel_scope.cancel()
    # Every pod lets it run once; an eager pop only every POPS_PER_YIELD pods (give or
    # take the turn trio's shuffled run order may hand it before the first pop).
    if eager:
        assert pods // POPS_PER_YIELD - 1 <= ran <= pods // POPS_PER_YIELD + 1
    else:
        assert pods - 1 <= ran <= pods + 1
