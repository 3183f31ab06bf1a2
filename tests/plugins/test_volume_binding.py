"""VolumeBinding: upstream volume_binding_test.go (TestVolumeBinding), scorer_test.go, the
binder's provisioning and capacity checks (binder.go), and the binding cycle end to end."""

from __future__ import annotations

from typing import Any

import anyio
import attrs
import pytest
from storage_fixtures import GI, csi_node, pv, pvc, storage_class

from ksched import InMemoryCluster, Scheduler
from ksched.api import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    CSIDriver,
    CSIStorageCapacity,
    CSIVolumeSource,
    EphemeralVolumeSource,
    LabelSelector,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    TopologySelectorTerm,
    Volume,
)
from ksched.framework import Code, CycleState, NodeInfo, PreFilterResult, QueueingHint, Status
from ksched.framework.batch import NodeTable
from ksched.plugins.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    ERR_UNBOUND_IMMEDIATE,
    UtilizationShapePoint,
    VolumeBinding,
    build_scorer,
)
from ksched.testing import FakeHandle, make_node, make_pod

HOSTNAME = "kubernetes.io/hostname"
AWS_EBS = "kubernetes.io/aws-ebs"
WAIT, IMMEDIATE, WAIT_HDD = "wait-sc", "immediate-sc", "wait-hdd-sc"
CLASSES = [
    storage_class(IMMEDIATE),
    storage_class(WAIT, mode="WaitForFirstConsumer"),
    storage_class(WAIT_HDD, mode="WaitForFirstConsumer"),
]
SKIP = Status(Code.SKIP)
# The upstream table's shape (VolumeCapacityPriority): utilization 0 -> 0, 100 -> 10.
OLD_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def pod_with(*claims: str) -> Pod:
    builder = make_pod("pod-a")
    for c in claims:
        builder = builder.pvc(c)
    return builder.obj()


def node(name: str, **labels: str) -> Node:
    builder = make_node(name).labels({HOSTNAME: name, **labels})
    return builder.capacity(cpu="4", memory="8Gi", pods="110").obj()


def plugin(objects: list[Any], args: dict[str, Any] | None = None) -> VolumeBinding:
    return VolumeBinding.new(args, FakeHandle([*CLASSES, *objects]))


def local_pv(name: str, cls: str, capacity: int, host: str) -> Any:
    return pv(name, storage_class=cls, capacity=capacity, hostnames=(host,))


CASES = [
    pytest.param([], pod_with(), ["node-a"], SKIP, None, [None], SKIP, None, id="pod has not pvcs"),
    pytest.param(
        [
            pvc("pvc-a", storage_class=WAIT, volume="pv-a", bound=True),
            pv("pv-a", storage_class=WAIT),
        ],
        pod_with("pvc-a"),
        ["node-a"],
        None,
        None,
        [None],
        SKIP,
        None,
        id="all bound",
    ),
    pytest.param(
        [
            pvc("pvc-a", storage_class=WAIT, volume="pv-a", bound=True),
            pvc("pvc-b", storage_class=WAIT, volume="pv-b", bound=True),
            pv("pv-a", storage_class=WAIT, phase="Bound", hostnames=("node-a",)),
            pv("pv-b", storage_class=WAIT, phase="Bound", hostnames=("node-a",)),
        ],
        pod_with("pvc-a", "pvc-b"),
        ["node-a"],
        None,
        # Upstream's PreFilter no longer narrows to the local PVs' hostnames (the
        # GetEligibleNodes shortcut was reverted: node names need not be hostnames).
        None,
        [None],
        SKIP,
        None,
        id="all bound with local volumes",
    ),
    pytest.param(
        [],
        pod_with("pvc-a"),
        ["node-a"],
        unresolvable('persistentvolumeclaim "pvc-a" not found'),
        None,
        [],
        None,
        None,
        id="PVC does not exist",
    ),
    pytest.param(
        [pvc("pvc-a", storage_class=WAIT, volume="pv-a", bound=True)],
        pod_with("pvc-a", "pvc-b"),
        ["node-a"],
        unresolvable('persistentvolumeclaim "pvc-b" not found'),
        None,
        [],
        None,
        None,
        id="Part of PVCs do not exist",
    ),
    pytest.param(
        [pvc("pvc-a", storage_class=IMMEDIATE)],
        pod_with("pvc-a"),
        ["node-a"],
        unresolvable(ERR_UNBOUND_IMMEDIATE),
        None,
        [],
        None,
        None,
        id="immediate claims not bound",
    ),
    pytest.param(
        [pvc("pvc-a", storage_class=WAIT)],
        pod_with("pvc-a"),
        ["node-a"],
        None,
        None,
        [unresolvable(ERR_REASON_BIND_CONFLICT)],
        SKIP,
        None,
        id="unbound claims no matches",
    ),
]


