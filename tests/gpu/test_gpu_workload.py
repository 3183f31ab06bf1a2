"""The experiment's workload as the FGD artifact draws it: typical pods (frag.go
GetTypicalPods), pod order and tuning (simulator.go SortClusterPods, tuneUpPods,
tuneDownPods) and node names (syncClusterResourceList). Expected names and counts for the
openb trace are the artifact's own (its log of openb default, tune 1.3, seed 42)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from ksched import ConfigError
from ksched.api import Node, Pod
from ksched.gpu import (
    PodShape,
    TracePod,
    TypicalPodsConfig,
    WorkloadConfig,
    prepare_workload,
    read_nodes,
    read_pods,
    to_nodes,
    to_pods,
    typical_pods,
)

TRACE = Path(__file__).resolve().parents[3] / "shared" / "traces" / "openb"
needs_trace = pytest.mark.skipif(not TRACE.is_dir(), reason="no shared/traces/openb beside it")


@cache
def openb() -> tuple[list[Node], list[Pod]]:
    nodes = to_nodes(read_nodes(TRACE / "openb_node_list_gpu_node.csv"))
    return nodes, to_pods(read_pods(TRACE / "openb_pod_list_default.csv"))


def pods_of(*rows: tuple[str, int, int, int]) -> list[Pod]:
    """Pods from (name, cpu milli, GPU count, per-GPU milli)."""
    return to_pods(
        [TracePod(name=n, cpu_milli=c, memory_mib=1, num_gpu=k, gpu_milli=g) for n, c, k, g in rows]
    )


def gpu_nodes(*gpus: int) -> list[Node]:
    from ksched.gpu import TraceNode

    rows = [
        TraceNode(name=f"node-{i}", cpu_milli=64000, memory_mib=262144, gpus=g, model="G2")
        for i, g in enumerate(gpus)
    ]
    return to_nodes(rows)


# ---- typical pods -------------------------------------------------------------------


@needs_trace
def test_typical_pods_of_openb_default() -> None:
    _, pods = openb()
    typical, share = typical_pods(PodShape.of(p) for p in pods)
    # "Count top 35 pod resource spec as typical ones, accounting for 95.26% of all pods"
    assert len(typical) == 35
    assert round(100 * share, 2) == 95.26
    assert (typical[0].shape, typical[0].count) == (PodShape(3152, 810, 1), 1047)
    assert (typical[1].shape, typical[1].count) == (PodShape(11300, 1000, 1), 874)
    assert (typical[5].shape, typical[5].count) == (PodShape(12500, 0, 0), 366)  # CPU-only
    assert (typical[34].shape, typical[34].count) == (PodShape(4152, 810, 1), 31)
    assert typical[0].percentage == (1047 / 8152) / share  # the Go code's two divisions
    assert sum(t.percentage for t in typical) == pytest.approx(1.0, abs=1e-12)


def shapes(*counts: tuple[PodShape, int]) -> list[PodShape]:
    return [shape for shape, n in counts for _ in range(n)]


A, B, C = PodShape(1000, 500, 1), PodShape(2000, 1000, 1), PodShape(500, 0, 0)


def test_typical_pods_stop_at_the_threshold_and_renormalise() -> None:
    typical, share = typical_pods(
        shapes((A, 5), (B, 3), (C, 2)), TypicalPodsConfig(pod_popularity_threshold=60)
    )
    assert [t.shape for t in typical] == [A, B]  # 50 % < 60 %, then 80 %
    assert [t.percentage for t in typical] == [0.5 / 0.8, 0.3 / 0.8]
    assert share == 0.8


def test_typical_pods_step_and_defaults() -> None:
    # step 0 means the default step of 10 shapes: all three are taken, not renormalised
    typical, share = typical_pods(
        shapes((A, 5), (B, 3), (C, 2)),
        TypicalPodsConfig(pod_popularity_threshold=10, pod_increase_step=0),
    )
    assert [t.percentage for t in typical] == [0.5, 0.3, 0.2]
    assert share == 1.0


def test_equal_counts_put_the_larger_shape_first() -> None:
    # sort.Reverse of (count, cpu, gpu milli, gpu count, model)
    small, big_cpu = PodShape(1000, 500, 1), PodShape(3000, 100, 1)
    more_gpu, model_z = PodShape(1000, 500, 2), PodShape(1000, 500, 1, "Z")
    typical, _ = typical_pods([small, big_cpu, more_gpu, model_z])
    assert [t.shape for t in typical] == [big_cpu, more_gpu, model_z, small]


def test_gpu_weight_and_cpu_pods_left_out() -> None:
    whole = PodShape(1000, 1000, 2)
    cfg = TypicalPodsConfig(gpu_res_weight=1.5, is_involved_cpu_pods=False)
    typical, share = typical_pods(shapes((whole, 1), (A, 3), (C, 9)), cfg)
    assert [(t.shape, t.count) for t in typical] == [(whole, 4.0), (A, 3.0)]  # 1 + 2 * 1.5
    assert share == 1.0


def test_typical_pods_config_is_checked() -> None:
    with pytest.raises(ConfigError, match="podPopularityThreshold"):
        TypicalPodsConfig(pod_popularity_threshold=101)
    with pytest.raises(ConfigError, match="gpuResWeight"):
        TypicalPodsConfig(gpu_res_weight=-1)


# ---- tuning, order, node names ---------------------------------------------------------


@needs_trace
def test_openb_default_tuned_to_130_percent_with_seed_42() -> None:
    nodes, pods = openb()
    w = prepare_workload(nodes, pods, WorkloadConfig(tune=1.3, seed=42))
    assert (len(w.pods), w.originals) == (10866, 8152)  # 8152 shuffled + 2714 clones
    assert [p.name for p in w.pods[:5]] == [
        "openb-pod-0255",
        "openb-pod-1685",
        "openb-pod-6784",
        "openb-pod-4463",
        "openb-pod-0602",
    ]
    clones = [p.name for p in w.pods[8152:]]
    assert clones[0] == "openb-pod-3888-tuned-0"  # the first rand.Intn(8152) after Shuffle
    assert [c.rsplit("-", 1)[1] for c in clones] == [str(i) for i in range(2714)]
    assert sorted(p.name for p in w.pods[:8152]) == sorted(p.name for p in pods)
    assert w.target_gpu_milli == 1.3 * 6212000
    assert w.pod_gpu_milli == 8_075_080 <= w.target_gpu_milli
    assert w.pod_gpu_milli == sum(PodShape.of(p).total_gpu_milli for p in w.pods)
    assert [n.name for n in w.nodes[:5]] == [
        "0000-openb-node-0260",
        "0001-openb-node-0858",
        "0002-openb-node-0619",
        "0003-openb-node-0582",
        "0004-openb-node-0882",
    ]  # the artifact's names: ten informer draws sit between the tuning and rand.Perm
    assert [n.name for n in w.nodes] == sorted(n.name for n in w.nodes)


def test_stop_rule_tests_the_per_gpu_milli() -> None:
    # One original of 2 x 400 milli on one GPU (1000): target 1.5 * 1000 = 1500. The first
    # clone passes (800 + 400 <= 1500) though it takes the total to 1600; the next stops.
    w = prepare_workload(gpu_nodes(1), pods_of(("p", 1000, 2, 400)), WorkloadConfig(tune=1.5))
    assert [p.name for p in w.pods] == ["p", "p-tuned-0"]
    assert w.pod_gpu_milli == 1600


def test_tuning_down_removes_pods_until_under_the_target() -> None:
    pods = pods_of(*[(f"p-{i:02d}", 1000, 1, 1000) for i in range(20)])
    w = prepare_workload(gpu_nodes(8), pods, WorkloadConfig(tune=1.0, seed=7))
    assert len(w.pods) == 8 and w.pod_gpu_milli == 8000 and w.originals == 8
    again = prepare_workload(gpu_nodes(8), pods, WorkloadConfig(tune=1.0, seed=7))
    assert [p.name for p in again.pods] == [p.name for p in w.pods]


def test_without_shuffle_pods_go_in_name_order() -> None:
    pods = pods_of(("b", 1, 0, 0), ("a", 1, 0, 0), ("c", 1, 1, 100))
    w = prepare_workload(gpu_nodes(1), pods, WorkloadConfig(tune=0, shuffle=False))
    assert [p.name for p in w.pods] == ["a", "b", "c"]


@needs_trace
def test_ksched_draws_follow_the_same_procedure() -> None:
    nodes, pods = openb()
    cfg = WorkloadConfig(rng="ksched", seed=42)
    w = prepare_workload(nodes, pods, cfg)
    assert w.target_gpu_milli - 1000 < w.pod_gpu_milli <= w.target_gpu_milli + 7000
    assert w.pods[:8152] != prepare_workload(nodes, pods).pods[:8152]  # another stream
    again = prepare_workload(nodes, pods, cfg)
    assert [p.name for p in again.pods] == [p.name for p in w.pods]
    assert [n.name for n in again.nodes] == [n.name for n in w.nodes]


def test_bad_knobs_are_refused() -> None:
    with pytest.raises(ConfigError, match="no pod asks for a GPU"):
        prepare_workload(gpu_nodes(1), pods_of(("a", 1, 0, 0)), WorkloadConfig(tune=1.3))
    with pytest.raises(ConfigError, match="tune: must be at most"):
        WorkloadConfig(tune=float("nan"))
    with pytest.raises(ConfigError, match="rng: must be 'go' or 'ksched'"):
        prepare_workload(gpu_nodes(1), pods_of(("a", 1, 1, 10)), WorkloadConfig(rng="mt"))
