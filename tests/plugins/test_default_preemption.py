"""DefaultPreemption: upstream rows of default_preemption_test.go.

# pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go
# (TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate,
# TestPodEligibleToPreemptOthers) and preemption.go
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from ksched._errors import ConfigError
from ksched.api import LabelSelector, Node, ObjectMeta, Pod, PodDisruptionBudget
from ksched.cluster import InMemoryCluster
from ksched.framework import (
    Code,
    CycleState,
    NodeInfo,
    NodeToStatus,
    PostFilterResult,
    Status,
    WaitingPod,
)
from ksched.plugins.default_preemption import (
    Candidate,
    DefaultPreemption,
    DefaultPreemptionArgs,
    Victims,
    disruptions_allowed,
    pick_one_node_for_preemption,
)
from ksched.plugins.node_resources_fit import NodeResourcesFit
from ksched.testing import FakeHandle, make_node, make_pod

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500", "pods": "32"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400", "pods": "32"}
NOW = 1000.0

UNSCHEDULABLE = Status(Code.UNSCHEDULABLE)
UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


class _FailingCluster(InMemoryCluster):
    async def evict(self, pod: Pod) -> None:
        raise RuntimeError("the API server is away")


class PreemptionHandle(FakeHandle):
    """Nodes, running pods and PDBs; Filter is NodeResourcesFit on the node as it is. No
    profile is shown (``plugins_at`` is empty), so preemption takes no shortcut; the
    PreFilter extensions count as active."""

    def __init__(
        self,
        nodes: Iterable[Node],
        pods: Iterable[Pod],
        pdbs: Iterable[PodDisruptionBudget] = (),
        *,
        cluster: InMemoryCluster | None = None,
        nominated: Mapping[str, Sequence[Pod]] | None = None,
        seed: int = 0,
    ) -> None:
        nodes, pods = list(nodes), list(pods)
        super().__init__(
            [*nodes, *pods, *pdbs],
            nodes=nodes,
            pods=pods,
            cluster=cluster,
            nominated=nominated,
            extensions_active=True,
            now=NOW,
            seed=seed,
            parallelism=1,
        )
        self.fit = NodeResourcesFit.new(None, self)
        self.filters = [self.fit]

    async def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        # These cases filter the node as it is: the nominated pods are not added.
        return await self.run_filter_plugins(state, pod, node_info)

    def plugin(self, args: Mapping[str, Any] | None = None) -> DefaultPreemption:
        return DefaultPreemption.new(args, self)

    def state_for(self, pod: Pod) -> CycleState:
        state = CycleState()
        self.fit.pre_filter(state, pod, self.snapshot.list())
        return state


def pod(
    name: str,
    priority: int | None = None,
    node: str | None = None,
    req: Mapping[str, str] | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    start: float | None = None,
) -> Pod:
    b = make_pod(name)
    if priority is not None:
        b = b.priority(priority)
    if node is not None:
        b = b.node(node)
    if req:
        b = b.req(**req)
    if labels:
        b = b.labels(labels)
    if start is not None:
        b = b.start_time(start)
    return b.obj()


def node(name: str, res: Mapping[str, str]) -> Node:
    return make_node(name).resources(res).obj()


def statuses(absent: Status = UNRESOLVABLE, **by_node: Status) -> NodeToStatus:
    out = NodeToStatus(absent)
    for name, st in by_node.items():
        out.set(name, st)
    return out


def pdb(
    name: str,
    labels: Mapping[str, str],
    *,
    min_available: int | str | None = None,
    allowed: int | None = None,
) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace="default"),
        selector=LabelSelector(match_labels=dict(labels)),
        min_available=min_available,
        disruptions_allowed=allowed,
    )


# ---- TestPostFilter ---------------------------------------------------------------------

VIOLATING = {"test.kubernetes.io/is-violating-pdb": "violating"}
NON_VIOLATING = {"test.kubernetes.io/is-violating-pdb": "non-violating"}

POST_FILTER_ROWS: list[Any] = [
    pytest.param(
        pod("p", HIGH),
        [pod("p1", None, "node1")],
        [],
        [node("node1", ONE_POD)],
        statuses(node1=UNSCHEDULABLE),
        "node1",
        None,
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        pod("p"),
        [pod("p1", None, "node1")],
        [],
        [node("node1", ONE_POD)],
        statuses(node1=UNSCHEDULABLE),
        "",
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        id="pod with tied priority is still unschedulable",
    ),
    pytest.param(
        pod("p", HIGH),
        [pod("p1", None, "node1")],
        [],
        [node("node1", ONE_POD)],
        statuses(node1=UNRESOLVABLE),
        "",
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        pod("p", HIGH),
        [pod("p1", None, "node1")],
        [],
        [node("node1", ONE_POD)],
        statuses(),
        "",
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="preemption should respect absent NodeToStatusReader entry meaning "
        "UnschedulableAndUnresolvable",
    ),
    pytest.param(
        pod("p", MID),
        [pod("p1", HIGH, "node1"), pod("p2", LOW, "node2")],
        [],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        statuses(node1=UNSCHEDULABLE, node2=UNSCHEDULABLE),
        "node2",
        None,
        id="pod can be made schedulable on one node",
    ),
    pytest.param(
        pod("p", VERY_HIGH),
        [
            pod("p1", HIGH, "node1", labels=NON_VIOLATING),
            pod("p2", LOW, "node1", labels=VIOLATING),
            pod("p3", MID, "node2", labels=VIOLATING),
        ],
        [
            pdb("violating-pdb", VIOLATING, min_available="100%"),
            pdb("non-violating-pdb", NON_VIOLATING, min_available=0, allowed=2**31 - 1),
        ],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        statuses(node1=UNSCHEDULABLE, node2=UNSCHEDULABLE),
        "node2",
        None,
        id="pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        pod("p", HIGH, req=LARGE),
        [pod("p1", None, "node1"), pod("p2", None, "node2")],
        [],
        [node("node1", NODE_RES), node("node2", NODE_RES)],
        statuses(node1=UNSCHEDULABLE, node2=UNSCHEDULABLE),
        "",
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
        id="no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        pod("p", HIGH, req=LARGE),
        [pod("p1", HIGH, "node1"), pod("p2", None, "node2"), pod("p3", HIGH, "node3")],
        [],
        [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        statuses(node1=UNSCHEDULABLE, node2=UNSCHEDULABLE, node3=UNSCHEDULABLE),
        "",
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
        "2 No preemption victims found for incoming pod.",
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough "
        "CPU resource",
    ),
    pytest.param(
        pod("p", HIGH, req=LARGE),
        [pod("p1", None, "node1"), pod("p2", None, "node2")],
        [],
        [node(f"node{i}", NODE_RES) for i in (1, 2, 3, 4)],
        statuses(node1=UNSCHEDULABLE, node2=UNSCHEDULABLE, node4=UNRESOLVABLE),
        "",
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
        "2 Preemption is not helpful for scheduling.",
        id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes "
        "and 2 nodes don't have enough CPU resource",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("preemptor", "pods", "pdbs", "nodes", "filtered", "want_node", "want_message"),
    POST_FILTER_ROWS,
)
async def test_post_filter(
    preemptor: Pod,
    pods: list[Pod],
    pdbs: list[PodDisruptionBudget],
    nodes: list[Node],
    filtered: NodeToStatus,
    want_node: str,
    want_message: str | None,
) -> None:
    handle = PreemptionHandle(nodes, [*pods, preemptor], pdbs)
    plugin = handle.plugin()
    result, status = await plugin.post_filter(handle.state_for(preemptor), preemptor, filtered)
    assert result == PostFilterResult(nominated_node_name=want_node)
    if want_message is None:
        assert status is None
    else:
        assert status == Status(Code.UNSCHEDULABLE, (want_message,))


@pytest.mark.anyio
async def test_post_filter_evicts_victims_and_records_events() -> None:
    preemptor = pod("p", HIGH)
    handle = PreemptionHandle([node("node1", ONE_POD)], [pod("p1", None, "node1"), preemptor])
    result, _ = await handle.plugin().post_filter(
        handle.state_for(preemptor), preemptor, statuses(node1=UNSCHEDULABLE)
    )
    assert result == PostFilterResult(nominated_node_name="node1")
    assert handle.cluster.evicted == ["default/p1"]
    assert handle.cluster.get_pod("default/p1") is None
    assert [(e.regarding, e.reason, e.note) for e in handle.events] == [
        ("default/p1", "Preempted", "Preempted by pod default/p on node node1")
    ]


@pytest.mark.anyio
async def test_post_filter_policy_never() -> None:
    """TestPreempt/"no preempting in pod": nil result, nothing deleted."""
    preemptor = make_pod("p").priority(HIGH).preemption_policy("Never").obj()
    handle = PreemptionHandle([node("node1", ONE_POD)], [pod("p1", LOW, "node1"), preemptor])
    result, status = await handle.plugin().post_filter(
        handle.state_for(preemptor), preemptor, statuses(node1=UNSCHEDULABLE)
    )
    assert result is None
    assert status == Status(
        Code.UNSCHEDULABLE, ("preemption: not eligible due to preemptionPolicy=Never.",)
    )
    assert handle.cluster.evicted == []


@pytest.mark.anyio
async def test_failed_eviction_is_an_error_and_nominates_nothing() -> None:
    preemptor = pod("p", HIGH)
    handle = PreemptionHandle(
        [node("node1", ONE_POD)], [pod("p1", None, "node1"), preemptor], cluster=_FailingCluster()
    )
    result, status = await handle.plugin().post_filter(
        handle.state_for(preemptor), preemptor, statuses(node1=UNSCHEDULABLE)
    )
    assert result is None
    assert status is not None and status.code is Code.ERROR
    assert status.message == "preemption: evicting pod default/p1: the API server is away"
    assert handle.cluster.get_pod("default/p1") is not None


@pytest.mark.anyio
async def test_waiting_victim_is_rejected_not_evicted() -> None:
    preemptor = pod("p", HIGH)
    victim = pod("p1", None, "node1")
    handle = PreemptionHandle([node("node1", ONE_POD)], [victim, preemptor])
    handle.waiting[victim.uid] = WaitingPod(victim, "node1", {"Coscheduling": 10.0})
    result, _ = await handle.plugin().post_filter(
        handle.state_for(preemptor), preemptor, statuses(node1=UNSCHEDULABLE)
    )
    assert result == PostFilterResult(nominated_node_name="node1")
    assert handle.rejected == [(victim.uid, "DefaultPreemption", "preempted")]
    assert handle.cluster.evicted == []


@pytest.mark.anyio
async def test_lower_priority_nominations_on_the_node_are_cleared() -> None:
    """prepareCandidate / getLowerPriorityNominatedPods."""
    preemptor = pod("p", HIGH)
    low = make_pod("low").priority(LOW).nominated("node1").obj()
    peer = make_pod("peer").priority(HIGH).nominated("node1").obj()
    handle = PreemptionHandle(
        [node("node1", ONE_POD)],
        [pod("p1", None, "node1"), preemptor, low, peer],
        nominated={"node1": [low, peer]},
    )
    await handle.plugin().post_filter(
        handle.state_for(preemptor), preemptor, statuses(node1=UNSCHEDULABLE)
    )
    cleared = handle.cluster.get_pod("default/low")
    kept = handle.cluster.get_pod("default/peer")
    assert cleared is not None and cleared.status.nominated_node_name is None
    assert kept is not None and kept.status.nominated_node_name == "node1"


# ---- TestDryRunPreemption -----------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("pods", "preemptor", "want"),
    [
        pytest.param(
            [
                pod("p1.1", LOW, "node1", SMALL),
                pod("p1.2", MID, "node1", LARGE),
                pod("p2", MID, "node2", LARGE),
            ],
            pod("p", HIGH, req=LARGE),
            {"node1": ["p1.2"], "node2": ["p2"]},
            id="medium priority pod is preempted, but lower priority one stays as it is small",
        ),
        pytest.param(
            [
                pod("p1.1", MID, "node1", SMALL),
                pod("p1.2", LOW, "node1", SMALL),
                pod("p1.3", MID, "node1", MEDIUM),
                pod("p1.4", HIGH, "node1", SMALL),
                pod("p2", HIGH, "node2", LARGE),
            ],
            pod("p", HIGH, req=LARGE),
            {"node1": ["p1.2", "p1.3"]},
            id="mixed priority pods are preempted",
        ),
        pytest.param(
            [pod("p1", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)],
            pod("p", HIGH, req=LARGE),
            {"node1": ["p1"], "node2": ["p2"]},
            id="a pod that fits on both nodes when lower priority pods are preempted",
        ),
    ],
)
async def test_dry_run_preemption(
    pods: list[Pod], preemptor: Pod, want: dict[str, list[str]]
) -> None:
    nodes = [node("node1", VERY_LARGE), node("node2", VERY_LARGE)]
    handle = PreemptionHandle(nodes, [*pods, preemptor])
    plugin = handle.plugin()
    candidates, _, error = await plugin.dry_run_preemption(
        handle.state_for(preemptor), preemptor, handle.snapshot.list(), [], 0, 2
    )
    assert error is None
    got = {c.name: sorted(p.name for p in c.victims.pods) for c in candidates}
    assert got == want


@pytest.mark.anyio
async def test_dry_run_leaves_snapshot_untouched() -> None:
    preemptor = pod("p", HIGH, req=LARGE)
    handle = PreemptionHandle(
        [node("node1", VERY_LARGE)], [pod("p1", MID, "node1", LARGE), preemptor]
    )
    before = [p.pod.name for p in handle.snapshot.list()[0].pods]
    await handle.plugin().dry_run_preemption(
        handle.state_for(preemptor), preemptor, handle.snapshot.list(), [], 0, 1
    )
    assert [p.pod.name for p in handle.snapshot.list()[0].pods] == before


@pytest.mark.anyio
async def test_dry_run_looks_past_num_candidates_until_non_violating() -> None:
    """TestDryRunPreemption/"preemption looks past numCandidates until a non-PDB violating
    node is found" (offset 0: node1 violates, node2 does not)."""
    nodes = [node("node1", VERY_LARGE), node("node2", VERY_LARGE)]
    pods = [pod("v1", LOW, "node1", LARGE, labels={"app": "foo"}), pod("v2", MID, "node2", LARGE)]
    preemptor = pod("p", HIGH, req=LARGE)
    handle = PreemptionHandle(nodes, [*pods, preemptor])
    plugin = handle.plugin({"minCandidateNodesPercentage": 1, "minCandidateNodesAbsolute": 1})
    budgets = [(pdb("pdb", {"app": "foo"}, min_available=1, allowed=0), 0)]
    offset, num = 0, plugin.calculate_num_candidates(2)
    assert num == 1
    candidates, _, _ = await plugin.dry_run_preemption(
        handle.state_for(preemptor), preemptor, handle.snapshot.list(), budgets, offset, num
    )
    assert [(c.name, c.victims.num_pdb_violations) for c in candidates] == [
        ("node2", 0),
        ("node1", 1),
    ]
    assert plugin.select_candidate(candidates) == candidates[0]


