"""The six GPU Score policies: scores and GPU choices from the FGD artifact's formulas.

Expected values are worked out by hand from the artifact's Go code (the function is named
in each test) or copied from its own tests (pkg/utils/frag_test.go,
pkg/simulator/plugin/gpu_packing_score_test.go, at commit 8f3d641).
"""

from __future__ import annotations

import math
import random
from typing import Any

import anyio
import attrs
import numpy as np
import pytest
from _gpu_share_fixtures import (
    INDEX_KEY,
    FakeHandle,
    gpu_node,
    gpu_pod,
    gpu_profile,
    info_of,
    typical,
)

from ksched import ConfigError, InMemoryCluster, Scheduler
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.plugins.gpu_share import (
    BestFitScore,
    DotProductScore,
    DotProductScoreArgs,
    FGDScore,
    FGDScoreArgs,
    GpuClusteringScore,
    GpuPackingScore,
    GpuScoreError,
    NodeFrag,
    NodeGpus,
    RandomScore,
    gpu_request,
)
from ksched.plugins.gpu_share._fgd import fgd_score
from ksched.plugins.gpu_share._policies import normalize_min_max, packing_score


def node_gpus(free: tuple[int, ...], model: str = "1080") -> NodeGpus:
    return NodeGpus.of(model, free, {})


def used_node(name: str, gpus: int, used: dict[int, int], cpu: str = "64", **kw: Any) -> NodeInfo:
    """A NodeInfo whose GPUs hold ``used`` milli (device -> milli), each by a 1-cpu pod."""
    pods = [
        gpu_pod(f"{name}-u{d}", cpu="1", milli=m, count=1, index=str(d), node=name)
        for d, m in used.items()
    ]
    return info_of(gpu_node(name, gpus, cpu=cpu, **kw), pods)


# ---- FGD: the fragmentation (pkg/utils/frag.go NodeGpuShareFragAmountScore) ---------------

# frag_test.go TestingGenerateGetTypicalPods: 35 typical pods (percentages in %)
ARTIFACT_TYPICAL = [
    (6000, 465, 1, "", 9.33),
    (8000, 440, 1, "2080", 9.15),
    (8000, 475, 1, "T4", 8.76),
    (8000, 440, 1, "P100", 8.72),
    (2000, 465, 1, "", 8.68),
    (12000, 900, 1, "", 8.65),
    (4000, 900, 1, "", 8.43),
    (16000, 678, 1, "T4", 8.36),
    (8000, 500, 1, "", 8.29),
    (6000, 511, 1, "", 8.11),
    (14000, 1000, 2, "2080", 0.54),
    (4000, 1000, 1, "2080", 0.43),
    (32000, 1000, 2, "T4", 0.43),
    (16000, 1000, 1, "V100M16", 0.40),
    (64000, 1000, 2, "", 0.40),
    (10000, 1000, 2, "", 0.40),
    (11400, 1000, 1, "T4", 0.36),
    (16000, 1000, 1, "T4", 0.36),
    (4000, 1000, 2, "", 0.36),
    (14000, 1000, 2, "V100M16", 0.36),
    (8000, 1000, 4, "", 0.36),
    (16000, 1000, 2, "", 0.32),
    (2000, 1000, 1, "T4", 0.32),
    (6000, 1000, 1, "", 0.32),
    (4000, 1000, 1, "", 0.32),
    (5000, 1000, 1, "", 0.32),
    (32000, 1000, 4, "V100M16", 0.32),
    (32000, 1000, 2, "", 0.32),
    (24000, 1000, 8, "2080", 0.32),
    (40000, 1000, 4, "", 0.29),
    (32000, 1000, 8, "", 0.29),
    (32000, 1000, 1, "T4", 0.29),
    (16000, 1000, 1, "", 0.25),
    (7000, 1000, 1, "V100M16", 0.25),
    (24000, 1000, 1, "T4", 0.25),
]

