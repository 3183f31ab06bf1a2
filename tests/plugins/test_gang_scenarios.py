"""Gang scheduling end to end: Coscheduling driven by the Scheduler over an InMemoryCluster.

Quorum before any bind, release on timeout or PostFilter, two gangs competing for room for one,
a member deleted while its siblings wait, plain pods flowing around a gang, and shutdown while
a gang waits at Permit. Untimed cases run on asyncio and trio; timed ones on trio's MockClock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from ksched import InMemoryCluster, Scheduler, SchedulingEvent
from ksched.api import ObjectMeta, Pod, PodGroup
from ksched.config import PluginRef, PluginSet, Profile, SchedulerConfig
from ksched.framework import CycleState, PodInfo, QueuedPodInfo
from ksched.plugins.coscheduling import (
    LIVELOCK_BACKOFF_SECONDS,
    LIVELOCK_FAILURES,
    POD_GROUP_LABEL,
    Coscheduling,
)
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

PROFILE = "default-scheduler"


def mock_clock() -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        "anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})]
    )


class Ledger:
    """Reserve/Unreserve/Permit bookkeeping, plus the scheduler's events, in one order."""

    name = "GangLedger"

    def __init__(self) -> None:
        self.reserved: Counter[str] = Counter()
        self.unreserved: Counter[str] = Counter()
        self.log: list[tuple[str, str, float]] = []
        """(what, pod name, time): reserve, unreserve, permit, and the scheduler's events."""
        self.scheduler: Scheduler | None = None
        self.cycles: list[tuple[str, str, int]] = []
        """(event kind, pod name, scheduling cycle when it happened)."""

    def new(self, args: Any, handle: Any) -> Ledger:
        return self

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.reserved[pod.name] += 1
        self.log.append(("reserve", pod.name, anyio.current_time()))

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserved[pod.name] += 1
        self.log.append(("unreserve", pod.name, anyio.current_time()))

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.log.append(("permit", pod.name, anyio.current_time()))

    def observe(self, event: SchedulingEvent) -> None:
        name = event.pod.partition("/")[2]
        self.log.append((event.kind, name, event.time))
        cycle = self.scheduler.queue.scheduling_cycle if self.scheduler is not None else 0
        self.cycles.append((event.kind, name, cycle))

    def held(self, name: str) -> int:
        """Reservations of ``name`` not undone by Unreserve and not ended by a bind."""
        bound = sum(1 for kind, pod, _ in self.log if kind == "Bound" and pod == name)
        return self.reserved[name] - self.unreserved[name] - bound

    def kinds(self, kind: str, names: Sequence[str] | None = None) -> list[tuple[str, float]]:
        return [(n, t) for k, n, t in self.log if k == kind and (names is None or n in names)]

    def holds(self, names: Sequence[str]) -> list[tuple[str, float, float, int]]:
        """Each Permit wait of these pods that ended in a rejection:
        (pod, start time, end time, scheduling cycles it spanned)."""
        open_at: dict[str, tuple[float, int]] = {}
        cycle_of = iter(self.cycles)
        out = []
        for kind, name, t in self.log:
            if kind not in ("WaitingOnPermit", "PermitRejected", "PermitAllowed"):
                continue
            _, _, cycle = next(c for c in cycle_of if c[0] == kind and c[1] == name)
            if name not in names:
                continue
            if kind == "WaitingOnPermit":
                open_at[name] = (t, cycle)
            elif name in open_at:
                start, start_cycle = open_at.pop(name)
                if kind == "PermitRejected":
                    out.append((name, start, t, cycle - start_cycle))
        assert not open_at, f"waits never ended: {open_at}"
        return out


def gang_config(**args: Any) -> SchedulerConfig:
    refs = (
        PluginRef("Coscheduling"),
        PluginRef("NodeResourcesFit"),
        PluginRef("NodeAffinity"),
        PluginRef("GangLedger"),
        PluginRef("DefaultBinder"),
    )
    plugin_config: Mapping[str, Mapping[str, Any]] = {"Coscheduling": args} if args else {}
    profile = Profile(plugins={"multiPoint": PluginSet(enabled=refs)}, plugin_config=plugin_config)
    return SchedulerConfig(profiles=(profile,))