# ---- TestSelectBestCandidate --------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("pods", "expected"),
    [
        pytest.param(
            [
                pod("p1.1", MID, "node1", MEDIUM, start=0),
                pod("p1.2", MID, "node1", LARGE, start=0),
                pod("p2.1", MID, "node2", MEDIUM, start=0),
                pod("p2.2", LOW, "node2", MEDIUM, start=0),
                pod("p3.1", LOW, "node3", MEDIUM, start=0),
                pod("p3.2", LOW, "node3", MEDIUM, start=0),
            ],
            ["node3"],
            id="node with min highest priority pod is picked",
        ),
        pytest.param(
            [
                pod("p1.1", MID, "node1", MEDIUM, start=4e-9),
                pod("p1.2", MID, "node1", MEDIUM, start=2e-9),
                pod("p2.1", MID, "node2", MEDIUM, start=5e-9),
                pod("p2.2", MID, "node2", MEDIUM, start=1e-9),
                pod("p3.1", MID, "node3", MEDIUM, start=3e-9),
                pod("p3.2", MID, "node3", MEDIUM, start=6e-9),
            ],
            ["node3"],
            id="same priority, same number of victims, different start time for all pods",
        ),
        pytest.param(
            [
                pod("p1.1", LOW, "node1", MEDIUM, start=4e-9),
                pod("p1.2", MID, "node1", MEDIUM, start=2e-9),
                pod("p2.1", MID, "node2", MEDIUM, start=6e-9),
                pod("p2.2", LOW, "node2", MEDIUM, start=1e-9),
                pod("p3.1", LOW, "node3", MEDIUM, start=3e-9),
                pod("p3.2", MID, "node3", MEDIUM, start=5e-9),
            ],
            ["node2"],
            id="different priority, same number of victims, different start time for all pods",
        ),
        pytest.param(
            [pod("p1", MID, "node1", LARGE), pod("p2", MID, "node2", LARGE)],
            ["node1", "node2"],
            id="a pod that fits on both nodes when lower priority pods are preempted",
        ),
    ],
)
async def test_select_best_candidate(pods: list[Pod], expected: list[str]) -> None:
    nodes = [node(f"node{i}", VERY_LARGE) for i in (1, 2, 3)]
    preemptor = pod("p", HIGH, req=VERY_LARGE)
    handle = PreemptionHandle(nodes, [*pods, preemptor])
    plugin = handle.plugin()
    infos = handle.snapshot.list()
    offset, num = plugin.get_offset_and_num_candidates(len(infos))
    candidates, _, _ = await plugin.dry_run_preemption(
        handle.state_for(preemptor), preemptor, infos, [], offset, num
    )
    best = plugin.select_candidate(candidates)
    assert best is not None and best.name in expected


