"""The unschedulable pool's index: an event looks only at pods that could move.

Upstream (scheduling_queue.go movePodsToActiveOrBackoffQueue / isPodWorthRequeuing) asks
only the hints of the plugins that rejected a pod and registered for the event, and skips
a gated pod unless the event is among its gating plugin's (GatingPluginEvents). The index
must give the same moves as offering every pool pod, while touching only those pods.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from ksched.api import Pod
from ksched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PodInfo,
    QueueingHint,
    Status,
)
from ksched.framework.runtime import ASSIGNED_POD_ADD, UNSCHEDULABLE_TIMEOUT
from ksched.plugins.priority_sort import PrioritySort
from ksched.plugins.scheduling_gates import SchedulingGates
from ksched.queue import SchedulingQueue
from ksched.queue._entry import QueuedPod
from ksched.queue._pool import UnschedulablePool
from ksched.testing import make_pod

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
PV_ADD = ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD, "PvAdd")
GATES_GONE = ClusterEvent(
    EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
)
REGS: dict[str, Sequence[ClusterEventWithHint]] = {
    SchedulingGates.name: SchedulingGates().events_to_register(),
    "Fit": [ClusterEventWithHint(NODE_ADD), ClusterEventWithHint(ASSIGNED_POD_ADD)],
    "Volume": [ClusterEventWithHint(PV_ADD)],
}


def entry(name: str, *plugins: str, gate: str = "", profile: str = "") -> QueuedPod:
    builder = make_pod(name)
    if profile:
        builder = builder.scheduler_name(profile)
    e = QueuedPod(pod_info=PodInfo.of(builder.obj()))
    e.unschedulable_plugins = set(plugins)
    if gate:
        e.gated, e.gating_plugin = True, gate
        e.unschedulable_plugins.add(gate)
    return e


def clock() -> float:
    return 1000.0


def gates_pre_enqueue(pod: Pod) -> Status | None:
    status = SchedulingGates().pre_enqueue(pod)
    return None if status is None else status.with_plugin(SchedulingGates.name)


async def fail(q: SchedulingQueue, p: Pod, *plugins: str) -> None:
    """Add ``p``, pop it and hand it back as rejected by ``plugins``."""
    q.add(p)
    info = await q.pop()
    assert info.pod.uid == p.uid
    info.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)


def names(entries: Sequence[QueuedPod]) -> list[str]:
    return [e.pod.name for e in entries]


def test_event_sees_only_pods_of_plugins_registered_for_it() -> None:
    pool = UnschedulablePool(lambda pod: REGS)
    for e in (entry("fit", "Fit"), entry("vol", "Volume"), entry("both", "Volume", "Fit")):
        pool.put(e.pod.uid, e)
    assert names(pool.candidates(NODE_ADD)) == ["fit", "both"]
    assert names(pool.candidates(PV_ADD)) == ["vol", "both"]


def test_gated_pod_is_seen_only_by_its_gating_plugins_events() -> None:
    pool = UnschedulablePool(lambda pod: REGS)
    gated = entry("g", "Fit", gate=SchedulingGates.name)
    pool.put(gated.pod.uid, gated)
    assert pool.candidates(ASSIGNED_POD_ADD) == []
    assert pool.candidates(NODE_ADD) == []
    assert names(pool.candidates(GATES_GONE)) == ["g"]
    assert names(pool.candidates(UNSCHEDULABLE_TIMEOUT)) == ["g"]  # the wildcard sees all
    assert pool.gated == 1


def test_pod_no_plugin_rejected_is_seen_by_every_event() -> None:
    pool = UnschedulablePool(lambda pod: REGS)
    for e in (entry("err"), entry("vol", "Volume")):
        pool.put(e.pod.uid, e)
    assert names(pool.candidates(NODE_ADD)) == ["err"]
    assert names(pool.candidates(PV_ADD)) == ["err", "vol"]


def test_registrations_are_per_profile() -> None:
    by_profile: dict[str, dict[str, Sequence[ClusterEventWithHint]]] = {
        "a": REGS,
        "b": {"Fit": [ClusterEventWithHint(PV_ADD)]},
    }
    pool = UnschedulablePool(lambda pod: by_profile[pod.spec.scheduler_name])
    for e in (entry("in-a", "Fit", profile="a"), entry("in-b", "Fit", profile="b")):
        pool.put(e.pod.uid, e)
    assert names(pool.candidates(NODE_ADD)) == ["in-a"]
    assert names(pool.candidates(PV_ADD)) == ["in-b"]


def test_put_again_reindexes_and_keeps_pool_order() -> None:
    pool = UnschedulablePool(lambda pod: REGS)
    first, second = entry("first", "Volume"), entry("second", "Fit")
    pool.put(first.pod.uid, first)
    pool.put(second.pod.uid, second)
    first.unschedulable_plugins = {"Fit"}
    first.gated, first.gating_plugin = True, SchedulingGates.name
    pool.put(first.pod.uid, first)
    assert (pool.candidates(PV_ADD), pool.gated) == ([], 1)
    first.gated = False
    pool.put(first.pod.uid, first)
    assert names(pool.candidates(NODE_ADD)) == ["first", "second"]
    assert pool.gated == 0
    assert pool.pop(first.pod.uid) is first
    assert (pool.pop(first.pod.uid), names(pool.candidates(NODE_ADD))) == (None, ["second"])
    assert len(pool) == 1


@pytest.mark.anyio
async def test_bind_does_not_touch_ten_thousand_gated_pods() -> None:
    """A bind (AssignedPodAdd) costs nothing per gated pod: no registration look-up."""
    looked_up: list[str] = []

    def registrations(pod: Pod) -> Any:
        looked_up.append(pod.name)
        return REGS

    q = SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=gates_pre_enqueue,
        registrations=registrations,
        clock=clock,
    )
    for i in range(10_000):
        q.add(make_pod(f"g{i}").scheduling_gates("wait").obj())
    await fail(q, make_pod("fit").obj(), "Fit")
    looked_up.clear()
    q.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, make_pod("bound").node("n1").obj())
    assert q.where("default/fit") == "backoff"
    assert len(looked_up) <= 3
    assert q.pending_counts()["gated"] == 10_000


EVENTS = [NODE_ADD, PV_ADD, ASSIGNED_POD_ADD, GATES_GONE, UNSCHEDULABLE_TIMEOUT]


@pytest.mark.anyio
@pytest.mark.parametrize("seed", range(6))
async def test_index_moves_the_same_pods_as_a_full_scan(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Differential: random pools and events, the index against offering every pod."""
    rng = random.Random(seed)
    verdict = {name: rng.choice(list(QueueingHint)) for name in ("Fit", "Volume")}

    def hint_of(plugin: str) -> Any:
        return lambda pod, old, new: verdict[plugin]

    regs: dict[str, Sequence[ClusterEventWithHint]] = {
        SchedulingGates.name: SchedulingGates().events_to_register(),
        "Fit": [ClusterEventWithHint(NODE_ADD, hint_of("Fit")), ClusterEventWithHint(PV_ADD)],
        "Volume": [ClusterEventWithHint(PV_ADD, hint_of("Volume"))],
        "Ports": [ClusterEventWithHint(ASSIGNED_POD_ADD)],
    }
    allowed: set[str] = set()

    def pre_enqueue(pod: Pod) -> Status | None:
        if pod.spec.scheduling_gates and pod.name not in allowed:
            return gates_pre_enqueue(pod)
        return None

    queues = [
        SchedulingQueue(
            less=PrioritySort().less,
            pre_enqueue=pre_enqueue,
            registrations=lambda pod: regs,
            clock=clock,
        )
        for _ in range(2)
    ]
    full_scan = queues[1]._unschedulable
    monkeypatch.setattr(full_scan, "candidates", lambda event: full_scan.values())
    pods = []
    for i in range(60):
        builder = make_pod(f"p{i}")
        if rng.random() < 0.3:
            builder = builder.scheduling_gates("wait")
        pods.append((builder.obj(), rng.sample(["Fit", "Volume", "Ports"], rng.randint(0, 2))))
    for q in queues:
        for pod, plugins in pods:
            if pod.spec.scheduling_gates:
                q.add(pod)
            else:
                await fail(q, pod, *plugins)
    for _ in range(12):
        event = rng.choice(EVENTS)
        allowed.update(p.name for p, _ in rng.sample(pods, 5))
        for q in queues:
            q.move_all_to_active_or_backoff(event, None, None)
        where = [{p.name: q.where(p.uid) for p, _ in pods} for q in queues]
        assert where[0] == where[1]
        assert queues[0].pending_counts() == queues[1].pending_counts()
