"""Permit end to end: waiting pods allowed, rejected, timed out, deleted, and shutdown
while pods wait at Permit or sit in binding cycles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from ksched.api import Pod
from ksched.cluster import InMemoryCluster
from ksched.config import PluginRef, PluginSet, Profile, SchedulerConfig
from ksched.framework import Code, CycleState, Status
from ksched.scheduler import Scheduler
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio


class WaitPermit:
    """Reserve/Unreserve bookkeeping and a Permit that always waits ``timeout``."""

    name = "WaitPermit"

    def __init__(self, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.handle: Any = None
        self.reserved: list[tuple[str, float]] = []
        self.unreserved: list[tuple[str, float]] = []
        self.permits: list[tuple[str, float]] = []

    def new(self, args: Any, handle: Any) -> WaitPermit:
        self.handle = handle
        return self

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.reserved.append((pod.name, anyio.current_time()))

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserved.append((pod.name, anyio.current_time()))

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.permits.append((pod.name, anyio.current_time()))
        return Status.wait(self.timeout)

    def unreserve_count(self, name: str) -> int:
        return sum(1 for n, _ in self.unreserved if n == name)


class BlockingBinder:
    """A Bind plugin that waits on an event (and then binds through the cluster)."""

    name = "BlockingBinder"

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.entered: list[str] = []
        self.handle: Any = None

    def new(self, args: Any, handle: Any) -> BlockingBinder:
        self.handle = handle
        return self

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.entered.append(pod.name)
        await self.release.wait()
        await self.handle.cluster.bind(pod, node_name)
        return None


def config(*extra: str) -> SchedulerConfig:
    refs = (PluginRef("PrioritySort"), *(PluginRef(n) for n in extra), PluginRef("DefaultBinder"))
    return SchedulerConfig(profiles=(Profile(plugins={"multiPoint": PluginSet(enabled=refs)}),))


async def until(cond: Callable[[], bool], timeout: float = 10.0, step: float = 0.005) -> None:
    with anyio.fail_after(timeout):
        while not cond():
            await anyio.sleep(step)


async def cluster_with_node() -> InMemoryCluster:
    cluster = InMemoryCluster()
    await cluster.add_node(make_node("n1").capacity(cpu="8", memory="8Gi", pods=110).obj())
    return cluster


def mock_clock() -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        "anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})]
    )


async def test_allow_binds() -> None:
    cluster = await cluster_with_node()
    permit = WaitPermit()
    async with Scheduler.open(
        config("WaitPermit"), cluster, registry={"WaitPermit": permit.new}
    ) as sched:
        await cluster.add_pod(make_pod("p").obj())
        await until(lambda: permit.handle.get_waiting_pod("default/p") is not None)
        assert sched.queue.where("default/p") == "in-flight"
        waiting = permit.handle.get_waiting_pod("default/p")
        assert waiting.node_name == "n1"
        assert waiting.pending_plugins == ["WaitPermit"]
        waiting.allow("WaitPermit")
        pod = await cluster.wait_bound("default/p", timeout=10)
        assert pod.spec.node_name == "n1"
        assert permit.unreserved == []
        await until(lambda: sched.idle)
        assert sched.queue.where("default/p") is None
        assert permit.handle.get_waiting_pod("default/p") is None


async def test_reject_unreserves_once_and_requeues() -> None:
    cluster = await cluster_with_node()
    permit = WaitPermit()
    async with Scheduler.open(
        config("WaitPermit"), cluster, registry={"WaitPermit": permit.new}
    ) as sched:
        await cluster.add_pod(make_pod("p").req(cpu="1").obj())
        await until(lambda: permit.handle.get_waiting_pod("default/p") is not None)
        permit.handle.get_waiting_pod("default/p").reject("WaitPermit", "not now")
        await until(lambda: permit.unreserve_count("p") == 1)
        assert not sched.cache.is_assumed("default/p")
        info = sched.cache.node_info("n1")
        assert info is not None and info.requested.milli_cpu == 0
        await until(lambda: sched.queue.where("default/p") in ("unschedulable", "backoff"))
        cond = cluster.conditions["default/p"]
        assert cond["reason"] == "Unschedulable"
        assert cond["message"] == "0/1 nodes are available: 1 not now."
        got = cluster.get_pod("default/p")
        assert got is not None and got.spec.node_name is None
        assert permit.unreserve_count("p") == 1


@mock_clock()
async def test_timeout_unreserves_once_at_exact_time_and_backs_off() -> None:
    cluster = await cluster_with_node()
    permit = WaitPermit(timeout=30.0)
    async with Scheduler.open(
        config("WaitPermit"), cluster, registry={"WaitPermit": permit.new}
    ) as sched:
        await cluster.add_pod(make_pod("p").obj())
        await until(lambda: permit.unreserve_count("p") == 1, timeout=100, step=0.5)
        [(_, permitted_at)] = permit.permits
        [(_, unreserved_at)] = permit.unreserved
        assert unreserved_at == permitted_at + 30.0
        assert cluster.conditions["default/p"]["message"] == (
            "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin "
            "WaitPermit."
        )
        assert sched.queue.where("default/p") in ("unschedulable", "backoff")
        # the next attempt comes only after the pod's backoff (1 s initial)
        await until(lambda: len(permit.permits) == 2, timeout=400, step=0.5)
        assert permit.permits[1][1] >= unreserved_at + 1.0
        assert permit.unreserve_count("p") == 1


@mock_clock()
async def test_wait_timeout_is_capped_at_15_minutes() -> None:
    cluster = await cluster_with_node()
    permit = WaitPermit(timeout=3600.0)
    async with Scheduler.open(config("WaitPermit"), cluster, registry={"WaitPermit": permit.new}):
        await cluster.add_pod(make_pod("p").obj())
        await until(lambda: permit.unreserve_count("p") == 1, timeout=4000, step=5)
        assert permit.unreserved[0][1] == permit.permits[0][1] + 900.0


async def test_pod_deleted_while_waiting() -> None:
    cluster = await cluster_with_node()
    permit = WaitPermit()
    async with Scheduler.open(
        config("WaitPermit"), cluster, registry={"WaitPermit": permit.new}
    ) as sched:
        await cluster.add_pod(make_pod("p").req(cpu="1").obj())
        await until(lambda: permit.handle.get_waiting_pod("default/p") is not None)
        await cluster.delete_pod("default/p")
        await until(lambda: permit.unreserve_count("p") == 1)
        await until(lambda: sched.idle)
        assert permit.handle.get_waiting_pod("default/p") is None
        assert not sched.cache.is_assumed("default/p")
        assert sched.queue.where("default/p") is None
        assert cluster.get_pod("default/p") is None
        info = sched.cache.node_info("n1")
        assert info is not None and info.requested.milli_cpu == 0
        assert permit.unreserve_count("p") == 1


async def test_shutdown_while_pods_wait() -> None:
    cluster = await cluster_with_node()
    permit = WaitPermit(timeout=600.0)
    names = [f"p{i}" for i in range(3)]
    async with Scheduler.open(
        config("WaitPermit"), cluster, registry={"WaitPermit": permit.new}
    ) as sched:
        for name in names:
            await cluster.add_pod(make_pod(name).req(cpu="1").obj())
        await until(lambda: len(list(permit.handle.iterate_waiting_pods())) == 3)
    for name in names:
        uid = f"default/{name}"
        assert permit.unreserve_count(name) == 1
        assert not sched.cache.is_assumed(uid)
        assert sched.queue.where(uid) is not None
    assert len(sched.waiting_pods) == 0
    assert sched.binding_cycles_in_flight == 0


async def test_shutdown_while_binds_in_flight() -> None:
    cluster = await cluster_with_node()
    binder = BlockingBinder()

    class AllowAll(WaitPermit):
        def permit(self, state: CycleState, pod: Pod, node_name: str) -> None:
            return None

    reserve = AllowAll()
    cfg = SchedulerConfig(
        profiles=(
            Profile(
                plugins={
                    "multiPoint": PluginSet(
                        enabled=(
                            PluginRef("PrioritySort"),
                            PluginRef("WaitPermit"),
                            PluginRef("BlockingBinder"),
                        )
                    )
                }
            ),
        )
    )
    names = [f"p{i}" for i in range(3)]
    async with Scheduler.open(
        cfg, cluster, registry={"WaitPermit": reserve.new, "BlockingBinder": binder.new}
    ) as sched:
        for name in names:
            await cluster.add_pod(make_pod(name).req(cpu="1").obj())
        await until(lambda: len(binder.entered) == 3)
        assert sched.binding_cycles_in_flight == 3
        await sched.aclose(grace=0.05)
    for name in names:
        uid = f"default/{name}"
        assert reserve.unreserve_count(name) == 1
        assert not sched.cache.is_assumed(uid)
        assert sched.queue.where(uid) is not None
    assert sched.binding_cycles_in_flight == 0
    info = sched.cache.node_info("n1")
    assert info is not None and info.requested.milli_cpu == 0


async def test_shutdown_with_mixed_waiting_binding_and_bound() -> None:
    cluster = await cluster_with_node()
    binder = BlockingBinder()

    class Selective(WaitPermit):
        def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            self.permits.append((pod.name, anyio.current_time()))
            return Status.wait(600) if pod.name.startswith("w") else None

    plugin = Selective()

    class PassThroughBinder(BlockingBinder):
        async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            if pod.name.startswith("b"):
                return await super().bind(state, pod, node_name)
            return Status(Code.SKIP)

    binder = PassThroughBinder()
    cfg = SchedulerConfig(
        profiles=(
            Profile(
                plugins={
                    "multiPoint": PluginSet(
                        enabled=(
                            PluginRef("PrioritySort"),
                            PluginRef("WaitPermit"),
                            PluginRef("BlockingBinder"),
                            PluginRef("DefaultBinder"),
                        )
                    )
                }
            ),
        )
    )
    async with Scheduler.open(
        cfg, cluster, registry={"WaitPermit": plugin.new, "BlockingBinder": binder.new}
    ) as sched:
        for name in ("w0", "w1", "b0", "b1", "ok0"):
            await cluster.add_pod(make_pod(name).req(cpu="1").obj())

        def ready() -> bool:
            ok0 = cluster.get_pod("default/ok0")
            return (
                len(binder.entered) == 2
                and len(sched.waiting_pods) == 2
                and ok0 is not None
                and ok0.spec.node_name == "n1"
            )

        await until(ready)
        await sched.aclose(grace=0.05)
    for name in ("w0", "w1", "b0", "b1"):
        uid = f"default/{name}"
        assert plugin.unreserve_count(name) == 1, name
        assert sched.queue.where(uid) is not None, name
        assert not sched.cache.is_assumed(uid)
    assert plugin.unreserve_count("ok0") == 0
    assert sched.queue.where("default/ok0") is None
    info = sched.cache.node_info("n1")
    assert info is not None and info.requested.milli_cpu == 1000


class SlowPermit(WaitPermit):
    async def permit(  # type: ignore[override]  # an async Permit, on purpose
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        self.permits.append((pod.name, anyio.current_time()))
        await anyio.sleep(60)
        return None


async def test_shutdown_during_async_permit() -> None:
    cluster = await cluster_with_node()
    permit = SlowPermit()
    async with Scheduler.open(
        config("WaitPermit"), cluster, registry={"WaitPermit": permit.new}
    ) as sched:
        await cluster.add_pod(make_pod("p").req(cpu="1").obj())
        await until(lambda: len(permit.permits) == 1)
        await sched.aclose(grace=0.05)
    assert permit.unreserve_count("p") == 1
    assert not sched.cache.is_assumed("default/p")
    assert sched.queue.where("default/p") in ("active", "backoff", "unschedulable")