def _victims(*pods: Pod, violations: int = 0) -> Victims:
    return Victims(tuple(pods), violations)


@pytest.mark.parametrize(
    ("candidates", "want"),
    [
        pytest.param(
            [
                Candidate("n1", _victims(pod("a", LOW), violations=1)),
                Candidate("n2", _victims(pod("b", MID))),
            ],
            "n2",
            id="fewest PDB violations first",
        ),
        pytest.param(
            [
                Candidate("n1", _victims(pod("a", MID), pod("b", MID))),
                Candidate("n2", _victims(pod("c", MID), pod("d", LOW))),
            ],
            "n2",
            id="min sum of priorities",
        ),
        pytest.param(
            [
                Candidate("n1", _victims(pod("a", NEG), pod("b", NEG))),
                Candidate("n2", _victims(pod("c", NEG))),
            ],
            "n2",
            id="negative priorities: fewer victims weigh less",
        ),
        pytest.param(
            [
                Candidate("n1", _victims(pod("a", MID, start=5))),
                Candidate("n2", _victims(pod("b", MID, start=5))),
            ],
            "n1",
            id="full tie: the first candidate",
        ),
    ],
)
def test_pick_one_node_for_preemption(candidates: list[Candidate], want: str) -> None:
    assert pick_one_node_for_preemption(candidates, NOW) == want


