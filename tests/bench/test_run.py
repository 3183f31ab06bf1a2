"""Running small workloads end to end, on asyncio and trio."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TypeVar

import pytest

from ksched import InMemoryCluster
from ksched.bench import configure_parser, main, plans, to_json
from ksched.bench._metrics import Collector
from ksched.bench._ops import _Runner, run_plan
from ksched.bench._workload import CreateNodes, CreatePods, Plan

T = TypeVar("T")


def nth_op(plan: Plan, i: int, kind: type[T]) -> T:
    """The plan's op ``i``, which must be a ``kind``."""
    op = plan.ops[i]
    assert isinstance(op, kind), op
    return op


WORKLOADS = Path(__file__).parents[2] / "benchmarks" / "workloads"
TEMPLATES = WORKLOADS / "templates"

TINY = f"""
- name: Tiny
  defaultPodTemplatePath: {TEMPLATES / "pod-default.yaml"}
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
  - opcode: createPods
    countParam: $initPods
  - opcode: createPods
    countParam: $measurePods
    collectMetrics: true
  workloads:
  - name: 10Nodes_20Pods
    threshold: 5
    params: {{initNodes: 10, initPods: 5, measurePods: 20}}
"""

KEYS = [
    "testCase",
    "workload",
    "nodes",
    "measuredPods",
    "throughput",
    "attemptLatencySeconds",
    "peakRssBytes",
    "measuredSeconds",
    "unsampledPods",
    "threshold",
]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


@pytest.mark.anyio
async def test_tiny_workload_reports_scheduler_perf_json(tiny: Path) -> None:
    [p] = plans(str(tiny))
    result = await run_plan(p)
    out = to_json(result)
    assert list(out) == KEYS
    assert (out["testCase"], out["workload"]) == ("Tiny", "10Nodes_20Pods")
    assert (out["nodes"], out["measuredPods"], out["threshold"]) == (10, 20, 5)
    assert list(out["throughput"]) == ["average", "perc50", "perc90", "perc99"]
    assert out["throughput"]["average"] > 0
    assert list(out["attemptLatencySeconds"]) == ["perc50", "perc99"]
    assert 0 <= out["attemptLatencySeconds"]["perc50"] <= out["attemptLatencySeconds"]["perc99"]
    assert out["peakRssBytes"] > 10 * 2**20
    # The 5 init pods are not measured; every measured pod made one attempt.
    assert result.attempts == 20


@pytest.mark.anyio
async def test_gang_workload_binds_whole_groups() -> None:
    [p] = plans(str(WORKLOADS / "ksched" / "performance-config.yaml"), "Coscheduling/5Nodes")
    result = await run_plan(p)
    assert (result.nodes, result.measured_pods) == (5, 16)


@pytest.mark.anyio
async def test_upstream_topology_workload_spreads_over_zones() -> None:
    [p] = plans(
        str(WORKLOADS / "topology_spreading" / "performance-config.yaml"),
        "TopologySpreading/5Nodes",
    )
    result = await run_plan(p)
    assert (result.nodes, result.measured_pods) == (5, 10)


def test_label_strategy_round_robin_and_hostname() -> None:
    [p] = plans(
        str(WORKLOADS / "topology_spreading" / "performance-config.yaml"),
        "TopologySpreading/5Nodes",
    )
    runner = _Runner(p, InMemoryCluster(), Collector())
    nodes = runner.build_nodes(nth_op(p, 0, CreateNodes))
    assert [n.name for n in nodes] == [f"scheduler-perf-{i}" for i in range(5)]
    zones = [n.labels["topology.kubernetes.io/zone"] for n in nodes]
    assert zones == ["moon-1", "moon-2", "moon-3", "moon-1", "moon-2"]
    assert all(n.labels["kubernetes.io/hostname"] == n.name for n in nodes)
    # node-default.yaml: upstream's 4 cpu / 32Gi / 110 pods.
    assert dict(nodes[0].status.allocatable) == {
        "pods": 110,
        "cpu": 4000,
        "memory": 32 * 2**30,
    }


def test_default_node_is_upstreams_base_node(tiny: Path) -> None:
    [p] = plans(str(tiny))
    nodes = _Runner(p, InMemoryCluster(), Collector()).build_nodes(nth_op(p, 0, CreateNodes))
    assert nodes[0].name == "node-0-0"
    assert dict(nodes[0].status.allocatable) == {
        "pods": 110,
        "cpu": 4000,
        "memory": 32 * 2**30,
    }


