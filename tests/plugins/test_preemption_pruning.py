"""Preemption's shortcuts change no outcome.

DefaultPreemption passes over, without a dry run, a node where the pod cannot fit by
resources even with every lower-priority pod gone (and the higher-or-equal priority pods
nominated to it added, as the first Filter pass does), and decides a reprieve without a
Filter run when the Fit filter alone rejects the node. Each test runs the same cluster
with the shortcuts ("pruned") and without them ("unpruned": a handle that shows no
framework, so nothing is assumed about the profile) and expects the same candidates,
victims, statuses and messages, pinned to what upstream's dry runs give.

# pkg/scheduler/framework/preemption/preemption.go (DryRunPreemption, findCandidates)
# pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
# (SelectVictimsOnNode) and framework.go (RunFilterPluginsWithNominatedPods)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from ksched.api import Node, Pod
from ksched.cluster import InMemoryCluster
from ksched.framework import Code, CycleState, NodeInfo, NodeToStatus, Status
from ksched.plugins.default_preemption import MSG_NO_VICTIMS, Candidate, DefaultPreemption
from ksched.plugins.node_resources_fit import NodeResourcesFit
from ksched.scheduler import Scheduler
from ksched.testing import FakeHandle, make_node, make_pod

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


def node(name: str, cpu: str, pods: int = 110) -> Node:
    return make_node(name).capacity(cpu=cpu, memory="8Gi", pods=pods).obj()


def running(name: str, node_name: str, priority: int, cpu: str, *, start: float = 0.0) -> Pod:
    b = make_pod(name).priority(priority).req(cpu=cpu).node(node_name).start_time(start)
    return b.obj()


def pending(name: str, priority: int, cpu: str) -> Pod:
    return make_pod(name).priority(priority).req(cpu=cpu).obj()


class Handle(FakeHandle):
    """Nodes and running pods; Filter is NodeResourcesFit run as upstream's two passes
    (first with the higher-or-equal priority nominated pods added). With ``framework``
    the handle shows a profile that runs NodeResourcesFit at Filter and no PreFilter
    extensions, which lets preemption take its shortcuts."""

    def __init__(
        self,
        nodes: Iterable[Node],
        pods: Iterable[Pod],
        *,
        nominated: Mapping[str, Sequence[Pod]] | None = None,
        framework: bool,
    ) -> None:
        nodes, pods = list(nodes), list(pods)
        self.fit = NodeResourcesFit()
        super().__init__(
            [*nodes, *pods],
            nodes=nodes,
            pods=pods,
            nominated=nominated,
            plugins=[self.fit] if framework else (),
            filters=[self.fit],
            extensions_active=not framework,
            now=1000.0,
        )
        self.infos = list(self.snapshot.list())
        self.filter_runs = 0

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        self.filter_runs += 1
        return await super().run_filter_plugins_with_nominated_pods(state, pod, node_info)

    async def dry_run(self, preemptor: Pod) -> tuple[list[Candidate], NodeToStatus, str | None]:
        plugin = DefaultPreemption.new(None, self)
        plugin.arithmetic_dry_runs = False  # pruning and Fit reprieves only
        state = CycleState()
        self.fit.pre_filter(state, preemptor, self.infos)
        return await plugin.dry_run_preemption(state, preemptor, self.infos, [], 0, len(self.infos))


def summary(candidates: Sequence[Candidate]) -> list[tuple[str, list[str], int]]:
    return [
        (c.name, [p.name for p in c.victims.pods], c.victims.num_pdb_violations) for c in candidates
    ]


def reasons(node_statuses: NodeToStatus) -> dict[str, tuple[Code, tuple[str, ...]]]:
    return {name: (s.code, s.reasons) for name, s in node_statuses.items()}


async def both(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    preemptor: Pod,
    nominated: Mapping[str, Sequence[Pod]] | None = None,
) -> tuple[Any, Any, Handle, Handle]:
    """The dry run with the shortcuts and without, and the two handles."""
    pruned = Handle(nodes, pods, nominated=nominated, framework=True)
    unpruned = Handle(nodes, pods, nominated=nominated, framework=False)
    return await pruned.dry_run(preemptor), await unpruned.dry_run(preemptor), pruned, unpruned


# ---- dry runs ------------------------------------------------------------------------------


async def test_node_full_by_resources_is_passed_over_feasible_one_is_candidate() -> None:
    """n-full holds a pod as important as the preemptor: with its low pod gone 1 cpu is
    free, short of 2. n-ok looks as full but frees 4 cpu: the candidate, with the least
    important pod as the only victim (the more important one is reprieved)."""
    nodes = [node("n-full", "4"), node("n-ok", "4")]
    pods = [
        running("peer", "n-full", HIGH, "3"),
        running("lo1", "n-full", LOW, "1"),
        running("lo2", "n-ok", LOW, "2"),
        running("mid", "n-ok", MID, "2"),
    ]
    got, want, pruned, unpruned = await both(nodes, pods, pending("p", HIGH, "2"))
    assert summary(got[0]) == summary(want[0]) == [("n-ok", ["lo2"], 0)]
    assert got[2] is want[2] is None
    # Unpruned: 1 Filter run on n-full, 3 on n-ok (all gone, mid back, lo2 back).
    assert unpruned.filter_runs == 4
    # Pruned: n-full is passed over; lo2's reprieve is decided by the Fit comparisons.
    assert pruned.filter_runs == 2


async def test_pruned_nodes_get_their_dry_run_statuses_when_no_candidate() -> None:
    """Without any candidate, the statuses (read for the FitError message) are the dry
    runs' own, passed-over nodes included."""
    nodes = [node("n1", "4"), node("n2", "4", pods=2), node("n3", "1")]
    pods = [
        running("peer1", "n1", HIGH, "3"),
        running("lo1", "n1", LOW, "1"),
        running("peer2", "n2", HIGH, "1"),
        running("peer3", "n2", HIGH, "1"),
        running("peer4", "n3", HIGH, "1"),
    ]
    got, want, pruned, _ = await both(nodes, pods, pending("p", HIGH, "2"))
    assert got[0] == want[0] == []
    assert reasons(got[1]) == reasons(want[1])
    no_victims = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NO_VICTIMS,))
    assert reasons(got[1]) == {
        "n1": (Code.UNSCHEDULABLE, ("Insufficient cpu",)),
        "n2": no_victims,
        "n3": no_victims,
    }
    assert list(got[1].items()) == list(want[1].items())  # same order too
    assert pruned.filter_runs == 1  # n1's dry run, done after all