def pod_group(
    name: str, min_member: int, *, created: float = 0.0, timeout: int | None = None
) -> PodGroup:
    return PodGroup(
        metadata=ObjectMeta(name=name, namespace="default", creation_timestamp=created),
        min_member=min_member,
        schedule_timeout_seconds=timeout,
    )


def member(name: str, group: str, cpu: str = "1", zone: str | None = None) -> Pod:
    builder = make_pod(name).label(POD_GROUP_LABEL, group).req(cpu=cpu)
    if zone is not None:
        builder = builder.node_selector({"zone": zone})
    return builder.obj()


def node(name: str, cpu: str, zone: str = "a") -> Any:
    return make_node(name).capacity(cpu=cpu, memory="16Gi", pods=110).label("zone", zone).obj()


def start(
    ledger: Ledger, cluster: InMemoryCluster, **args: Any
) -> AbstractAsyncContextManager[Scheduler]:
    """Scheduler.open with the gang profile, the ledger and its observer."""
    return Scheduler.open(
        gang_config(**args), cluster, registry={"GangLedger": ledger.new}, observer=ledger.observe
    )


def coscheduling(sched: Scheduler) -> Coscheduling:
    plugin = sched.frameworks[PROFILE].plugins["Coscheduling"]
    assert isinstance(plugin, Coscheduling)
    return plugin


def bound_to(cluster: InMemoryCluster, name: str) -> str | None:
    pod = cluster.get_pod(f"default/{name}")
    return pod.spec.node_name if pod is not None else None


def requested_cpu(sched: Scheduler, node_name: str) -> int:
    info = sched.cache.node_info(node_name)
    assert info is not None
    return info.requested.milli_cpu


async def settle() -> None:
    """Let every task run until all wait (on an event, a timer or the queue)."""
    await anyio.wait_all_tasks_blocked()


# ---- quorum, timeout, PostFilter ----------------------------------------------------------


async def test_gang_that_fits_is_bound_only_after_every_member_passed_permit() -> None:
    """Coscheduling Permit: below minMember every member waits; the member that reaches quorum
    allows them all (coscheduling.go Permit). No Bind before the last member's Permit."""
    cluster = InMemoryCluster()
    ledger = Ledger()
    names = ["w0", "w1", "w2", "w3"]
    async with start(ledger, cluster) as sched:
        ledger.scheduler = sched
        await cluster.add_node(node("n1", "2"))
        await cluster.add_node(node("n2", "2"))
        cluster.apply(pod_group("train", 4))
        for name in names:
            await cluster.add_pod(member(name, "train"))
        for name in names:
            await cluster.wait_bound(f"default/{name}", timeout=10)
        await settle()
        assert sched.idle
    permits = [i for i, (kind, _, _) in enumerate(ledger.log) if kind == "permit"]
    binds = [i for i, (kind, _, _) in enumerate(ledger.log) if kind == "Bound"]
    assert len(permits) == 4 and len(binds) == 4
    assert max(permits) < min(binds), ledger.log
    # The first three waited; the fourth completed the quorum and released them.
    assert sorted(n for n, _ in ledger.kinds("WaitingOnPermit")) == names[:3]
    assert sorted(n for n, _ in ledger.kinds("PermitAllowed")) == names[:3]
    assert sorted(str(bound_to(cluster, n)) for n in names) == ["n1", "n1", "n2", "n2"]
    assert all(ledger.held(n) == 0 for n in names)
    assert ledger.unreserved == Counter()
    assert coscheduling(sched).group_statuses()["default/train"] == {
        "phase": "Scheduled",
        "bound": 4,
        "waiting": 0,
        "lastFailure": None,
    }


