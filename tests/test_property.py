"""A property: whatever happens (nodes and pods come and go, Permit allows, rejects or
waits, binds fail, the scheduler shuts down), no pod is ever lost and the cache's
totals match the pods it accounts for."""

from __future__ import annotations

from typing import Any

import anyio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ksched.api import Pod, pod_requests
from ksched.cluster import InMemoryCluster
from ksched.config import PluginRef, PluginSet, Profile, SchedulerConfig
from ksched.framework import Code, CycleState, Status
from ksched.scheduler import Scheduler
from ksched.testing import make_node, make_pod

MODES = ("allow", "reject", "wait", "bindfail")


class Outcomes:
    """Permit and Bind plugin whose verdict per pod comes from the pod's ``mode`` label."""

    name = "Outcomes"

    def __init__(self) -> None:
        self.reserved: dict[str, int] = {}
        self.unreserved: dict[str, int] = {}
        self.bind_failed: set[str] = set()

    def new(self, args: Any, handle: Any) -> Outcomes:
        return self

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.reserved[pod.uid] = self.reserved.get(pod.uid, 0) + 1

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserved[pod.uid] = self.unreserved.get(pod.uid, 0) + 1

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        mode = pod.labels.get("mode")
        if mode == "reject":
            return Status(Code.UNSCHEDULABLE, ("rejected by test",))
        if mode == "wait":
            return Status.wait(20.0)
        return None

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        await anyio.sleep(0.5)
        if pod.labels.get("mode") == "bindfail" and pod.uid not in self.bind_failed:
            self.bind_failed.add(pod.uid)
            return Status.error("bind failed by test")
        return Status(Code.SKIP)


def config() -> SchedulerConfig:
    refs = (
        PluginRef("PrioritySort"),
        PluginRef("NodeResourcesFit"),
        PluginRef("Outcomes"),
        PluginRef("DefaultBinder"),
    )
    return SchedulerConfig(profiles=(Profile(plugins={"multiPoint": PluginSet(enabled=refs)}),))


op = st.one_of(
    st.tuples(st.just("add_node"), st.integers(0, 2), st.sampled_from(["1", "2", "4"])),
    st.tuples(st.just("del_node"), st.integers(0, 2)),
    st.tuples(
        st.just("add_pod"),
        st.integers(0, 5),
        st.sampled_from(["0", "500m", "1", "3"]),
        st.sampled_from(MODES),
    ),
    st.tuples(st.just("del_pod"), st.integers(0, 5)),
    st.tuples(st.just("allow"), st.integers(0, 5)),
    st.tuples(st.just("reject"), st.integers(0, 5)),
    st.tuples(st.just("advance"), st.sampled_from([0.1, 1.0, 5.0, 30.0])),
)


def check_invariants(sched: Scheduler, cluster: InMemoryCluster, *, closed: bool) -> None:
    q: Any = sched.queue
    for pod in cluster.pods():
        if pod.spec.node_name:
            continue
        uid = pod.uid
        places = [
            uid in q._active,
            uid in q._backoff,
            uid in q._unschedulable,
            uid in q._in_flight,
        ]
        assert sum(places) <= 1, (pod.key, places)
        waiting = sched.waiting_pods.get(uid) is not None
        binding = sched.cache.is_assumed(uid)
        where = q.where(uid)
        if closed:
            assert not waiting and not binding, pod.key
            assert where in ("active", "backoff", "unschedulable", "gated"), (pod.key, where)
        else:
            assert where is not None or waiting or binding, pod.key
    # cache totals = bound pods + assumed pods
    cache: Any = sched.cache
    total = sum(info.requested.milli_cpu for info in cache._nodes.values())
    bound = sum(pod_requests(p).get("cpu", 0) for p in cluster.pods() if p.spec.node_name)
    assumed = sum(pod_requests(s.pod).get("cpu", 0) for s in cache._pods.values() if s.assumed)
    assert total == bound + assumed, (total, bound, assumed)
    if closed:
        assert assumed == 0
        assert len(sched.waiting_pods) == 0


async def run(ops: list[tuple[Any, ...]]) -> None:
    cluster = InMemoryCluster()
    plugin = Outcomes()
    sched: Scheduler
    serial = 0
    async with Scheduler.open(config(), cluster, registry={"Outcomes": plugin.new}) as sched:
        for item in ops:
            kind = item[0]
            if kind == "add_node":
                name = f"n{item[1]}"
                if cluster.get_node(name) is None:
                    node = make_node(name).capacity(cpu=item[2], memory="8Gi", pods=110).obj()
                    await cluster.add_node(node)
            elif kind == "del_node":
                if cluster.get_node(f"n{item[1]}") is not None:
                    await cluster.delete_node(f"n{item[1]}")
            elif kind == "add_pod":
                key = f"default/p{item[1]}"
                if cluster.get_pod(key) is None:
                    # a re-created pod is a new object: a new uid, as the API server gives
                    serial += 1
                    builder = make_pod(f"p{item[1]}").uid(f"{key}#{serial}")
                    pod = builder.label("mode", item[3]).req(cpu=item[2]).obj()
                    await cluster.add_pod(pod)
            elif kind == "del_pod":
                if cluster.get_pod(f"default/p{item[1]}") is not None:
                    await cluster.delete_pod(f"default/p{item[1]}")
            elif kind in ("allow", "reject"):
                current = cluster.get_pod(f"default/p{item[1]}")
                waiting = sched.waiting_pods.get(current.uid) if current is not None else None
                if waiting is not None:
                    if kind == "allow":
                        waiting.allow("Outcomes")
                    else:
                        waiting.reject("Outcomes", "rejected by test")
            else:
                await anyio.sleep(item[1])
            await anyio.wait_all_tasks_blocked()
            check_invariants(sched, cluster, closed=False)
        await sched.aclose(grace=0.2)
    check_invariants(sched, cluster, closed=True)
    for uid, count in plugin.unreserved.items():
        # every Unreserve matches a Reserve; never twice for one reservation
        assert count <= plugin.reserved.get(uid, 0), uid


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(op, min_size=1, max_size=25))
def test_no_pod_is_lost(ops: list[tuple[Any, ...]]) -> None:
    anyio.run(
        run,
        ops,
        backend="trio",
        backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)},
    )
