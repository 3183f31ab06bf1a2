"""Opportunistic batching: signatures, the hint rules, and upstream's batch scenarios.

# pkg/scheduler/framework/runtime/batch_test.go, signature_test.go
# test/integration/scheduler/batch/batch_test.go (TestBatchScenarios)
# pkg/scheduler/framework/plugins/interpodaffinity (TestPodAffinitySignature)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from trio.testing import MockClock

from ksched.api import (
    Affinity,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)
from ksched.cluster import InMemoryCluster
from ksched.config import load_config
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.framework._fast._opportunistic import OpportunisticBatch
from ksched.framework.batch import LABELS, RESOURCES, SignFragment
from ksched.plugins.inter_pod_affinity import InterPodAffinity
from ksched.plugins.pod_topology_spread import PodTopologySpread
from ksched.scheduler import Scheduler
from ksched.testing import FakeHandle, make_node, make_pod

# Upstream's batch scenarios clear PodTopologySpread's system default constraints:
# with them every pod is unsignable.
NO_DEFAULT_SPREAD = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: List, defaultConstraints: []}
- schedulerName: mysched
  pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: List, defaultConstraints: []}
- schedulerName: nosign
  plugins:
    filter:
      enabled: [{name: NoSign}]
  pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: List, defaultConstraints: []}
- schedulerName: emptysign
  plugins:
    filter:
      enabled: [{name: EmptySign}]
  pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: List, defaultConstraints: []}
"""


class NoSign:
    """A Filter that cannot sign pods: batching is off for its profile."""

    name = "NoSign"

    @classmethod
    def new(cls, args: Any, handle: Any) -> NoSign:
        return cls()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> None:
        return None


class EmptySign(NoSign):
    """A Filter that refuses to sign every pod."""

    name = "EmptySign"

    @classmethod
    def new(cls, args: Any, handle: Any) -> EmptySign:
        return cls()

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment] | Status:
        return Status(Code.UNSCHEDULABLE)


REGISTRY = {"NoSign": NoSign.new, "EmptySign": EmptySign.new}


# ---- upstream's batch scenarios ------------------------------------------------------


def batch_pod(
    name: str,
    affinity: Sequence[str] = (),
    selector: dict[str, str] | None = None,
    scheduler: str = "default-scheduler",
) -> Pod:
    """10 cpu, 4Mi; preferred affinity to ``affinity`` by name, weights len..1."""
    terms = tuple(
        PreferredSchedulingTerm(
            weight=len(affinity) - i,
            preference=NodeSelectorTerm(
                match_fields=(
                    NodeSelectorRequirement(key="metadata.name", operator="In", values=(node,)),
                )
            ),
        )
        for i, node in enumerate(affinity)
    )
    builder = make_pod(name).req(cpu="10", memory=str(4 * 1024 * 1024)).scheduler_name(scheduler)
    builder.affinity(Affinity(node_affinity=NodeAffinity(preferred=terms)))
    if selector:
        builder.node_selector(selector)
    return builder.obj()


def batch_node(name: str, max_pods: int, labels: dict[str, str] | None = None) -> Any:
    builder = make_node(name).capacity(cpu="100", memory="4Gi", pods=max_pods)
    if labels:
        builder.labels(labels)
    return builder.obj()


