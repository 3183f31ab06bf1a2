"""GangScheduling end to end: scheduling.k8s.io pod groups through the pod-group cycle.

PreEnqueue holds members until the group object and minCount pods exist (both API shapes);
a gang is placed in one pass or not at all, holding nothing when it fails; group preemption
evicts only when the whole gang then fits; Permit keeps upstream's 5-minute quorum wait.
Untimed cases run on asyncio and trio; timed ones on trio's MockClock.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import attrs
import pytest
from trio.testing import MockClock

from ksched import InMemoryCluster, Scheduler, SchedulingEvent
from ksched.api import (
    GroupPolicy,
    ObjectMeta,
    Pod,
    PodGroupTemplate,
    SchedulingGroupRef,
    SchedulingPodGroup,
    Workload,
)
from ksched.config import PluginRef, PluginSet, Profile, SchedulerConfig
from ksched.framework import Code, CycleState, Status
from ksched.plugins.gang_scheduling import PERMIT_TIMEOUT_SECONDS, GangScheduling
from ksched.testing import FakePermit, make_node, make_pod

pytestmark = pytest.mark.anyio

PROFILE = "default-scheduler"


def mock_clock() -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        "anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})]
    )


def config(*extra: str, preemption: bool = True, first: Sequence[str] = ()) -> SchedulerConfig:
    names = ["PrioritySort", *first, "GangScheduling", "NodeResourcesFit", *extra]
    if preemption:
        names.append("DefaultPreemption")
    names.append("DefaultBinder")
    refs = tuple(PluginRef(n) for n in names)
    return SchedulerConfig(profiles=(Profile(plugins={"multiPoint": PluginSet(enabled=refs)}),))


def pod_group(name: str, min_count: int | None) -> SchedulingPodGroup:
    return SchedulingPodGroup(
        metadata=ObjectMeta(name=name, namespace="default"), policy=GroupPolicy(min_count=min_count)
    )


def workload(name: str, **groups: int | None) -> Workload:
    return Workload(
        metadata=ObjectMeta(name=name, namespace="default"),
        pod_groups=tuple(
            PodGroupTemplate(name=g, policy=GroupPolicy(min_count=n)) for g, n in groups.items()
        ),
    )


def member(name: str, ref: SchedulingGroupRef | str, cpu: str = "1", priority: int = 0) -> Pod:
    pod = make_pod(name).req(cpu=cpu).obj()
    if isinstance(ref, str):
        ref = SchedulingGroupRef(pod_group_name=ref)
    spec = attrs.evolve(pod.spec, scheduling_group=ref, priority=priority)
    return attrs.evolve(pod, spec=spec)


def node(name: str, cpu: str) -> Any:
    return make_node(name).capacity(cpu=cpu, memory="16Gi", pods=110).obj()


def stored(cluster: InMemoryCluster, name: str) -> Pod:
    """The pod default/<name> as the cluster holds it."""
    pod = cluster.get_pod(f"default/{name}")
    assert pod is not None
    return pod


def bound_to(cluster: InMemoryCluster, name: str) -> str | None:
    pod = cluster.get_pod(f"default/{name}")
    return pod.spec.node_name if pod is not None else None


def message(sched: Scheduler, cluster: InMemoryCluster, name: str) -> str | None:
    pod = cluster.get_pod(f"default/{name}")
    assert pod is not None
    return sched.records[pod.uid].message


def requested(sched: Scheduler, node_name: str) -> int:
    info = sched.cache.node_info(node_name)
    assert info is not None
    return info.requested.milli_cpu


def start(
    cluster: InMemoryCluster, cfg: SchedulerConfig | None = None, **options: Any
) -> AbstractAsyncContextManager[Scheduler]:
    return Scheduler.open(cfg or config(), cluster, **options)


async def settle() -> None:
    await anyio.wait_all_tasks_blocked()


# ---- PreEnqueue ------------------------------------------------------------------------


async def test_members_wait_for_their_pod_group_object_then_for_min_count() -> None:
    """gangscheduling.go PreEnqueue: no PodGroup → "waiting for pod's pod group ... to appear";
    fewer than minCount pods → "waiting for minCount pods from a gang to appear in scheduling
    queue"; both UnschedulableAndUnresolvable, so the members wait gated, then all bind."""
    cluster = InMemoryCluster()
    async with start(cluster) as sched:
        await cluster.add_node(node("n1", "4"))
        await cluster.add_pod(member("a", "train"))
        await settle()
        qpi = sched.queue.get(stored(cluster, "a").uid)
        assert qpi is not None and qpi.gated and qpi.gating_plugin == "GangScheduling"
        status = sched.frameworks[PROFILE].run_pre_enqueue(stored(cluster, "a"))
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.message == (
            'waiting for pod\'s pod group "train" to appear in scheduling queue'
        )
        cluster.apply(pod_group("train", 3))
        await cluster.add_pod(member("b", "train"))
        await settle()
        status = sched.frameworks[PROFILE].run_pre_enqueue(stored(cluster, "b"))
        assert status is not None
        assert status.message == (
            "waiting for minCount pods from a gang to appear in scheduling queue"
        )
        assert bound_to(cluster, "a") is None and bound_to(cluster, "b") is None
        await cluster.add_pod(member("c", "train"))
        for name in "abc":
            await cluster.wait_bound(f"default/{name}", timeout=5)