def affinity_pv(name: str, key: str, value: str, cls: str = WAIT) -> Any:
    req = NodeSelectorRequirement(key=key, operator="In", values=(value,))
    sel = NodeSelector(terms=(NodeSelectorTerm(match_expressions=(req,)),))
    return pv(name, storage_class=cls, affinity=sel)


CASES += [
    pytest.param(
        [
            pvc("pvc-a", storage_class=WAIT, volume="pv-a", bound=True),
            pvc("pvc-b", storage_class=WAIT),
            affinity_pv("pv-a", "foo", "bar"),
        ],
        pod_with("pvc-a", "pvc-b"),
        ["node-a:foo=barbar"],
        None,
        None,
        [unresolvable(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)],
        SKIP,
        None,
        id="bound and unbound unsatisfied",
    ),
    pytest.param(
        [],
        pod_with("pvc-a"),
        ["node-a"],
        unresolvable('persistentvolumeclaim "pvc-a" not found'),
        None,
        [],
        None,
        None,
        id="pvc not found",
    ),
    pytest.param(
        [pvc("pvc-a", storage_class=WAIT, volume="pv-a", bound=True)],
        pod_with("pvc-a"),
        ["node-a"],
        None,
        None,
        [unresolvable(ERR_REASON_PV_NOT_EXIST)],
        SKIP,
        None,
        id="pv not found",
    ),
    pytest.param(
        [attrs.evolve(pvc("pvc-a", storage_class=WAIT, volume="pv-a", bound=True), phase="Lost")],
        pod_with("pvc-a"),
        ["node-a"],
        unresolvable('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
        None,
        [],
        None,
        None,
        id="pv not found claim lost",
    ),
    pytest.param(
        [
            pvc("pvc-a", storage_class=WAIT, request=50 * GI),
            local_pv("pv-a-0", WAIT, 200 * GI, "node-a"),
            local_pv("pv-a-1", WAIT, 200 * GI, "node-a"),
            local_pv("pv-b-0", WAIT, 100 * GI, "node-b"),
            local_pv("pv-b-1", WAIT, 100 * GI, "node-b"),
        ],
        pod_with("pvc-a"),
        ["node-a", "node-b", "node-c"],
        None,
        None,
        [None, None, unresolvable(ERR_REASON_BIND_CONFLICT)],
        None,
        [25, 50, 0],
        id="local volumes with close capacity are preferred",
    ),
]


CASES += [
    pytest.param(
        [
            pvc("pvc-a", storage_class=WAIT, volume="pv-a", bound=True),
            pv("pv-a", storage_class=WAIT),
        ],
        pod_with("pvc-a"),
        ["node-a", "node-b"],
        None,
        None,
        [None, None],
        SKIP,
        None,
        id="bound to a pv without node affinity: every node passes",
    ),
]


def test_batch_form_answers_only_for_claims_bound_without_affinity() -> None:
    infos = [NodeInfo(node=node(f"node-{c}"), name=f"node-{c}") for c in "ab"]
    bound = pvc("pvc-a", storage_class=WAIT, volume="pv-a", bound=True)
    free = pvc("pvc-b", storage_class=WAIT)
    cases: list[tuple[list[Any], Pod, bool]] = [
        ([bound, pv("pv-a", storage_class=WAIT)], pod_with("pvc-a"), True),
        ([bound, affinity_pv("pv-a", HOSTNAME, "node-a")], pod_with("pvc-a"), False),
        ([bound], pod_with("pvc-a"), False),  # the PV is missing: judged per node
        ([bound, free, pv("pv-a", storage_class=WAIT)], pod_with("pvc-a", "pvc-b"), False),
    ]
    for objects, pod, answers in cases:
        pl = plugin(objects)
        state = CycleState()
        assert pl.pre_filter(state, pod, infos) is None
        mask = pl.filter_batch(state, pod, NodeTable(infos))
        assert (mask is not None) == answers, objects
        # Reserve after a batch pass: nothing to bind, so the claims count as all bound.
        if answers:
            assert pl.reserve(state, pod, "node-a") is None
            assert pl.explain_decision(state, "node-a") is None


def parse_node(spec: str) -> Node:
    name, _, label = spec.partition(":")
    labels = dict([label.split("=")]) if label else {}
    return node(name, **labels)


@pytest.mark.parametrize(
    ("objects", "pod", "nodes", "pre", "narrowed", "filters", "pre_score", "scores"), CASES
)
def test_volume_binding(
    objects: list[Any],
    pod: Pod,
    nodes: list[str],
    pre: Status | None,
    narrowed: frozenset[str] | None,
    filters: list[Status | None],
    pre_score: Status | None,
    scores: list[int] | None,
) -> None:
    pl = plugin(objects, {"shape": OLD_SHAPE} if scores else None)
    infos = [NodeInfo(node=(n := parse_node(s)), name=n.name) for s in nodes]
    state = CycleState()
    got = pl.pre_filter(state, pod, infos)
    if isinstance(got, PreFilterResult):
        assert got.node_names == narrowed
        got = None
    else:
        assert narrowed is None
    assert got == pre
    if pre is not None:
        return
    # The batch form, where it answers, says "every node passes": only when they all do.
    batch_state = CycleState()
    pl.pre_filter(batch_state, pod, infos)
    mask = pl.filter_batch(batch_state, pod, NodeTable(infos))
    assert [pl.filter(state, pod, i) for i in infos] == filters
    if mask is not None:
        assert mask.tolist() == [True] * len(infos)
        assert filters == [None] * len(infos)
    assert pl.pre_score(state, pod, infos) == pre_score
    if scores is not None:
        assert [pl.score(state, pod, i) for i in infos] == scores


# ---- the scorer ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "classes", "want"),
    [
        pytest.param([(0, 0), (100, 10)], {}, 0, id="no class"),
        pytest.param([(0, 0), (100, 10)], {"sc": (50, 200)}, 25, id="most allocated, 25%"),
        pytest.param([(0, 0), (100, 10)], {"sc": (0, 0)}, 100, id="zero capacity counts as full"),
        pytest.param(
            [(0, 10), (100, 0)],
            {"sc": (50, 200)},
            75,
            id="StorageCapacityScoring default shape: least allocated",
        ),
        pytest.param(
            [(0, 0), (100, 10)],
            {"a": (50, 100), "b": (25, 100)},
            38,
            id="mean of classes rounds half up",
        ),
        pytest.param([(0, 0), (100, 10)], {"a": (300, 100)}, 100, id="over capacity"),
    ],
)
def test_scorer(
    shape: list[tuple[int, int]], classes: dict[str, tuple[int, int]], want: int
) -> None:
    fn = build_scorer([UtilizationShapePoint(u, s) for u, s in shape])
    assert fn(classes) == want