SCENARIOS: list[Any] = [
    pytest.param([("n1", 1, None)], [(batch_pod("p1"), "n1", False)], id="one pod one node"),
    pytest.param(
        [("n3", 10, {"forpod": "3"}), ("n2", 10, {"forpod": "2"}), ("n1", 10, {"forpod": "1"})],
        [
            (batch_pod("p1", selector={"forpod": "1"}), "n1", False),
            (batch_pod("p2", selector={"forpod": "2"}), "n2", False),
            (batch_pod("p3", selector={"forpod": "3"}), "n3", False),
        ],
        id="distinct pods on distinct nodes",
    ),
    pytest.param(
        [("n3", 1, None), ("n2", 1, None), ("n1", 1, None)],
        [
            (batch_pod("p1", ["n1", "n2", "n3"]), "n1", False),
            (batch_pod("p2", ["n1", "n2", "n3"]), "n2", True),
            (batch_pod("p3", ["n1", "n2", "n3"]), "n3", True),
        ],
        id="three pod batch",
    ),
    pytest.param(
        [("n4", 1, None), ("n3", 1, None), ("n2", 1, None), ("n1", 1, None)],
        [
            (batch_pod("p1", ["n1", "n2"]), "n1", False),
            (batch_pod("p2", ["n1", "n2"]), "n2", True),
            (batch_pod("p3", ["n4", "n3"]), "n4", False),
            (batch_pod("p4", ["n4", "n3"]), "n3", True),
        ],
        id="two consecutive batches",
    ),
    pytest.param(
        [("n4", 2, None), ("n3", 2, None), ("n2", 2, None), ("n1", 2, None)],
        [
            (batch_pod("p1", ["n1", "n2"]), "n1", False),
            (batch_pod("p2", ["n1", "n2"]), "n1", False),
            (batch_pod("p3", ["n4", "n3"]), "n4", False),
            (batch_pod("p4", ["n4", "n3"]), "n4", False),
        ],
        id="multiple pods per node means no batching",
    ),
    pytest.param(
        [("n3", 1, None), ("n2", 1, None), ("n1", 1, None)],
        [
            (batch_pod("p1", ["n1", "n2", "n3"]), "n1", False),
            (batch_pod("p2", ["n1", "n2", "n3"], scheduler="mysched"), "n2", False),
        ],
        id="no batching between schedulers",
    ),
    pytest.param(
        [("n3", 1, None), ("n2", 1, None), ("n1", 1, None)],
        [
            (batch_pod("p1", ["n1", "n2", "n3"], scheduler="nosign"), "n1", False),
            (batch_pod("p2", ["n1", "n2", "n3"], scheduler="nosign"), "n2", False),
        ],
        id="no batching missing sign",
    ),
    pytest.param(
        [("n3", 1, None), ("n2", 1, None), ("n1", 1, None)],
        [
            (batch_pod("p1", ["n1", "n2", "n3"], scheduler="emptysign"), "n1", False),
            (batch_pod("p2", ["n1", "n2", "n3"], scheduler="emptysign"), "n2", False),
        ],
        id="no batching empty sign",
    ),
]


def batched_total(sched: Scheduler) -> int:
    return sum(fw.batch.batched_pods for fw in sched.frameworks.values() if fw.batch)


@pytest.mark.anyio
@pytest.mark.parametrize(("nodes", "pods"), SCENARIOS)
async def test_batch_scenarios(
    nodes: list[tuple[str, int, dict[str, str] | None]], pods: list[tuple[Pod, str, bool]]
) -> None:
    """Each pod is created once the previous one is bound, as upstream's test does."""
    cluster = InMemoryCluster()
    for name, max_pods, labels in nodes:
        await cluster.add_node(batch_node(name, max_pods, labels))
    cfg = load_config(NO_DEFAULT_SPREAD)
    async with Scheduler.open(cfg, cluster, registry=REGISTRY) as sched:
        for pod, want_node, want_batched in pods:
            before = batched_total(sched)
            await cluster.add_pod(pod)
            got = await cluster.wait_bound(pod.key, timeout=10)
            assert got.spec.node_name == want_node, pod.name
            assert (batched_total(sched) > before) is want_batched, pod.name


@pytest.mark.anyio
async def test_batching_off_evaluates_every_pod_in_full() -> None:
    cluster = InMemoryCluster()
    for name in ("n3", "n2", "n1"):
        await cluster.add_node(batch_node(name, 1))
    cfg = load_config(NO_DEFAULT_SPREAD)
    async with Scheduler.open(
        cfg, cluster, registry=REGISTRY, opportunistic_batching=False
    ) as sched:
        for i in (1, 2, 3):
            pod = batch_pod(f"p{i}", ["n1", "n2", "n3"])
            await cluster.add_pod(pod)
            assert (await cluster.wait_bound(pod.key, timeout=10)).spec.node_name == f"n{i}"
        assert batched_total(sched) == 0