async def test_gang_that_cannot_fit_is_released_at_once_by_post_filter() -> None:
    """A member that fits nowhere rejects its waiting siblings in PostFilter ("optimistic
    rejection in PostFilter"): nothing stays reserved, nothing is bound, no time passes."""
    cluster = InMemoryCluster()
    ledger = Ledger()
    names = ["g0", "g1", "g2"]
    async with start(ledger, cluster) as sched:
        ledger.scheduler = sched
        await cluster.add_node(node("n1", "2"))
        cluster.apply(pod_group("big", 3))
        for name in names:
            await cluster.add_pod(member(name, "big"))
        await settle()
        t_end = anyio.current_time()
        assert [bound_to(cluster, n) for n in names] == [None, None, None]
        assert len(sched.waiting_pods) == 0
        assert requested_cpu(sched, "n1") == 0
        assert not any(sched.cache.is_assumed(f"default/{n}") for n in names)
        assert all(ledger.held(n) == 0 for n in names)
        assert all(sched.queue.where(f"default/{n}") is not None for n in names)
        holds = ledger.holds(names)
        assert holds, "two members should have waited before the third failed"
        # Released long before the 60 s Permit wait (at once, on a simulated clock).
        assert all(end - start < 1.0 for _, start, end, _ in holds)
        assert all(t <= t_end for _, t in ledger.kinds("PermitRejected"))
        status = coscheduling(sched).group_statuses()["default/big"]
        assert status["bound"] == 0 and status["waiting"] == 0
        assert "unschedulable even after PostFilter" in status["lastFailure"]


@mock_clock()
async def test_gang_that_cannot_fit_is_released_at_its_timeout() -> None:
    """With podGroupRejectPercentage 100 PostFilter never rejects, so the waiting members hold
    their nodes until scheduleTimeoutSeconds (7 s here, the PodGroup's own): then every wait
    ends together, each Unreserve runs once, and the node is empty again."""
    cluster = InMemoryCluster()
    ledger = Ledger()
    names = ["t0", "t1", "t2"]
    async with start(ledger, cluster, podGroupRejectPercentage=100) as sched:
        ledger.scheduler = sched
        await cluster.add_node(node("n1", "4"))
        cluster.apply(pod_group("late", 3, timeout=7))
        t0 = anyio.current_time()
        await cluster.add_pod(member("t0", "late"))
        await cluster.add_pod(member("t1", "late"))
        await cluster.add_pod(member("t2", "late", zone="b"))  # no such node
        await settle()
        assert len(sched.waiting_pods) == 2
        assert requested_cpu(sched, "n1") == 2000
        assert coscheduling(sched).group_statuses()["default/late"]["phase"] == "Scheduling"
        await anyio.sleep(6.5)
        assert len(sched.waiting_pods) == 2  # still inside the 7 s wait
        await anyio.sleep(1)
        await settle()
        rejected = ledger.kinds("PermitRejected")
        assert sorted(n for n, _ in rejected) == ["t0", "t1"]
        assert {t - t0 for _, t in rejected} == {7.0}
        assert [bound_to(cluster, n) for n in names] == [None, None, None]
        assert requested_cpu(sched, "n1") == 0
        assert not any(sched.cache.is_assumed(f"default/{n}") for n in names)
        assert ledger.unreserved == Counter({"t0": 1, "t1": 1})
        assert all(ledger.held(n) == 0 for n in names)
        message = cluster.conditions["default/t0"]["message"]
        assert message in (
            "0/1 nodes are available: 1 rejected due to timeout after waiting 7s at plugin "
            "Coscheduling.",
            "0/1 nodes are available: 1 rejection in Unreserve.",
        )


# ---- two gangs, room for one --------------------------------------------------------------

GANG_A = [f"a{i}" for i in range(4)]
GANG_B = [f"b{i}" for i in range(4)]


async def _two_gangs(cluster: InMemoryCluster) -> None:
    """6 cpu; gangs of 4 x 1 cpu: room for one gang and half of the other."""
    await cluster.add_node(node("n1", "3"))
    await cluster.add_node(node("n2", "3"))
    cluster.apply(pod_group("a", 4, created=0.0))
    cluster.apply(pod_group("b", 4, created=0.0))
    for name in GANG_A + GANG_B:
        await cluster.add_pod(member(name, name[0]))


def _assert_b_released_within_one_pass(ledger: Ledger, sched: Scheduler) -> None:
    holds = ledger.holds(GANG_B)
    assert holds, "gang b should have tried (and reserved) before being turned away"
    for name, start, end, cycles in holds:
        assert end - start < 1.0, (name, start, end)  # far below the 60 s Permit wait
        # Reserved in one member's cycle, released before the gang's pass was over.
        assert cycles <= len(GANG_B), (name, cycles, ledger.cycles)
    assert ledger.kinds("Bound", GANG_B) == []
    assert all(ledger.held(n) == 0 for n in GANG_B)
    assert not any(sched.cache.is_assumed(f"default/{n}") for n in GANG_B)
    assert requested_cpu(sched, "n1") + requested_cpu(sched, "n2") == 4000


