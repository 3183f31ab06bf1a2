"""Open-Gpu-Share: the pod's GPU ask, Filter, Reserve/Unreserve, PreBind, the per-GPU state.

Cases follow the FGD artifact's Go code (hkust-adsl/kubernetes-scheduler-simulator @ 8f3d641);
each names the function it pins.
"""

from __future__ import annotations

import random
from typing import Any

import anyio
import anyio.lowlevel
import attrs
import pytest
from _gpu_share_fixtures import (
    INDEX_KEY,
    FakeHandle,
    gpu_node,
    gpu_pod,
    gpu_profile,
    info_of,
)

from ksched import ConfigError, InMemoryCluster, Scheduler, parse_config
from ksched.framework import Code, CycleState, Status
from ksched.plugins.gpu_share import GpuLedger, OpenGpuShare, OpenGpuShareArgs, gpu_request
from ksched.plugins.gpu_share._allocate import open_gpu_share_fit, subtract

# ---- the pod's ask (pkg/type/open-gpu-share/utils/pod.go) --------------------------------


@pytest.mark.parametrize(
    ("milli", "count", "index", "want"),
    [
        ("500", "1", None, (500, 1, ())),
        ("0.5k", "2", "0-1", (500, 2, (0, 1))),  # resource.ParseQuantity: 0.5k = 500
        ("1500m", "1", None, (2, 1, ())),  # Value() rounds up
        ("abc", "1", None, (0, 1, ())),  # not a quantity: 0
        ("", "1", None, (0, 1, ())),
        ("1e40", "1", None, (1_000_000_000, 1, ())),  # kept within MAX_GPU_MILLI
        ("-300", "1", None, (-300, 1, ())),  # <= 0: not a GPU pod
        ("500", "-1", None, (500, 0, ())),  # strconv.Atoi, val >= 0 else 0
        ("500", "x", None, (500, 0, ())),
        ("500", "+3", None, (500, 3, ())),  # Atoi takes a sign
        ("500", "99999999999999999999", None, (500, 0, ())),  # out of int64: error, 0
        ("500", "1", "2-x", (500, 1, None)),  # GpuIdStrToIntList fails
        ("500", "1", "3", (500, 1, (3,))),
    ],
    ids=[
        "plain",
        "quantity suffix",
        "milli suffix rounds up",
        "not a quantity",
        "empty",
        "huge exponent",
        "negative",
        "negative count",
        "count not a number",
        "count with sign",
        "count beyond int64",
        "bad gpu-index",
        "gpu-index",
    ],
)
def test_gpu_request_reads_annotations_as_the_artifact(
    milli: str, count: str, index: str | None, want: tuple[int, int, Any]
) -> None:
    # GetGpuMilliFromPodAnnotation, GetGpuCountFromPodAnnotation, GpuIdStrToIntList
    request = gpu_request(gpu_pod("p", milli=milli, count=count, index=index))
    assert (request.milli, request.gpu_count, request.devices) == want


@pytest.mark.parametrize(
    ("milli", "count", "want"),
    [
        (0, 0, None),
        (500, 1, "share-gpu"),
        (0, 1, "share-gpu"),  # count 1 and milli < 1000, as the artifact classifies it
        (1000, 1, "1-gpu"),
        (1000, 8, "8-gpu"),
        (500, 2, "2x500m-gpu"),  # the artifact panics here: a class of its own
    ],
)
def test_affinity_classes(milli: int, count: int, want: str | None) -> None:
    # GetGpuAffinityFromPodAnnotation
    assert gpu_request(gpu_pod("p", milli=milli, count=count)).affinity == want


def test_scoring_cpu_counts_100m_for_a_container_without_a_cpu_request() -> None:
    # GetPodResource: schedulerutil.GetNonzeroRequests per container
    pod = gpu_pod("p", cpu="2", milli=500, count=1)
    spec = attrs.evolve(
        pod.spec,
        containers=(*pod.spec.containers, attrs.evolve(pod.spec.containers[0], requests={})),
    )
    assert gpu_request(attrs.evolve(pod, spec=spec)).cpu == 2000 + 100


# ---- Filter (open_gpu_share.go Filter, gpunodeinfo.go AllocateGpuId) ----------------------


