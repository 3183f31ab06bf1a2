"""The GPU plugins' batch forms give exactly what their per-node methods give.

Random clusters (GPU counts 0..8, several models, GPUs partly used, bound pods without a
gpu-index) and random pods (parts of a GPU, whole GPUs, several GPUs in part, models, CPU
only). At plugin level every Filter mask and every score column is compared with the
per-node results while nodes change row by row (as the snapshot refreshes the node table);
on the engine, whole runs with batch forms on and off must place every pod on the same node
and GPUs.
"""

from __future__ import annotations

import random
from typing import Any

import anyio
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

from ksched import InMemoryCluster, Scheduler
from ksched.api import Pod
from ksched.framework import CycleState, NodeInfo, PodInfo
from ksched.framework.batch import NodeTable
from ksched.plugins.gpu_share import (
    BestFitScore,
    DotProductScore,
    DotProductScoreArgs,
    FGDScore,
    FGDScoreArgs,
    GpuClusteringScore,
    GpuPackingScore,
    OpenGpuShare,
    OpenGpuShareArgs,
    RandomScore,
    gpu_request,
)
from ksched.plugins.gpu_share._fgd import fgd_score
from ksched.plugins.gpu_share._policy import cpu_left

MODELS = ("G2", "T4", "V100M16", "")
TYPICAL = typical(
    (4000, 500, 1, "", 0.2),
    (8000, 1000, 1, "", 0.2),
    (6000, 460, 1, "", 0.1),
    (12000, 1000, 2, "", 0.05),
    (8000, 250, 1, "T4", 0.1),
    (16000, 1000, 8, "", 0.05),
    (2000, 0, 0, "", 0.2),
    (32000, 0, 0, "", 0.1),
)


def random_pod(rng: random.Random, name: str, node: str | None = None, index: Any = None) -> Pod:
    kind = rng.random()
    cpu = f"{rng.choice([1, 2, 4, 6, 8, 12, 16])}"
    model = rng.choice([None, None, None, "T4", "G2|V100M16", "|"])
    if kind < 0.15:
        return gpu_pod(name, cpu=cpu, node=node)
    if kind < 0.6:
        milli, count = rng.choice([100, 250, 300, 460, 500, 700]), 1
    elif kind < 0.9:
        milli, count = 1000, rng.choice([1, 1, 2, 4, 8])
    else:
        milli, count = rng.choice([200, 300]), 2
    return gpu_pod(name, cpu=cpu, milli=milli, count=count, model=model, node=node, index=index)


def random_node(rng: random.Random, i: int) -> NodeInfo:
    gpus = rng.choice([0, 1, 2, 4, 8, 8])
    node = gpu_node(f"n{i:03d}", gpus, rng.choice(MODELS), cpu=str(rng.choice([16, 32, 64, 96])))
    pods: list[Pod] = []
    used = [0] * gpus
    for j in range(rng.randrange(5)):
        milli = rng.choice([100, 250, 460, 500, 1000])
        room = [d for d in range(gpus) if used[d] + milli <= 1000]
        if not room:
            continue
        d = rng.choice(room)
        used[d] += milli
        index = None if rng.random() < 0.2 else str(d)  # some bound without a gpu-index
        pods.append(
            gpu_pod(f"{node.name}-b{j}", cpu="1", milli=milli, count=1, index=index, node=node.name)
        )
    return info_of(node, pods)


def policies(handle: Any) -> list[Any]:
    return [
        FGDScore(FGDScoreArgs(typical_pods=TYPICAL), handle),
        GpuPackingScore(handle),
        BestFitScore(handle),
        GpuClusteringScore(handle),
        DotProductScore(DotProductScoreArgs(), handle),
        DotProductScore(DotProductScoreArgs(norm_method="node"), handle),
        RandomScore(handle),
    ]


def _per_node_scores(plugin: Any, state: CycleState, pod: Pod, infos: list[NodeInfo]) -> Any:
    try:
        return [plugin.score(state, pod, info) for info in infos]
    except Exception:
        return None  # the per-node method reports the node (the batch form must step aside)