async def test_two_gangs_room_for_one_then_the_second_gets_the_room() -> None:
    cluster = InMemoryCluster()
    ledger = Ledger()
    async with start(ledger, cluster) as sched:
        ledger.scheduler = sched
        await _two_gangs(cluster)
        for name in GANG_A:
            await cluster.wait_bound(f"default/{name}", timeout=10)
        await settle()
        assert all(bound_to(cluster, n) for n in GANG_A)
        _assert_b_released_within_one_pass(ledger, sched)
        assert len(sched.waiting_pods) == 0
        # Room appears: gang a finishes.
        for name in GANG_A:
            await cluster.delete_pod(f"default/{name}")
            await settle()
        for name in GANG_B:
            await cluster.wait_bound(f"default/{name}", timeout=15)
        await settle()
        assert sched.idle
        per_node = Counter(bound_to(cluster, n) for n in GANG_B)
        assert set(per_node) <= {"n1", "n2"} and max(per_node.values()) <= 3
        assert coscheduling(sched).group_statuses()["default/b"]["phase"] == "Scheduled"


@mock_clock()
async def test_two_gangs_no_livelock_over_100_rounds() -> None:
    """Upstream, the losing gang retries without end (each rejection requeues the member that
    did not fit, and that member re-activates its siblings). Here it backs off after
    LIVELOCK_FAILURES attempts, holds nothing meanwhile, and is placed as soon as room
    appears, not at the pool's next flush."""
    cluster = InMemoryCluster()
    ledger = Ledger()
    async with start(ledger, cluster) as sched:
        ledger.scheduler = sched
        await _two_gangs(cluster)
        await settle()
        assert all(bound_to(cluster, n) for n in GANG_A)
        first_burst = sum(sched.records[f"default/{n}"].attempts for n in GANG_B)
        assert first_burst <= len(GANG_B) * (LIVELOCK_FAILURES + 1)
        status = coscheduling(sched).group_statuses()["default/b"]
        assert status["phase"] == "BackedOff"
        assert f"failed {LIVELOCK_FAILURES} attempts in a row" in status["lastFailure"]
        assert f"backed off for {LIVELOCK_BACKOFF_SECONDS:g}s" in status["lastFailure"]
        idle_rounds = 0
        for _ in range(100):
            await anyio.sleep(5)
            await settle()
            idle_rounds += sched.idle
        # 500 simulated seconds: the pool's 5-minute flush retries the gang about once.
        attempts = sum(sched.records[f"default/{n}"].attempts for n in GANG_B)
        assert attempts - first_burst <= 2 * len(GANG_B), (first_burst, attempts)
        assert idle_rounds >= 99
        assert sched.idle
        _assert_b_released_within_one_pass(ledger, sched)
        assert all(end == start for _, start, end, _ in ledger.holds(GANG_B))
        # Room appears: gang a is deleted at once; gang b is placed at that same moment.
        freed_at = anyio.current_time()
        for name in GANG_A:
            await cluster.delete_pod(f"default/{name}")
        await settle()
        assert all(bound_to(cluster, n) for n in GANG_B)
        assert {t for _, t in ledger.kinds("Bound", GANG_B)} == {freed_at}
        assert coscheduling(sched).group_statuses()["default/b"] == {
            "phase": "Scheduled",
            "bound": 4,
            "waiting": 0,
            "lastFailure": None,
        }


# ---- a member deleted while its siblings wait ---------------------------------------------