# frag_test.go TestingGenerateGetTypicalPodsWithNonGpu (CPU-only pods among them)
ARTIFACT_TYPICAL_NON_GPU = [
    (15700, 1000, 1, "", 28.69),
    (11900, 1000, 1, "", 18.93),
    (11400, 1000, 1, "", 12.27),
    (1000, 0, 0, "", 7.36),
    (18710, 1000, 1, "", 4.85),
    (8200, 1000, 1, "", 3.79),
    (16400, 1000, 1, "", 3.31),
    (9810, 1000, 1, "", 1.97),
    (15200, 1000, 1, "", 1.87),
    (11200, 1000, 1, "", 1.81),
    (14200, 1000, 1, "", 1.76),
    (12000, 0, 0, "", 1.65),
    (14900, 1000, 1, "", 1.39),
    (60200, 1000, 4, "", 1.23),
    (64200, 1000, 8, "", 1.07),
    (32200, 1000, 4, "", 1.01),
    (17400, 1000, 2, "", 0.91),
    (30200, 1000, 2, "", 0.69),
    (16000, 1000, 1, "", 0.64),
    (15000, 1000, 1, "", 0.59),
    (64000, 1000, 8, "", 0.53),
    (15000, 0, 0, "", 0.53),
    (11910, 1000, 1, "", 0.53),
    (120200, 1000, 8, "", 0.48),
    (11300, 1000, 1, "", 0.37),
    (30000, 1000, 2, "", 0.32),
    (9800, 1000, 1, "", 0.32),
    (8000, 1000, 1, "", 0.32),
    (2000, 1000, 1, "", 0.27),
    (2000, 80, 1, "", 0.27),
    (1000, 1000, 1, "", 0.27),
]


def _frag(rows: list[tuple[int, int, int, str, float]]) -> NodeFrag:
    return NodeFrag(typical(*[(c, g, k, t, p / 100) for c, g, k, t, p in rows]))


@pytest.mark.parametrize(
    ("rows", "cpu_left", "free", "model", "want"),
    [
        (ARTIFACT_TYPICAL, 1000, (200, 1000, 1000, 500), "1080", 2566.62),
        (ARTIFACT_TYPICAL, 1000, (1000, 1000, 1000, 1000), "1080", 3802.40),
        (ARTIFACT_TYPICAL, 1000, (1000,) * 8, "1080", 7604.80),
        (ARTIFACT_TYPICAL[:1], 1000, (200, 1000, 1000, 500), "1080", 251.91),
        (ARTIFACT_TYPICAL_NON_GPU, 64000, (1000,) * 8, "P100", 887.20),
        (ARTIFACT_TYPICAL_NON_GPU, 32000, (1000,) * 4 + (0,) * 4, "P100", 554.4),
        (ARTIFACT_TYPICAL_NON_GPU, 0, (1000,) * 4 + (0,) * 4, "P100", 4000),
    ],
    ids=[
        "TestNodeGpuShareFragAmountScore/4x1080_used",
        "TestNodeGpuShareFragAmountScore/4x1080_full",
        "TestNodeGpuShareFragAmountScore/8x1080_full",
        "TestNodeGpuShareFragAmountScore/4x1080_used_lack_CPU",
        "TestNodeGpuShareFragAmountWithNonGpu/8xP100_empty",
        "TestNodeGpuShareFragAmountWithNonGpu/8xP100_halved",
        "TestNodeGpuShareFragAmountWithNonGpu/8xP100_nocpu",
    ],
)
def test_fragmentation_matches_the_artifacts_tests(
    rows: list[Any], cpu_left: int, free: tuple[int, ...], model: str, want: float
) -> None:
    frag = _frag(rows)
    value = frag.frag(cpu_left, free, model)
    assert value == pytest.approx(want, abs=0.01)  # the artifact's InDelta(..., 0.01)
    # the three ways of working it out agree to the last bit
    assert value == frag.frag_reference(cpu_left, free, model)
    rows_form = frag.frag_rows(
        _ints([cpu_left]), _ints([free]), _ints([len(free)]), frag.access(model)[None, :]
    )
    assert rows_form[0] == value


def _ints(values: list[Any]) -> Any:
    return np.array(values, dtype=np.int64)


FGD_TYPICAL = typical((4000, 500, 1, "", 0.5), (8000, 1000, 1, "", 0.3), (2000, 0, 0, "", 0.2))


