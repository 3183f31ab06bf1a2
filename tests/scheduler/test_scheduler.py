"""The Scheduler end to end on an InMemoryCluster (schedule_one.go), and
numFeasibleNodesToFind (schedule_one_test.go TestNumFeasibleNodesToFind)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio
import pytest

from ksched._errors import ConfigError
from ksched.api import Pod
from ksched.cluster import InMemoryCluster
from ksched.config import PluginRef, PluginSet, Profile, SchedulerConfig
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.scheduler import Scheduler, SchedulingEvent, num_feasible_nodes_to_find
from ksched.testing import FakeAsyncFilter, FakeAsyncScore, make_node, make_pod


@pytest.mark.parametrize(
    ("percentage", "num_all_nodes", "want"),
    [
        pytest.param(
            0, 10, 10, id="not set percentageOfNodesToScore and nodes number not more than 50"
        ),
        pytest.param(
            40, 10, 10, id="set percentageOfNodesToScore and nodes number not more than 50"
        ),
        pytest.param(
            0, 1000, 420, id="not set percentageOfNodesToScore and nodes number more than 50"
        ),
        pytest.param(
            40, 1000, 400, id="set percentageOfNodesToScore and nodes number more than 50"
        ),
        pytest.param(
            0, 6000, 300, id="not set percentageOfNodesToScore and nodes number more than 50*125"
        ),
        pytest.param(
            40, 6000, 2400, id="set percentageOfNodesToScore and nodes number more than 50*125"
        ),
        pytest.param(0, 99, 99, id="below the 100-node minimum"),
        pytest.param(1, 200, 100, id="at least 100 nodes"),
        pytest.param(100, 5000, 5000, id="all nodes"),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int, num_all_nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(percentage, num_all_nodes) == want


# ---- end to end ---------------------------------------------------------------------


def config(*names: str, **profile: Any) -> SchedulerConfig:
    """A profile: PrioritySort, NodeResourcesFit, ``names``, DefaultBinder."""
    refs = (
        PluginRef("PrioritySort"),
        PluginRef("NodeResourcesFit"),
        *(PluginRef(n) for n in names),
        PluginRef("DefaultBinder"),
    )
    plugins = {"multiPoint": PluginSet(enabled=refs)}
    return SchedulerConfig(
        profiles=(Profile(plugins=plugins, **profile),), pod_initial_backoff_seconds=0.1
    )


def node(name: str, cpu: str = "4") -> Any:
    return make_node(name).capacity(cpu=cpu, memory="8Gi", pods=110).obj()


async def until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not cond():
            await anyio.sleep(0.005)


def bound(cluster: InMemoryCluster) -> dict[str, str]:
    return {p.key: p.spec.node_name for p in cluster.pods() if p.spec.node_name}


def factory(plugin: Any) -> Callable[[Mapping[str, Any] | None, Any], Any]:
    return lambda args, handle: plugin


@pytest.mark.anyio
async def test_pods_are_bound() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1", cpu="2"))
    await cluster.add_node(node("n2", cpu="2"))
    events: list[SchedulingEvent] = []
    async with Scheduler.open(config(), cluster, observer=events.append) as sched:
        for i in range(4):
            await cluster.add_pod(make_pod(f"p{i}").req(cpu="1").obj())
        await until(lambda: len(bound(cluster)) == 4)
        placed = bound(cluster)
        assert sorted(placed.values()) == ["n1", "n1", "n2", "n2"]
        await until(lambda: sched.idle)
        for i in range(4):
            assert sched.queue.where(f"default/p{i}") is None
        assert sched.cache.pod_count == 4
    assert [e.kind for e in events].count("Bound") == 4


@pytest.mark.anyio
async def test_unschedulable_pod_gets_fit_error_condition() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1", cpu="1"))
    async with Scheduler.open(config(), cluster) as sched:
        await cluster.add_pod(make_pod("big").req(cpu="2").obj())
        await until(lambda: "default/big" in cluster.conditions)
        cond = cluster.conditions["default/big"]
        assert cond["reason"] == "Unschedulable"
        assert cond["message"] == "0/1 nodes are available: 1 Insufficient cpu."
        await until(lambda: sched.queue.where("default/big") == "unschedulable")
        # a new node that fits moves it back and it binds
        await cluster.add_node(node("n2", cpu="4"))
        pod = await cluster.wait_bound("default/big", timeout=10)
        assert pod.spec.node_name == "n2"


class FlakyFilter:
    """Raises for ``victim`` the first ``failures`` times."""

    name = "FlakyFilter"

    def __init__(self, victim: str, failures: int = 1) -> None:
        self.victim = victim
        self.failures = failures
        self.calls = 0

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if pod.name == self.victim:
            self.calls += 1
            if self.calls <= self.failures:
                raise RuntimeError("filter exploded")
        return None


@pytest.mark.anyio
async def test_filter_that_raises_fails_pod_with_error_and_retries() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1"))
    plugin = FlakyFilter("bad")
    events: list[SchedulingEvent] = []
    async with Scheduler.open(
        config("FlakyFilter"),
        cluster,
        registry={"FlakyFilter": factory(plugin)},
        observer=events.append,
    ) as sched:
        await cluster.add_pod(make_pod("bad").req(cpu="1").obj())
        await until(lambda: any(e.kind == "SchedulerError" for e in events))
        error = next(e for e in events if e.kind == "SchedulerError")
        assert error.pod == "default/bad"
        assert (
            'running "FlakyFilter" Filter plugin: RuntimeError: filter exploded'
            in (error.details["message"])
        )
        assert cluster.conditions["default/bad"]["reason"] == "SchedulerError"
        # the engine goes on
        await cluster.add_pod(make_pod("good").req(cpu="1").obj())
        await cluster.wait_bound("default/good", timeout=10)
        # and the failed pod is retried after its backoff
        pod = await cluster.wait_bound("default/bad", timeout=10)
        assert pod.spec.node_name == "n1"
        assert plugin.calls == 2
        assert sched.records["default/bad"].attempts == 2


class FailingBinder:
    """Fails the first bind of each pod, then skips (DefaultBinder binds)."""

    name = "FailingBinder"

    def __init__(self) -> None:
        self.log: list[str] = []
        self.failed: set[str] = set()

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.log.append(f"reserve {pod.name}")
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.log.append(f"unreserve {pod.name}")

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.uid in self.failed:
            return Status(Code.SKIP)
        self.failed.add(pod.uid)
        self.log.append(f"bind failed {pod.name}")
        return Status.error("api server unavailable")


@pytest.mark.anyio
async def test_bind_failure_unreserves_forgets_and_requeues() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1"))
    plugin = FailingBinder()
    events: list[SchedulingEvent] = []
    async with Scheduler.open(
        config("FailingBinder"),
        cluster,
        registry={"FailingBinder": factory(plugin)},
        observer=events.append,
    ) as sched:
        await cluster.add_pod(make_pod("p").req(cpu="1").obj())
        await until(lambda: "unreserve p" in plugin.log)
        assert plugin.log[:3] == ["reserve p", "bind failed p", "unreserve p"]
        assert not sched.cache.is_assumed("default/p")
        pod = await cluster.wait_bound("default/p", timeout=10)
        assert pod.spec.node_name == "n1"
        assert plugin.log == [
            "reserve p",
            "bind failed p",
            "unreserve p",
            "reserve p",
        ]
        info = sched.cache.node_info("n1")
        assert info is not None and info.requested.milli_cpu == 1000
    errors = [e for e in events if e.kind == "SchedulerError"]
    assert len(errors) == 1
    assert "api server unavailable" in errors[0].details["message"]


@pytest.mark.anyio
async def test_custom_async_score_plugin_with_weight() -> None:
    cluster = InMemoryCluster()
    for name in ("n1", "n2", "n3"):
        await cluster.add_node(node(name))
    plugins = PluginSet(
        enabled=(
            PluginRef("PrioritySort"),
            PluginRef("NodeResourcesFit"),
            PluginRef("AsyncScore", 5),
            PluginRef("DefaultBinder"),
        )
    )
    cfg = SchedulerConfig(profiles=(Profile(plugins={"multiPoint": plugins}),))
    prefers_n3 = FakeAsyncScore("AsyncScore", scores={"n3": 100})  # an async Score
    async with Scheduler.open(
        cfg, cluster, registry={"AsyncScore": prefers_n3.new}, explain=True
    ) as sched:
        await cluster.add_pod(make_pod("p").req(cpu="1").obj())
        pod = await cluster.wait_bound("default/p", timeout=10)
        assert pod.spec.node_name == "n3"
        report = sched.records["default/p"].first_attempt
        assert report is not None
        assert report.scores["AsyncScore"] == {"n1": 0, "n2": 0, "n3": 100}
        assert report.totals["n3"] - report.totals["n1"] == 500


@pytest.mark.anyio
async def test_profiles_route_by_scheduler_name() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1"))
    gate = FlakyFilter("never")
    second = Profile(
        scheduler_name="second",
        plugins={
            "multiPoint": PluginSet(
                enabled=(
                    PluginRef("PrioritySort"),
                    PluginRef("FlakyFilter"),
                    PluginRef("DefaultBinder"),
                )
            )
        },
    )
    cfg = SchedulerConfig(profiles=(config().profiles[0], second))
    async with Scheduler.open(cfg, cluster, registry={"FlakyFilter": factory(gate)}):
        await cluster.add_pod(make_pod("a").obj())
        await cluster.add_pod(make_pod("b").scheduler_name("second").obj())
        await cluster.add_pod(make_pod("c").scheduler_name("other").obj())
        await cluster.wait_bound("default/a", timeout=10)
        await cluster.wait_bound("default/b", timeout=10)
        await anyio.sleep(0.05)
        c = cluster.get_pod("default/c")
        assert c is not None and c.spec.node_name is None


def test_unknown_plugin_in_profile_raises_config_error() -> None:
    with pytest.raises(ConfigError, match=r'plugin "Missing" is not registered$'):
        Scheduler(config("Missing"))


@pytest.mark.anyio
async def test_no_nodes_then_node_added() -> None:
    cluster = InMemoryCluster()
    async with Scheduler.open(config(), cluster):
        await cluster.add_pod(make_pod("p").obj())
        await until(lambda: "default/p" in cluster.conditions)
        assert cluster.conditions["default/p"]["message"] == "no nodes available to schedule pods"
        await cluster.add_node(node("n1"))
        await cluster.wait_bound("default/p", timeout=10)


@pytest.mark.anyio
async def test_deleted_pending_pod_leaves_the_queue() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1", cpu="1"))
    async with Scheduler.open(config(), cluster) as sched:
        await cluster.add_pod(make_pod("big").req(cpu="2").obj())
        await until(lambda: sched.queue.where("default/big") == "unschedulable")
        await cluster.delete_pod("default/big")
        assert sched.queue.where("default/big") is None


@pytest.mark.anyio
async def test_bound_pod_deleted_frees_cache() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1", cpu="1"))
    async with Scheduler.open(config(), cluster) as sched:
        await cluster.add_pod(make_pod("a").req(cpu="1").obj())
        await cluster.wait_bound("default/a", timeout=10)
        await cluster.add_pod(make_pod("b").req(cpu="1").obj())
        await until(lambda: sched.queue.where("default/b") == "unschedulable")
        await cluster.delete_pod("default/a")
        info = sched.cache.node_info("n1")
        assert info is not None and info.requested.milli_cpu in (0, 1000)
        await cluster.wait_bound("default/b", timeout=15)


@pytest.mark.anyio
async def test_closed_scheduler_cannot_serve_again() -> None:
    from ksched._errors import SchedulerClosedError

    async with Scheduler.open(config(), InMemoryCluster()) as sched:
        pass
    with pytest.raises(SchedulerClosedError):
        await sched.serve()


@pytest.mark.anyio
async def test_shutdown_during_async_filter_requeues_pod() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1"))
    plugin = FakeAsyncFilter("SlowFilter", delay=20)
    async with Scheduler.open(
        config("SlowFilter"), cluster, registry={"SlowFilter": factory(plugin)}
    ) as sched:
        await cluster.add_pod(make_pod("p").obj())
        await until(lambda: len(plugin.calls) == 1)
        await sched.aclose(grace=0.05)
    assert sched.queue.where("default/p") in ("active", "backoff", "unschedulable")