def _share(handle: FakeHandle | None = None, **args: Any) -> OpenGpuShare:
    return OpenGpuShare(OpenGpuShareArgs(**args), handle or FakeHandle())  # type: ignore[arg-type]


def _node_with(name: str, gpus: int, used: dict[int, int], model: str = "G2") -> Any:
    """A NodeInfo whose GPUs hold ``used`` milli (device -> milli), by bound pods."""
    pods = [
        gpu_pod(f"{name}-u{d}", cpu="1", milli=m, count=1, index=str(d), node=name)
        for d, m in used.items()
    ]
    return info_of(gpu_node(name, gpus, model), pods)


FILTER_CASES = [
    ("pod without gpu-milli passes a node without GPUs", gpu_pod("p"), 0, {}, None),
    ("node without GPUs", gpu_pod("p", milli=500, count=1), 0, {}, "reject"),
    ("one GPU with room", gpu_pod("p", milli=500, count=1), 2, {0: 800, 1: 500}, None),
    ("one GPU, none with room", gpu_pod("p", milli=600, count=1), 2, {0: 800, 1: 500}, "reject"),
    ("gpu-count 0 with gpu-milli", gpu_pod("p", milli=500, count=0), 2, {}, "reject"),
    ("model accepted", gpu_pod("p", milli=500, count=1, model="V100M16|G2"), 1, {}, None),
    ("model not accepted", gpu_pod("p", milli=500, count=1, model="T4"), 1, {}, "reject"),
    ("separators name no model", gpu_pod("p", milli=500, count=1, model="|"), 1, {}, None),
    ("whole GPUs: two free", gpu_pod("p", milli=1000, count=2), 3, {1: 500}, None),
    ("whole GPUs: one free", gpu_pod("p", milli=1000, count=2), 2, {1: 500}, "reject"),
    (
        "several in part: two slots on one GPU",
        gpu_pod("p", milli=300, count=2),
        2,
        {0: 300, 1: 1000},
        None,
    ),
    ("several in part: one slot", gpu_pod("p", milli=600, count=2), 2, {0: 300, 1: 1000}, "reject"),
    ("own gpu-index with room", gpu_pod("p", milli=500, count=1, index="1"), 2, {0: 800}, None),
    (
        "own gpu-index without room",
        gpu_pod("p", milli=500, count=1, index="0"),
        2,
        {0: 800},
        "reject",
    ),
    ("own gpu-index out of range", gpu_pod("p", milli=500, count=1, index="5"), 2, {}, "reject"),
    ("bad gpu-index: allocated as usual", gpu_pod("p", milli=500, count=1, index="x"), 2, {}, None),
]


@pytest.mark.parametrize(
    ("pod", "gpus", "used", "want"),
    [c[1:] for c in FILTER_CASES],
    ids=[c[0] for c in FILTER_CASES],
)
def test_filter(pod: Any, gpus: int, used: dict[int, int], want: str | None) -> None:
    info = _node_with("n1", gpus, used)
    plugin = _share()
    state = CycleState()
    pre = plugin.pre_filter(state, pod, [info])
    status = plugin.filter(state, pod, info)
    if want is None:
        assert status is None
        return
    # Open-Gpu-Share's reason names the node (framework.NewStatus(Unschedulable, "Node:"+name))
    assert status == Status(Code.UNSCHEDULABLE, ("Node:n1",), plugin="Open-Gpu-Share")
    assert pre is None


def test_pre_filter_skips_pods_without_gpu_milli() -> None:
    assert _share().pre_filter(CycleState(), gpu_pod("p"), []) == Status(Code.SKIP)


def test_allocate_gpu_id_two_pointers() -> None:
    # AllocateGpuId, multi-GPU: GPUs in index order, each as often as it has room
    request = gpu_request(gpu_pod("p", milli=300, count=3))
    assert open_gpu_share_fit((700, 1000, 200), request, None) == (0, 0, 1)
    assert open_gpu_share_fit((200, 300, 1000), request, None) == (1, 2, 2)
    assert open_gpu_share_fit((200, 300, 500), request, None) is None
    # one GPU: the tightest fit, lowest index among equals
    one = gpu_request(gpu_pod("p", milli=300, count=1))
    assert open_gpu_share_fit((500, 300, 1000, 300), one, None) == (1,)