async def test_first_alpha_workload_ref_shape_is_read_too() -> None:
    """1.35's shape: spec.workloadRef names a Workload and one of its podGroups; a missing
    Workload and an unknown pod group keep upstream's wording (typo included)."""
    cluster = InMemoryCluster()
    async with start(cluster) as sched:
        await cluster.add_node(node("n1", "4"))
        ref = SchedulingGroupRef(workload="job", pod_group="workers")
        await cluster.add_pod(member("w0", ref))
        fw = sched.frameworks[PROFILE]
        status = fw.run_pre_enqueue(stored(cluster, "w0"))
        assert status is not None
        assert status.message == 'waiting for pods\'s workload "job" to appear in scheduling queue'
        cluster.apply(workload("job", driver=None))
        status = fw.run_pre_enqueue(stored(cluster, "w0"))
        assert status is not None
        assert status.message == 'pod group "workers" doesn\'t exist for a workload "job"'
        cluster.apply(workload("job", workers=2, driver=None))
        await cluster.add_pod(member("w1", ref))
        await cluster.add_pod(member("d", SchedulingGroupRef(workload="job", pod_group="driver")))
        for name in ("w0", "w1", "d"):
            await cluster.wait_bound(f"default/{name}", timeout=5)


# ---- the pod-group cycle -------------------------------------------------------------------


async def test_a_gang_that_does_not_fit_is_placed_nowhere_and_holds_nothing() -> None:
    """All or nothing in one pass: 3 members of 2 cpu on two 2-cpu nodes; two would fit, the
    third cannot, so none binds and no node keeps a reservation. A later node makes room."""
    cluster = InMemoryCluster()
    async with start(cluster, config(preemption=False)) as sched:
        await cluster.add_node(node("n1", "2"))
        await cluster.add_node(node("n2", "2"))
        cluster.apply(pod_group("g", 3))
        for i in range(3):
            await cluster.add_pod(member(f"m{i}", "g", cpu="2"))
        await settle()
        assert [bound_to(cluster, f"m{i}") for i in range(3)] == [None, None, None]
        assert requested(sched, "n1") == requested(sched, "n2") == 0
        assert not sched.cache.sizes()["assumed_pods"]
        messages = {message(sched, cluster, f"m{i}") for i in range(3)}
        # the third member's own FitError; the placed two carry the group's reason
        assert messages == {
            "0/2 nodes are available: 2 Insufficient cpu.",
            "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining",
        }
        await cluster.add_node(node("n3", "2"))
        for i in range(3):
            await cluster.wait_bound(f"default/m{i}", timeout=5)
        assert sorted(str(bound_to(cluster, f"m{i}")) for i in range(3)) == ["n1", "n2", "n3"]


async def test_members_beyond_min_count_that_do_not_fit_stay_pending() -> None:
    """minCount 2 of 3 members: the gang is feasible once two are placed; the third, which
    fits nowhere, is retried alone (PlacementFeasible succeeds at minCount)."""
    cluster = InMemoryCluster()
    async with start(cluster, config(preemption=False)) as sched:
        await cluster.add_node(node("n1", "2"))
        cluster.apply(pod_group("g", 2))
        for i in range(3):
            await cluster.add_pod(member(f"m{i}", "g"))
        await cluster.wait_bound("default/m0", timeout=5)
        await cluster.wait_bound("default/m1", timeout=5)
        await settle()
        assert bound_to(cluster, "m2") is None
        assert message(sched, cluster, "m2") == "0/1 nodes are available: 1 Insufficient cpu."


