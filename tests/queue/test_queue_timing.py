"""The queue in virtual time: ``serve``'s periodic flushes and the conformance timings.

Each test runs on trio with pytest-trio's ``autojump_clock`` (a fresh
``MockClock(autojump_threshold=0)``): time starts at 0 and jumps whenever every task
waits, so the asserted times are exact.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
import attrs
import pytest
import trio.testing

from ksched.api import Node, Pod, pod_requests
from ksched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    Status,
)
from ksched.plugins.priority_sort import PrioritySort
from ksched.queue import SchedulingQueue
from ksched.testing import make_node, make_pod

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
FIT, AFFINITY, TAINT = "NodeResourcesFit", "NodeAffinity", "TaintToleration"


def _cpu(pod: Pod) -> int:
    return pod_requests(pod).get("cpu", 0)


def _fits(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """NodeResourcesFit's Node/Add hint: the pod fits the new node's allocatable."""
    assert isinstance(new, Node)
    fits = _cpu(pod) <= new.status.allocatable.get("cpu", 0)
    return QueueingHint.QUEUE if fits else QueueingHint.SKIP


def _selector_matches(pod: Pod, node: Node) -> bool:
    return all(node.labels.get(k) == v for k, v in pod.spec.node_selector.items())


def _affinity(pod: Pod, old: Any, new: Any) -> QueueingHint:
    assert isinstance(new, Node)
    return QueueingHint.QUEUE if _selector_matches(pod, new) else QueueingHint.SKIP


def _tolerated(pod: Pod, old: Any, new: Any) -> QueueingHint:
    assert isinstance(new, Node)
    return QueueingHint.SKIP if new.spec.taints else QueueingHint.QUEUE


REGISTRATIONS: Mapping[str, Sequence[ClusterEventWithHint]] = {
    FIT: [ClusterEventWithHint(NODE_ADD, _fits)],
    AFFINITY: [ClusterEventWithHint(NODE_ADD, _affinity)],
    TAINT: [ClusterEventWithHint(NODE_ADD, _tolerated)],
}


def new_queue(**kwargs: Any) -> SchedulingQueue:
    return SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=lambda pod: None,
        registrations=lambda pod: REGISTRATIONS,
        **kwargs,
    )


@attrs.define
class MiniCluster:
    """Just enough of a scheduler to drive the queue: filter by selector, taints, cpu."""

    queue: SchedulingQueue
    nodes: list[Node] = attrs.field(factory=list)
    bound: dict[str, str] = attrs.field(factory=dict)
    attempts: list[tuple[float, str, str | None]] = attrs.field(factory=list)

    def free_cpu(self, node: Node) -> int:
        used = sum(_cpu(p) for p, n in self._pods if n == node.name)
        return node.status.allocatable.get("cpu", 0) - used

    _pods: list[tuple[Pod, str]] = attrs.field(factory=list)

    def add_node(self, node: Node) -> None:
        self.nodes.append(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def _reject(self, pod: Pod, node: Node) -> str | None:
        if not _selector_matches(pod, node):
            return AFFINITY
        if node.spec.taints:
            return TAINT
        if _cpu(pod) > self.free_cpu(node):
            return FIT
        return None

    async def run(self) -> None:
        while True:
            info = await self.queue.pop()
            rejections = {n.name: self._reject(info.pod, n) for n in self.nodes}
            fit = [name for name, why in rejections.items() if why is None]
            now = anyio.current_time()
            if fit:
                self.bound[info.pod.name] = fit[0]
                self._pods.append((info.pod, fit[0]))
                self.attempts.append((now, info.pod.name, fit[0]))
                self.queue.done(info.pod.uid)
                self.queue.assigned_pod_added(info.pod)
            else:
                self.attempts.append((now, info.pod.name, None))
                info.unschedulable_plugins = {why for why in rejections.values() if why}
                self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)

    def count(self, name: str) -> int:
        return sum(1 for _, n, _ in self.attempts if n == name)


def cpu_node(name: str, cpu: str, zone: str = "a", tainted: bool = False) -> Node:
    builder = make_node(name).capacity(cpu=cpu, memory="8Gi", pods=32).label("zone", zone)
    if tainted:
        builder = builder.taint("dedicated")
    return builder.obj()


def cpu_pod(name: str, cpu: str, priority: int = 0, zone: str | None = None) -> Pod:
    builder = make_pod(name).req(cpu=cpu).priority(priority)
    if zone is not None:
        builder = builder.node_selector({"zone": zone})
    return builder.obj()


Step = Callable[[MiniCluster], None]


async def run_scenario(
    cluster: MiniCluster, steps: Sequence[tuple[float, Step]], until: float
) -> None:
    async with anyio.create_task_group() as tg:
        await tg.start(cluster.queue.serve)
        tg.start_soon(cluster.run)
        for at, step in steps:
            await anyio.sleep_until(at)
            step(cluster)
        await anyio.sleep_until(until)
        tg.cancel_scope.cancel()


# ---- serve ---------------------------------------------------------------------------------


@pytest.mark.trio
async def test_serve_flushes_backoff_on_whole_seconds(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """An error at 10.25 s backs off 1 s: expiry Truncate(11.25) = 11, still backing off
    during [11, 12); the flush at 12.0 moves it."""
    q = new_queue()
    popped: list[float] = []

    async def loop() -> None:
        while True:
            info = await q.pop()
            popped.append(anyio.current_time())
            q.add_unschedulable_if_not_present(info, q.scheduling_cycle)  # error

    async with anyio.create_task_group() as tg:
        await tg.start(q.serve)
        await anyio.sleep(10.25)
        tg.start_soon(loop)
        q.add(make_pod("p").obj())
        await anyio.sleep_until(12.5)
        tg.cancel_scope.cancel()
    assert popped == [10.25, 12.0]


@pytest.mark.trio
async def test_backoff_doubles_up_to_the_maximum(autojump_clock: trio.testing.MockClock) -> None:
    """calculateBackoffDuration: 1, 2, 4, 8, 10, 10 s (the error counter here); each retry
    comes at the first whole second after the truncated expiry."""
    q = new_queue()
    popped: list[float] = []

    async def loop() -> None:
        while True:
            info = await q.pop()
            popped.append(anyio.current_time())
            q.add_unschedulable_if_not_present(info, q.scheduling_cycle)

    async with anyio.create_task_group() as tg:
        await tg.start(q.serve)
        tg.start_soon(loop)
        q.add(make_pod("p").obj())
        await anyio.sleep_until(45)
        tg.cancel_scope.cancel()
    assert popped == [0.0, 2.0, 5.0, 10.0, 19.0, 30.0, 41.0]
    gaps = [b - a for a, b in itertools.pairwise(popped)]
    assert gaps == [2.0, 3.0, 5.0, 9.0, 11.0, 11.0]  # backoff + 1 s window


@pytest.mark.trio
async def test_close_stops_serve(autojump_clock: trio.testing.MockClock) -> None:
    q = new_queue()
    async with anyio.create_task_group() as tg:
        await tg.start(q.serve)
        await anyio.sleep(3)
        q.close()
    assert anyio.current_time() == 3.0


@pytest.mark.trio
async def test_next_wakeup_names_the_backoff_flush(autojump_clock: trio.testing.MockClock) -> None:
    q = new_queue()
    q.add(make_pod("p").obj())
    info = await q.pop()
    await anyio.sleep(10.25)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.next_wakeup() == 12.0


# ---- conformance timings (../shared/conformance/core/queue, plugins/queue) -------------------


def _create(*pods: Pod) -> Step:
    def step(cluster: MiniCluster) -> None:
        for p in pods:
            cluster.queue.add(p)

    return step


def _add_node(node: Node) -> Step:
    def step(cluster: MiniCluster) -> None:
        cluster.add_node(node)

    return step


@pytest.mark.trio
@pytest.mark.parametrize(
    ("node_at", "bound", "h_second_attempt"),
    [
        pytest.param(10.5, {"l": "n1"}, 10.5, id="queue-activeq-before-backoffq"),
        pytest.param(11.5, {"l": "n1"}, 11.5, id="queue-backoff-window-alignment"),
        pytest.param(12.5, {"h": "n1"}, 12.5, id="queue-backoff-expired-priority-wins"),
    ],
)
async def test_backing_off_pod_loses_to_active_pod(
    autojump_clock: trio.testing.MockClock,
    node_at: float,
    bound: dict[str, str],
    h_second_attempt: float,
) -> None:
    """l fails at 0, h (priority 100) at 10 (expiry 11, window [11, 12)). Node n1 arrives:
    while h is backing off it goes to backoffQ and l (activeQ) binds; from 12 on both are
    in activeQ and priority wins."""
    cluster = MiniCluster(new_queue(), nodes=[cpu_node("n0", "500m")])
    steps = [
        (0.0, _create(cpu_pod("l", "1"))),
        (10.0, _create(cpu_pod("h", "1", priority=100))),
        (node_at, _add_node(cpu_node("n1", "1"))),
    ]
    await run_scenario(cluster, steps, until=60)
    assert cluster.bound == bound
    assert (cluster.count("l"), cluster.count("h")) == (2, 2)
    assert [t for t, name, _ in cluster.attempts if name == "h"] == [10.0, h_second_attempt]


@pytest.mark.trio
@pytest.mark.parametrize(
    ("initial", "maximum", "bound", "where_h"),
    [
        pytest.param(4.0, 10.0, {"l": "n2"}, "unschedulable", id="queue-backoff-doubles"),
        pytest.param(4.0, 5.0, {"h": "n2"}, None, id="queue-backoff-capped-at-max"),
    ],
)
async def test_second_backoff(
    autojump_clock: trio.testing.MockClock,
    initial: float,
    maximum: float,
    bound: dict[str, str],
    where_h: str | None,
) -> None:
    """h fails at 0 (backoff 4 s) and, requeued by n1 at 10, again at 10: its second
    backoff is 8 s (expiry 18, still running at 16.5) or, capped at 5 s, over (expiry 15)."""
    cluster = MiniCluster(
        new_queue(initial_backoff=initial, max_backoff=maximum),
        nodes=[cpu_node("n0", "1", zone="a")],
    )
    steps = [
        (0.0, _create(cpu_pod("l", "1", zone="b"), cpu_pod("h", "2", priority=100))),
        (10.0, _add_node(cpu_node("n1", "4", zone="a", tainted=True))),
        (16.5, _add_node(cpu_node("n2", "2", zone="b"))),
    ]
    await run_scenario(cluster, steps, until=17)
    assert [(t, n) for t, n, _ in cluster.attempts] == [
        (0.0, "h"),
        (0.0, "l"),
        (10.0, "h"),
        *([(16.5, "l"), (16.5, "h")] if bound == {"l": "n2"} else [(16.5, "h"), (16.5, "l")]),
    ]
    assert cluster.bound == bound
    assert (cluster.count("l"), cluster.count("h")) == (2, 3)
    assert cluster.queue.where(make_pod("h").obj().uid) == where_h


@pytest.mark.trio
async def test_queue_flush_unschedulable_after_5min(autojump_clock: trio.testing.MockClock) -> None:
    """Leftover flush at start and every 30 s; strictly more than 300 s in the pool: a pod
    failing at 0 is retried at 330 (300 is not > 300), then at 660."""
    cluster = MiniCluster(new_queue(), nodes=[cpu_node("n1", "1")])
    seen: dict[float, int] = {}

    def look(at: float) -> tuple[float, Step]:
        return at, lambda c: seen.__setitem__(at, c.count("p"))

    steps = [(0.0, _create(cpu_pod("p", "2"))), look(299), look(331), look(629), look(661)]
    await run_scenario(cluster, steps, until=700)
    assert seen == {299: 1, 331: 2, 629: 2, 661: 3}
    assert [t for t, _, _ in cluster.attempts] == [0.0, 330.0, 660.0]


@pytest.mark.trio
async def test_gated_pod_is_never_attempted(autojump_clock: trio.testing.MockClock) -> None:
    """queue-gated-pod-ignores-cluster-events: a gated pod holds through Node/Add."""

    def pre_enqueue(pod: Pod) -> Status | None:
        if pod.spec.scheduling_gates:
            return Status.error("waiting for scheduling gates", plugin="SchedulingGates")
        return None

    q = SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=pre_enqueue,
        registrations=lambda pod: {
            **REGISTRATIONS,
            "SchedulingGates": [
                ClusterEventWithHint(
                    ClusterEvent(
                        EventResource.UNSCHEDULED_POD,
                        ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
                    )
                )
            ],
        },
    )
    cluster = MiniCluster(q, nodes=[cpu_node("n1", "1")])
    gated = make_pod("g").req(cpu="1").scheduling_gates("foo").obj()
    steps = [
        (0.0, _create(gated)),
        (5.0, _add_node(cpu_node("n2", "4"))),
        (10.0, _create(cpu_pod("p", "1"))),
    ]
    await run_scenario(cluster, steps, until=400)
    assert cluster.bound == {"p": "n1"}
    assert cluster.count("g") == 0
    assert q.where(gated.uid) == "gated"