def test_node_resource_sub() -> None:
    # pkg/type/resource_test.go TestNodeResource_Sub: {200, 1000, 1000, 500} - 2 x 1000
    request = gpu_request(gpu_pod("p", cpu="100m", milli=1000, count=2))
    assert subtract(1000, (200, 1000, 1000, 500), request) == (900, [200, 0, 0, 500])
    # lacking CPU or GPU count: unchanged; lacking fitting GPUs: what was taken stays
    assert subtract(50, (200, 1000), request) == (50, [200, 1000])
    assert subtract(1000, (1000, 500), request) == (900, [0, 500])


# ---- Reserve: the GPU selection (open_gpu_share.go allocateGpuIdBasedOn*) -----------------


def _reserve(plugin: OpenGpuShare, pod: Any) -> tuple[int, ...] | Status:
    status = plugin.reserve(CycleState(), pod, "n1")
    if status is not None:
        return status
    return plugin.ledger.reserved[pod.uid]


@pytest.mark.parametrize(
    ("method", "pod", "used", "want"),
    [
        ("best", gpu_pod("p", milli=300, count=1), {0: 700, 1: 200, 2: 500}, (0,)),
        ("worst", gpu_pod("p", milli=300, count=1), {0: 700, 1: 200, 2: 500}, (3,)),
        ("best", gpu_pod("p", milli=1000, count=2), {0: 700}, (1, 2)),
        ("worst", gpu_pod("p", milli=1000, count=1), {0: 700}, (1,)),
        ("best", gpu_pod("p", milli=300, count=2), {0: 400, 1: 700}, (0, 0)),
    ],
    ids=[
        "best: the fullest GPU with room",
        "worst: the emptiest GPU",
        "whole GPUs: the lowest free ones",
        "worst, whole GPU: the lowest free one",
        "several in part: two pointers",
    ],
)
def test_reserve_picks_gpus(method: str, pod: Any, used: dict[int, int], want: Any) -> None:
    info = _node_with("n1", 4, used)
    plugin = _share(FakeHandle([info]), gpu_sel_method=method)
    assert _reserve(plugin, pod) == want


def test_random_selection_draws_uniformly_among_gpus_with_room() -> None:
    # allocateGpuIdBasedOnRandomFit: reservoir sampling, rand.Intn(k) at the k-th candidate
    info = _node_with("n1", 4, {1: 900})
    counts = {d: 0 for d in range(4)}
    for seed in range(400):
        plugin = _share(FakeHandle([info], seed=seed), gpu_sel_method="random")
        pod = gpu_pod(f"p{seed}", milli=500, count=1)
        found = _reserve(plugin, pod)
        assert isinstance(found, tuple)
        counts[found[0]] += 1
    assert counts[1] == 0  # 100 free: never
    assert all(90 <= counts[d] <= 180 for d in (0, 2, 3)), counts


def test_reserve_without_room_is_an_error_and_unreserve_releases() -> None:
    info = _node_with("n1", 1, {0: 800})
    plugin = _share(FakeHandle([info]))
    failed = _reserve(plugin, gpu_pod("p", milli=500, count=1))
    assert isinstance(failed, Status) and failed.code is Code.ERROR
    assert "failed to allocate gpu to pod(default/p) to node(n1)" in failed.message
    pod = gpu_pod("q", milli=200, count=1)
    assert _reserve(plugin, pod) == (0,)
    plugin.unreserve(CycleState(), pod, "n1")
    plugin.unreserve(CycleState(), pod, "n1")  # idempotent
    assert pod.uid not in plugin.ledger.reserved


def test_gpu_sel_method_is_validated() -> None:
    with pytest.raises(ConfigError, match=r"Open-Gpu-Share: args.gpuSelMethod: must be one of"):
        OpenGpuShare.new({"gpuSelMethod": "fastest"}, FakeHandle())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"unknown field \(did you mean 'gpuSelMethod'\?\)"):
        OpenGpuShare.new({"gpu_sel_method": "best"}, FakeHandle())  # type: ignore[arg-type]