async def test_competing_gangs_do_not_livelock_or_hold_capacity() -> None:
    """100 gangs of 8 one-cpu members on a cluster with room for 60 pods: whole gangs bind
    (7 of them, 56 pods), the rest wait in the pool, and no failed gang holds a node."""
    cluster = InMemoryCluster()
    async with start(cluster, config(preemption=False)) as sched:
        for i in range(6):
            await cluster.add_node(node(f"n{i}", "10"))
        for g in range(100):
            cluster.apply(pod_group(f"g{g}", 8))
        for g in range(100):
            for i in range(8):
                await cluster.add_pod(member(f"g{g}-{i}", f"g{g}"))
        with anyio.fail_after(60):
            while not sched.idle:
                await anyio.sleep(0.01)
        await settle()
        per_gang = [sum(1 for i in range(8) if bound_to(cluster, f"g{g}-{i}")) for g in range(100)]
        assert set(per_gang) <= {0, 8}
        assert sum(per_gang) == 56
        assert not sched.cache.sizes()["assumed_pods"]
        assert sum(requested(sched, f"n{i}") for i in range(6)) == 56_000
        attempts = sum(r.attempts for r in sched.records.values())
        assert attempts < 100 * 8 * 3  # each gang tried a bounded number of times


# ---- group preemption ----------------------------------------------------------------------


async def _gang_preempting_four_low_pods(cluster: InMemoryCluster) -> None:
    """Two full 2-cpu nodes (four 1-cpu low pods), then a gang of two 2-cpu members of
    priority 100: both members bind once the four low pods are evicted."""
    await cluster.add_node(node("n1", "2"))
    await cluster.add_node(node("n2", "2"))
    for i in range(4):
        await cluster.add_pod(make_pod(f"low{i}").req(cpu="1").obj())
    for i in range(4):
        await cluster.wait_bound(f"default/low{i}", timeout=5)
    cluster.apply(pod_group("hi", 2))
    for i in range(2):
        await cluster.add_pod(member(f"h{i}", "hi", cpu="2", priority=100))
    for i in range(2):
        await cluster.wait_bound(f"default/h{i}", timeout=5)


async def test_group_preemption_evicts_only_what_the_whole_gang_needs() -> None:
    """A high-priority gang of two 2-cpu members on two full 2-cpu nodes: both nodes' low
    pods go, the members are nominated and bind once the victims are gone."""
    cluster = InMemoryCluster()
    async with start(cluster) as sched:
        await _gang_preempting_four_low_pods(cluster)
        assert sorted(cluster.evicted) == [f"default/low{i}" for i in range(4)]
        assert sched.idle


async def test_no_eviction_for_a_gang_that_still_cannot_fit() -> None:
    """Three 2-cpu members against two 2-cpu nodes: preempting everything places two, not
    three, so nothing is evicted (the gang would not fit afterwards)."""
    cluster = InMemoryCluster()
    async with start(cluster) as sched:
        await cluster.add_node(node("n1", "2"))
        await cluster.add_node(node("n2", "2"))
        for i in range(2):
            await cluster.add_pod(make_pod(f"low{i}").req(cpu="2").obj())
            await cluster.wait_bound(f"default/low{i}", timeout=5)
        cluster.apply(pod_group("hi", 3))
        for i in range(3):
            await cluster.add_pod(member(f"h{i}", "hi", cpu="2", priority=100))
        await settle()
        assert cluster.evicted == []
        assert all(bound_to(cluster, f"h{i}") is None for i in range(3))
        assert bound_to(cluster, "low0") and bound_to(cluster, "low1")
        assert sched.metrics is None  # (no recorder configured)