def test_fgd_score_from_the_fragmentation_change() -> None:
    # calculateGpuShareFragExtendScore: 100 * sigmoid((F(before) - F(after)) / 1000)
    frag = NodeFrag(FGD_TYPICAL)
    pod = gpu_request(gpu_pod("p", cpu="4", milli=500, count=1))
    # fresh 1-GPU node: F 0.2*1000 = 200 (XL); after [500]: 0.3*500 (m2 lacks GPU) + 0.2*500
    assert fgd_score(frag, 64000, node_gpus((1000,), ""), pod) == (
        int(100 / (1 + math.exp(0.05))),
        (0,),
    )
    # [500, 1000]: F = 0.3*500 + 0.2*1500 = 450; on GPU 0: 0.2*1000 = 200 (56); on GPU 1:
    # 0.3*1000 + 0.2*1000 = 500 (48): GPU 0 and 56
    assert fgd_score(frag, 64000, node_gpus((500, 1000), ""), pod) == (56, (0,))


def test_fgd_picks_the_gpu_that_fragments_least_not_the_fullest() -> None:
    # One typical pod of 400 milli. [600, 400, 1000], a pod of 300: on GPU 0 F 0 -> 300 (42),
    # GPU 1 (the best fit) 0 -> 100 (47), GPU 2 0 -> 0 (50): FGD takes GPU 2.
    frag = NodeFrag(typical((1000, 400, 1, "", 1.0)))
    pod = gpu_request(gpu_pod("p", cpu="1", milli=300, count=1))
    assert fgd_score(frag, 64000, node_gpus((600, 400, 1000), ""), pod) == (50, (2,))


def test_fgd_whole_gpus_take_the_lowest_free_ones_and_nothing_asked_scores_100() -> None:
    frag = NodeFrag(FGD_TYPICAL)
    pod = gpu_request(gpu_pod("p", cpu="8", milli=1000, count=2))
    # Sub takes the fullest fitting GPUs (here the two free ones); AllocateExclusiveGpuId
    # the lowest-indexed free ones
    score, gpus = fgd_score(frag, 64000, node_gpus((300, 1000, 1000, 1000), ""), pod)
    assert gpus == (1, 2)
    before = frag.frag(64000, (300, 1000, 1000, 1000), "")
    after = frag.frag(56000, (300, 0, 0, 1000), "")
    assert score == int(100 / (1 + math.exp(-(before - after) / 1000)))
    plugin = FGDScore(FGDScoreArgs(typical_pods=FGD_TYPICAL), FakeHandle())  # type: ignore[arg-type]
    plain = gpu_pod("p")
    no_requests = attrs.evolve(plain, spec=attrs.evolve(plain.spec, containers=()))
    assert plugin.score(CycleState(), no_requests, used_node("n1", 1, {})) == 100


def test_fgd_args_are_validated() -> None:
    handle: Any = FakeHandle()
    with pytest.raises(ConfigError, match=r"FGDScore: args.typicalPods: required"):
        FGDScore.new({}, handle)
    bad: dict[str, Any] = {
        "typicalPods": [{"milliCpu": 1000, "milliGpu": 500, "gpuNumber": 1, "percentage": 2}]
    }
    with pytest.raises(ConfigError, match=r"args.typicalPods\[0\]: percentage: must be between"):
        FGDScore.new(bad, handle)
    bad = {"typicalPods": [{"milliCpu": -1, "percentage": 0.5}]}
    with pytest.raises(ConfigError, match=r"args.typicalPods\[0\]: milliCpu: must not be negative"):
        FGDScore.new(bad, handle)
    good = {"typicalPods": [{"milliCpu": 1000, "milliGpu": 500, "gpuNumber": 1, "percentage": 1}]}
    assert FGDScore.new(good, handle).frag.pods[0].milli_gpu == 500


# ---- GpuPacking (gpu_packing_score_test.go TestGpuPackingScorePlugin_Score) ----------------


@pytest.mark.parametrize(
    ("free", "milli", "count", "want"),
    [
        ((200, 1000, 1000, 500), 1000, 2, 48),
        ((1000, 1000, 1000, 1000), 1000, 2, 29),
        ((1000,) * 8, 1000, 2, 25),
        ((200, 1000, 1000, 500), 200, 2, 93),
    ],
    ids=["case-2", "case-3 4-GPU", "case-3 8-GPU", "case-1 only use existing GPUs"],
)
def test_gpu_packing_matches_the_artifacts_test(
    free: tuple[int, ...], milli: int, count: int, want: int
) -> None:
    request = gpu_request(gpu_pod("p", cpu="100m", milli=milli, count=count))
    assert packing_score(node_gpus(free), request, gpu_pod("p"), "Hello") == want