# ---- the per-GPU state of a NodeInfo (gpunodeinfo.go, deviceinfo.go GetUsedGpuMilli) ------


def test_usage_comes_from_the_pods_on_the_node_info() -> None:
    ledger = GpuLedger()
    node = gpu_node("n1", 4)
    pods = [
        gpu_pod("a", milli=300, count=1, index="0", node="n1"),
        gpu_pod("b", milli=200, count=1, index="0", node="n1"),
        gpu_pod("c", milli=1000, count=2, index="2-3", node="n1"),
        gpu_pod("d", milli=500, count=1, index="9", node="n1"),  # no such GPU: ignored
        gpu_pod("e", milli=500, count=1, index="x", node="n1"),  # bad index: counts nowhere
        gpu_pod("f", cpu="8", node="n1"),  # no GPU
    ]
    gpus = ledger.node_gpus(info_of(node, pods))
    assert gpus.free == (500, 1000, 0, 0)
    assert gpus.affinity == {"share-gpu": 4, "2-gpu": 1}
    assert (gpus.total_free, gpus.fully_free) == (1500, 1)


def test_a_bound_pod_without_gpu_index_is_placed_as_open_gpu_share_would() -> None:
    # Bound by another scheduler (or before a restart): the tightest GPU with room.
    ledger = GpuLedger()
    pods = [
        gpu_pod("a", milli=700, count=1, index="1", node="n1"),
        gpu_pod("b", milli=200, count=1, node="n1"),
        gpu_pod("c", milli=900, count=1, node="n1"),
        gpu_pod("d", milli=900, count=1, node="n1"),  # fits nowhere any more: on no GPU
    ]
    assert ledger.node_gpus(info_of(gpu_node("n1", 2), pods)).free == (100, 100)


def test_reserved_gpus_count_before_the_pod_carries_them() -> None:
    ledger = GpuLedger()
    node = gpu_node("n1", 2)
    assumed = gpu_pod("a", milli=600, count=1, node="n1")
    ledger.reserved[assumed.uid] = (1,)
    assert ledger.node_gpus(info_of(node, [assumed])).free == (1000, 400)
    # a gpu-index left from an earlier attempt does not override the reservation
    stale = gpu_pod("a", milli=600, count=1, index="0", node="n1")
    assert ledger.node_gpus(info_of(node, [stale])).free == (1000, 400)


def test_the_state_is_kept_per_node_info_version() -> None:
    ledger = GpuLedger()
    info = info_of(gpu_node("n1", 1), [gpu_pod("a", milli=600, count=1, index="0", node="n1")])
    first = ledger.node_gpus(info)
    assert ledger.node_gpus(info) is first
    clone = info.clone()  # a preemption dry run's copy without the pod
    clone.remove_pod(info.pods[0].pod)
    assert ledger.node_gpus(clone).free == (1000,)
    assert ledger.node_gpus(info).free == (400,)


def test_filter_on_a_dry_run_copy_sees_its_victims_gone() -> None:
    victim = gpu_pod("low", milli=800, count=1, index="0", node="n1")
    info = info_of(gpu_node("n1", 1), [victim])
    plugin = _share()
    pod = gpu_pod("high", milli=500, count=1)
    state = CycleState()
    plugin.pre_filter(state, pod, [info])
    assert plugin.filter(state, pod, info) is not None
    trial = info.clone()
    trial.remove_pod(victim)
    assert plugin.filter(state, pod, trial) is None
    assert plugin.filter(state, pod, info) is not None  # the original is untouched


def test_ledger_forgets_pods_reported_bound_with_their_gpus_or_deleted() -> None:
    ledger = GpuLedger()
    pending = gpu_pod("a", milli=500, count=1)
    ledger.reserved[pending.uid] = (1,)
    bound_elsewhere = gpu_pod("a", milli=500, count=1, index="0", node="n1")
    ledger.on_cluster_change("Pod", pending, bound_elsewhere)
    assert ledger.reserved  # another index: not the choice recorded
    bound = gpu_pod("a", milli=500, count=1, index="1", node="n1")
    ledger.on_cluster_change("Pod", pending, bound)
    assert not ledger.reserved
    ledger.reserved["default/b"] = (0,)
    ledger.on_cluster_change("Pod", gpu_pod("b"), None)
    assert not ledger.reserved