async def test_group_preemption_spares_pods_of_higher_priority() -> None:
    """Victims are lower-priority pods only: a 100-priority pod on n1 stays, so the gang's
    two members can only use n2 and n3 after their low pods go."""
    cluster = InMemoryCluster()
    async with start(cluster) as sched:
        for name in ("n1", "n2", "n3"):
            await cluster.add_node(node(name, "2"))
        vip = attrs.evolve(
            make_pod("vip").req(cpu="2").obj(),
        )
        vip = attrs.evolve(vip, spec=attrs.evolve(vip.spec, priority=200, node_name="n1"))
        await cluster.add_pod(vip)
        for name in ("n2", "n3"):
            low = make_pod(f"low-{name}").req(cpu="2").obj()
            await cluster.add_pod(attrs.evolve(low, spec=attrs.evolve(low.spec, node_name=name)))
        await settle()
        cluster.apply(pod_group("hi", 2))
        for i in range(2):
            await cluster.add_pod(member(f"h{i}", "hi", cpu="2", priority=100))
        for i in range(2):
            await cluster.wait_bound(f"default/h{i}", timeout=5)
        assert sorted(cluster.evicted) == ["default/low-n2", "default/low-n3"]
        assert bound_to(cluster, "vip") == "n1"
        assert sched.idle


# ---- Permit ----------------------------------------------------------------------------------


class Reject:
    """A Permit plugin that turns down one named pod (``times`` times; -1: always)."""

    name = "Reject"

    def __init__(self, victim: str, times: int) -> None:
        self.victim = victim
        self.times = times

    def new(self, args: Any, handle: Any) -> Reject:
        return self

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.name == self.victim and self.times != 0:
            self.times -= 1
            return Status(Code.UNSCHEDULABLE, ("turned down",))
        return None


def permit_case(cluster: InMemoryCluster, log: list[SchedulingEvent], times: int) -> Any:
    # Reject's Permit runs before GangScheduling's, so a turned-down m0 never completes
    # the quorum (Permit plugins run in the profile's order).
    cfg = config(preemption=False, first=["Reject"])
    plugin = Reject("m0", times)
    return start(cluster, cfg, registry={"Reject": plugin.new}, observer=log.append)


def times(log: list[SchedulingEvent], kind: str) -> dict[str, float]:
    return {e.pod.partition("/")[2]: e.time for e in log if e.kind == kind}


@mock_clock()
async def test_a_member_turned_down_at_permit_fails_the_whole_gang_at_once() -> None:
    """m0 is turned down at Permit after the pass placed all three: the gang is below
    minCount, so its other members are released in the same cycle (no binding starts, no
    5-minute hold at Permit). No event concerns the rejecting plugins, so the members rest
    in the unschedulable pool until its flush (podMaxInUnschedulablePodsDuration, 5
    minutes), then all bind together."""
    cluster = InMemoryCluster()
    log: list[SchedulingEvent] = []
    async with permit_case(cluster, log, times=1) as sched:
        await cluster.add_node(node("n1", "4"))
        cluster.apply(pod_group("g", 3))
        t0 = anyio.current_time()
        for i in range(3):
            await cluster.add_pod(member(f"m{i}", "g"))
        await settle()
        failed = [e for e in log if e.kind == "Unschedulable"]
        assert sorted(e.pod for e in failed) == ["default/m0", "default/m1", "default/m2"]
        assert all(e.time == t0 for e in failed)
        assert not any(e.kind == "Bound" for e in log)
        assert requested(sched, "n1") == 0 and not sched.waiting_pods.get("m1")
        assert message(sched, cluster, "m0") == "0/1 nodes are available: 1 turned down."
        for i in range(3):
            await cluster.wait_bound(f"default/m{i}", timeout=2 * PERMIT_TIMEOUT_SECONDS)
        bound = times(log, "Bound")
        assert 300 <= min(bound.values()) - t0 <= 360
        assert requested(sched, "n1") == 3000


@mock_clock()
async def test_a_member_turned_down_every_time_never_lets_the_gang_bind() -> None:
    """With m0 turned down at every attempt nothing ever binds and nothing stays held; the
    gang is retried at each flush of the unschedulable pool (5 minutes), never in a loop."""
    cluster = InMemoryCluster()
    log: list[SchedulingEvent] = []
    async with permit_case(cluster, log, times=-1) as sched:
        await cluster.add_node(node("n1", "4"))
        cluster.apply(pod_group("g", 3))
        for i in range(3):
            await cluster.add_pod(member(f"m{i}", "g"))
        await anyio.sleep(3 * PERMIT_TIMEOUT_SECONDS - 1)
        attempts = [e.time for e in log if e.kind == "Attempted" and e.pod == "default/m0"]
        assert len(attempts) == 3, attempts  # at 0, then once per 5-minute flush
        assert not any(e.kind == "Bound" for e in log)
        assert requested(sched, "n1") == 0