def test_gpu_packing_short_of_gpus_and_pods_without_gpus() -> None:
    plugin = GpuPackingScore(FakeHandle())  # type: ignore[arg-type]
    with pytest.raises(GpuScoreError, match=r"failed to schedule pod\(default/p\) on node\(n1\)"):
        plugin.score(CycleState(), gpu_pod("p", milli=1000, count=2), used_node("n1", 2, {0: 1}))
    assert plugin.score(CycleState(), gpu_pod("p"), used_node("n1", 2, {})) == 0
    assert plugin.uniform_score(CycleState(), gpu_pod("p"), None) == 0  # type: ignore[arg-type]


# ---- GpuClustering (gpu_clustering_score.go Score) ---------------------------------------


def _clustering(info: NodeInfo, pod: Any) -> int:
    return GpuClusteringScore(FakeHandle()).score(CycleState(), pod, info)  # type: ignore[arg-type]


def test_gpu_clustering() -> None:
    share = gpu_pod("p", milli=500, count=1)
    # only share-gpu pods there, L = 3700: 75 + 25*(8000-3700)/8000 = 75 + 13
    assert _clustering(used_node("n1", 4, {0: 300}), share) == 88
    # share-gpu and 1-gpu pods: 50 + 25*(8000-2700)/8000 = 50 + 16
    mixed = info_of(
        gpu_node("n1", 4),
        [
            gpu_pod("s", milli=300, count=1, index="0", node="n1"),
            gpu_pod("w", milli=1000, count=1, index="1", node="n1"),
        ],
    )
    assert _clustering(mixed, share) == 66
    # no GPU pods: 25 + 25*4000/8000 = 25 + 12; only other classes: 25*(8000-3000)/8000 = 15
    assert _clustering(used_node("n1", 4, {}), share) == 37
    whole = info_of(gpu_node("n1", 4), [gpu_pod("w", milli=1000, count=1, index="1", node="n1")])
    assert _clustering(whole, share) == 15
    # more than 8 GPUs free: the term goes negative (Go's division truncates toward zero)
    assert _clustering(used_node("n1", 16, {}), share) == 25 + (25 * (8000 - 16000)) // 8000
    assert _clustering(used_node("n1", 4, {}), gpu_pod("cpu-only")) == 0


# ---- BestFit (best_fit_score.go getBestFitScore, plugin_utils.go NormalizeScore) -----------


