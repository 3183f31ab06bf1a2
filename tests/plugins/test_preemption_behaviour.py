"""Preemption end to end: a Scheduler with the default profile over an InMemoryCluster.

# pkg/scheduler/framework/preemption/preemption.go (Evaluator.Preempt, prepareCandidate,
# PreemptPod: a victim waiting at Permit is rejected with "preempted", others deleted)
# pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
# (SelectVictimsOnNode, PodEligibleToPreemptOthers) and schedule_one.go (assume drops the
# pod's nomination; a PostFilter error leaves the pod unschedulable, nomination kept).

test_default_preemption.py pins the plugin's rows against a fake handle; these tests check
the same rules through the real scheduling loop, queue, cache and binding cycles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from ksched import SchedulingEvent
from ksched.api import LabelSelector, ObjectMeta, Pod, PodDisruptionBudget
from ksched.cluster import InMemoryCluster
from ksched.config import DEFAULT_PLUGINS, PluginRef, PluginSet, Profile, SchedulerConfig
from ksched.framework import CycleState, Status
from ksched.scheduler import Scheduler
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

LOW, MID, HIGH = 0, 100, 1000


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param(("trio", {"clock": MockClock(autojump_threshold=0)}), id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    return request.param


# ---- fixtures -----------------------------------------------------------------------------


class WaitPermit:
    """Holds pods whose name starts with ``w`` at Permit; records Reserve/Unreserve."""

    name = "WaitPermit"

    def __init__(self) -> None:
        self.handle: Any = None
        self.unreserved: list[str] = []

    def new(self, args: Any, handle: Any) -> WaitPermit:
        self.handle = handle
        return self

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserved.append(pod.name)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status.wait(600) if pod.name.startswith("w") else None

    def waiting(self, name: str) -> Any:
        return self.handle.get_waiting_pod(f"default/{name}")


class FlakyEvictCluster(InMemoryCluster):
    """An InMemoryCluster whose ``evict`` raises for the calls numbered in ``fail_calls``."""

    def __init__(self, fail_calls: Iterable[int]) -> None:
        super().__init__()
        self.fail_calls = set(fail_calls)
        self.evict_calls = 0

    async def evict(self, pod: Pod) -> None:
        self.evict_calls += 1
        if self.evict_calls in self.fail_calls:
            raise RuntimeError("the API server is away")
        await super().evict(pod)


def default_config(*extra: str) -> SchedulerConfig:
    refs = (*DEFAULT_PLUGINS.enabled, *(PluginRef(n) for n in extra))
    return SchedulerConfig(profiles=(Profile(plugins={"multiPoint": PluginSet(enabled=refs)}),))


class Events:
    def __init__(self) -> None:
        self.seen: list[SchedulingEvent] = []

    def __call__(self, event: SchedulingEvent) -> None:
        self.seen.append(event)

    def of(self, kind: str) -> list[str]:
        return [e.pod for e in self.seen if e.kind == kind]


async def until(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not cond():
            await anyio.sleep(0.005)


def node(name: str, cpu: str) -> Any:
    return make_node(name).capacity(cpu=cpu, memory="8Gi", pods=110).obj()


def running(name: str, node_name: str, priority: int, cpu: str = "1", **labels: str) -> Pod:
    b = make_pod(name).priority(priority).req(cpu=cpu).node(node_name)
    return (b.labels(labels) if labels else b).obj()


def pending(name: str, priority: int, cpu: str = "1") -> Pod:
    return make_pod(name).priority(priority).req(cpu=cpu).obj()


def node_of(cluster: InMemoryCluster, name: str) -> str | None:
    pod = cluster.get_pod(f"default/{name}")
    return None if pod is None else pod.spec.node_name


def assert_nothing_lost(sched: Scheduler, cluster: InMemoryCluster) -> None:
    """Every pod of the cluster is bound or held by the queue (or waiting at Permit)."""
    for pod in cluster.pods():
        if pod.spec.node_name:
            continue
        assert sched.queue.where(pod.uid) is not None or sched.waiting_pods.get(pod.uid), pod.key


# ---- (a) victims: minimal set, lowest priority ----------------------------------------------


async def test_minimal_set_of_lowest_priority_victims() -> None:
    """SelectVictimsOnNode reprieves the most important pods first; only what must go goes."""
    cluster = InMemoryCluster()
    await cluster.add(
        [
            node("n1", "4"),
            running("a", "n1", 1, cpu="2"),
            running("b", "n1", 2),
            running("c", "n1", 3),
        ]
    )
    events = Events()
    async with Scheduler.open(default_config(), cluster, observer=events):
        await cluster.add_pod(pending("p", HIGH, cpu="2"))
        bound = await cluster.wait_bound("default/p", timeout=30)
        assert bound.spec.node_name == "n1"
    # Removing "a" (lowest priority, 2 cpu) alone makes room: b and c are reprieved.
    assert cluster.evicted == ["default/a"]
    assert events.of("Preempted") == ["default/a"]
    assert node_of(cluster, "b") == node_of(cluster, "c") == "n1"


async def test_node_with_lowest_priority_victims_is_chosen() -> None:
    """pickOneNodeForPreemption: the node whose most important victim is least important,
    even though it needs more victims than another node."""
    cluster = InMemoryCluster()
    await cluster.add(
        [
            node("n1", "3"),
            running("v1", "n1", MID, cpu="3"),
            node("n2", "3"),
            running("w1", "n2", 3),
            running("w2", "n2", 2),
            running("w3", "n2", 1),
        ]
    )
    async with Scheduler.open(default_config(), cluster) as sched:
        await cluster.add_pod(pending("p", HIGH, cpu="2"))
        bound = await cluster.wait_bound("default/p", timeout=30)
        assert bound.spec.node_name == "n2"
        assert_nothing_lost(sched, cluster)
    # w1 (most important) is reprieved; w2 and w3 go; v1 on n1 is left alone.
    assert sorted(cluster.evicted) == ["default/w2", "default/w3"]
    assert node_of(cluster, "v1") == "n1"
    assert node_of(cluster, "w1") == "n2"


async def test_equal_priority_pods_are_not_victims() -> None:
    cluster = InMemoryCluster()
    await cluster.add([node("n1", "1"), running("peer", "n1", HIGH)])
    async with Scheduler.open(default_config(), cluster) as sched:
        await cluster.add_pod(pending("p", HIGH))
        await until(lambda: sched.records.get("default/p") is not None and sched.idle)
        assert sched.queue.where("default/p") == "unschedulable"
        assert cluster.conditions["default/p"]["message"] == (
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/1 nodes are "
            "available: 1 No preemption victims found for incoming pod."
        )
    assert cluster.evicted == []


# ---- (b) PodDisruptionBudgets ---------------------------------------------------------------


def budget(app: str, min_available: int) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=f"{app}-pdb", namespace="default"),
        selector=LabelSelector(match_labels={"app": app}),
        min_available=min_available,
    )


async def test_pdb_respected_on_the_node() -> None:
    """Budget-violating pods are reprieved first: the unprotected pod of the same
    priority is the victim."""
    cluster = InMemoryCluster()
    await cluster.add(
        [
            node("n1", "2"),
            running("guarded", "n1", LOW, app="db"),
            running("free", "n1", LOW, app="web"),
            budget("db", 1),
        ]
    )
    async with Scheduler.open(default_config(), cluster):
        await cluster.add_pod(pending("p", HIGH))
        assert (await cluster.wait_bound("default/p", timeout=30)).spec.node_name == "n1"
    assert cluster.evicted == ["default/free"]


async def test_pdb_respected_across_nodes() -> None:
    """Fewest PDB violations wins before victim priority."""
    cluster = InMemoryCluster()
    await cluster.add(
        [
            node("n1", "1"),
            running("guarded", "n1", LOW, app="db"),
            node("n2", "1"),
            running("free", "n2", 10, app="web"),
            budget("db", 1),
        ]
    )
    async with Scheduler.open(default_config(), cluster):
        await cluster.add_pod(pending("p", HIGH))
        assert (await cluster.wait_bound("default/p", timeout=30)).spec.node_name == "n2"
    assert cluster.evicted == ["default/free"]


async def test_pdb_violated_when_nothing_else_helps() -> None:
    """Upstream preempts even if a budget breaks, when no other candidate exists."""
    cluster = InMemoryCluster()
    await cluster.add([node("n1", "1"), running("guarded", "n1", LOW, app="db"), budget("db", 1)])
    async with Scheduler.open(default_config(), cluster):
        await cluster.add_pod(pending("p", HIGH))
        assert (await cluster.wait_bound("default/p", timeout=30)).spec.node_name == "n1"
    assert cluster.evicted == ["default/guarded"]


# ---- (c) preemptionPolicy: Never --------------------------------------------------------------


async def test_never_policy_pod_does_not_preempt() -> None:
    cluster = InMemoryCluster()
    await cluster.add([node("n1", "1"), running("low", "n1", LOW)])
    async with Scheduler.open(default_config(), cluster) as sched:
        never = make_pod("p").priority(HIGH).req(cpu="1").preemption_policy("Never").obj()
        await cluster.add_pod(never)
        await until(lambda: cluster.conditions.get("default/p") is not None and sched.idle)
        assert sched.queue.where("default/p") == "unschedulable"
        assert cluster.conditions["default/p"]["message"] == (
            "0/1 nodes are available: 1 Insufficient cpu. "
            "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."
        )
        current = cluster.get_pod("default/p")
        assert current is not None and current.status.nominated_node_name is None
        assert not sched.queue.nominated_pods_for_node("n1")
        # A lower-priority pod is not kept out by a nomination the Never pod does not have.
        await cluster.delete_pod("default/low")
        assert (await cluster.wait_bound("default/p", timeout=30)).spec.node_name == "n1"
    assert cluster.evicted == []


# ---- (d) pods waiting at Permit elsewhere -----------------------------------------------------


async def test_waiting_pods_elsewhere_are_left_alone() -> None:
    """Only the chosen node's victims are touched: a pod waiting at Permit on another node
    (here of higher priority) is neither rejected nor unreserved."""
    cluster = InMemoryCluster()
    await cluster.add([node("n1", "1"), node("n2", "1"), running("low", "n2", LOW)])
    permit = WaitPermit()
    events = Events()
    async with Scheduler.open(
        default_config("WaitPermit"),
        cluster,
        registry={"WaitPermit": permit.new},
        observer=events,
    ) as sched:
        await cluster.add_pod(pending("w-high", HIGH))
        await until(lambda: permit.waiting("w-high") is not None)
        assert permit.waiting("w-high").node_name == "n1"
        await cluster.add_pod(pending("p", MID))
        assert (await cluster.wait_bound("default/p", timeout=30)).spec.node_name == "n2"
        assert permit.waiting("w-high") is not None
        assert permit.unreserved == []
        assert sched.cache.is_assumed("default/w-high")
        permit.waiting("w-high").allow("WaitPermit")
        assert (await cluster.wait_bound("default/w-high", timeout=30)).spec.node_name == "n1"
    assert cluster.evicted == ["default/low"]
    assert events.of("Preempted") == ["default/low"]
    assert events.of("PermitRejected") == []


async def test_preemptor_waiting_at_permit_elsewhere_holds_no_nomination() -> None:
    """A nominated pod that is assumed on another node and waits at Permit there no
    longer holds room on its nominated node (schedule_one.go assume ->
    DeleteNominatedPodIfExists): a lower-priority pod takes that room without preempting."""
    cluster = InMemoryCluster()
    await cluster.add([node("n1", "4"), running("big", "n1", HIGH, cpu="2"), node("n2", "3")])
    permit = WaitPermit()
    async with Scheduler.open(
        default_config("WaitPermit"), cluster, registry={"WaitPermit": permit.new}
    ) as sched:
        # Nominated to n1 by an earlier preemption, but n1 has 2 cpu free: it lands on n2.
        w = make_pod("w-preemptor").priority(MID).req(cpu="3").nominated("n1").obj()
        await cluster.add_pod(w)
        await until(lambda: permit.waiting("w-preemptor") is not None)
        assert permit.waiting("w-preemptor").node_name == "n2"
        assert sched.queue.nominated_pods_for_node("n1") == []
        # Counting w's 3 cpu on n1 would leave q (2 cpu) no room there.
        await cluster.add_pod(pending("q", LOW, cpu="2"))
        assert (await cluster.wait_bound("default/q", timeout=30)).spec.node_name == "n1"
        assert permit.waiting("w-preemptor") is not None
    assert cluster.evicted == []


# ---- (e) a victim waiting at Permit -------------------------------------------------------------


async def test_victim_waiting_at_permit_is_rejected_unreserved_and_requeued() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1", "1"))
    permit = WaitPermit()
    events = Events()
    async with Scheduler.open(
        default_config("WaitPermit"),
        cluster,
        registry={"WaitPermit": permit.new},
        observer=events,
    ) as sched:
        await cluster.add_pod(pending("w-low", LOW))
        await until(lambda: permit.waiting("w-low") is not None)
        await cluster.add_pod(pending("p", HIGH))
        assert (await cluster.wait_bound("default/p", timeout=30)).spec.node_name == "n1"
        await until(lambda: sched.queue.where("default/w-low") == "unschedulable" and sched.idle)
        assert permit.unreserved == ["w-low"]
        assert not sched.cache.is_assumed("default/w-low")
        assert node_of(cluster, "w-low") is None
        assert_nothing_lost(sched, cluster)
        info = sched.cache.node_info("n1")
        assert info is not None and [p.pod.name for p in info.pods] == ["p"]
    # Rejected, not deleted: the pod stays in the cluster, pending.
    assert cluster.evicted == []
    assert cluster.get_pod("default/w-low") is not None
    assert events.of("Preempted") == ["default/w-low"]
    assert events.of("PermitRejected")[0] == "default/w-low"
    assert permit.unreserved == ["w-low"]


# ---- (f) a failing eviction loses nothing -------------------------------------------------------


async def test_failed_second_eviction_retries_and_loses_nothing() -> None:
    """The first victim goes, the second eviction fails: Preempt returns an error, the
    preemptor is not nominated, the first victim's deletion requeues it, and the retry
    preempts the rest."""
    cluster = FlakyEvictCluster(fail_calls=[2])
    await cluster.add(
        [node("n1", "2"), running("l1", "n1", LOW), running("l2", "n1", LOW), node("n2", "1")]
    )
    events = Events()
    async with Scheduler.open(default_config(), cluster, observer=events) as sched:
        await cluster.add_pod(pending("p", HIGH, cpu="2"))
        assert (await cluster.wait_bound("default/p", timeout=60)).spec.node_name == "n1"
        assert_nothing_lost(sched, cluster)
        record = sched.records["default/p"]
        assert record.attempts >= 2
    assert cluster.evict_calls == 3
    assert sorted(cluster.evicted) == ["default/l1", "default/l2"]
    # One Preempted event per pod actually evicted; none for the failed call.
    assert sorted(events.of("Preempted")) == ["default/l1", "default/l2"]
    assert "preemption: evicting pod default/l" in next(
        e.details["message"]
        for e in events.seen
        if e.kind == "Unschedulable" and e.pod == "default/p"
    )


async def test_failed_eviction_keeps_preemptor_queued_and_victims_bound() -> None:
    cluster = FlakyEvictCluster(fail_calls=[1])
    await cluster.add(
        [
            node("n1", "1"),
            running("low", "n1", LOW),
            node("n2", "500m"),
            running("other", "n2", HIGH, cpu="500m"),
        ]
    )
    async with Scheduler.open(default_config(), cluster) as sched:
        await cluster.add_pod(pending("p", HIGH))
        await until(lambda: cluster.evict_calls == 1 and sched.idle)
        assert sched.queue.where("default/p") == "unschedulable"
        current = cluster.get_pod("default/p")
        assert current is not None and current.status.nominated_node_name is None
        assert sched.queue.nominated_pods_for_node("n1") == []
        assert node_of(cluster, "low") == "n1"
        assert cluster.evicted == []
        assert (
            "preemption: evicting pod default/low: the API server is away"
            in (cluster.conditions["default/p"]["message"])
        )
        assert_nothing_lost(sched, cluster)
        # A later cluster event brings it back; this time the eviction succeeds.
        await cluster.delete_pod("default/other")
        assert (await cluster.wait_bound("default/p", timeout=60)).spec.node_name == "n1"
    assert cluster.evicted == ["default/low"]


@pytest.mark.parametrize(
    "anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})], ids=["trio"]
)
async def test_failed_eviction_retried_after_unschedulable_flush() -> None:
    """With no event at all, the pod leaves the unschedulable pool after
    podMaxInUnschedulablePodsDuration (5 min) and preempts again."""
    cluster = FlakyEvictCluster(fail_calls=[1])
    await cluster.add([node("n1", "1"), running("low", "n1", LOW)])
    async with Scheduler.open(default_config(), cluster) as sched:
        await cluster.add_pod(pending("p", HIGH))
        await until(lambda: cluster.evict_calls == 1 and sched.idle)
        failed_at = anyio.current_time()
        bound = await cluster.wait_bound("default/p", timeout=400)
        assert bound.spec.node_name == "n1"
        assert anyio.current_time() - failed_at >= 300
    assert cluster.evicted == ["default/low"]