# ---- on the engine ---------------------------------------------------------------------


async def _bound(cluster: InMemoryCluster, key: str) -> Any:
    with anyio.fail_after(5):
        return await cluster.wait_bound(key)


async def _settle() -> None:
    await anyio.wait_all_tasks_blocked()


@pytest.mark.anyio
async def test_pre_bind_records_gpu_index_and_the_next_pod_sees_it() -> None:
    cluster = InMemoryCluster()
    async with Scheduler.open(gpu_profile("GpuPackingScore"), cluster=cluster):
        await cluster.add_node(gpu_node("n1", 1))
        await cluster.add_pod(gpu_pod("a", milli=600, count=1))
        first = await _bound(cluster, "default/a")
        assert first.metadata.annotations[INDEX_KEY] == "0"
        await cluster.add_pod(gpu_pod("b", milli=500, count=1))  # 400 left: does not fit
        await cluster.add_pod(gpu_pod("c", milli=400, count=1))
        third = await _bound(cluster, "default/c")
        assert third.metadata.annotations[INDEX_KEY] == "0"
        await _settle()
        assert not cluster.get_pod("default/b").spec.node_name  # type: ignore[union-attr]
        condition = cluster.conditions["default/b"]
        assert condition["reason"] == "Unschedulable"
        assert "0/1 nodes are available: 1 Node:n1." in condition["message"]


@pytest.mark.anyio
async def test_whole_gpus_and_shares_on_one_node() -> None:
    cluster = InMemoryCluster()
    async with Scheduler.open(gpu_profile("GpuPackingScore"), cluster=cluster):
        await cluster.add_node(gpu_node("n1", 4))
        await cluster.add_pod(gpu_pod("share", milli=300, count=1))
        assert (await _bound(cluster, "default/share")).metadata.annotations[INDEX_KEY] == "0"
        await cluster.add_pod(gpu_pod("two", milli=1000, count=2))
        assert (await _bound(cluster, "default/two")).metadata.annotations[INDEX_KEY] == "1-2"
        await cluster.add_pod(gpu_pod("more", milli=500, count=1))  # GpuPacking: shared first
        assert (await _bound(cluster, "default/more")).metadata.annotations[INDEX_KEY] == "0"


class _RejectFirst:
    """A Permit plugin that rejects the first pod it sees (Unreserve must undo Reserve)."""

    name = "RejectFirst"

    def __init__(self) -> None:
        self.seen = 0

    def permit(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        self.seen += 1
        return Status(Code.UNSCHEDULABLE, ("no",)) if self.seen == 1 else None


@pytest.mark.anyio
async def test_unreserve_releases_the_gpus_of_a_pod_rejected_at_permit() -> None:
    plugin = _RejectFirst()
    config = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}]},
                        "permit": {"enabled": [{"name": "RejectFirst"}]},
                    },
                }
            ],
        }
    )
    cluster = InMemoryCluster()
    registry = {"RejectFirst": lambda args, handle: plugin}
    async with Scheduler.open(config, cluster=cluster, registry=registry) as scheduler:
        await cluster.add_node(gpu_node("n1", 1))
        await cluster.add_pod(gpu_pod("a", milli=1000, count=1))
        await _settle()
        share = scheduler.frameworks["default-scheduler"].plugins["Open-Gpu-Share"]
        assert isinstance(share, OpenGpuShare)
        assert not share.ledger.reserved
        pod = cluster.get_pod("default/a")
        assert pod is not None and INDEX_KEY not in pod.metadata.annotations
        # the next attempt (a node event wakes the pod) finds the GPU free again
        await cluster.add_node(gpu_node("n0", 0))
        bound = await _bound(cluster, "default/a")
        assert (bound.spec.node_name, bound.metadata.annotations[INDEX_KEY]) == ("n1", "0")