# ---- TestPodEligibleToPreemptOthers -------------------------------------------------------


@pytest.mark.parametrize(
    ("preemptor", "pods", "nominated_status", "expected", "message"),
    [
        pytest.param(
            make_pod("p_with_nominated_node").priority(HIGH).nominated("node1").obj(),
            [make_pod("p1").priority(LOW).node("node1").terminating().obj()],
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",)),
            True,
            "",
            id="Pod with nominated node",
        ),
        pytest.param(
            make_pod("p_without_status").priority(HIGH).nominated("node1").obj(),
            [make_pod("p1").priority(LOW).node("node1").terminating().obj()],
            None,
            False,
            "not eligible due to a terminating pod on the nominated node.",
            id="Pod with nominated node, but without nominated node status",
        ),
        pytest.param(
            make_pod("p_without_nominated_node").priority(HIGH).obj(),
            [],
            None,
            True,
            "",
            id="Pod without nominated node",
        ),
        pytest.param(
            make_pod("p_with_preempt_never_policy").priority(HIGH).preemption_policy("Never").obj(),
            [],
            None,
            False,
            "not eligible due to preemptionPolicy=Never.",
            id="Pod with 'PreemptNever' preemption policy",
        ),
        pytest.param(
            make_pod("p").priority(HIGH).nominated("node1").obj(),
            [make_pod("p1").priority(HIGH).node("node1").terminating().obj()],
            None,
            True,
            "",
            id="terminating pod of equal priority does not block",
        ),
    ],
)
def test_pod_eligible_to_preempt_others(
    preemptor: Pod,
    pods: list[Pod],
    nominated_status: Status | None,
    expected: bool,
    message: str,
) -> None:
    handle = PreemptionHandle([node("node1", VERY_LARGE)], pods)
    assert handle.plugin().pod_eligible_to_preempt_others(preemptor, nominated_status) == (
        expected,
        message,
    )