HOLD = FakePermit("Hold", wait=60.0)
"""A Permit plugin that holds every pod for 60 s (an approval that never comes)."""


@mock_clock()
async def test_a_waiting_member_that_leaves_releases_its_siblings_at_once() -> None:
    """All three members wait at another plugin's Permit; m1 is deleted: its Unreserve
    (GangScheduling's) rejects m0 and m2 at once rather than when their waits end, and their
    reservations are freed."""
    cluster = InMemoryCluster()
    log: list[SchedulingEvent] = []
    cfg = config("Hold", preemption=False)
    async with start(cluster, cfg, registry={"Hold": HOLD.new}, observer=log.append) as sched:
        await cluster.add_node(node("n1", "4"))
        cluster.apply(pod_group("g", 3))
        for i in range(3):
            await cluster.add_pod(member(f"m{i}", "g"))
        await anyio.sleep(10)
        assert set(times(log, "WaitingOnPermit")) == {"m0", "m1", "m2"}
        t1 = anyio.current_time()
        await cluster.delete_pod("default/m1")
        await anyio.sleep(1)
        rejected = times(log, "PermitRejected")
        assert rejected["m0"] == pytest.approx(t1) and rejected["m2"] == pytest.approx(t1)
        assert bound_to(cluster, "m0") is None and bound_to(cluster, "m2") is None
        # m0 and m2 remain, below minCount 3: PreEnqueue holds them, nothing is reserved.
        assert requested(sched, "n1") == 0


@mock_clock()
async def test_gang_permit_wait_times_out_after_five_minutes() -> None:
    """GangScheduling Permit directly: below minCount a member waits 300 s and the wait ends
    in a rejection by timeout when no sibling comes."""
    cluster = InMemoryCluster()
    async with start(cluster, config(preemption=False)) as sched:
        await cluster.add_node(node("n1", "4"))
        cluster.apply(pod_group("g", 2))
        plugin = sched.frameworks[PROFILE].plugins["GangScheduling"]
        assert isinstance(plugin, GangScheduling)
        await cluster.add_pod(member("solo", "g"))
        pod = cluster.get_pod("default/solo")
        assert pod is not None
        status = plugin.permit(CycleState(), pod, "n1")
        assert status is not None and status.code is Code.WAIT
        assert status.timeout == PERMIT_TIMEOUT_SECONDS
        assert status.message == "waiting for minCount pods from a gang to be scheduled"