@pytest.mark.anyio
async def test_default_profile_signs_no_pod() -> None:
    """PodTopologySpread's system default constraints make every pod unsignable."""
    sched = Scheduler(cluster=InMemoryCluster())
    batch = sched.frameworks["default-scheduler"].batch
    assert batch is not None
    assert batch.sign(make_pod("p").req(cpu="1").obj()) is None


# ---- the hint rules (batch.go) -------------------------------------------------------


class _Signer:
    name = "S"

    def __init__(self) -> None:
        self.value: object = "sig"

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment] | Status:
        return (("k", self.value),)


def _node(name: str) -> NodeInfo:
    return NodeInfo(make_node(name).capacity(cpu="1").obj())


class _Nodes:
    def __init__(self, *names: str) -> None:
        self.infos = {n: _node(n) for n in names}

    def get(self, name: str) -> NodeInfo | None:
        return self.infos.get(name)


def _filter(code: Code) -> Any:
    async def run(info: NodeInfo) -> Status:
        return Status(code)

    return run


POD = make_pod("p").obj()
FULL = _filter(Code.UNSCHEDULABLE)


async def _hint(
    batch: OpportunisticBatch,
    signer: _Signer,
    cycle: int,
    now: float = 0.0,
    nodes: _Nodes | None = None,
    run_filter: Any = FULL,
) -> str | None:
    nodes = nodes or _Nodes("n1", "n2", "n3")
    return await batch.node_hint(batch.sign(POD), cycle, now, nodes.get, run_filter)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("case", "want_hint", "want_flush"),
    [
        ("match", "n1", None),
        ("skipped cycle", None, "flush_pod_skipped"),
        ("other signature", None, "flush_pod_incompatible"),
        ("expired", None, "flush_expired"),
        ("chosen node gone", None, "flush_node_missing"),
        ("chosen node not full", None, "flush_node_not_full"),
        ("chosen node filter error", None, "flush_node_not_full"),
    ],
)
async def test_hint_rules(case: str, want_hint: str | None, want_flush: str | None) -> None:
    signer = _Signer()
    batch = OpportunisticBatch([signer])
    assert await _hint(batch, signer, 1) is None
    batch.store(batch.sign(POD), None, "n3", lambda: ["n1", "n2"], 1, now=10.0)
    cycle, now, nodes, run_filter = 2, 10.0, _Nodes("n1", "n2", "n3"), FULL
    if case == "skipped cycle":
        cycle = 3
    elif case == "other signature":
        signer.value = "other"
    elif case == "expired":
        now = 10.0 + 0.5001
    elif case == "chosen node gone":
        nodes = _Nodes("n1", "n2")
    elif case == "chosen node not full":
        run_filter = _filter(Code.SUCCESS)
    elif case == "chosen node filter error":
        run_filter = _filter(Code.ERROR)
    hint = await _hint(batch, signer, cycle, now, nodes, run_filter)
    assert hint == want_hint
    if want_flush:
        assert batch.stats[want_flush] == 1
        # A flushed ranking gives no later hint either.
        assert await _hint(batch, signer, cycle + 1, now) is None


@pytest.mark.anyio
async def test_hints_follow_the_ranking_and_stop_when_it_runs_out() -> None:
    signer = _Signer()
    batch = OpportunisticBatch([signer])
    batch.store(batch.sign(POD), None, "n3", lambda: ["n1", "n2"], 1, now=0.0)
    assert await _hint(batch, signer, 2) == "n1"
    batch.store(batch.sign(POD), "n1", "n1", None, 2, now=0.1)
    assert await _hint(batch, signer, 3) == "n2"
    batch.store(batch.sign(POD), "n2", "n2", None, 3, now=0.2)
    assert batch.batched_pods == 2
    assert await _hint(batch, signer, 4) is None


@pytest.mark.anyio
async def test_ranking_is_built_only_when_a_hint_is_taken() -> None:
    signer = _Signer()
    batch = OpportunisticBatch([signer])
    built: list[int] = []

    def others() -> list[str]:
        built.append(1)
        return ["n1", "n2"]

    batch.store(batch.sign(POD), None, "n3", others, 1, now=0.0)
    # The chosen node still fits: the ranking is flushed unread, never built.
    assert await _hint(batch, signer, 2, run_filter=_filter(Code.SUCCESS)) is None
    assert built == []
    batch.store(batch.sign(POD), None, "n3", others, 3, now=0.0)
    assert await _hint(batch, signer, 4) == "n1"
    assert await _hint(batch, signer, 4) == "n2"
    assert built == [1]