def test_best_fit_raw_scores_and_min_max_normalization() -> None:
    plugin = BestFitScore(FakeHandle())  # type: ignore[arg-type]
    pod = gpu_pod("p", cpu="4", milli=500, count=1)
    roomy = used_node("a", 2, {})  # (60000/128000*0.5 + 1500/8000*0.5) -> 100*(1-0.328125)
    tight = info_of(  # 8000 cpu left, 500 milli left: 100*(1-0.015625)
        gpu_node("b", 1, cpu="9"), [gpu_pod("x", cpu="1", milli=500, count=1, index="0", node="b")]
    )
    middle = used_node("c", 1, {}, cpu="16")  # (12000/128000*0.5 + 500/8000*0.5)
    raw = [plugin.score(CycleState(), pod, info) for info in (roomy, tight, middle)]
    assert raw == [67, 98, 92]
    scores = dict(zip("abc", raw, strict=True))
    plugin.normalize_score(CycleState(), pod, scores)
    assert scores == {"a": 0, "b": 100, "c": (92 - 67) * 100 // (98 - 67)}
    assert normalize_min_max([5, 5]) == [0, 0]
    with pytest.raises(GpuScoreError, match="is negative, should not happen"):
        plugin.score(CycleState(), gpu_pod("p", cpu="80", milli=500, count=1), roomy)


# ---- DotProd (dot_product_score.go calculateDotProductScore) -----------------------------


@pytest.mark.parametrize(
    ("dim", "norm", "want"),
    [
        # free [500, 1000, 1000], 64000 CPU left; [0.5, 0.3125].[0.03125, 0.0625] / 2 = 0.0176
        ("merge", "max", (98, None)),
        # by capacity [65000, 3000]: [64/65, 2500/3000].[4/65, 500/3000] / 2 = 0.09974
        ("merge", "node", (90, None)),
        ("merge", "pod", (21, None)),  # by the pod: [16, 5].[1, 1] / 2 = 10.5; 1 - tanh(1.05)
        ("share", "max", (99, (0,))),  # GPU 0 [0.5, 0.0625] beats the free GPUs [0.5, 0.25]
        ("divide", "max", (99, (0,))),  # CPU divided as the GPU milli: 64000 * 500 / 2500
        ("extend", "max", (99, (0,))),  # dimensions [cpu, 500 on GPU 0, 2000 free]
    ],
)
def test_dot_product(dim: str, norm: str, want: tuple[int, Any]) -> None:
    plugin = DotProductScore(
        DotProductScoreArgs(dim_ext_method=dim, norm_method=norm),  # type: ignore[arg-type]
        FakeHandle(),  # type: ignore[arg-type]
    )
    node = used_node("n1", 3, {0: 500}, cpu="65")  # 64000 left after the 1-cpu pod
    pod = gpu_pod("p", cpu="4", milli=500, count=1)
    score = plugin.score(CycleState(), pod, node)
    choice = plugin.select_gpus(pod, gpu_request(pod), node, plugin.node_gpus(node))
    expected_choice = want[1] if dim != "merge" else (0,)  # merge: GPU choice "best"
    assert (score, choice) == (want[0], expected_choice)
    assert plugin.gpu_selection == ("best" if dim == "merge" else "DotProductScore")


def test_dot_product_without_cpu_left_scores_0() -> None:
    plugin = DotProductScore(DotProductScoreArgs(), FakeHandle())  # type: ignore[arg-type]
    assert (
        plugin.score(
            CycleState(), gpu_pod("p", cpu="99", milli=500, count=1), used_node("n1", 1, {})
        )
        == 0
    )


# ---- Random (random_score.go PreScore, Score) -------------------------------------------


def test_random_scores_the_node_drawn_at_pre_score() -> None:
    nodes = [used_node(f"n{i}", 1, {}) for i in range(5)]
    handle = FakeHandle(nodes, seed=3)
    plugin = RandomScore(handle)  # type: ignore[arg-type]
    state = CycleState()
    pod = gpu_pod("p", milli=500, count=1)
    assert plugin.pre_score(state, pod, nodes) is None
    drawn = nodes[random.Random(3).randrange(5)].name  # rand.Intn(len(nodes))
    assert [plugin.score(state, pod, n) for n in nodes] == [
        100 if n.name == drawn else 0 for n in nodes
    ]
    assert plugin.sign_pod(pod) == Status(Code.UNSCHEDULABLE, ("RandomScore draws a node per pod",))
    with pytest.raises(LookupError):
        plugin.score(CycleState(), pod, nodes[0])


# ---- the GPU choice at Reserve follows the policy (generate_config_and_run.py gpuSelMethod) --


async def _placement(policy: str, args: Any, share_args: Any = None) -> str:
    cluster = InMemoryCluster()
    config = gpu_profile(policy, args, share_args)
    async with Scheduler.open(config, cluster=cluster):
        await cluster.add_node(gpu_node("n1", 3))
        await cluster.add_pod(gpu_pod("a", cpu="1", milli=400, count=1, index="0", node="n1"))
        await cluster.add_pod(gpu_pod("b", cpu="1", milli=600, count=1, index="1", node="n1"))
        await cluster.add_pod(gpu_pod("p", cpu="1", milli=300, count=1))
        with anyio.fail_after(5):
            bound = await cluster.wait_bound("default/p")
    return bound.metadata.annotations[INDEX_KEY]


FGD_ARGS = {"typicalPods": [{"milliCpu": 1000, "milliGpu": 400, "gpuNumber": 1, "percentage": 1}]}


@pytest.mark.anyio
async def test_the_gpu_chosen_at_reserve_follows_the_policy() -> None:
    # free [600, 400, 1000], a pod of 300: FGD's GPU is 2 (see above), "best"'s is 1
    assert await _placement("FGDScore", FGD_ARGS) == "2"
    assert await _placement("FGDScore", FGD_ARGS, {"gpuSelMethod": "best"}) == "1"
    assert await _placement("BestFitScore", None) == "1"
    assert await _placement("GpuPackingScore", None, {"gpuSelMethod": "worst"}) == "2"
    assert await _placement("DotProductScore", {"dimExtMethod": "share"}) == "1"