def test_args_validation() -> None:
    from ksched import ConfigError

    with pytest.raises(ConfigError, match="should not be a negative value"):
        plugin([], {"bindTimeoutSeconds": -1})
    with pytest.raises(ConfigError, match=r"shape\[1\].utilization.*increasing"):
        plugin([], {"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]})
    with pytest.raises(ConfigError, match=r"shape\[0\].score.*\[0, 10\]"):
        plugin([], {"shape": [{"utilization": 0, "score": 11}]})


# ---- provisioning and capacity (binder.go checkVolumeProvisions, hasEnoughCapacity) ---


def wffc(name: str, provisioner: str, **kw: Any) -> Any:
    return storage_class(name, mode="WaitForFirstConsumer", provisioner=provisioner, **kw)


ZONE = "topology.kubernetes.io/zone"


@pytest.mark.parametrize(
    ("objects", "labels", "want"),
    [
        pytest.param(
            [wffc("sc", "kubernetes.io/no-provisioner")],
            {},
            unresolvable(ERR_REASON_BIND_CONFLICT),
            id="no-provisioner class",
        ),
        pytest.param([wffc("sc", "csi.example.com")], {}, None, id="provisioned anywhere"),
        pytest.param(
            [
                wffc(
                    "sc",
                    "csi.example.com",
                    allowed_topologies=(
                        TopologySelectorTerm(match_label_expressions=((ZONE, ("a",)),)),
                    ),
                )
            ],
            {ZONE: "b"},
            unresolvable(ERR_REASON_BIND_CONFLICT),
            id="allowedTopologies mismatch",
        ),
        pytest.param(
            [
                wffc(
                    "sc",
                    "csi.example.com",
                    allowed_topologies=(
                        TopologySelectorTerm(match_label_expressions=((ZONE, ("a",)),)),
                    ),
                )
            ],
            {ZONE: "a"},
            None,
            id="allowedTopologies match",
        ),
        pytest.param(
            [
                wffc("sc", "csi.example.com"),
                CSIDriver(
                    metadata=ObjectMeta(name="csi.example.com", namespace=""), storage_capacity=True
                ),
                CSIStorageCapacity(
                    metadata=ObjectMeta(name="cap"),
                    storage_class_name="sc",
                    capacity=5 * GI,
                    node_topology=LabelSelector(match_labels={ZONE: "a"}),
                ),
            ],
            {ZONE: "a"},
            unresolvable(ERR_REASON_NOT_ENOUGH_SPACE),
            id="capacity too small",
        ),
        pytest.param(
            [
                wffc("sc", "csi.example.com"),
                CSIDriver(
                    metadata=ObjectMeta(name="csi.example.com", namespace=""), storage_capacity=True
                ),
                CSIStorageCapacity(
                    metadata=ObjectMeta(name="cap"),
                    storage_class_name="sc",
                    capacity=5 * GI,
                    maximum_volume_size=20 * GI,
                    node_topology=LabelSelector(match_labels={ZONE: "a"}),
                ),
            ],
            {ZONE: "a"},
            None,
            id="maximumVolumeSize preferred over capacity",
        ),
        pytest.param(
            [
                wffc("sc", "csi.example.com"),
                CSIDriver(
                    metadata=ObjectMeta(name="csi.example.com", namespace=""), storage_capacity=True
                ),
                CSIStorageCapacity(
                    metadata=ObjectMeta(name="cap"),
                    storage_class_name="sc",
                    capacity=50 * GI,
                    node_topology=LabelSelector(match_labels={ZONE: "a"}),
                ),
            ],
            {ZONE: "b"},
            unresolvable(ERR_REASON_NOT_ENOUGH_SPACE),
            id="capacity not accessible",
        ),
    ],
)
def test_dynamic_provisioning(
    objects: list[Any], labels: dict[str, str], want: Status | None
) -> None:
    pl = plugin([*objects, pvc("data", storage_class="sc", request=10 * GI)])
    n = node("n1", **labels)
    info = NodeInfo(node=n, name=n.name)
    state = CycleState()
    assert pl.pre_filter(state, pod_with("data"), [info]) is None
    assert pl.filter(state, pod_with("data"), info) == want


def test_reserve_assumes_and_unreserve_reverts() -> None:
    pl = plugin(
        [pvc("pvc-a", storage_class=WAIT, request=GI), local_pv("pv-a", WAIT, 2 * GI, "node-a")]
    )
    n = node("node-a")
    info = NodeInfo(node=n, name=n.name)
    state = CycleState()
    pod = pod_with("pvc-a")
    pl.pre_filter(state, pod, [info])
    assert pl.filter(state, pod, info) is None
    assert pl.explain_decision(state, "node-a") == {"bind": {"default/pvc-a": "pv-a"}}
    assert pl.reserve(state, pod, "node-a") is None
    assumed = pl.binder.get_pv("pv-a")
    assert assumed is not None and assumed.claim_ref is not None
    assert assumed.claim_ref.name == "pvc-a"
    pl.unreserve(state, pod, "node-a")
    pl.unreserve(state, pod, "node-a")  # idempotent
    reverted = pl.binder.get_pv("pv-a")
    assert reverted is not None and reverted.claim_ref is None


# ---- end to end: the binding cycle on an InMemoryCluster ----------------------------


def manifests() -> list[Any]:
    return [
        node("n1"),
        node("n2"),
        storage_class(
            "local", mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner"
        ),
        local_pv("pv-n2", "local", 10 * GI, "n2"),
        pvc("data", storage_class="local", request=5 * GI),
    ]


@pytest.mark.anyio
async def test_wait_for_first_consumer_binds_the_chosen_pv() -> None:
    cluster = InMemoryCluster()
    await cluster.add(manifests())
    async with Scheduler.open(cluster=cluster) as scheduler:
        await cluster.add_pod(pod_with("data"))
        bound = await cluster.wait_bound("default/pod-a", timeout=5)
        assert scheduler is not None
    assert bound.spec.node_name == "n2"
    claim = cluster.get_pvc("default", "data")
    volume = cluster.get_pv("pv-n2")
    assert claim is not None and volume is not None
    assert claim.volume_name == "pv-n2" and claim.phase == "Bound"
    assert claim.metadata.annotations[ANN_BIND_COMPLETED] == "yes"
    assert volume.phase == "Bound" and volume.claim_ref is not None
    assert volume.claim_ref.name == "data"


@pytest.mark.anyio
async def test_dynamic_provisioning_creates_a_pv_on_the_selected_node() -> None:
    cluster = InMemoryCluster()
    await cluster.add(
        [
            node("n1", **{ZONE: "a"}),
            wffc(
                "fast",
                "csi.example.com",
                allowed_topologies=(
                    TopologySelectorTerm(match_label_expressions=((ZONE, ("a",)),)),
                ),
            ),
            pvc("data", storage_class="fast", request=5 * GI, uid="u1"),
        ]
    )
    async with Scheduler.open(cluster=cluster):
        await cluster.add_pod(pod_with("data"))
        await cluster.wait_bound("default/pod-a", timeout=5)
    claim = cluster.get_pvc("default", "data")
    assert claim is not None and claim.volume_name == "pvc-u1"
    assert claim.metadata.annotations[ANN_SELECTED_NODE] == "n1"
    volume = cluster.get_pv("pvc-u1")
    assert volume is not None and volume.capacity == 5 * GI
    assert volume.node_affinity is not None
    assert volume.node_affinity.matches("n1", {ZONE: "a"})


@pytest.mark.anyio
async def test_pod_waiting_for_a_volume_is_retried_when_one_appears() -> None:
    cluster = InMemoryCluster()
    await cluster.add(
        [
            node("n1"),
            storage_class(
                "local", mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner"
            ),
            pvc("data", storage_class="local", request=GI),
        ]
    )
    async with Scheduler.open(cluster=cluster) as scheduler:
        await cluster.add_pod(pod_with("data"))
        await anyio.wait_all_tasks_blocked()
        message = cluster.conditions["default/pod-a"]["message"]
        assert ERR_REASON_BIND_CONFLICT in message
        cluster.apply(local_pv("pv-1", "local", GI, "n1"))  # PV add: queued by VolumeBinding
        bound = await cluster.wait_bound("default/pod-a", timeout=5)
        assert bound.spec.node_name == "n1"
        assert scheduler.records  # one pod, two attempts


def test_a_changed_cluster_object_wins_over_the_assumed_one() -> None:
    # assume_cache.go: an informer update newer than the assumed object replaces it.
    objects = [
        pvc("pvc-a", storage_class=WAIT, request=GI),
        local_pv("pv-a", WAIT, 2 * GI, "node-a"),
    ]
    handle = FakeHandle([*CLASSES, *objects])
    pl = VolumeBinding.new(None, handle)
    n = node("node-a")
    info = NodeInfo(node=n, name=n.name)
    state = CycleState()
    pl.pre_filter(state, pod_with("pvc-a"), [info])
    pl.filter(state, pod_with("pvc-a"), info)
    pl.reserve(state, pod_with("pvc-a"), "node-a")
    assumed = pl.binder.get_pv("pv-a")
    assert assumed is not None and assumed.claim_ref is not None
    assert [p.claim_ref for p in pl.binder.list_pvs(WAIT)] == [assumed.claim_ref]
    relabelled = attrs.evolve(
        local_pv("pv-a", WAIT, 2 * GI, "node-a"),
        metadata=ObjectMeta(name="pv-a", namespace="", labels={"new": "yes"}),
    )
    handle.cluster.apply(relabelled)
    assert pl.binder.get_pv("pv-a") is relabelled
    assert pl.binder.list_pvs(WAIT) == [relabelled]


def test_storage_capacity_scoring_prefers_the_roomier_pool() -> None:
    # StorageCapacityScoring without static bindings: a provision is scored on the
    # CSIStorageCapacity that showed room (default shape: 0% -> 10, 100% -> 0, times 10).
    def capacity(name: str, zone: str, size: int) -> CSIStorageCapacity:
        return CSIStorageCapacity(
            metadata=ObjectMeta(name=name),
            storage_class_name="sc",
            capacity=size,
            node_topology=LabelSelector(match_labels={ZONE: zone}),
        )

    objects = [
        wffc("sc", "csi.example.com"),
        CSIDriver(metadata=ObjectMeta(name="csi.example.com", namespace=""), storage_capacity=True),
        capacity("cap-a", "a", 100 * GI),
        capacity("cap-b", "b", 50 * GI),
        pvc("data", storage_class="sc", request=20 * GI),
    ]
    shape = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    pl = plugin(objects, {"shape": shape})
    infos = [node("na", **{ZONE: "a"}), node("nb", **{ZONE: "b"})]
    nodes = [NodeInfo(node=n, name=n.name) for n in infos]
    state = CycleState()
    pod = pod_with("data")
    assert pl.pre_filter(state, pod, nodes) is None
    assert [pl.filter(state, pod, i) for i in nodes] == [None, None]
    assert pl.pre_score(state, pod, nodes) is None
    assert [pl.score(state, pod, i) for i in nodes] == [80, 60]


# ---- queueing hints (volume_binding.go isSchedulableAfter*) ---------------------------

HINTS = VolumeBinding.new(None, FakeHandle())
Q, S = QueueingHint.QUEUE, QueueingHint.SKIP


def ephemeral_pod(volume: str) -> Pod:
    src = EphemeralVolumeSource()
    return make_pod("pod-a").volume(Volume(name=volume, kind="ephemeral", ephemeral=src)).obj()


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"),
    [
        pytest.param(pod_with(), None, pvc("pvc-b", storage_class="sc-a"), S, id="pod has no pvcs"),
        pytest.param(
            pod_with("pvc-a", "pvc-b"),
            None,
            pvc("pvc-b", storage_class="sc-b"),
            Q,
            id="pod has a newly added pvc",
        ),
        pytest.param(
            pod_with("pvc-a", "pvc-b"),
            pvc("pvc-a", storage_class="sc-b"),
            attrs.evolve(pvc("pvc-a", storage_class="sc-b"), phase="Bound"),
            Q,
            id="pod has pvcs with changed status.phase",
        ),
        pytest.param(
            ephemeral_pod("ephemeral-a"),
            pvc("pod-a-ephemeral-a", storage_class="sc-a"),
            attrs.evolve(pvc("pod-a-ephemeral-a", storage_class="sc-a"), phase="Bound"),
            Q,
            id="pod has ephemeral volume with changed status.phase",
        ),
        pytest.param(
            pod_with("pvc-a"),
            None,
            pvc("pvc-a", namespace="other"),
            S,
            id="the claim of another namespace",
        ),
    ],
)
def test_is_schedulable_after_pvc_change(pod: Pod, old: Any, new: Any, hint: QueueingHint) -> None:
    assert HINTS.is_schedulable_after_pvc_change(pod, old, new) is hint


def topology(*hosts: str) -> tuple[TopologySelectorTerm, ...]:
    return (TopologySelectorTerm(match_label_expressions=((HOSTNAME, hosts),)),)


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        pytest.param(None, storage_class("sc-a"), Q, id="a new StorageClass"),
        pytest.param(
            storage_class("sc-a", allowed_topologies=topology("node1", "node2")),
            storage_class("sc-a", allowed_topologies=topology("node1", "node3")),
            Q,
            id="AllowedTopologies changed",
        ),
        pytest.param(
            storage_class("sc-a", allowed_topologies=topology("node1")),
            storage_class("sc-a", provisioner="p", allowed_topologies=topology("node1")),
            S,
            id="update without AllowedTopologies change",
        ),
    ],
)
def test_is_schedulable_after_storage_class_change(old: Any, new: Any, hint: QueueingHint) -> None:
    assert HINTS.is_schedulable_after_storage_class_change(pod_with("pvc-a"), old, new) is hint