@pytest.mark.anyio
async def test_unused_hint_replaces_the_ranking() -> None:
    signer = _Signer()
    batch = OpportunisticBatch([signer])
    batch.store(batch.sign(POD), None, "n3", lambda: ["n1", "n2"], 1, now=0.0)
    assert await _hint(batch, signer, 2) == "n1"
    # n1 did not fit after all; the full cycle chose n2 and ranked n1 after it.
    batch.store(batch.sign(POD), "n1", "n2", lambda: ["n1"], 2, now=0.1)
    assert batch.stats["hint_not_used"] == 1
    nodes = _Nodes("n1", "n2")
    assert await _hint(batch, signer, 3, nodes=nodes) == "n1"


@pytest.mark.anyio
async def test_single_feasible_node_or_unsignable_pod_leaves_no_ranking() -> None:
    signer = _Signer()
    batch = OpportunisticBatch([signer])
    batch.store(batch.sign(POD), None, "n3", None, 1, now=0.0)
    assert await _hint(batch, signer, 2) is None
    batch.store(None, None, "n3", lambda: ["n1"], 2, now=0.0)
    assert await _hint(batch, signer, 3) is None


def test_signature_is_none_when_a_signer_refuses_or_raises() -> None:
    class Refuses:
        name = "R"

        def sign_pod(self, pod: Pod) -> Status:
            return Status(Code.UNSCHEDULABLE, ("no",))

    class Raises:
        name = "X"

        def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
            raise RuntimeError("boom")

    assert OpportunisticBatch([_Signer(), Refuses()]).sign(POD) is None
    assert OpportunisticBatch([Raises()]).sign(POD) is None
    batch = OpportunisticBatch([_Signer()])
    assert batch.sign(POD) == batch.sign(make_pod("other").obj())
    assert batch.sign(POD) != batch.sign(make_pod("q").scheduler_name("mysched").obj())


# ---- plugin signatures ---------------------------------------------------------------


def _labels_pod() -> Any:
    return make_pod("p").label("foo", "bar")


@pytest.mark.parametrize(
    ("pod", "ignore_preferred", "want"),
    [
        pytest.param(
            _labels_pod().obj(),
            False,
            ((LABELS, ("default", (("foo", "bar"),))),),
            id="no affinity, default settings",
        ),
        pytest.param(_labels_pod().obj(), True, (), id="no affinity, ignore setting set"),
        pytest.param(
            _labels_pod().pod_affinity("zone", {"foo": "bar"}).obj(),
            False,
            None,
            id="affinity set",
        ),
    ],
)
def test_pod_affinity_signature(pod: Pod, ignore_preferred: bool, want: object) -> None:
    plugin = InterPodAffinity.new(
        {"ignorePreferredTermsOfExistingPods": ignore_preferred}, handle=FakeHandle()
    )
    got = plugin.sign_pod(pod)
    if want is None:
        assert isinstance(got, Status) and got.code is Code.UNSCHEDULABLE
    else:
        assert not isinstance(got, Status) and tuple(got) == want


def test_topology_spread_signs_only_without_constraints() -> None:
    listed = PodTopologySpread.new(
        {"defaultingType": "List", "defaultConstraints": []}, FakeHandle()
    )
    system = PodTopologySpread.new(None, FakeHandle())
    plain = make_pod("p").obj()
    spread = make_pod("p").spread(1, "zone", {"app": "a"}).obj()
    signed = listed.sign_pod(plain)
    assert not isinstance(signed, Status) and tuple(signed) == ()
    assert isinstance(listed.sign_pod(spread), Status)
    assert isinstance(system.sign_pod(plain), Status)


