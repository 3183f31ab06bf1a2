"""GPU metrics: node fragmentation (frag.go NodeGpuShareFragAmount), the [Alloc] and
[Report] numbers (analysis.go ClusterGpuFragReport) and the tables' rounding
(experiments/analysis/merge_{alloc,frag,frag_ratio}_discrete.py)."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest

from ksched.gpu import (
    FragMeter,
    GpuClusterState,
    GpuCurve,
    PodShape,
    TraceNode,
    TracePod,
    TypicalPod,
    discrete_curve,
    pod_kind,
    to_nodes,
    to_pods,
)

SHARE = TypicalPod(shape=PodShape(4000, 300, 1), percentage=0.5, count=5)
TWO = TypicalPod(shape=PodShape(20000, 1000, 2), percentage=0.3, count=3)
CPU = TypicalPod(shape=PodShape(8000, 0, 0), percentage=0.2, count=2)
T4 = TypicalPod(shape=PodShape(1000, 100, 1, "T4|A10"), percentage=1.0, count=1)


def test_node_amounts_follow_get_node_pod_frag() -> None:
    meter = FragMeter([SHARE, TWO, CPU])
    q1, q2, q3, q4, xl, xr, na = meter.node_amounts(10000, [1000, 500, 200, 0], "G2")
    # SHARE fits (two GPUs with 300 left, 4000 <= 10000 cpu): the 200 on GPUs too small
    # is q2, the other 1500 q3. TWO lacks both (one free GPU, 20000 cpu): all 1700 idle.
    # CPU-only fits (xl): its share of the idle milli counts, as for every case but q3.
    assert (q1, q2, q3, q4, xl, xr, na) == (0.3 * 1700, 0.5 * 200, 0.5 * 1500, 0, 0.2 * 1700, 0, 0)
    [*_, xr_short] = meter.node_amounts(5000, [1000, 500, 200, 0], "G2")[:6]
    assert xr_short == 0.2 * 1700  # the CPU-only pod no longer fits: xr
    assert FragMeter([T4]).node_amounts(10000, [1000], "G2")[6] == 1000.0  # no_access
    assert FragMeter([T4]).node_amounts(10000, [1000], "T4")[2] == 1000.0  # model accepted
    assert FragMeter([SHARE]).node_amounts(2000, [1000], "G2")[3] == 500.0  # q4: lacks cpu


def test_memo_keys_on_the_sorted_gpus() -> None:
    meter = FragMeter([SHARE, TWO])
    first = meter.node_amounts(9000, [200, 1000, 0], "G2")
    assert meter.node_amounts(9000, [0, 200, 1000], "G2") == first


def nodes(*gpus: int):  # type: ignore[no-untyped-def]
    return to_nodes(
        [
            TraceNode(name=f"n-{i}", cpu_milli=32000, memory_mib=1024, gpus=g, model="G2")
            for i, g in enumerate(gpus)
        ]
    )


def bound(name: str, cpu: int, count: int, milli: int, index: str | None):  # type: ignore[no-untyped-def]
    [pod] = to_pods(
        [TracePod(name=name, cpu_milli=cpu, memory_mib=1, num_gpu=count, gpu_milli=milli)]
    )
    if index is None:
        return pod
    notes = {**pod.metadata.annotations, "alibabacloud.com/gpu-index": index}
    return attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, annotations=notes))


def test_cluster_state_accounts_bound_pods() -> None:
    state = GpuClusterState(nodes(8, 2, 0), FragMeter([SHARE]))
    assert (state.total_gpus, state.used_gpu_milli) == (10, 0)
    share = bound("a", 4000, 1, 300, "3")
    whole = bound("b", 8000, 2, 1000, "0-1")
    cpu = bound("c", 2000, 0, 0, None)
    state.bind(share, "n-0")
    state.bind(whole, "n-1")
    state.bind(cpu, "n-2")
    assert state.gpu_left[0] == [1000, 1000, 1000, 700, 1000, 1000, 1000, 1000]
    assert state.gpu_left[1] == [0, 0]
    assert state.used_gpu_milli == 2300
    assert state.used_nodes_and_gpus() == (3, 10)  # a CPU-only pod makes its node used
    assert state.fully_free_gpus() == 7
    state.unbind(whole, "n-1")
    assert state.gpu_left[1] == [1000, 1000] and state.used_gpu_milli == 300
    with pytest.raises(ValueError, match=r"gpu-index: '9' does not name GPUs of its node"):
        state.bind(bound("d", 1, 1, 100, "9"), "n-1")
    with pytest.raises(ValueError, match="not known"):
        state.bind(cpu, "elsewhere")


def test_a_sample_is_the_artifacts_report_line() -> None:
    state = GpuClusterState(nodes(2, 1), FragMeter([SHARE, TWO]))
    curve = GpuCurve(total_gpus=state.total_gpus)
    state.bind(bound("a", 4000, 1, 900, "0"), "n-0")
    curve.sample(state, 900)
    node0 = FragMeter([SHARE, TWO]).node_amounts(28000, [100, 1000], "G2")
    node1 = FragMeter([SHARE, TWO]).node_amounts(32000, [1000], "G2")
    idle = sum(node0) + sum(node1)
    frag = idle - node0[2] - node1[2]
    assert curve.used_gpu_milli == [900] and curve.arrived_gpu_milli == [900]
    assert curve.frag_gpu_milli == [pytest.approx(frag, rel=1e-15)]
    assert curve.frag_ratio == [pytest.approx(100 * frag / idle, rel=1e-15)]
    assert idle == pytest.approx(0.8 * 2100)  # the buckets hold p-weighted milli (p: 0.8)


def curve_of(total_gpus: int, rows: list[tuple[int, int]]) -> GpuCurve:
    curve = GpuCurve(total_gpus=total_gpus)
    for arrived, used in rows:
        curve.arrived_gpu_milli.append(arrived)
        curve.used_gpu_milli.append(used)
    return curve


def test_allocation_table_rounding() -> None:
    # 6212 GPUs: arrive% = round(arrived / 6212 / 10, 0), half to even;
    # alloc% = round(used / 6212 / 10, 2) in Python, then the mean rounded by numpy.
    curve = curve_of(
        6212,
        [
            (31060, 31060),  # arrived 0.5 %: rounds to 0 (half to even) -> point 0
            (93180, 90000),  # 1.5 %: rounds to 2 -> point 2
            (92000, 92000),  # 1.48 %: point 1
            (310600, 310600),  # 5 %: points 3, 4 have no sample: 4 uses 3..5, 3 uses 2..4
        ],
    )
    table = curve.allocation()
    assert table[0] == 0.5
    assert table[1] == round(92000 / 6212 / 10, 2) == 1.48
    assert table[2] == round(90000 / 6212 / 10, 2) == 1.45
    assert table[3] == 1.45  # only point 2's sample lies within one percent
    assert table[4] == 5.0
    assert 6 in table and 7 not in table  # 6 uses 5..7; 7 uses 6..8: nothing


def test_allocation_rounds_each_row_then_the_mean() -> None:
    # Python's round(1.115, 2) is 1.11 (1.115 is 1.11499.. in binary); numpy's is 1.12.
    # The rows go through Python's, the mean through numpy's (pandas' Series.apply and
    # round(np.float64)), as the artifact's script takes them.
    assert round(1.115, 2) == 1.11 and float(np.round(1.115, 2)) == 1.12
    total = 1000  # used / 1000 / 10 = percent
    curve = curve_of(total, [(0, 11150), (0, 11150)])
    assert curve.allocation()[0] == 1.11  # each row 1.11 first; the mean stays 1.11
    rows = np.array([1.11, 1.12])  # a mean of 1.115 rounds up through numpy
    assert float(np.round(discrete_curve(np.array([0.0, 0.0]), rows)[0], 2)) == 1.12


def test_fragmentation_tables_read_the_logged_two_decimals() -> None:
    curve = GpuCurve(total_gpus=10)
    curve.arrived_gpu_milli += [1000, 1000]  # both at 10 % arrived; 9 and 11 borrow them
    curve.used_gpu_milli += [1000, 1000]
    curve.frag_gpu_milli += [1234.5649, 1234.5651]  # logged as 1234.56 and 1234.57
    curve.frag_ratio += [12.344, math.nan]  # logged 12.34 and "NaN%" (no idle GPU left)
    # frag: round(100 * mean(logged milli) / 1000 / total_gpus, 2), by numpy
    expected = float(np.round(100 * ((1234.56 + 1234.57) / 2) / 1000 / 10, 2))
    assert curve.fragmentation() == {9: expected, 10: expected, 11: expected}
    # frag ratio: the mean of the logged ratios, NaN left out (pandas' skipna), unrounded
    assert curve.fragmentation_ratio() == {9: 12.34, 10: 12.34, 11: 12.34}


def test_pod_kinds() -> None:
    assert [
        pod_kind(PodShape(1, m, k))
        for m, k in [(0, 0), (500, 1), (1000, 1), (1000, 2), (1000, 4), (1000, 8), (1000, 3)]
    ] == ["PureCpu", "ShareGpu", "OneGpu", "TwoGpu", "FourGpu", "EightGpu", "Others"]
