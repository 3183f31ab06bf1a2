"""NodeResourcesBalancedAllocation: upstream balanced_allocation_test.go
TestNodeResourcesBalancedAllocation (the DRA rows are left out: ksched has no DRA)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from ksched._errors import ConfigError
from ksched.api import Container, Node, NodeStatus, ObjectMeta, Pod, PodSpec
from ksched.framework import Code, CycleState, NodeInfo
from ksched.plugins.node_resources_balanced_allocation import (
    NodeResourcesBalancedAllocation,
    NodeResourcesBalancedAllocationArgs,
)
from ksched.plugins.node_resources_fit import ResourceSpec
from ksched.testing import FakeHandle, make_pod

GPU = "nvidia.com/gpu"
CPU_MEM = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
CPU_MEM_GPU = (*CPU_MEM, ResourceSpec(GPU, 1))


def make_node(name: str, milli_cpu: int, memory: int, extended: Mapping[str, int] | None) -> Node:
    """upstream test_util.go makeNode: capacity = allocatable, no pods entry."""
    res = {**(extended or {}), "cpu": milli_cpu, "memory": memory}
    return Node(
        metadata=ObjectMeta(name=name, namespace=""),
        status=NodeStatus(allocatable=res, capacity=res),
    )


def spec_pod(name: str, node: str | None, *containers: Mapping[str, int]) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, uid=name),
        spec=PodSpec(
            node_name=node,
            containers=tuple(
                Container(name=f"c{i}", requests=dict(r)) for i, r in enumerate(containers)
            ),
        ),
    )


def cpu_and_memory(name: str, node: str | None = "node2") -> Pod:
    return spec_pod(name, node, {"cpu": 1000, "memory": 2000}, {"cpu": 2000, "memory": 3000})


def cpu_only(name: str, node: str | None = "node1") -> Pod:
    return spec_pod(name, node, {"cpu": 1000, "memory": 0}, {"cpu": 2000, "memory": 0})


def cpu_and_memory_and_gpu(name: str) -> Pod:
    return spec_pod(
        name, "node1", {"cpu": 1000, "memory": 2000}, {"cpu": 2000, "memory": 3000, GPU: 3}
    )


GPU8 = {GPU: 8}

# (name, pod, nodes, existing pods, resources, run PreScore, want scores or "skip")
CASES: list[tuple[str, Pod, list[Node], list[Pod], Any, bool, Any]] = [
    ("nothing scheduled, nothing requested, skip in PreScore", make_pod("p").obj(),
     [make_node("node1", 4000, 10000, None), make_node("node2", 4000, 10000, None)], [],
     CPU_MEM, True, "skip"),
    ("nothing scheduled, resources requested, differently sized nodes", cpu_and_memory("p"),
     [make_node("node1", 4000, 10000, None), make_node("node2", 6000, 10000, None)], [],
     CPU_MEM, True, [87, 100]),
    ("resources requested, pods scheduled with resources", cpu_and_memory("p"),
     [make_node("node1", 10000, 20000, None), make_node("node2", 10000, 20000, None)],
     [cpu_only("e1"), cpu_and_memory("e2")], CPU_MEM, True, [82, 95]),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     cpu_and_memory("p"),
     [make_node("node1", 10000, 20000, None), make_node("node2", 10000, 50000, None)],
     [cpu_only("e1"), cpu_and_memory("e2")], CPU_MEM, True, [82, 80]),
    ("requested resources at node capacity", cpu_only("p"),
     [make_node("node1", 6000, 10000, None), make_node("node2", 6000, 10000, None)],
     [cpu_only("e1"), cpu_and_memory("e2")], CPU_MEM, True, [50, 75]),
    ("include scalar resource on a node for balanced resource allocation",
     make_pod("p").container(requests={"memory": "0", GPU: "1"}).obj(),
     [make_node("node1", 3500, 40000, GPU8), make_node("node2", 3500, 40000, GPU8)],
     [cpu_and_memory("e1"), cpu_and_memory_and_gpu("e2")], CPU_MEM_GPU, True, [70, 65]),
    ("node without the scalar resource should skip the scalar resource", cpu_and_memory("p"),
     [make_node("node1", 3500, 40000, GPU8), make_node("node2", 3500, 40000, None)], [],
     CPU_MEM_GPU, True, [63, 63]),
    ("resources requested, pods scheduled with resources if PreScore not called",
     cpu_and_memory("p"),
     [make_node("node1", 10000, 20000, None), make_node("node2", 10000, 20000, None)],
     [cpu_only("e1"), cpu_and_memory("e2")], CPU_MEM, False, [82, 95]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "run_pre_score", "want"),
    [row[1:] for row in CASES],
    ids=[row[0] for row in CASES],
)
def test_node_resources_balanced_allocation(
    pod: Pod,
    nodes: Sequence[Node],
    existing: Sequence[Pod],
    resources: tuple[ResourceSpec, ...],
    run_pre_score: bool,
    want: Any,
) -> None:
    plugin = NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs(resources))
    infos = [NodeInfo.of(n, [p for p in existing if p.spec.node_name == n.name]) for n in nodes]
    state = CycleState()
    if run_pre_score:
        status = plugin.pre_score(state, pod, infos)
        if want == "skip":
            assert status is not None and status.code is Code.SKIP
            return
        assert status is None
    assert [plugin.score(state, pod, ni) for ni in infos] == want


def test_args_defaults() -> None:
    assert NodeResourcesBalancedAllocationArgs.from_dict(None).resources == CPU_MEM
    assert NodeResourcesBalancedAllocationArgs.from_dict({"resources": []}).resources == CPU_MEM
    args = NodeResourcesBalancedAllocationArgs.from_dict({"resources": [{"name": GPU}]})
    assert args.resources == (ResourceSpec(GPU, 1),)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"resources": [{"name": "cpu", "weight": 2}]},
            "args.resources[0].weight: Invalid value: 2: must be 1",
        ),
        (
            {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
            "args.resources[1].name: Duplicate value: 'cpu'",
        ),
    ],
)
def test_invalid_args(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=r"^NodeResourcesBalancedAllocation: ") as info:
        NodeResourcesBalancedAllocation.new(raw, FakeHandle())
    assert message in str(info.value)