def test_resources_signature_tells_apart_what_scorers_count() -> None:
    """Equal requests, different non-zero defaults: the scorers see different pods."""
    cfg = load_config(NO_DEFAULT_SPREAD)
    sched = Scheduler(cfg, InMemoryCluster(), registry=REGISTRY)
    batch = sched.frameworks["default-scheduler"].batch
    assert batch is not None
    one = make_pod("a").req(cpu="200m").obj()
    two = make_pod("b").req(cpu="200m").container(name="side").obj()
    sig_one, sig_two = batch.sign(one), batch.sign(two)
    assert sig_one is not None and sig_two is not None
    assert dict(sig_one)[RESOURCES] != dict(sig_two)[RESOURCES]


# ---- the 0.5 s age limit on a fake clock ---------------------------------------------


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
@pytest.mark.anyio
async def test_ranking_older_than_half_a_second_is_not_used() -> None:
    import anyio

    cluster = InMemoryCluster()
    for name in ("n4", "n3", "n2", "n1"):
        await cluster.add_node(batch_node(name, 1))
    cfg = load_config(NO_DEFAULT_SPREAD)
    async with Scheduler.open(cfg, cluster, registry=REGISTRY) as sched:
        affinity = ["n1", "n2", "n3", "n4"]
        for i, gap in ((1, 0.0), (2, 0.1), (3, 0.6)):
            await anyio.sleep(gap)
            pod = batch_pod(f"p{i}", affinity)
            await cluster.add_pod(pod)
            assert (await cluster.wait_bound(pod.key, timeout=10)).spec.node_name == f"n{i}"
        batch = sched.frameworks["default-scheduler"].batch
        assert batch is not None
        assert batch.batched_pods == 1
        assert batch.stats["flush_expired"] == 1


# ---- a hinted node is a best node ----------------------------------------------------


def _varied_node(i: int) -> Any:
    cpu = 4000 + 250 * (i % 7)
    memory = (8 + 3 * ((i * 5) % 6)) * 1024**3
    return make_node(f"n{i:02d}").capacity(cpu=f"{cpu}m", memory=memory, pods=110).obj()


def _port_pod(i: int) -> Pod:
    return make_pod(f"p{i:02d}").req(cpu="1", memory="1Gi").host_port(80).obj()


async def _best_nodes(nodes: list[Any], placed: dict[str, str], pod: Pod) -> set[str]:
    """What a full cycle (no batching) rates highest for ``pod`` given ``placed``."""
    cluster = InMemoryCluster()
    for node in nodes:
        await cluster.add_node(node)
    for i, node_name in enumerate(placed.values()):
        await cluster.add_pod(
            make_pod(f"q{i:02d}").req(cpu="1", memory="1Gi").host_port(80).node(node_name).obj()
        )
    cfg = load_config(NO_DEFAULT_SPREAD)
    async with Scheduler.open(
        cfg, cluster, registry=REGISTRY, explain=True, opportunistic_batching=False
    ) as sched:
        await cluster.add_pod(pod)
        await cluster.wait_bound(pod.key, timeout=10)
    report = sched.records[pod.uid].first_attempt
    assert report is not None
    if not report.totals:  # a single feasible node
        return {report.selected} if report.selected else set()
    top = max(report.totals.values())
    return {name for name, total in report.totals.items() if total == top}


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
@pytest.mark.anyio
async def test_each_batched_pod_lands_on_a_best_rated_node() -> None:
    """One pod per node (host port 80): the previous ranking minus the node taken is
    what a full cycle would compute, so every hinted node is a best-rated one."""
    nodes = [_varied_node(i) for i in range(24)]
    cluster = InMemoryCluster()
    for node in nodes:
        await cluster.add_node(node)
    placed: dict[str, str] = {}
    cfg = load_config(NO_DEFAULT_SPREAD)
    async with Scheduler.open(cfg, cluster, registry=REGISTRY) as sched:
        for i in range(24):
            pod = _port_pod(i)
            best = await _best_nodes(nodes, placed, pod)
            await cluster.add_pod(pod)
            chosen = (await cluster.wait_bound(pod.key, timeout=10)).spec.node_name
            assert chosen in best, (pod.name, chosen, best)
            assert chosen is not None
            placed[pod.key] = chosen
        batch = sched.frameworks["default-scheduler"].batch
        assert batch is not None
        assert batch.batched_pods == 23