async def test_node_filled_by_nominated_pod_is_passed_over() -> None:
    """Room freed on n-nom is taken by a more important pod nominated there (the first
    Filter pass adds it), so only n-ok is a candidate."""
    nodes = [node("n-nom", "4"), node("n-ok", "4")]
    pods = [
        running("a", "n-nom", LOW, "2"),
        running("b", "n-nom", LOW, "2"),
        running("c", "n-ok", LOW, "2", start=1.0),
        running("d", "n-ok", LOW, "2", start=2.0),
    ]
    nominated = {"n-nom": [pending("q", HIGH + 1, "3")]}
    got, want, pruned, unpruned = await both(nodes, pods, pending("p", HIGH, "2"), nominated)
    # c started first: more important, reprieved; d goes.
    assert summary(got[0]) == summary(want[0]) == [("n-ok", ["d"], 0)]
    assert pruned.filter_runs < unpruned.filter_runs


async def test_reprieve_order_and_victims_unchanged_by_fit_shortcut() -> None:
    """Mixed sizes and priorities: the reprieve walks the same pods in the same order
    and keeps out the same ones whether the Fit comparisons or a Filter run decide."""
    nodes = [node("n1", "8"), node("n2", "8")]
    pods = [
        running("n1-a", "n1", 10, "3"),
        running("n1-b", "n1", 20, "1"),
        running("n1-c", "n1", 30, "2"),
        running("n1-d", "n1", 40, "2"),
        running("n2-a", "n2", 5, "4"),
        running("n2-b", "n2", 50, "4"),
        make_pod("n2-port").priority(1).req(cpu="0").host_port(8080).node("n2").obj(),
    ]
    got, want, _, _ = await both(nodes, pods, pending("p", HIGH, "5"))
    assert summary(got[0]) == summary(want[0])
    # n1, 8 cpu free for 5: d back (6 free), c out (4 < 5), b back (5), a out.
    # n2: b out, a out (4 < 5 each time), the 0-cpu pod with a host port back.
    assert summary(got[0]) == [("n1", ["n1-c", "n1-a"], 0), ("n2", ["n2-b", "n2-a"], 0)]


# ---- through the scheduler -------------------------------------------------------------------


@pytest.fixture(params=["pruned", "unpruned"])
def shortcuts(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the Scheduler with preemption's shortcuts, or with a context that has none."""
    if request.param == "unpruned":
        from ksched.plugins import default_preemption

        def no_shortcuts(self: DefaultPreemption, state: CycleState) -> Any:
            return default_preemption._dry_run.DryRunContext(None, True)

        monkeypatch.setattr(DefaultPreemption, "_context", no_shortcuts)
    return str(request.param)


async def test_scheduler_preempts_on_the_node_that_can_fit(shortcuts: str) -> None:
    cluster = InMemoryCluster()
    await cluster.add(
        [
            node("n-full", "4"),
            running("peer", "n-full", HIGH, "3"),
            running("lo1", "n-full", LOW, "1"),
            node("n-ok", "4"),
            running("lo2", "n-ok", LOW, "2"),
            running("mid", "n-ok", MID, "2"),
        ]
    )
    async with Scheduler.open(cluster=cluster, seed=7):
        await cluster.add_pod(pending("p", HIGH, "2"))
        bound = await cluster.wait_bound("default/p", timeout=30)
    assert bound.spec.node_name == "n-ok"
    assert cluster.evicted == ["default/lo2"]


async def test_scheduler_message_when_no_node_can_fit(shortcuts: str) -> None:
    cluster = InMemoryCluster()
    await cluster.add(
        [
            node("n1", "4"),
            running("peer1", "n1", HIGH, "3"),
            running("lo1", "n1", LOW, "1"),
            node("n2", "2"),
            running("peer2", "n2", HIGH, "1"),
            running("lo2", "n2", LOW, "1"),
        ]
    )
    async with Scheduler.open(cluster=cluster, seed=7) as sched:
        await cluster.add_pod(pending("p", HIGH, "2"))
        with anyio.fail_after(30):
            while sched.records.get("default/p") is None or not sched.idle:
                await anyio.sleep(0.005)
        assert sched.queue.where("default/p") == "unschedulable"
        assert cluster.conditions["default/p"]["message"] == (
            "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/2 nodes are "
            "available: 2 Insufficient cpu."
        )
    assert cluster.evicted == []