def cap(limit: int | None = None, max_size: int | None = None) -> CSIStorageCapacity:
    return CSIStorageCapacity(
        metadata=ObjectMeta(name="cap-a"),
        storage_class_name="sc-a",
        capacity=limit,
        maximum_volume_size=max_size,
    )


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        pytest.param(None, cap(GI), Q, id="a new CSIStorageCapacity"),
        pytest.param(cap(GI), cap(2 * GI), Q, id="capacity increased"),
        pytest.param(cap(2 * GI), cap(GI), S, id="capacity decreased"),
        pytest.param(cap(None), cap(GI), Q, id="capacity set"),
        pytest.param(
            cap(10 * GI, GI),
            cap(5 * GI, 2 * GI),
            Q,
            id="maximumVolumeSize increased, capacity decreased",
        ),
        pytest.param(cap(GI, GI), cap(GI, GI), S, id="no change"),
    ],
)
def test_is_schedulable_after_csi_storage_capacity_change(
    old: Any, new: Any, hint: QueueingHint
) -> None:
    assert HINTS.is_schedulable_after_csi_storage_capacity_change(pod_with("p"), old, new) is hint


def test_is_schedulable_after_csi_node_and_driver_change() -> None:
    plain, migrated = csi_node("n", {"d": 1}), csi_node("n", {"d": 1}, migrated=AWS_EBS)
    assert HINTS.is_schedulable_after_csi_node_change(pod_with("p"), None, plain) is Q
    assert HINTS.is_schedulable_after_csi_node_change(pod_with("p"), plain, migrated) is Q
    assert HINTS.is_schedulable_after_csi_node_change(pod_with("p"), plain, plain) is S
    tracked = CSIDriver(metadata=ObjectMeta(name="d", namespace=""), storage_capacity=True)
    untracked = attrs.evolve(tracked, storage_capacity=False)
    inline = (
        make_pod("p").volume(Volume(name="v", kind="csi", csi=CSIVolumeSource(driver="d"))).obj()
    )
    assert HINTS.is_schedulable_after_csi_driver_change(inline, tracked, untracked) is Q
    assert HINTS.is_schedulable_after_csi_driver_change(inline, untracked, tracked) is S
    assert HINTS.is_schedulable_after_csi_driver_change(pod_with("p"), tracked, untracked) is S