@pytest.mark.anyio
async def test_preemption_frees_the_gpu_of_a_lower_priority_pod() -> None:
    cluster = InMemoryCluster()
    async with Scheduler.open(gpu_profile("GpuPackingScore"), cluster=cluster):
        await cluster.add_node(gpu_node("n1", 1))
        await cluster.add_pod(gpu_pod("low", milli=800, count=1, priority=1))
        await _bound(cluster, "default/low")
        await cluster.add_pod(gpu_pod("high", milli=500, count=1, priority=100))
        with anyio.fail_after(30):
            bound = await cluster.wait_bound("default/high")
        assert cluster.evicted == ["default/low"]
        assert bound.metadata.annotations[INDEX_KEY] == "0"


@pytest.mark.anyio
async def test_a_gpu_rejected_pod_is_retried_when_a_gpu_pod_leaves() -> None:
    cluster = InMemoryCluster()
    async with Scheduler.open(gpu_profile("GpuPackingScore", preemption=False), cluster=cluster):
        await cluster.add_node(gpu_node("n1", 1))
        await cluster.add_pod(gpu_pod("a", milli=800, count=1))
        await _bound(cluster, "default/a")
        await cluster.add_pod(gpu_pod("b", milli=500, count=1))
        await _settle()
        assert cluster.get_pod("default/b").spec.node_name is None  # type: ignore[union-attr]
        await cluster.delete_pod("default/a")
        bound = await _bound(cluster, "default/b")
        assert bound.metadata.annotations[INDEX_KEY] == "0"


@pytest.mark.anyio
async def test_pods_bound_before_the_scheduler_starts_hold_their_gpus() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(gpu_node("n1", 2))
    await cluster.add_pod(gpu_pod("old", milli=700, count=1, index="1", node="n1"))
    # no gpu-index: counted where Open-Gpu-Share would put it (GPU 0, the only one with room)
    await cluster.add_pod(gpu_pod("unindexed", milli=1000, count=1, node="n1"))
    async with Scheduler.open(gpu_profile("GpuPackingScore", preemption=False), cluster=cluster):
        await cluster.add_pod(gpu_pod("big", milli=400, count=1))
        await cluster.add_pod(gpu_pod("small", milli=300, count=1))
        bound = await _bound(cluster, "default/small")
        await _settle()
        assert bound.metadata.annotations[INDEX_KEY] == "1"
        assert cluster.get_pod("default/big").spec.node_name is None  # type: ignore[union-attr]


def test_a_random_pod_order_never_overcommits_a_gpu() -> None:
    """Filter + Reserve on one node, pods in random order: no GPU ever holds more than
    1000 milli, and the pods that fit are exactly those Open-Gpu-Share would admit."""
    rng = random.Random(7)
    for trial in range(30):
        node = gpu_node("n1", rng.choice([1, 2, 4, 8]))
        placed: list[Any] = []
        handle = FakeHandle([info_of(node)])
        plugin = _share(handle, gpu_sel_method=rng.choice(["best", "worst", "random"]))
        for i in range(20):
            milli = rng.choice([100, 250, 500, 1000])
            count = 1 if milli < 1000 else rng.choice([1, 2])
            pod = gpu_pod(f"p{trial}-{i}", milli=milli, count=count)
            state = CycleState()
            plugin.pre_filter(state, pod, handle.nodes)
            if plugin.filter(state, pod, handle.nodes[0]) is not None:
                continue
            assert plugin.reserve(state, pod, "n1") is None
            index = "-".join(map(str, plugin.ledger.reserved.pop(pod.uid)))
            placed.append(gpu_pod(pod.name, milli=milli, count=count, index=index, node="n1"))
            handle.nodes = [info_of(node, placed)]
            free = plugin.ledger.node_gpus(handle.nodes[0]).free
            assert min(free) >= 0, (trial, i, free)
        admitted = sum(
            int(p.metadata.annotations["alibabacloud.com/gpu-milli"])
            * int(p.metadata.annotations["alibabacloud.com/gpu-count"])
            for p in placed
        )
        assert admitted == node_gpus_used(plugin, handle)


def node_gpus_used(plugin: OpenGpuShare, handle: FakeHandle) -> int:
    gpus = plugin.ledger.node_gpus(handle.nodes[0])
    return gpus.gpu_count * 1000 - gpus.total_free