def _place(
    rng: random.Random, share: OpenGpuShare, infos: list[NodeInfo], table: NodeTable, i: int
) -> None:
    """Put a random pod on a random node it fits (Filter + Reserve), as a cycle would."""
    pod = random_pod(rng, f"x{i}")
    row = rng.randrange(len(infos))
    state = CycleState()
    if share.pre_filter(state, pod, infos) is None and share.filter(state, pod, infos[row]):
        return
    share._handle.nodes = infos  # type: ignore[attr-defined]
    index = None
    if share.reserve(state, pod, infos[row].name) is None and pod.uid in share.ledger.reserved:
        index = "-".join(map(str, share.ledger.reserved.pop(pod.uid)))
    placed = gpu_pod(
        pod.name,
        cpu="1",
        milli=pod.metadata.annotations.get("alibabacloud.com/gpu-milli"),
        count=pod.metadata.annotations.get("alibabacloud.com/gpu-count"),
        index=index,
        node=infos[row].name,
    )
    new = infos[row].clone()
    new.add_pod(PodInfo.of(placed))
    new.generation = 1_000_000 + i  # a new node version, as the cache gives it
    infos[row] = new
    table.update_row(row, new)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batch_forms_equal_per_node_results(seed: int) -> None:
    rng = random.Random(seed)
    infos = [random_node(rng, i) for i in range(60)]
    table = NodeTable(infos)
    handle = FakeHandle(infos, seed=seed)
    share = OpenGpuShare(OpenGpuShareArgs(), handle)  # type: ignore[arg-type]
    handle.reserve_plugins = [("Open-Gpu-Share", share)]
    scorers = policies(handle)
    batched = {type(p).__name__: 0 for p in scorers} | {"filter": 0}
    for i in range(150):
        pod = random_pod(rng, f"p{i}")
        state = CycleState()
        share.pre_filter(state, pod, infos)
        verdicts = [share.filter(state, pod, info) for info in infos]
        mask = share.filter_batch(state, pod, table)
        if mask is not None:
            batched["filter"] += 1
            assert mask.tolist() == [v is None for v in verdicts], pod.name
            rejected = np.flatnonzero(~mask)
            made, which = share.filter_batch_status_groups(state, pod, table, rejected)
            assert [made[k] for k in which.tolist()] == [verdicts[r] for r in rejected.tolist()]
        # the rows the framework scores: those passing the Filters (GPU, CPU); sometimes any
        fits = [v is None for v in verdicts] & (table.free_cpu >= gpu_request(pod).cpu)
        feasible = np.flatnonzero(fits) if rng.random() < 0.8 else np.arange(len(infos))
        if len(feasible) < 2:
            _place(rng, share, infos, table, i)
            continue
        rows = np.array(sorted(rng.sample(feasible.tolist(), rng.randrange(2, len(feasible) + 1))))
        for plugin in scorers:
            state = CycleState()
            if isinstance(plugin, RandomScore):
                plugin.pre_score(state, pod, [infos[r] for r in rows.tolist()])
            want = _per_node_scores(plugin, state, pod, [infos[r] for r in rows.tolist()])
            got = plugin.score_batch(state, pod, table, rows)
            if got is None:
                continue
            batched[type(plugin).__name__] += 1
            assert want is not None and got.tolist() == want, (type(plugin).__name__, pod.name)
        _place(rng, share, infos, table, i)
    # the batch forms did the work (they step aside only for the rare pods they cannot take)
    assert all(n > 50 for n in batched.values()), batched


def test_fgd_gpu_choice_kept_by_the_batch_form_equals_the_per_node_choice() -> None:
    rng = random.Random(11)
    infos = [random_node(rng, i) for i in range(40)]
    table = NodeTable(infos)
    handle = FakeHandle(infos)
    fgd = FGDScore(FGDScoreArgs(typical_pods=TYPICAL), handle)  # type: ignore[arg-type]
    fresh = FGDScore(FGDScoreArgs(typical_pods=TYPICAL), handle)  # type: ignore[arg-type]

    for i in range(60):
        pod = gpu_pod(f"p{i}", cpu="2", milli=rng.choice([100, 250, 460, 500]), count=1)
        rows = np.arange(len(infos), dtype=np.int64)
        fgd.score_batch(CycleState(), pod, table, rows)
        request = gpu_request(pod)
        for info in infos:
            gpus = fgd.node_gpus(info)
            want = fgd_score(fresh.frag, cpu_left(info), gpus, request)[1]
            assert fgd.select_gpus(pod, request, info, gpus) == want


def _typical_args(pod: Any) -> dict[str, Any]:
    return {
        "milliCpu": pod.milli_cpu,
        "milliGpu": pod.milli_gpu,
        "gpuNumber": pod.gpu_number,
        "gpuType": pod.gpu_type,
        "percentage": pod.percentage,
    }


async def _run(policy: str, args: Any, batching: bool, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    cluster = InMemoryCluster()
    nodes = [random_node(rng, i) for i in range(30)]
    out: dict[str, Any] = {}
    async with Scheduler.open(gpu_profile(policy, args), cluster=cluster, seed=seed) as scheduler:
        scheduler.frameworks["default-scheduler"].fast.batching = batching
        for info in nodes:
            await cluster.add_node(info.node)
            for pod_info in info.pods:
                await cluster.add_pod(pod_info.pod)
        for i in range(120):
            pod = random_pod(rng, f"p{i}")
            await cluster.add_pod(pod)
            await anyio.wait_all_tasks_blocked()
            current = cluster.get_pod(pod.key)
            assert current is not None
            out[pod.name] = (current.spec.node_name, current.metadata.annotations.get(INDEX_KEY))
            if rng.random() < 0.1 and current.spec.node_name:
                await cluster.delete_pod(pod.key)  # some leave again
    return out


@pytest.mark.parametrize(
    ("policy", "args"),
    [
        ("FGDScore", {"typicalPods": [_typical_args(p) for p in TYPICAL]}),
        ("BestFitScore", None),
        ("GpuPackingScore", None),
        ("GpuClusteringScore", None),
        ("DotProductScore", None),
        ("RandomScore", None),
    ],
)
def test_the_engine_places_the_same_with_and_without_batch_forms(policy: str, args: Any) -> None:
    with_batch = anyio.run(_run, policy, args, True, 5)
    per_node = anyio.run(_run, policy, args, False, 5)
    assert with_batch == per_node
    assert sum(1 for node, _ in with_batch.values() if node) > 40  # many pods found a node