async def test_member_deleted_while_siblings_wait() -> None:
    """Deleting a waiting member ends its wait; its Unreserve rejects the waiting siblings
    ("rejection in Unreserve"). Nothing is bound below minMember and nothing stays reserved;
    with a replacement member the gang completes."""
    cluster = InMemoryCluster()
    ledger = Ledger()
    async with start(ledger, cluster, podGroupRejectPercentage=100) as sched:
        ledger.scheduler = sched
        await cluster.add_node(node("n1", "4"))
        cluster.apply(pod_group("job", 3, timeout=600))
        await cluster.add_pod(member("m0", "job"))
        await cluster.add_pod(member("m1", "job"))
        await cluster.add_pod(member("m2", "job", zone="b"))
        await settle()
        assert {w.pod.name for w in sched.waiting_pods} == {"m0", "m1"}
        await cluster.delete_pod("default/m0")
        await settle()
        assert len(sched.waiting_pods) == 0
        assert ledger.unreserved == Counter({"m0": 1, "m1": 1})
        assert requested_cpu(sched, "n1") == 0
        assert not sched.cache.is_assumed("default/m1")
        assert sched.queue.where("default/m0") is None
        assert sched.queue.where("default/m1") is not None
        assert cluster.conditions["default/m1"]["message"] == (
            "0/1 nodes are available: 1 rejection in Unreserve."
        )
        # Room for m2 appears, but two members are below minMember 3: nobody binds.
        await cluster.add_node(node("n2", "4", zone="b"))
        await settle()
        assert ledger.kinds("Bound") == []
        assert [bound_to(cluster, n) for n in ("m1", "m2")] == [None, None]
        assert requested_cpu(sched, "n1") + requested_cpu(sched, "n2") == 0
        # A replacement member completes the gang.
        await cluster.add_pod(member("m3", "job"))
        for name in ("m1", "m2", "m3"):
            await cluster.wait_bound(f"default/{name}", timeout=15)
        await settle()
        assert sched.idle
    assert bound_to(cluster, "m2") == "n2"
    assert all(ledger.held(n) == 0 for n in ("m0", "m1", "m2", "m3"))


# ---- plain pods flowing around a gang -----------------------------------------------------


async def test_plain_pods_flow_around_a_gang_that_cannot_fit() -> None:
    cluster = InMemoryCluster()
    ledger = Ledger()
    gang = [f"g{i}" for i in range(5)]
    plain = [f"web-{i}" for i in range(6)]
    async with start(ledger, cluster) as sched:
        ledger.scheduler = sched
        await cluster.add_node(node("n1", "4"))
        await cluster.add_node(node("n2", "4"))
        cluster.apply(pod_group("huge", 5))
        for i in range(max(len(gang), len(plain))):
            if i < len(gang):
                await cluster.add_pod(member(gang[i], "huge", cpu="2"))
            if i < len(plain):
                await cluster.add_pod(make_pod(plain[i]).req(cpu="500m").obj())
        for name in plain:
            await cluster.wait_bound(f"default/{name}", timeout=10)
        await settle()
        assert ledger.kinds("Bound", gang) == []
        assert all(ledger.held(n) == 0 for n in gang)
        assert requested_cpu(sched, "n1") + requested_cpu(sched, "n2") == 3000
        assert len(sched.waiting_pods) == 0


@mock_clock()
async def test_plain_pods_bound_while_gang_waits() -> None:
    """Two members hold 2 of 4 cpu at Permit (the third cannot fit; PostFilter never rejects
    with podGroupRejectPercentage 100): small plain pods bind meanwhile; a plain pod that
    needs the held cpu binds the moment the gang's 20 s wait ends."""
    cluster = InMemoryCluster()
    ledger = Ledger()
    gang = ["g0", "g1", "g2"]
    async with start(ledger, cluster, podGroupRejectPercentage=100) as sched:
        ledger.scheduler = sched
        await cluster.add_node(node("n1", "4"))
        cluster.apply(pod_group("g", 3, timeout=20))
        t0 = anyio.current_time()
        await cluster.add_pod(member("g0", "g"))
        await cluster.add_pod(member("g1", "g"))
        await cluster.add_pod(member("g2", "g", zone="b"))
        await settle()
        assert len(sched.waiting_pods) == 2
        await cluster.add_pod(make_pod("small-0").req(cpu="1").obj())
        await cluster.add_pod(make_pod("wide").req(cpu="3").obj())
        await settle()
        assert bound_to(cluster, "small-0") == "n1"
        assert bound_to(cluster, "wide") is None
        assert len(sched.waiting_pods) == 2
        await anyio.sleep(10)
        await cluster.add_pod(make_pod("small-1").req(cpu="1").obj())
        await settle()
        assert bound_to(cluster, "small-1") == "n1"  # the last free cpu, gang still waiting
        assert len(sched.waiting_pods) == 2
        await cluster.delete_pod("default/small-1")
        pod = await cluster.wait_bound("default/wide")
        # The gang's reservations are forgotten at its timeout; wide binds in that instant.
        assert pod.spec.node_name == "n1"
        assert ledger.kinds("Bound", ["wide"]) == [("wide", t0 + 20)]
        assert sorted(ledger.kinds("PermitRejected")) == [("g0", t0 + 20), ("g1", t0 + 20)]
        await anyio.sleep(100)
        await settle()
        assert ledger.kinds("Bound", gang) == []
        # The node is full of plain pods; the gang holds nothing and keeps waiting its turn.
        assert len(sched.waiting_pods) == 0
        assert all(ledger.held(n) == 0 for n in gang)
        assert requested_cpu(sched, "n1") == 1000 + 3000
        assert all(sched.queue.where(f"default/{n}") is not None for n in gang)