# ---- other clusters: an annotation writer, or none; what-if evaluation -------------------


class _AnnotatingCluster(InMemoryCluster):
    """A store that is not the embedded cluster's own but offers ``annotate_pod``."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[tuple[str, dict[str, str]]] = []

    async def annotate_pod(self, pod: Any, annotations: Any) -> None:
        await anyio.lowlevel.checkpoint()
        self.written.append((pod.key, dict(annotations)))


class _Handle(FakeHandle):
    def __init__(self, cluster: Any, nodes: Any) -> None:
        super().__init__(nodes)
        self.cluster = cluster


@pytest.mark.anyio
async def test_pre_bind_writes_through_a_pod_annotator() -> None:
    cluster = _AnnotatingCluster()
    info = _node_with("n1", 2, {0: 900})
    handle = _Handle(cluster, [info])
    plugin = OpenGpuShare.new(None, handle)  # type: ignore[arg-type]
    assert type(plugin) is OpenGpuShare  # a PodAnnotator: the async PreBind
    plain = OpenGpuShare.new(None, _Handle(InMemoryCluster(), [info]))  # type: ignore[arg-type]
    assert type(plain) is not OpenGpuShare  # the embedded cluster: written in place
    pod = gpu_pod("p", milli=500, count=1)
    state = CycleState()
    assert plugin.reserve(state, pod, "n1") is None
    assert plugin.pre_bind_pre_flight(state, pod, "n1") is None
    assert await plugin.pre_bind(state, pod, "n1") is None
    assert cluster.written == [("default/p", {INDEX_KEY: "1"})]
    assert plugin.ledger.written == {"default/p": "1"}
    # the pod back with its gpu-index needs no PreBind
    annotated = gpu_pod("p", milli=500, count=1, index="1")
    assert plugin.pre_bind_pre_flight(state, annotated, "n1") == Status(Code.SKIP)


class _PlainStore:
    """A store with no way to write annotations (only what the plugin subscribes with)."""

    def subscribe(self, listener: Any) -> None:
        self.listener = listener

    def unsubscribe(self, listener: Any) -> None:
        self.listener = None


def test_without_an_annotation_writer_the_choice_is_kept_until_the_pod_leaves() -> None:
    store = _PlainStore()
    info = _node_with("n1", 1, {})
    plugin = OpenGpuShare(OpenGpuShareArgs(), _Handle(store, [info]))  # type: ignore[arg-type]
    pod = gpu_pod("p", milli=500, count=1)
    state = CycleState()
    assert plugin.reserve(state, pod, "n1") is None
    assert plugin.pre_bind_pre_flight(state, pod, "n1") == Status(Code.SKIP)
    bound = gpu_pod("p", milli=500, count=1, node="n1")  # reported bound, no gpu-index
    store.listener("Pod", pod, bound)
    assert plugin.ledger.node_gpus(info_of(gpu_node("n1", 1), [bound])).free == (500,)
    store.listener("Pod", bound, None)
    assert not plugin.ledger.reserved
    plugin.close()
    assert store.listener is None


@pytest.mark.anyio
async def test_evaluate_scores_gpu_nodes_as_the_extender_asks() -> None:
    # ksched extender serve answers filter/prioritize through Scheduler.evaluate
    cluster = InMemoryCluster()
    async with Scheduler.open(gpu_profile("GpuPackingScore"), cluster=cluster) as scheduler:
        await cluster.add_node(gpu_node("n1", 1))
        await cluster.add_node(gpu_node("n2", 2, model="T4"))
        await cluster.add_pod(gpu_pod("a", milli=600, count=1, index="0", node="n1"))
        await _settle()
        found = await scheduler.evaluate(gpu_pod("p", milli=300, count=1), score=True)
        assert found.feasible == ["n1", "n2"]
        # GpuPacking: the shared GPU (400 free) 100 - 40/10 = 96; the free node max(33-2, 2)
        assert found.totals == {"n1": 96 * 1000, "n2": 31 * 1000}
        typed = await scheduler.evaluate(gpu_pod("q", milli=300, count=1, model="T4"))
        assert typed.feasible == ["n2"]
        assert typed.statuses.get("n1").reasons == ("Node:n1",)