def cli(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    return parser.parse_args(argv)


def test_cli_json_list_for_repeated_runs(
    tiny: Path, capsys: pytest.CaptureFixture[str], anyio_backend: str
) -> None:
    assert (
        main(cli(str(tiny), "--output", "json", "--repeat", "2", "--backend", anyio_backend)) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out, list) and len(out) == 2
    assert all(list(o) == KEYS and o["measuredPods"] == 20 for o in out)


def test_cli_unsupported_op_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dra.yaml"
    path.write_text(
        "- name: Claims\n"
        "  workloadTemplate:\n"
        "  - {opcode: createNodes, count: 1}\n"
        "  - {opcode: createResourceClaims, count: 1, templatePath: claim.yaml}\n"
        "  - {opcode: createPods, count: 1, collectMetrics: true}\n"
        "  workloads: [{name: w}]\n"
    )
    assert main(cli(str(path))) == 2
    err = capsys.readouterr().err
    assert "Claims/w: op 1 (createResourceClaims): unsupported op 'createResourceClaims'" in err


def test_cli_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(cli(str(tmp_path / "nope.yaml"))) == 2
    assert "nope.yaml" in capsys.readouterr().err


@pytest.mark.anyio
@pytest.mark.parametrize("case", ["HostPortConflict", "ResourceSaturation"])
async def test_one_pod_per_node_workloads_batch_all_but_the_first_pod(case: str) -> None:
    """ksched's batching workloads: 10 pods that each fill one of 10 nodes. With the
    OpportunisticBatching gate on, pods 2..10 take the previous pod's runner-up."""
    [p] = plans(str(WORKLOADS / "ksched" / "performance-config.yaml"), f"{case}/10Nodes_10Pods")
    result = await run_plan(p)
    assert result.measured_pods == 10
    assert result.batched_pods == 9
    assert to_json(result)["batchedPods"] == 9
    assert p.notes == ()


# ---- volume workloads (scheduler_perf's SchedulingCSIPVs, SchedulingMigratedInTreePVs) ----


def test_node_allocatable_strategy_makes_csinodes_and_limits() -> None:
    [p] = plans(
        str(WORKLOADS / "volume" / "performance-config.yaml"),
        "SchedulingMigratedInTreePVs/500Nodes",
    )
    op = nth_op(p, 0, CreateNodes)
    nodes = _Runner(p, InMemoryCluster(), Collector()).build_nodes(op)
    assert nodes[0].status.allocatable["attachable-volumes-csi-ebs.csi.aws.com"] == 39
    assert op.allocatable is not None
    csi_node = op.allocatable.csi_node(nodes[0])
    assert csi_node.name == nodes[0].name
    assert [(d.name, d.allocatable_count) for d in csi_node.drivers] == [("ebs.csi.aws.com", 39)]
    assert csi_node.migrated_plugins() == {"kubernetes.io/aws-ebs"}


@pytest.mark.parametrize(
    ("case", "handle"),
    [("SchedulingCSIPVs", "csi"), ("SchedulingInTreePVs", "aws_elastic_block_store")],
)
def test_pods_get_a_bound_claim_and_volume_each(case: str, handle: str) -> None:
    [p] = plans(str(WORKLOADS / "volume" / "performance-config.yaml"), f"{case}/500Nodes")
    op = nth_op(p, 2, CreatePods)
    runner = _Runner(p, InMemoryCluster(), Collector())
    pods = runner.build_pods(op)
    assert op.volumes is not None
    pvc, pv, pod = op.volumes.objects(pods[3], 3)
    ns = pod.namespace
    # CreatePodWithPersistentVolume: pvc-<i> bound to <namespace>-vol-<i>, handle vol-<i>.
    assert (pvc.name, pvc.volume_name, pvc.phase) == ("pvc-3", f"{ns}-vol-3", "Bound")
    assert pvc.metadata.annotations["pv.kubernetes.io/bind-completed"] == "true"
    assert pv.name == f"{ns}-vol-3" and pv.claim_ref is not None
    assert (pv.claim_ref.name, pv.claim_ref.namespace) == ("pvc-3", ns)
    source = getattr(pv, handle)
    assert (source.volume_handle if handle == "csi" else source.volume_id) == "vol-3"
    [volume] = pod.spec.volumes
    assert volume.persistent_volume_claim is not None
    assert volume.persistent_volume_claim.claim_name == "pvc-3"


@pytest.mark.anyio
async def test_csi_pv_pods_respect_the_attach_limit(tmp_path: Path) -> None:
    # One attachable volume per node: three pods with a CSI volume each land on three nodes.
    templates = WORKLOADS / "templates"
    (tmp_path / "pv.yaml").write_text((templates / "pv-csi.yaml").read_text())
    (tmp_path / "pvc.yaml").write_text((templates / "pvc.yaml").read_text())
    (tmp_path / "w.yaml").write_text(
        """
- name: T
  workloadTemplate:
  - opcode: createNodes
    count: 3
    nodeAllocatableStrategy:
      csiNodeAllocatable: {ebs.csi.aws.com: {count: 1}}
  - opcode: createPods
    count: 3
    persistentVolumeTemplatePath: pv.yaml
    persistentVolumeClaimTemplatePath: pvc.yaml
    collectMetrics: true
  workloads: [{name: w}]
"""
    )
    [p] = plans(str(tmp_path / "w.yaml"))
    cluster = InMemoryCluster()
    result = await run_plan(p, cluster=cluster)
    assert result.measured_pods == 3
    assert len({pod.spec.node_name for pod in cluster.pods()}) == 3