def test_placement_feasible_reasons_are_upstreams() -> None:
    """gangscheduling.go PlacementFeasible: Unschedulable when remaining + scheduled <
    minCount, Wait while scheduled < minCount, Success after."""
    from ksched.plugins.gang_scheduling import GroupInfo

    group = GroupInfo("default/g", "g", GroupPolicy(min_count=3))
    plugin = GangScheduling.__new__(GangScheduling)
    cases: Sequence[tuple[int, int, Code, str]] = [
        (1, 1, Code.UNSCHEDULABLE, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"),
        (2, 1, Code.WAIT, "minCount (3) is not yet satisfied: 1 scheduled, 2 remaining"),
        (0, 3, Code.SUCCESS, ""),
    ]
    for remaining, scheduled, code, text in cases:
        status = plugin.placement_feasible(group, remaining, scheduled)
        assert status.code is code
        assert status.message == text


async def test_a_profile_uses_one_gang_plugin() -> None:
    """Coscheduling and GangScheduling coexist in a configuration, one per profile."""
    from ksched import ConfigError

    both = config("Coscheduling")
    with pytest.raises(ConfigError, match="Coscheduling and GangScheduling are both enabled"):
        Scheduler(both, InMemoryCluster())
    two = SchedulerConfig(
        profiles=(
            config().profiles[0],
            attrs.evolve(
                config().profiles[0],
                scheduler_name="coscheduler",
                plugins={
                    "multiPoint": PluginSet(
                        enabled=(
                            PluginRef("Coscheduling"),
                            PluginRef("NodeResourcesFit"),
                            PluginRef("DefaultBinder"),
                        )
                    )
                },
            ),
        )
    )
    sched = Scheduler(two, InMemoryCluster())
    assert sched.frameworks["default-scheduler"].group_plugin is not None
    assert sched.frameworks["coscheduler"].group_plugin is None


async def test_group_preemption_prefers_victims_no_budget_protects() -> None:
    """Victims are chosen as DefaultPreemption chooses them: a node whose pod a
    PodDisruptionBudget protects (0 disruptions allowed) is the last resort, so a gang of two
    takes the two unprotected nodes (preemption.go pickOneNodeForPreemption, fewest PDB
    violations first)."""
    from ksched.api import LabelSelector, PodDisruptionBudget

    cluster = InMemoryCluster()
    async with start(cluster) as sched:
        for name in ("n1", "n2", "n3"):
            await cluster.add_node(node(name, "2"))
        for name in ("n1", "n2", "n3"):
            low = make_pod(f"low-{name}").req(cpu="2").label("app", name).obj()
            await cluster.add_pod(attrs.evolve(low, spec=attrs.evolve(low.spec, node_name=name)))
        cluster.apply(
            PodDisruptionBudget(
                metadata=ObjectMeta(name="keep-n1", namespace="default"),
                selector=LabelSelector(match_labels={"app": "n1"}),
                disruptions_allowed=0,
            )
        )
        cluster.apply(pod_group("hi", 2))
        for i in range(2):
            await cluster.add_pod(member(f"h{i}", "hi", cpu="2", priority=100))
        for i in range(2):
            await cluster.wait_bound(f"default/h{i}", timeout=5)
        assert sorted(cluster.evicted) == ["default/low-n2", "default/low-n3"]
        assert sorted(str(bound_to(cluster, f"h{i}")) for i in range(2)) == ["n2", "n3"]
        assert sched.idle


# ---- pod-group metrics -------------------------------------------------------------------


def _sample(metrics: Any, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else float(value)


async def test_pod_group_cycles_are_counted_by_result() -> None:
    """metrics.go podGroupScheduleAttempts / podGroupSchedulingLatency (result, profile)
    and PodGroupSchedulingAlgorithmLatency: one observation per pod-group cycle, not per
    member. The gang first fails (unschedulable), then binds whole (scheduled)."""
    from ksched.observability import SchedulerMetrics

    metrics = SchedulerMetrics()
    cluster = InMemoryCluster()
    async with start(cluster, config(preemption=False), metrics=metrics):
        await cluster.add_node(node("n1", "2"))
        cluster.apply(pod_group("g", 3))
        for i in range(3):
            await cluster.add_pod(member(f"m{i}", "g"))
        await settle()
        name = "scheduler_podgroup_schedule_attempts_total"
        assert _sample(metrics, name, result="unschedulable", profile=PROFILE) == 1
        assert _sample(metrics, name, result="scheduled", profile=PROFILE) == 0
        await cluster.add_node(node("n2", "2"))
        for i in range(3):
            await cluster.wait_bound(f"default/m{i}", timeout=5)
    assert _sample(metrics, name, result="scheduled", profile=PROFILE) == 1
    duration = "scheduler_podgroup_scheduling_attempt_duration_seconds_count"
    assert _sample(metrics, duration, result="scheduled", profile=PROFILE) == 1
    assert _sample(metrics, duration, result="unschedulable", profile=PROFILE) == 1
    algorithm = "scheduler_podgroup_scheduling_algorithm_duration_seconds_count"
    assert _sample(metrics, algorithm) == 2
    # the members' own attempts are still counted pod by pod
    assert (
        _sample(metrics, "scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE)
        == 3
    )


async def test_a_gang_that_preempts_is_waiting_on_preemption() -> None:
    from ksched.observability import SchedulerMetrics

    metrics = SchedulerMetrics()
    cluster = InMemoryCluster()
    async with start(cluster, metrics=metrics):
        await _gang_preempting_four_low_pods(cluster)
    name = "scheduler_podgroup_schedule_attempts_total"
    assert _sample(metrics, name, result="waiting_on_preemption", profile=PROFILE) == 1
    assert _sample(metrics, name, result="scheduled", profile=PROFILE) == 1
    assert _sample(metrics, name, result="unschedulable", profile=PROFILE) == 0