# ---- shutdown while a gang waits ----------------------------------------------------------


async def test_shutdown_while_gang_waits_at_permit() -> None:
    cluster = InMemoryCluster()
    ledger = Ledger()
    names = ["s0", "s1", "s2", "s3"]
    async with start(ledger, cluster, podGroupRejectPercentage=100) as sched:
        ledger.scheduler = sched
        await cluster.add_node(node("n1", "8"))
        cluster.apply(pod_group("sd", 4, timeout=600))
        for name in names[:3]:
            await cluster.add_pod(member(name, "sd"))
        await cluster.add_pod(member("s3", "sd", zone="b"))
        await settle()
        assert {w.pod.name for w in sched.waiting_pods} == {"s0", "s1", "s2"}
        assert requested_cpu(sched, "n1") == 3000
    # Leaving the block ended every wait: nothing raised, nothing bound, nothing lost.
    assert ledger.unreserved == Counter({"s0": 1, "s1": 1, "s2": 1})
    assert ledger.kinds("Bound") == []
    assert len(sched.waiting_pods) == 0
    assert sched.binding_cycles_in_flight == 0
    assert requested_cpu(sched, "n1") == 0
    for name in names:
        uid = f"default/{name}"
        assert cluster.get_pod(uid) is not None
        assert bound_to(cluster, name) is None
        assert not sched.cache.is_assumed(uid)
        assert sched.queue.where(uid) in ("active", "backoff", "unschedulable"), name


# ---- queue order while a gang waits -------------------------------------------------------


async def test_siblings_of_a_waiting_member_sort_before_other_pods_of_their_priority() -> None:
    """Beyond upstream's QueueSort (priority, group time, name): while members of a group wait
    at Permit below quorum, its other pods go first among equal priorities, so the group's
    attempt is finished before unrelated pods are scheduled; at quorum the order is upstream's."""
    cluster = InMemoryCluster()
    ledger = Ledger()
    async with start(ledger, cluster, podGroupRejectPercentage=100) as sched:
        await cluster.add_node(node("n1", "8"))
        cluster.apply(pod_group("early", 2, created=0.0))
        cluster.apply(pod_group("late", 3, created=5.0, timeout=600))
        await cluster.add_pod(member("l0", "late"))
        await cluster.add_pod(member("l1", "late"))
        await cluster.add_pod(member("l2", "late", zone="b"))
        await settle()
        assert {w.pod.name for w in sched.waiting_pods} == {"l0", "l1"}
        plugin = coscheduling(sched)
        late = QueuedPodInfo(PodInfo.of(member("l2", "late")), initial_attempt_timestamp=9.0)
        early = QueuedPodInfo(PodInfo.of(member("e0", "early")), initial_attempt_timestamp=0.0)
        plain = QueuedPodInfo(PodInfo.of(make_pod("web").obj()), initial_attempt_timestamp=0.0)
        urgent = QueuedPodInfo(
            PodInfo.of(make_pod("urgent").priority(10).obj()), initial_attempt_timestamp=0.0
        )
        assert plugin.less(late, early) and not plugin.less(early, late)
        assert plugin.less(late, plain) and not plugin.less(plain, late)
        assert plugin.less(urgent, late)  # priority still comes first
        await cluster.add_node(node("n2", "8", zone="b"))  # l2 fits: quorum, all bound
        for name in ("l0", "l1", "l2"):
            await cluster.wait_bound(f"default/{name}", timeout=10)
        assert plugin.less(early, late) and not plugin.less(late, early)
