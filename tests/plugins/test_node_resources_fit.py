"""NodeResourcesFit: upstream fit_test.go, least_allocated_test.go, most_allocated_test.go and
requested_to_capacity_ratio_test.go tables.

Rows that need pod-level resources, DRA extended resources or a disabled SidecarContainers /
InPlacePodVerticalScaling / SchedulingQueueHint gate are left out: ksched models none of them
(the gates are on, as in current kube-scheduler).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from ksched._errors import ConfigError
from ksched.api import Container, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from ksched.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    QueueingHint,
    Status,
)
from ksched.plugins.node_resources_fit import (
    InsufficientResource,
    NodeResourcesFit,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    broken_linear_function,
    compute_pod_resource_request,
    fits,
    fits_request,
    is_extended_resource_name,
    is_scalar_resource_name,
)
from ksched.plugins.node_resources_fit._plugin import _requested_resources_increased
from ksched.testing import FakeHandle, make_node, make_pod

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_PAGE_A = "hugepages-2Mi"
DRA_EXT = "extended.resource.dra.io/something"
EXTENDED_RES = "abc.com/xyz"

CPU_MEM = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
EXTENDED_RESOURCE_SET = (*CPU_MEM, ResourceSpec(EXTENDED_RES, 1))


# ---- fixtures in the shape of the upstream helpers ----------------------------------------


def usage(
    cpu: int = 0, memory: int = 0, storage: int = 0, scalars: Mapping[str, int] | None = None
) -> dict[str, int]:
    """A container's requests as upstream's newResourcePod writes them: explicit zeros."""
    reqs = {"cpu": cpu, "memory": memory, "pods": 0, "ephemeral-storage": storage}
    reqs.update(scalars or {})
    return reqs


_counter = iter(range(10**9))


def resource_pod(
    *containers: Mapping[str, int],
    init: Sequence[Mapping[str, int]] = (),
    overhead: Mapping[str, int] | None = None,
) -> Pod:
    """upstream newResourcePod / newResourceInitPod / newResourceOverheadPod."""
    name = f"pod-{next(_counter)}"
    return Pod(
        metadata=ObjectMeta(name=name, uid=name),
        spec=PodSpec(
            containers=tuple(
                Container(name=f"c{i}", requests=dict(r)) for i, r in enumerate(containers)
            ),
            init_containers=tuple(
                Container(name=f"i{i}", requests=dict(r)) for i, r in enumerate(init)
            ),
            overhead=dict(overhead or {}),
        ),
    )


def resource_node(
    allocatable: Mapping[str, int], capacity: Mapping[str, int] | None = None
) -> Node:
    return Node(
        metadata=ObjectMeta(name="node", namespace=""),
        status=NodeStatus(
            allocatable=dict(allocatable),
            capacity=dict(allocatable if capacity is None else capacity),
        ),
    )


def make_resources(
    cpu: int, memory: int, pods: int, ext_a: int, storage: int, hp: int
) -> dict[str, int]:
    return {
        "cpu": cpu,
        "memory": memory,
        "pods": pods,
        EXT_A: ext_a,
        "ephemeral-storage": storage,
        HUGE_PAGE_A: hp,
    }


def cap_node(name: str, resources: Mapping[str, str]) -> Node:
    """st.MakeNode().Name(name).Capacity(resources): capacity = allocatable, pods 32."""
    return make_node(name).resources({"pods": "32", **resources}).obj()


def req_pod(*containers: Mapping[str, str], node: str | None = None) -> Pod:
    """st.MakePod().Req(...).Req(...): one container per request map."""
    b = make_pod(f"pod-{next(_counter)}")
    for reqs in containers:
        b.container(requests=reqs)
    if node is not None:
        b.node(node)
    return b.obj()


def snapshot(nodes: Sequence[Node], pods: Sequence[Pod] = ()) -> list[NodeInfo]:
    return [NodeInfo.of(n, [p for p in pods if p.spec.node_name == n.name]) for n in nodes]


def run_filter(plugin: NodeResourcesFit, pod: Pod, node_info: NodeInfo) -> Status | None:
    state = CycleState()
    plugin.pre_filter(state, pod, [node_info])
    return plugin.filter(state, pod, node_info)


def run_score(
    plugin: NodeResourcesFit, pod: Pod, infos: Sequence[NodeInfo], pre_score: bool = True
) -> list[int]:
    state = CycleState()
    if pre_score:
        plugin.pre_score(state, pod, infos)
    return [plugin.score(state, pod, ni) for ni in infos]


def reason(name: str) -> str:
    return f"Insufficient {name}"


U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# ---- TestEnoughRequests ------------------------------------------------------------------

# (name, pod, existing pod, args, want status (code, reasons) or None, want insufficient)
ENOUGH_REQUESTS: list[tuple[str, Pod, Pod, NodeResourcesFitArgs, Any, list[InsufficientResource]]]
ENOUGH_REQUESTS = [
    ("no resources requested always fits", resource_pod(), resource_pod(usage(10, 20)),
     NodeResourcesFitArgs(), None, []),
    ("too many resources fails", resource_pod(usage(1, 1)), resource_pod(usage(10, 20)),
     NodeResourcesFitArgs(), (U, [reason("cpu"), reason("memory")]),
     [InsufficientResource("cpu", reason("cpu"), 1, 10, 10),
      InsufficientResource("memory", reason("memory"), 1, 20, 20)]),
    ("too many resources fails due to init container cpu",
     resource_pod(usage(1, 1), init=[usage(3, 1)]), resource_pod(usage(8, 19)),
     NodeResourcesFitArgs(), (U, [reason("cpu")]),
     [InsufficientResource("cpu", reason("cpu"), 3, 8, 10)]),
    ("too many resources fails due to highest init container cpu",
     resource_pod(usage(1, 1), init=[usage(3, 1), usage(2, 1)]), resource_pod(usage(8, 19)),
     NodeResourcesFitArgs(), (U, [reason("cpu")]),
     [InsufficientResource("cpu", reason("cpu"), 3, 8, 10)]),
    ("too many resources fails due to init container memory",
     resource_pod(usage(1, 1), init=[usage(1, 3)]), resource_pod(usage(9, 19)),
     NodeResourcesFitArgs(), (U, [reason("memory")]),
     [InsufficientResource("memory", reason("memory"), 3, 19, 20)]),
    ("too many resources fails due to highest init container memory",
     resource_pod(usage(1, 1), init=[usage(1, 3), usage(1, 2)]), resource_pod(usage(9, 19)),
     NodeResourcesFitArgs(), (U, [reason("memory")]),
     [InsufficientResource("memory", reason("memory"), 3, 19, 20)]),
    ("init container fits because it's the max, not sum, of containers and init containers",
     resource_pod(usage(1, 1), init=[usage(1, 1)]), resource_pod(usage(9, 19)),
     NodeResourcesFitArgs(), None, []),
    ("multiple init containers fit because it's the max, not sum, of containers and init "
     "containers",
     resource_pod(usage(1, 1), init=[usage(1, 1), usage(1, 1)]), resource_pod(usage(9, 19)),
     NodeResourcesFitArgs(), None, []),
    ("both resources fit", resource_pod(usage(1, 1)), resource_pod(usage(5, 5)),
     NodeResourcesFitArgs(), None, []),
    ("one resource memory fits", resource_pod(usage(2, 1)), resource_pod(usage(9, 5)),
     NodeResourcesFitArgs(), (U, [reason("cpu")]),
     [InsufficientResource("cpu", reason("cpu"), 2, 9, 10)]),
    ("one resource cpu fits", resource_pod(usage(1, 2)), resource_pod(usage(5, 19)),
     NodeResourcesFitArgs(), (U, [reason("memory")]),
     [InsufficientResource("memory", reason("memory"), 2, 19, 20)]),
    ("equal edge case", resource_pod(usage(5, 1)), resource_pod(usage(5, 19)),
     NodeResourcesFitArgs(), None, []),
    ("equal edge case for init container", resource_pod(usage(4, 1), init=[usage(5, 1)]),
     resource_pod(usage(5, 19)), NodeResourcesFitArgs(), None, []),
    ("extended resource fits", resource_pod(usage(scalars={EXT_A: 1})), resource_pod(usage()),
     NodeResourcesFitArgs(), None, []),
    ("extended resource fits for init container",
     resource_pod(usage(), init=[usage(scalars={EXT_A: 1})]), resource_pod(usage()),
     NodeResourcesFitArgs(), None, []),
    ("extended resource capacity enforced", resource_pod(usage(1, 1, scalars={EXT_A: 10})),
     resource_pod(usage(scalars={EXT_A: 0})), NodeResourcesFitArgs(), (UU, [reason(EXT_A)]),
     [InsufficientResource(EXT_A, reason(EXT_A), 10, 0, 5, unresolvable=True)]),
    ("extended resource capacity enforced for init container",
     resource_pod(usage(), init=[usage(1, 1, scalars={EXT_A: 10})]),
     resource_pod(usage(scalars={EXT_A: 0})), NodeResourcesFitArgs(), (UU, [reason(EXT_A)]),
     [InsufficientResource(EXT_A, reason(EXT_A), 10, 0, 5, unresolvable=True)]),
    ("extended resource allocatable enforced", resource_pod(usage(1, 1, scalars={EXT_A: 1})),
     resource_pod(usage(scalars={EXT_A: 5})), NodeResourcesFitArgs(), (U, [reason(EXT_A)]),
     [InsufficientResource(EXT_A, reason(EXT_A), 1, 5, 5)]),
    ("extended resource allocatable enforced for init container",
     resource_pod(usage(), init=[usage(1, 1, scalars={EXT_A: 1})]),
     resource_pod(usage(scalars={EXT_A: 5})), NodeResourcesFitArgs(), (U, [reason(EXT_A)]),
     [InsufficientResource(EXT_A, reason(EXT_A), 1, 5, 5)]),
    ("extended resource allocatable enforced for multiple containers",
     resource_pod(usage(1, 1, scalars={EXT_A: 3}), usage(1, 1, scalars={EXT_A: 3})),
     resource_pod(usage(scalars={EXT_A: 2})), NodeResourcesFitArgs(), (UU, [reason(EXT_A)]),
     [InsufficientResource(EXT_A, reason(EXT_A), 6, 2, 5, unresolvable=True)]),
    ("extended resource allocatable admits multiple init containers",
     resource_pod(usage(), init=[usage(1, 1, scalars={EXT_A: 3}), usage(1, 1, scalars={EXT_A: 3})]),
     resource_pod(usage(scalars={EXT_A: 2})), NodeResourcesFitArgs(), None, []),
    ("extended resource allocatable enforced for multiple init containers",
     resource_pod(usage(), init=[usage(1, 1, scalars={EXT_A: 6}), usage(1, 1, scalars={EXT_A: 3})]),
     resource_pod(usage(scalars={EXT_A: 2})), NodeResourcesFitArgs(), (UU, [reason(EXT_A)]),
     [InsufficientResource(EXT_A, reason(EXT_A), 6, 2, 5, unresolvable=True)]),
    ("extended resource allocatable enforced for unknown resource",
     resource_pod(usage(1, 1, scalars={EXT_B: 1})), resource_pod(usage()),
     NodeResourcesFitArgs(), (UU, [reason(EXT_B)]),
     [InsufficientResource(EXT_B, reason(EXT_B), 1, 0, 0, unresolvable=True)]),
    ("extended resource allocatable enforced for unknown resource for init container",
     resource_pod(usage(), init=[usage(1, 1, scalars={EXT_B: 1})]), resource_pod(usage()),
     NodeResourcesFitArgs(), (UU, [reason(EXT_B)]),
     [InsufficientResource(EXT_B, reason(EXT_B), 1, 0, 0, unresolvable=True)]),
    ("kubernetes.io resource capacity enforced",
     resource_pod(usage(1, 1, scalars={K8S_IO_A: 10})), resource_pod(usage()),
     NodeResourcesFitArgs(), (UU, [reason(K8S_IO_A)]),
     [InsufficientResource(K8S_IO_A, reason(K8S_IO_A), 10, 0, 0, unresolvable=True)]),
    ("kubernetes.io resource capacity enforced for init container",
     resource_pod(usage(), init=[usage(1, 1, scalars={K8S_IO_B: 10})]), resource_pod(usage()),
     NodeResourcesFitArgs(), (UU, [reason(K8S_IO_B)]),
     [InsufficientResource(K8S_IO_B, reason(K8S_IO_B), 10, 0, 0, unresolvable=True)]),
    ("hugepages resource capacity enforced",
     resource_pod(usage(1, 1, scalars={HUGE_PAGE_A: 10})),
     resource_pod(usage(scalars={HUGE_PAGE_A: 0})), NodeResourcesFitArgs(),
     (UU, [reason(HUGE_PAGE_A)]),
     [InsufficientResource(HUGE_PAGE_A, reason(HUGE_PAGE_A), 10, 0, 5, unresolvable=True)]),
    ("hugepages resource capacity enforced for init container",
     resource_pod(usage(), init=[usage(1, 1, scalars={HUGE_PAGE_A: 10})]),
     resource_pod(usage(scalars={HUGE_PAGE_A: 0})), NodeResourcesFitArgs(),
     (UU, [reason(HUGE_PAGE_A)]),
     [InsufficientResource(HUGE_PAGE_A, reason(HUGE_PAGE_A), 10, 0, 5, unresolvable=True)]),
    ("hugepages resource allocatable enforced for multiple containers",
     resource_pod(usage(1, 1, scalars={HUGE_PAGE_A: 3}), usage(1, 1, scalars={HUGE_PAGE_A: 3})),
     resource_pod(usage(scalars={HUGE_PAGE_A: 2})), NodeResourcesFitArgs(),
     (UU, [reason(HUGE_PAGE_A)]),
     [InsufficientResource(HUGE_PAGE_A, reason(HUGE_PAGE_A), 6, 2, 5, unresolvable=True)]),
    ("skip checking ignored extended resource", resource_pod(usage(1, 1, scalars={EXT_B: 1})),
     resource_pod(usage()), NodeResourcesFitArgs(ignored_resources=(EXT_B,)), None, []),
    ("resources + pod overhead fits",
     resource_pod(usage(1, 1), overhead={"cpu": 3, "memory": 13}), resource_pod(usage(5, 5)),
     NodeResourcesFitArgs(), None, []),
    ("requests + overhead does not fit for memory",
     resource_pod(usage(1, 1), overhead={"cpu": 1, "memory": 15}), resource_pod(usage(5, 5)),
     NodeResourcesFitArgs(), (U, [reason("memory")]),
     [InsufficientResource("memory", reason("memory"), 16, 5, 20)]),
    ("skip checking ignored extended resource via resource groups",
     resource_pod(usage(1, 1, scalars={EXT_B: 1, K8S_IO_A: 1})), resource_pod(usage()),
     NodeResourcesFitArgs(ignored_resource_groups=("example.com",)),
     (UU, [reason(K8S_IO_A)]),
     [InsufficientResource(K8S_IO_A, reason(K8S_IO_A), 1, 0, 0, unresolvable=True)]),
    ("skip checking extended resource request with quantity zero via resource groups",
     resource_pod(usage(1, 1, scalars={EXT_A: 0})), resource_pod(usage(scalars={EXT_A: 6})),
     NodeResourcesFitArgs(), None, []),
    ("skip checking resource request with quantity zero",
     resource_pod(usage(scalars={EXT_A: 1})), resource_pod(usage(20, 30, scalars={EXT_A: 1})),
     NodeResourcesFitArgs(), None, []),
    ("extended resource backed by DRA not enabled",
     resource_pod(usage(1, 1, scalars={DRA_EXT: 1})), resource_pod(usage()),
     NodeResourcesFitArgs(), (UU, [reason(DRA_EXT)]),
     [InsufficientResource(DRA_EXT, reason(DRA_EXT), 1, 0, 0, unresolvable=True)]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "existing", "args", "want_status", "want_insufficient"),
    [row[1:] for row in ENOUGH_REQUESTS],
    ids=[row[0] for row in ENOUGH_REQUESTS],
)
def test_enough_requests(
    pod: Pod,
    existing: Pod,
    args: NodeResourcesFitArgs,
    want_status: tuple[Code, list[str]] | None,
    want_insufficient: list[InsufficientResource],
) -> None:
    node = resource_node(make_resources(10, 20, 32, 5, 20, 5))
    node_info = NodeInfo.of(node, [existing])
    plugin = NodeResourcesFit(args)
    got = run_filter(plugin, pod, node_info)
    if want_status is None:
        assert got is None
    else:
        assert got is not None
        assert (got.code, list(got.reasons)) == want_status
    insufficient = fits_request(
        compute_pod_resource_request(pod),
        node_info,
        args.ignored_resources,
        args.ignored_resource_groups,
    )
    assert insufficient == want_insufficient


def test_pre_filter_disabled() -> None:
    node_info = NodeInfo.of(resource_node({}))
    got = NodeResourcesFit().filter(CycleState(), resource_pod(), node_info)
    assert got is not None and got.code is Code.ERROR


NOT_ENOUGH_REQUESTS = [
    ("even without specified resources, predicate fails when there's no space for additional pod",
     resource_pod(), resource_pod(usage(10, 20))),
    ("even if both resources fit, predicate fails when there's no space for additional pod",
     resource_pod(usage(1, 1)), resource_pod(usage(5, 5))),
    ("even for equal edge case, predicate fails when there's no space for additional pod",
     resource_pod(usage(5, 1)), resource_pod(usage(5, 19))),
    ("even for equal edge case, predicate fails when there's no space for additional pod due to "
     "init container",
     resource_pod(usage(5, 1), init=[usage(5, 1)]), resource_pod(usage(5, 19))),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "existing"),
    [row[1:] for row in NOT_ENOUGH_REQUESTS],
    ids=[row[0] for row in NOT_ENOUGH_REQUESTS],
)
def test_not_enough_requests(pod: Pod, existing: Pod) -> None:
    node = resource_node(make_resources(10, 20, 1, 0, 0, 0), capacity={})
    got = run_filter(NodeResourcesFit(), pod, NodeInfo.of(node, [existing]))
    assert got == Status(Code.UNSCHEDULABLE, ("Too many pods",))


STORAGE_REQUESTS = [
    ("empty storage requested, and pod fits", resource_pod(usage(1, 1)),
     resource_pod(usage(2, 10)), None),
    ("storage ephemeral local storage request exceeds allocatable",
     resource_pod(usage(storage=25)), resource_pod(usage(2, 2)),
     Status(UU, (reason("ephemeral-storage"),))),
    ("ephemeral local storage is sufficient", resource_pod(usage(storage=5)),
     resource_pod(usage(2, 2, storage=10)), None),
    ("pod fits", resource_pod(usage(storage=10)), resource_pod(usage(2, 2)), None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [row[1:] for row in STORAGE_REQUESTS],
    ids=[row[0] for row in STORAGE_REQUESTS],
)
def test_storage_requests(pod: Pod, existing: Pod, want: Status | None) -> None:
    node = resource_node(make_resources(10, 20, 32, 5, 20, 5))
    assert run_filter(NodeResourcesFit(), pod, NodeInfo.of(node, [existing])) == want


def _sidecar_pod(request: Mapping[str, int] | None, sidecar: Mapping[str, int] | None) -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", uid="p"),
        spec=PodSpec(
            containers=(Container(name="regular", requests=dict(request or {})),),
            init_containers=(
                Container(
                    name="restartable-init", requests=dict(sidecar or {}), restart_policy="Always"
                ),
            ),
        ),
    )


RESTARTABLE_INIT_CONTAINERS = [
    ("allow pod without restartable init containers if sidecar containers is enabled",
     Pod(metadata=ObjectMeta(name="p"), spec=PodSpec(containers=(Container(name="regular"),))),
     None),
    ("allow pod with restartable init containers if sidecar containers is enabled",
     _sidecar_pod(None, None), None),
    ("allow pod if the total requested resources do not exceed the node's allocatable resources",
     _sidecar_pod({"cpu": 1}, {"cpu": 1}), None),
    ("not allow pod if the total requested resources do exceed the node's allocatable resources",
     _sidecar_pod({"cpu": 1}, {"cpu": 2}), Status(UU, (reason("cpu"),))),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "want"),
    [row[1:] for row in RESTARTABLE_INIT_CONTAINERS],
    ids=[row[0] for row in RESTARTABLE_INIT_CONTAINERS],
)
def test_restartable_init_containers(pod: Pod, want: Status | None) -> None:
    node = resource_node(make_resources(2, 0, 1, 0, 0, 0), capacity={})
    assert run_filter(NodeResourcesFit(), pod, NodeInfo.of(node)) == want


# ---- TestFitScore ---------------------------------------------------------------------------


def _fit_score_fixture(sidecar: bool = False, node2_cpu: str = "6000") -> list[NodeInfo]:
    nodes = [
        cap_node("node1", {"cpu": "4000", "memory": "10000"}),
        cap_node("node2", {"cpu": node2_cpu, "memory": "10000"}),
    ]
    if sidecar:
        p1 = (
            make_pod("e1")
            .node("node1")
            .container(requests={"cpu": "1000", "memory": "2000"})
            .init_req(sidecar=True, cpu="1000", memory="2000")
            .obj()
        )
        p2 = req_pod({"cpu": "1000", "memory": "2000"}, node="node2")
    else:
        p1 = req_pod({"cpu": "2000", "memory": "4000"}, node="node1")
        p2 = req_pod({"cpu": "1000", "memory": "2000"}, node="node2")
    return snapshot(nodes, [p1, p2])


def _strategy(kind: str, shape: Sequence[tuple[int, int]] | None = None) -> NodeResourcesFitArgs:
    points = None if shape is None else tuple(UtilizationShapePoint(u, s) for u, s in shape)
    return NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(type=kind, resources=CPU_MEM, shape=points)
    )


SMALL_POD = {"cpu": "1000", "memory": "2000"}
BIG_POD = {"cpu": "3000", "memory": "5000"}
FIT_SCORE = [
    ("test case for ScoringStrategy RequestedToCapacityRatio case1", BIG_POD,
     _strategy("RequestedToCapacityRatio", [(0, 10), (100, 0)]), False, True, [10, 32]),
    ("test case for ScoringStrategy RequestedToCapacityRatio case2", BIG_POD,
     _strategy("RequestedToCapacityRatio", [(0, 0), (100, 10)]), False, True, [95, 68]),
    ("test case for ScoringStrategy MostAllocated", SMALL_POD, _strategy("MostAllocated"),
     False, True, [67, 36]),
    ("test case for ScoringStrategy LeastAllocated", SMALL_POD, _strategy("LeastAllocated"),
     False, True, [32, 63]),
    ("test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
     BIG_POD, _strategy("RequestedToCapacityRatio", [(0, 10), (100, 0)]), False, False,
     [10, 32]),
    ("test case for ScoringStrategy MostAllocated if PreScore is not called", SMALL_POD,
     _strategy("MostAllocated"), False, False, [67, 36]),
    ("test case for ScoringStrategy LeastAllocated if PreScore is not called", SMALL_POD,
     _strategy("LeastAllocated"), False, False, [32, 63]),
    ("test case for ScoringStrategy MostAllocated with sidecar container", SMALL_POD,
     _strategy("MostAllocated"), True, True, [67, 45]),
    ("test case for ScoringStrategy LeastAllocated with sidecar container", SMALL_POD,
     _strategy("LeastAllocated"), True, True, [32, 55]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("requests", "args", "sidecar", "pre_score", "want"),
    [row[1:] for row in FIT_SCORE],
    ids=[row[0] for row in FIT_SCORE],
)
def test_fit_score(
    requests: Mapping[str, str],
    args: NodeResourcesFitArgs,
    sidecar: bool,
    pre_score: bool,
    want: list[int],
) -> None:
    infos = _fit_score_fixture(sidecar=sidecar, node2_cpu="4000" if sidecar else "6000")
    got = run_score(NodeResourcesFit(args), req_pod(requests), infos, pre_score=pre_score)
    assert got == want


# ---- TestLeastAllocatedScoringStrategy / TestMostAllocatedScoringStrategy ---------------------

SPLIT_POD = ({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})


def _nodes(*specs: tuple[str, Mapping[str, str]]) -> list[Node]:
    return [cap_node(name, res) for name, res in specs]


def _n(cpu: str, memory: str, **extra: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory, **{k.replace("_", "/"): v for k, v in extra.items()}}


EXT_NODE = {EXTENDED_RES: "4"}

# (name, pod requests per container, nodes, existing pods, resources, want scores)
LEAST_ALLOCATED: list[tuple[str, Any, list[Node], list[Pod], Any, list[int]]] = [
    ("nothing scheduled, nothing requested", (),
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("4000", "10000"))), [], CPU_MEM,
     [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", SPLIT_POD,
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("6000", "10000"))), [], CPU_MEM,
     [37, 50]),
    ("no resources requested, pods scheduled", (),
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("4000", "10000"))),
     [req_pod(node="node1"), req_pod(node="node1"), req_pod(node="node2"),
      req_pod(node="node2")], CPU_MEM, [100, 100]),
    ("no resources requested, pods scheduled with resources", (),
     _nodes(("node1", _n("10000", "20000")), ("node2", _n("10000", "20000"))),
     [req_pod(_n("3000", "0"), node="node1"), req_pod(_n("3000", "0"), node="node1"),
      req_pod(_n("3000", "0"), node="node2"), req_pod(_n("3000", "5000"), node="node2")],
     CPU_MEM, [70, 57]),
    ("resources requested, pods scheduled with resources", SPLIT_POD,
     _nodes(("node1", _n("10000", "20000")), ("node2", _n("10000", "20000"))),
     [req_pod(_n("3000", "0"), node="node1"), req_pod(_n("3000", "5000"), node="node2")],
     CPU_MEM, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", SPLIT_POD,
     _nodes(("node1", _n("10000", "20000")), ("node2", _n("10000", "50000"))),
     [req_pod(_n("3000", "0"), node="node1"), req_pod(_n("3000", "5000"), node="node2")],
     CPU_MEM, [57, 60]),
    ("requested resources exceed node capacity", (_n("3000", "0"),),
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("4000", "10000"))),
     [req_pod(_n("3000", "0"), node="node1"), req_pod(_n("3000", "5000"), node="node2")],
     CPU_MEM, [50, 25]),
    ("zero node resources, pods scheduled with resources", (),
     _nodes(("node1", {}), ("node2", {})),
     [req_pod(_n("3000", "0"), node="node1"), req_pod(_n("3000", "5000"), node="node2")],
     CPU_MEM, [0, 0]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, "
     "differently sized nodes", SPLIT_POD,
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("6000", "10000"))), [],
     (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)), [41, 50]),
    ("bypass extended resource if the pod does not request", SPLIT_POD,
     _nodes(("node1", _n("6000", "10000")), ("node2", {**_n("6000", "10000"), **EXT_NODE})), [],
     EXTENDED_RESOURCE_SET, [50, 50]),
    ("honor extended resource if the pod requests",
     ({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"},),
     _nodes(("node1", {**_n("6000", "10000"), **EXT_NODE}),
            ("node2", {**_n("6000", "10000"), EXTENDED_RES: "10"})), [],
     EXTENDED_RESOURCE_SET, [50, 60]),
    ("if the node doesn't have a resource", (_n("3000", "4000"),),
     _nodes(("node1", _n("6000", "10000")), ("node2", {**_n("6000", "10000"), **EXT_NODE})), [],
     (ResourceSpec(EXTENDED_RES, 2), *CPU_MEM), [55, 55]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("requests", "nodes", "existing", "resources", "want"),
    [row[1:] for row in LEAST_ALLOCATED],
    ids=[row[0] for row in LEAST_ALLOCATED],
)
def test_least_allocated_scoring_strategy(
    requests: Sequence[Mapping[str, str]],
    nodes: list[Node],
    existing: list[Pod],
    resources: tuple[ResourceSpec, ...],
    want: list[int],
) -> None:
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("LeastAllocated", resources))
    got = run_score(NodeResourcesFit(args), req_pod(*requests), snapshot(nodes, existing))
    assert got == want


MOST_ALLOCATED: list[tuple[str, Any, list[Node], list[Pod], Any, list[int]]] = [
    ("nothing scheduled, nothing requested", (),
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("4000", "10000"))), [], CPU_MEM,
     [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes", SPLIT_POD,
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("6000", "10000"))), [], CPU_MEM,
     [62, 50]),
    ("no resources requested, pods scheduled with resources", (),
     _nodes(("node1", _n("10000", "20000")), ("node2", _n("10000", "20000"))),
     [req_pod(_n("3000", "0"), node="node1"), req_pod(_n("3000", "0"), node="node1"),
      req_pod(_n("3000", "0"), node="node2"), req_pod(_n("3000", "5000"), node="node2")],
     CPU_MEM, [30, 42]),
    ("resources requested, pods scheduled with resources", SPLIT_POD,
     _nodes(("node1", _n("10000", "20000")), ("node2", _n("10000", "20000"))),
     [req_pod(_n("3000", "0"), node="node1"), req_pod(_n("3000", "5000"), node="node2")],
     CPU_MEM, [42, 55]),
    ("resources requested equal node capacity",
     (_n("2000", "4000"), _n("3000", "5000")),
     _nodes(("node1", _n("5000", "10000")), ("node2", _n("10000", "9000"))), [], CPU_MEM,
     [95, 75]),
    ("nothing scheduled, resources requested, differently sized nodes", SPLIT_POD,
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("6000", "10000"))), [],
     (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)), [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource", ({},),
     _nodes(("node1", _n("250m", "1000Mi")), ("node2", _n("250m", "1000Mi"))),
     [req_pod({}, node="node1"), req_pod({}, node="node1")], CPU_MEM, [80, 30]),
    ("bypass extended resource if the pod does not request", SPLIT_POD,
     _nodes(("node1", _n("6000", "10000")), ("node2", {**_n("6000", "10000"), **EXT_NODE})), [],
     EXTENDED_RESOURCE_SET, [50, 50]),
    ("honor extended resource if the pod request",
     ({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"},),
     _nodes(("node1", {**_n("6000", "10000"), **EXT_NODE}),
            ("node2", {**_n("6000", "10000"), EXTENDED_RES: "10"})), [],
     EXTENDED_RESOURCE_SET, [50, 40]),
    ("if the node doesn't have a resource", (_n("3000", "4000"),),
     _nodes(("node1", _n("6000", "10000")), ("node2", {**_n("6000", "10000"), **EXT_NODE})), [],
     (ResourceSpec(EXTENDED_RES, 2), *CPU_MEM), [45, 45]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("requests", "nodes", "existing", "resources", "want"),
    [row[1:] for row in MOST_ALLOCATED],
    ids=[row[0] for row in MOST_ALLOCATED],
)
def test_most_allocated_scoring_strategy(
    requests: Sequence[Mapping[str, str]],
    nodes: list[Node],
    existing: list[Pod],
    resources: tuple[ResourceSpec, ...],
    want: list[int],
) -> None:
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("MostAllocated", resources))
    got = run_score(NodeResourcesFit(args), req_pod(*requests), snapshot(nodes, existing))
    assert got == want


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
def test_resources_not_set_pods_scheduled_with_error(strategy: str) -> None:
    """Upstream row "Resources not set, pods scheduled with error" (both strategies)."""
    plugin = NodeResourcesFit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy, ())))
    infos = snapshot(_nodes(("node1", _n("4000", "10000"))))
    with pytest.raises(RuntimeError, match="resources not found"):
        run_score(plugin, req_pod(*SPLIT_POD), infos)


WEIGHT_ERRORS = [
    ("resource with negative weight", (ResourceSpec("memory", -1), ResourceSpec("cpu", 1)),
     "args.scoringStrategy.resources[0].weight"),
    ("resource with zero weight", (ResourceSpec("memory", 1), ResourceSpec("cpu", 0)),
     "args.scoringStrategy.resources[1].weight"),
    ("resource weight larger than MaxNodeScore",
     (ResourceSpec("memory", 1), ResourceSpec("cpu", 101)),
     "args.scoringStrategy.resources[1].weight"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("resources", "field"), [r[1:] for r in WEIGHT_ERRORS], ids=[r[0] for r in WEIGHT_ERRORS]
)
@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
def test_invalid_resource_weight(
    strategy: str, resources: tuple[ResourceSpec, ...], field: str
) -> None:
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy, resources))
    with pytest.raises(ConfigError, match="^NodeResourcesFit: " + re.escape(field)):
        NodeResourcesFit(args)


# ---- requested_to_capacity_ratio_test.go -----------------------------------------------------

RTCR_SHAPE = [(0, 10), (100, 0)]
RTCR: list[tuple[str, Any, list[Node], list[Pod], list[int]]] = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)", (),
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("4000", "10000"))),
     [req_pod(node="node1"), req_pod(node="node1")], [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes (default - least "
     "requested nodes have priority)", SPLIT_POD,
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("6000", "10000"))),
     [req_pod(node="node1"), req_pod(node="node1")], [38, 50]),
    ("no resources requested, pods scheduled with resources (default - least requested nodes "
     "have priority)", (),
     _nodes(("node1", _n("4000", "10000")), ("node2", _n("6000", "10000"))),
     [req_pod(_n("3000", "5000"), node="node1"), req_pod(_n("3000", "5000"), node="node2")],
     [38, 50]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("requests", "nodes", "existing", "want"),
    [row[1:] for row in RTCR],
    ids=[row[0] for row in RTCR],
)
def test_requested_to_capacity_ratio_scoring_strategy(
    requests: Sequence[Mapping[str, str]], nodes: list[Node], existing: list[Pod], want: list[int]
) -> None:
    plugin = NodeResourcesFit(_strategy("RequestedToCapacityRatio", RTCR_SHAPE))
    assert run_score(plugin, req_pod(*requests), snapshot(nodes, existing)) == want


BROKEN_LINEAR = [
    ([(10, 1), (90, 9)],
     [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9),
      (100, 9), (110, 9)]),
    ([(0, 2), (40, 10), (100, 0)],
     [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)],
     [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("points", "assertions"), BROKEN_LINEAR, ids=[f"case_{i}" for i in range(len(BROKEN_LINEAR))]
)
def test_broken_linear_function(
    points: list[tuple[int, int]], assertions: list[tuple[int, int]]
) -> None:
    f = broken_linear_function(points)
    assert [(p, f(p)) for p, _ in assertions] == assertions


def make_node_res(name: str, milli_cpu: int, memory: int, extended: Mapping[str, int]) -> Node:
    """upstream test_util.go makeNode: capacity = allocatable, no pods entry."""
    res = {**extended, "cpu": milli_cpu, "memory": memory}
    return Node(
        metadata=ObjectMeta(name=name, namespace=""),
        status=NodeStatus(allocatable=res, capacity=res),
    )


def _bin_packing_args(*resources: ResourceSpec) -> NodeResourcesFitArgs:
    return NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(
            "RequestedToCapacityRatio",
            resources,
            (UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 1)),
        )
    )


FOO = "intel.com/foo"
BAR = "intel.com/bar"
MI = 1024 * 1024
SINGLE_EXTENDED = [
    ("nothing scheduled, nothing requested", (), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", ({FOO: "2"},), [req_pod()], [2, 5]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ",
     ({FOO: "2"},), [req_pod({FOO: "2"}, node="node2")], [2, 10]),
    ("resources requested, pods scheduled with more resources", ({FOO: "4"},), [req_pod()],
     [5, 10]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("requests", "existing", "want"),
    [row[1:] for row in SINGLE_EXTENDED],
    ids=[row[0] for row in SINGLE_EXTENDED],
)
def test_resource_bin_packing_single_extended(
    requests: Sequence[Mapping[str, str]], existing: list[Pod], want: list[int]
) -> None:
    nodes = [
        make_node_res("node1", 4000, 10000 * MI, {FOO: 8}),
        make_node_res("node2", 4000, 10000 * MI, {FOO: 4}),
    ]
    plugin = NodeResourcesFit(_bin_packing_args(ResourceSpec(FOO, 1)))
    assert run_score(plugin, req_pod(*requests), snapshot(nodes, existing)) == want


MULTIPLE_EXTENDED = [
    ("nothing scheduled, nothing requested", (), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", ({FOO: "2", BAR: "2"},),
     [req_pod()], [4, 3]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ",
     ({FOO: "2", BAR: "2"},), [req_pod({FOO: "4", BAR: "2"}, node="node2")], [4, 7]),
    ("resources requested, pods scheduled with more resources", ({FOO: "4", BAR: "2"},),
     [req_pod()], [5, 5]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("requests", "existing", "want"),
    [row[1:] for row in MULTIPLE_EXTENDED],
    ids=[row[0] for row in MULTIPLE_EXTENDED],
)
def test_resource_bin_packing_multiple_extended(
    requests: Sequence[Mapping[str, str]], existing: list[Pod], want: list[int]
) -> None:
    nodes = [
        make_node_res("node1", 4000, 10000 * MI, {FOO: 8, BAR: 4}),
        make_node_res("node2", 4000, 10000 * MI, {FOO: 4, BAR: 8}),
    ]
    plugin = NodeResourcesFit(_bin_packing_args(ResourceSpec(FOO, 3), ResourceSpec(BAR, 5)))
    assert run_score(plugin, req_pod(*requests), snapshot(nodes, existing)) == want


# ---- events and queueing hints -------------------------------------------------------------


def test_events_to_register() -> None:
    """InPlacePodVerticalScaling and SchedulingQueueHint on: pod delete / scale-down and node
    add / allocatable update, each with its hint."""
    events = NodeResourcesFit().events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    ]
    assert all(e.hint is not None for e in events)


def _cpu_pod(name: str, cpu: str, uid: str | None = None, node: str | None = None) -> Pod:
    b = make_pod(name).container(requests={"cpu": cpu})
    if uid is not None:
        b.uid(uid)
    if node is not None:
        b.node(node)
    return b.obj()


def _mem_pod(name: str, memory: str, node: str) -> Pod:
    return make_pod(name).uid(name).container(requests={"memory": memory}).node(node).obj()


EMPTY_POD = Pod(metadata=ObjectMeta(name=""))
Q, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP
POD_CHANGE = [
    ("backoff-wrong-old-object", EMPTY_POD, "not-a-pod", None, Q),
    ("backoff-wrong-new-object", EMPTY_POD, None, "not-a-pod", Q),
    ("queue-on-other-pod-deleted", _cpu_pod("pod1", "1"), _cpu_pod("pod2", "1", node="fake"),
     None, Q),
    ("skip-queue-on-unscheduled-pod-deleted", EMPTY_POD, EMPTY_POD, None, SKIP),
    ("skip-queue-on-other-unscheduled-pod", _cpu_pod("pod1", "1", uid="uid0"),
     _cpu_pod("pod2", "2", uid="uid1"), _cpu_pod("pod2", "1", uid="uid1"), SKIP),
    ("skip-queue-on-other-pod-unrelated-resource-scaled-down", _cpu_pod("pod1", "1", uid="pod1"),
     _mem_pod("pod2", "2", "fake"), _mem_pod("pod2", "1", "fake"), SKIP),
    ("queue-on-other-pod-some-resource-scale-down", _cpu_pod("pod1", "1", uid="pod1"),
     _cpu_pod("pod2", "2", uid="pod2", node="fake"), _cpu_pod("pod2", "1", uid="pod2", node="fake"),
     Q),
    ("queue-on-target-pod-some-resource-scale-down", _cpu_pod("pod1", "1", uid="pod1"),
     _cpu_pod("pod1", "2", uid="pod1"), _cpu_pod("pod1", "1", uid="pod1"), Q),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"), [r[1:] for r in POD_CHANGE], ids=[r[0] for r in POD_CHANGE]
)
def test_is_schedulable_after_pod_change(pod: Pod, old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeResourcesFit().is_schedulable_after_pod_event(pod, old, new) is want


def _cap(**resources: str) -> Node:
    """st.MakeNode().Capacity(...) (pods 32 added); ``ext_a`` / ``ext_b`` name the extended
    resources."""
    names = {"ext_a": EXT_A, "ext_b": EXT_B}
    return cap_node("", {names.get(k, k): v for k, v in resources.items()})


MEM2_EXT1 = resource_pod(usage(memory=2, scalars={EXT_A: 1}))
NODE_CHANGE = [
    ("backoff-wrong-new-object", EMPTY_POD, None, "not-a-node", Q),
    ("backoff-wrong-old-object", EMPTY_POD, "not-a-node", Node(metadata=ObjectMeta(name="")), Q),
    ("skip-queue-on-node-add-without-sufficient-resources", resource_pod(usage(memory=2)), None,
     _cap(memory="1"), SKIP),
    ("skip-queue-on-node-add-without-required-resource-type",
     resource_pod(usage(scalars={EXT_A: 1})), None, _cap(ext_b="1"), SKIP),
    ("queue-on-node-add-with-sufficient-resources", MEM2_EXT1, None,
     _cap(memory="4", ext_a="2"), Q),
    ("skip-queue-on-node-unrelated-changes", MEM2_EXT1, _cap(memory="2", ext_a="2"),
     _cap(memory="2", ext_a="1", ext_b="2"), SKIP),
    ("queue-on-pod-requested-resources-increase", MEM2_EXT1, _cap(memory="2", ext_a="1"),
     _cap(memory="2", ext_a="2"), Q),
    ("skip-queue-on-node-changes-from-suitable-to-unsuitable", MEM2_EXT1,
     _cap(memory="4", ext_a="2"), _cap(memory="1", ext_a="2"), SKIP),
    ("queue-on-node-changes-from-unsuitable-to-suitable", MEM2_EXT1,
     _cap(memory="1", ext_a="2"), _cap(memory="4", ext_a="2"), Q),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"), [r[1:] for r in NODE_CHANGE], ids=[r[0] for r in NODE_CHANGE]
)
def test_is_schedulable_after_node_change(pod: Pod, old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeResourcesFit().is_schedulable_after_node_change(pod, old, new) is want


IS_FIT = [
    ("insufficient resource", _cpu_pod("p", "2"), _cap(cpu="1"), False),
    ("sufficient resource", _cpu_pod("p", "1"), _cap(cpu="2"), True),
]


@pytest.mark.parametrize(
    ("pod", "node", "want"), [r[1:] for r in IS_FIT], ids=[r[0] for r in IS_FIT]
)
def test_is_fit(pod: Pod, node: Node, want: bool) -> None:
    assert (not fits(pod, NodeInfo.of(node))) is want


def _full(pods: str, cpu: str, memory: str, storage: str, ext_a: str | None = None) -> Node:
    res = {"pods": pods, "cpu": cpu, "memory": memory, "ephemeral-storage": storage}
    if ext_a is not None:
        res[EXT_A] = ext_a
    return make_node("").resources(res).obj()


def _cap3(cpu: str, memory: str, storage: str, ext_a: str | None = None) -> Node:
    res = {"cpu": cpu, "memory": memory, "ephemeral-storage": storage}
    if ext_a is not None:
        res[EXT_A] = ext_a
    return cap_node("", res)


ALL_REQUESTED = resource_pod(usage(2, 2, storage=2, scalars={EXT_A: 2}))
CPU_MEM_REQUESTED = resource_pod(usage(2, 2))
INCREASED = [
    ("no-requested-resources", resource_pod(usage()), _full("1", "1", "1", "1", "1"),
     _full("1", "2", "2", "2", "2"), False),
    ("no-requested-resources-pods-increased", resource_pod(usage()),
     _full("1", "1", "1", "1", "1"), _full("2", "1", "1", "1", "1"), True),
    ("scalar-resources-not-in-node", ALL_REQUESTED, _cap3("1", "2", "3"), _cap3("1", "2", "1"),
     False),
    ("requested-resources-decreased", ALL_REQUESTED, _cap3("1", "2", "3", "4"),
     _cap3("1", "2", "1", "1"), False),
    ("requested-resources-increased", ALL_REQUESTED, _cap3("1", "2", "3", "4"),
     _cap3("3", "4", "3", "4"), True),
    ("non-requested-resources-decreased", CPU_MEM_REQUESTED, _cap3("1", "2", "3", "4"),
     _cap3("1", "2", "1", "1"), False),
    ("non-requested-resources-increased", CPU_MEM_REQUESTED, _cap3("1", "2", "3", "4"),
     _cap3("1", "2", "5", "6"), False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"), [r[1:] for r in INCREASED], ids=[r[0] for r in INCREASED]
)
def test_have_any_requested_resources_increased(pod: Pod, old: Node, new: Node, want: bool) -> None:
    assert _requested_resources_increased(pod, old, new) is want


# ---- args -------------------------------------------------------------------------------


def test_args_defaults() -> None:
    args = NodeResourcesFitArgs.from_dict(None)
    assert args.scoring_strategy == ScoringStrategy("LeastAllocated", CPU_MEM, None)
    args = NodeResourcesFitArgs.from_dict(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}}
    )
    assert args.scoring_strategy.resources == (ResourceSpec("cpu", 1),)
    args = NodeResourcesFitArgs.from_dict({"scoringStrategy": {"type": "MostAllocated"}})
    assert args.scoring_strategy.resources == CPU_MEM


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"scoringStrategy": {"type": "Foo"}},
            'args.scoringStrategy.type: Unsupported value: "Foo"',
        ),
        ({"ignoredResourceGroups": ["example.com/aaa"]}, "can't contain '/'"),
        (
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "args.scoringStrategy.requestedToCapacityRatio: Required value",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 11}]
                    },
                }
            },
            "args.scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted",
        ),
        ({"unknownField": 1}, "args.unknownField: unknown field"),
    ],
)
def test_invalid_args(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=r"^NodeResourcesFit: ") as info:
        NodeResourcesFit.new(raw, FakeHandle())
    assert message in str(info.value)


def test_resource_names() -> None:
    assert is_extended_resource_name(EXT_A)
    assert not is_extended_resource_name(K8S_IO_A)
    assert not is_extended_resource_name("cpu")
    assert not is_extended_resource_name("requests.example.com/aaa")
    assert is_scalar_resource_name(K8S_IO_B)
    assert is_scalar_resource_name(HUGE_PAGE_A)
    assert not is_scalar_resource_name("pods")