# ---- args -------------------------------------------------------------------------------


def test_default_args() -> None:
    assert DefaultPreemptionArgs.from_dict(None) == DefaultPreemptionArgs(10, 100)
    assert DefaultPreemptionArgs.from_dict({}) == DefaultPreemptionArgs(10, 100)


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        pytest.param(
            {"minCandidateNodesPercentage": 101},
            "args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
            id="percentage above 100",
        ),
        pytest.param(
            {"minCandidateNodesAbsolute": -1},
            "args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
            id="negative absolute",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "cannot be zero at the same time as minCandidateNodesAbsolute",
            id="both zero",
        ),
        pytest.param({"minCandidateNodes": 1}, "unknown field", id="unknown field"),
    ],
)
def test_invalid_args(raw: dict[str, Any], error: str) -> None:
    with pytest.raises(ConfigError, match="DefaultPreemption") as info:
        DefaultPreemptionArgs.from_dict(raw)
    assert error in str(info.value)


@pytest.mark.parametrize(
    ("pct", "absolute", "nodes", "want"),
    [(10, 100, 50, 50), (10, 100, 5000, 500), (1, 1, 2, 1), (0, 5, 3, 3), (50, 0, 7, 3)],
)
def test_calculate_num_candidates(pct: int, absolute: int, nodes: int, want: int) -> None:
    handle = PreemptionHandle([], [])
    plugin = handle.plugin(
        {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}
    )
    assert plugin.calculate_num_candidates(nodes) == want


# ---- PDB budgets ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("budget", "want"),
    [
        pytest.param(pdb("b", {"app": "x"}, min_available=2), 1, id="minAvailable int"),
        pytest.param(pdb("b", {"app": "x"}, min_available="100%"), 0, id="minAvailable 100%"),
        pytest.param(pdb("b", {"app": "x"}, min_available="50%"), 1, id="minAvailable 50%"),
        pytest.param(
            PodDisruptionBudget(
                metadata=ObjectMeta(name="b", namespace="default"),
                selector=LabelSelector(match_labels={"app": "x"}),
                max_unavailable=1,
            ),
            0,
            id="maxUnavailable int: the pending pod counts as expected, not healthy",
        ),
        pytest.param(pdb("b", {"app": "x"}, allowed=7), 7, id="status as written"),
    ],
)
def test_disruptions_allowed(budget: PodDisruptionBudget, want: int) -> None:
    pods = [
        pod("a", node="n1", labels={"app": "x"}),
        pod("b", node="n1", labels={"app": "x"}),
        pod("c", node="n1", labels={"app": "x"}),
        pod("pending", labels={"app": "x"}),
        pod("other", node="n1", labels={"app": "y"}),
    ]
    assert disruptions_allowed(budget, pods) == want
