"""NodeVolumeLimits: upstream nodevolumelimits/csi_test.go (TestCSILimits, TestCSILimitsQHint,
TestCSILimitsAddedPVCQHint). The VolumeAttachment rows of TestCSILimits are left out: ksched
does not model VolumeAttachments yet."""

from __future__ import annotations

from typing import Any

import pytest
from storage_fixtures import csi_node, pv, pvc, storage_class

from ksched.api import (
    AWSElasticBlockStoreVolumeSource,
    CSIVolumeSource,
    EphemeralVolumeSource,
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaim,
    Pod,
    Volume,
    csi_attach_limit_key,
)
from ksched.framework import Code, CycleState, NodeInfo, PodInfo, QueueingHint, Status
from ksched.plugins.node_volume_limits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NodeVolumeLimits,
)
from ksched.testing import FakeHandle, make_node, make_pod

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
AWS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"
SC = "csi-sc"
NODE = "node-for-max-pd-test-1"
EXCEEDED = Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))
_serial = iter(range(10**6))


def claims_pod(*claims: str, name: str = "") -> Pod:
    builder = make_pod(name or f"pod-{next(_serial)}")
    for c in claims:
        builder = builder.pvc(c)
    return builder.obj()


def with_volumes(
    *volumes: Volume, name: str = "", namespace: str = "default", uid: str = ""
) -> Pod:
    builder = make_pod(name or f"pod-{next(_serial)}", namespace)
    if uid:
        builder = builder.uid(uid)
    for v in volumes:
        builder = builder.volume(v)
    return builder.obj()


def aws_inline(volume_id: str) -> Volume:
    return Volume(
        name="aws",
        kind="awsElasticBlockStore",
        aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id=volume_id),
    )


def ephemeral(name: str) -> Volume:
    return Volume(name=name, kind="ephemeral", ephemeral=EphemeralVolumeSource())


CONFIG_MAP = Volume(name="cm", kind="configMap")
SECRET = Volume(name="secret", kind="secret")

RUNNING = claims_pod(f"csi-{EBS}-3")
PENDING_VOLUME = claims_pod("csi-4")
UNBOUND_PVC_POD_2 = claims_pod("csi-4")
MISSING_PV = claims_pod("csi-6")
NO_SC_PVC = claims_pod("csi-5")
GCE_TWO = claims_pod(f"csi-{GCE}-1", f"csi-{GCE}-2")
IN_TREE_ONE = claims_pod(f"csi-{AWS_IN_TREE}-0")
IN_TREE_TWO = claims_pod(f"csi-{AWS_IN_TREE}-1", f"csi-{AWS_IN_TREE}-2")
EBS_ONE = claims_pod(f"csi-{EBS}-0")
EBS_TWO = claims_pod(f"csi-{EBS}-1", f"csi-{EBS}-2")
IN_TREE_NON_MIGRATABLE = claims_pod(f"csi-{HOSTPATH}-0")
EPHEMERAL = with_volumes(ephemeral("xyz"), name="abc", namespace="test", uid="12345")
EPHEMERAL_TWO = with_volumes(
    ephemeral("x"), ephemeral("y"), name="abc", namespace="test", uid="12345II"
)
IN_TREE_INLINE = with_volumes(aws_inline("aws-inline1"))
IN_TREE_INLINE_SAME_ID = with_volumes(aws_inline(f"csi-{EBS}-1"))
ONLY_CM_SECRET = with_volumes(CONFIG_MAP, SECRET)
PVC_WITH_CM_SECRET = with_volumes(CONFIG_MAP, SECRET, claims_pod(f"csi-{EBS}-0").spec.volumes[0])
EPHEMERAL_WITH_CM_SECRET = with_volumes(
    CONFIG_MAP, SECRET, ephemeral("xyz"), name="abc", namespace="test"
)
INLINE_WITH_CM_SECRET = with_volumes(CONFIG_MAP, SECRET, aws_inline("aws-inline1"))


def ephemeral_claim(pod: Pod, volume: str, owned: bool = True) -> PersistentVolumeClaim:
    owners = (OwnerReference(kind="Pod", name=pod.name, uid=pod.uid, controller=True),)
    return PersistentVolumeClaim(
        metadata=ObjectMeta(
            name=f"{pod.name}-{volume}",
            namespace=pod.namespace,
            owner_references=owners if owned else (),
        ),
        storage_class_name=SC,
    )


EPHEMERAL_CLAIM = ephemeral_claim(EPHEMERAL, "xyz")
CONFLICTING_CLAIM = ephemeral_claim(EPHEMERAL, "xyz", owned=False)
CLAIM_X = ephemeral_claim(EPHEMERAL_TWO, "x")
CLAIM_Y = ephemeral_claim(EPHEMERAL_TWO, "y")


def fixtures(drivers: tuple[str, ...]) -> list[Any]:
    """getFakeCSIPVLister / getFakeCSIPVCLister / getFakeCSIStorageClassLister."""
    objects: list[Any] = []
    for driver in drivers:
        for j in range(4):
            handle = f"csi-{driver}-{j}"
            if driver == AWS_IN_TREE:
                source: dict[str, Any] = {
                    "aws_elastic_block_store": AWSElasticBlockStoreVolumeSource(volume_id=handle)
                }
            elif driver == HOSTPATH:
                source = {}
            else:
                source = {"csi": CSIVolumeSource(driver=driver, volume_handle=handle)}
            objects += [pv(handle, **source), pvc(handle, volume=handle)]
    objects += [
        pvc("csi-4", storage_class=SC),
        pvc("csi-5"),
        pvc("csi-6", storage_class=SC, volume="missing-in-action"),
        storage_class(SC, provisioner=drivers[0]),
    ]
    return objects


def run(
    new_pod: Pod,
    existing: tuple[Pod, ...],
    drivers: tuple[str, ...],
    max_vols: int | None,
    limit_source: str,
    extra: tuple[PersistentVolumeClaim, ...] = (),
) -> tuple[Status | None, Status | None]:
    objects = fixtures(drivers) + list(extra)
    if limit_source in ("csinode", "csinode-with-no-limit"):
        limit = max_vols if limit_source == "csinode" else None
        objects.append(csi_node(NODE, dict.fromkeys(drivers, limit), migrated=AWS_IN_TREE))
    info = NodeInfo(node=make_node(NODE).obj(), name=NODE)
    for p in existing:
        info.add_pod(PodInfo.of(p))
    plugin = NodeVolumeLimits.new(None, FakeHandle(objects))
    state = CycleState()
    pre = plugin.pre_filter(state, new_pod, [info])
    if pre is not None and pre.code is Code.SKIP:
        return pre, None
    return pre, plugin.filter(state, new_pod, info)


def row(
    new: Pod,
    existing: tuple[Pod, ...],
    drivers: tuple[str, ...],
    max_vols: int | None,
    source: str,
    want: Status | None,
    test: str,
    *,
    extra: tuple[Any, ...] = (),
    pre: Status | None = None,
) -> Any:
    return pytest.param(new, existing, drivers, max_vols, source, extra, pre, want, id=test)


def missing_claim(ns: str, name: str) -> Status:
    return Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (f'looking up PVC {ns}/{name}: persistentvolumeclaim "{name}" not found',),
    )


MIGRATING = (AWS_IN_TREE, EBS)
CASES = [
    row(
        EBS_ONE,
        (RUNNING, EBS_TWO),
        (EBS,),
        4,
        "csinode",
        None,
        "fits when node volume limit >= new pods CSI volume",
    ),
    row(
        EBS_ONE,
        (RUNNING, EBS_TWO),
        (EBS,),
        2,
        "csinode",
        EXCEEDED,
        "doesn't when node volume limit <= pods CSI volume",
    ),
    row(
        EBS_ONE,
        (RUNNING, EBS_TWO),
        (EBS,),
        2,
        "csinode-with-no-limit",
        None,
        "should when driver does not support volume limits",
    ),
    row(
        EBS_ONE,
        (PENDING_VOLUME, EBS_TWO),
        (EBS,),
        2,
        "csinode",
        EXCEEDED,
        "count pending PVCs towards volume limit <= pods CSI volume",
    ),
    row(
        EBS_ONE,
        (PENDING_VOLUME, UNBOUND_PVC_POD_2, EBS_TWO),
        (EBS,),
        4,
        "csinode",
        None,
        "count multiple pending pvcs towards volume limit >= pods CSI volume",
    ),
    row(
        EBS_ONE,
        (MISSING_PV, EBS_TWO),
        (EBS,),
        2,
        "csinode",
        EXCEEDED,
        "should count PVCs with invalid PV name but valid SC",
    ),
    row(
        EBS_ONE,
        (RUNNING, NO_SC_PVC),
        (EBS,),
        2,
        "csinode",
        None,
        "don't count pvcs with missing SC towards volume limit",
    ),
    row(
        EBS_ONE,
        (GCE_TWO, EBS_TWO),
        (EBS, GCE),
        2,
        "csinode",
        EXCEEDED,
        "count pvcs with the same type towards volume limit",
    ),
    row(
        GCE_TWO,
        (EBS_TWO, RUNNING),
        (EBS, GCE),
        2,
        "csinode",
        None,
        "don't count pvcs with different type towards volume limit",
    ),
    row(
        IN_TREE_ONE,
        (IN_TREE_TWO,),
        MIGRATING,
        2,
        "csinode",
        EXCEEDED,
        "should count in-tree volumes if migration is enabled",
    ),
    row(IN_TREE_INLINE, (IN_TREE_TWO,), MIGRATING, None, "", None, "nil csi node"),
    row(
        PENDING_VOLUME,
        (IN_TREE_TWO,),
        MIGRATING,
        2,
        "csinode",
        EXCEEDED,
        "should count unbound in-tree volumes if migration is enabled",
    ),
    row(
        IN_TREE_ONE,
        (IN_TREE_TWO,),
        MIGRATING,
        2,
        "csinode-with-no-limit",
        None,
        "should not limit pod if volume used does not report limits",
    ),
    row(
        IN_TREE_NON_MIGRATABLE,
        (EBS_TWO,),
        (HOSTPATH, EBS),
        2,
        "csinode",
        None,
        "should not count non-migratable in-tree volumes",
    ),
    row(
        IN_TREE_INLINE,
        (IN_TREE_TWO,),
        MIGRATING,
        2,
        "csinode",
        EXCEEDED,
        "should count in-tree inline volumes if migration is enabled",
    ),
    row(
        IN_TREE_ONE,
        (EBS_TWO,),
        MIGRATING,
        2,
        "csinode",
        EXCEEDED,
        "should count in-tree and csi volumes if migration is enabled (when scheduling in-tree "
        "volumes)",
    ),
    row(
        IN_TREE_INLINE,
        (EBS_TWO, IN_TREE_ONE),
        MIGRATING,
        3,
        "csinode",
        EXCEEDED,
        "should count in-tree, inline and csi volumes if migration is enabled (when scheduling "
        "in-tree volumes)",
    ),
    row(
        IN_TREE_INLINE_SAME_ID,
        (EBS_TWO, IN_TREE_ONE),
        MIGRATING,
        3,
        "csinode",
        None,
        "should not count in-tree, inline and csi volumes if migration is enabled (when "
        "scheduling in-tree volumes)",
    ),
    row(
        EBS_ONE,
        (IN_TREE_TWO,),
        MIGRATING,
        2,
        "csinode",
        EXCEEDED,
        "should count in-tree and csi volumes if migration is enabled (when scheduling csi "
        "volumes)",
    ),
    row(
        EPHEMERAL,
        (),
        (EBS,),
        None,
        "csinode-with-no-limit",
        missing_claim("test", "abc-xyz"),
        "ephemeral volume missing",
    ),
    row(
        EPHEMERAL,
        (),
        (EBS,),
        None,
        "csinode-with-no-limit",
        Status(
            Code.ERROR, ("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)",)
        ),
        "ephemeral volume not owned",
        extra=(CONFLICTING_CLAIM,),
    ),
    row(
        EPHEMERAL,
        (),
        (EBS,),
        None,
        "csinode-with-no-limit",
        None,
        "ephemeral volume unbound",
        extra=(EPHEMERAL_CLAIM,),
    ),
    row(
        EPHEMERAL,
        (RUNNING, EBS_TWO),
        (EBS,),
        2,
        "csinode",
        EXCEEDED,
        "ephemeral doesn't when node volume limit <= pods CSI volume",
        extra=(EPHEMERAL_CLAIM,),
    ),
    row(
        EBS_ONE,
        (RUNNING, EPHEMERAL_TWO),
        (EBS,),
        2,
        "csinode",
        EXCEEDED,
        "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
        extra=(CLAIM_X, CLAIM_Y),
    ),
    row(
        EBS_ONE,
        (RUNNING, EPHEMERAL, EBS_TWO),
        (EBS,),
        3,
        "csinode",
        EXCEEDED,
        "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent "
        "volume",
        extra=(EPHEMERAL_CLAIM,),
    ),
    row(
        EBS_ONE,
        (RUNNING, EPHEMERAL, EBS_TWO),
        (EBS,),
        5,
        "csinode",
        None,
        "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
        extra=(EPHEMERAL_CLAIM,),
    ),
    row(
        ONLY_CM_SECRET,
        (),
        (EBS,),
        2,
        "csinode",
        None,
        "skip Filter when the pod only uses secrets and configmaps",
        pre=Status(Code.SKIP),
    ),
    row(
        PVC_WITH_CM_SECRET,
        (),
        (EBS,),
        2,
        "csinode",
        None,
        "don't skip Filter when the pod has pvcs",
    ),
    row(
        EPHEMERAL_WITH_CM_SECRET,
        (),
        (EBS,),
        None,
        "csinode-with-no-limit",
        missing_claim("test", "abc-xyz"),
        "don't skip Filter when the pod has ephemeral volumes",
    ),
    row(
        INLINE_WITH_CM_SECRET,
        (IN_TREE_TWO,),
        MIGRATING,
        2,
        "csinode",
        EXCEEDED,
        "don't skip Filter when the pod has inline migratable volumes",
    ),
]


@pytest.mark.parametrize(
    ("new", "existing", "drivers", "max_vols", "source", "extra", "pre", "want"), CASES
)
def test_csi_limits(
    new: Pod,
    existing: tuple[Pod, ...],
    drivers: tuple[str, ...],
    max_vols: int | None,
    source: str,
    extra: tuple[Any, ...],
    pre: Status | None,
    want: Status | None,
) -> None:
    assert run(new, existing, drivers, max_vols, source, extra) == (pre, want)


def test_node_allocatable_limit_counts_without_csinode() -> None:
    # volumeLimits: the node's attachable-volumes-* allocatable is a limit too.
    node = make_node(NODE).capacity(**{csi_attach_limit_key(EBS): "2"}).obj()
    info = NodeInfo(node=node, name=NODE)
    for p in (RUNNING, EBS_TWO):
        info.add_pod(PodInfo.of(p))
    plugin = NodeVolumeLimits.new(None, FakeHandle(fixtures((EBS,))))
    assert plugin.filter(CycleState(), EBS_ONE, info) == EXCEEDED


def test_placed_pods_volumes_are_read_again_when_their_claims_change() -> None:
    # A placed pod's volumes are reused across Filter calls only while the claims, volumes
    # and classes they came from are the objects the cluster still holds.
    node = make_node(NODE).capacity(**{csi_attach_limit_key(EBS): "2"}).obj()
    info = NodeInfo(node=node, name=NODE)
    for p in (RUNNING, EBS_TWO):
        info.add_pod(PodInfo.of(p))
    handle = FakeHandle(fixtures((EBS,)))
    plugin = NodeVolumeLimits.new(None, handle)
    assert plugin.filter(CycleState(), EBS_ONE, info) == EXCEEDED
    assert plugin.filter(CycleState(), EBS_ONE, info) == EXCEEDED
    handle.cluster.remove("PersistentVolumeClaim", f"{EBS_TWO.namespace}/csi-{EBS}-1")
    handle.cluster.remove("PersistentVolumeClaim", f"{EBS_TWO.namespace}/csi-{EBS}-2")
    assert plugin.filter(CycleState(), EBS_ONE, info) is None


def test_attach_limit_key_is_hashed_when_long() -> None:
    driver = "a" * 50
    key = csi_attach_limit_key(driver)
    assert key.startswith("attachable-volumes-csi-" + "a" * 23) and len(key) == 23 + 23 + 16
    assert csi_attach_limit_key(EBS) == "attachable-volumes-csi-ebs.csi.aws.com"


PLUGIN = NodeVolumeLimits.new(None, FakeHandle())


@pytest.mark.parametrize(
    ("deleted", "hint"),
    [
        pytest.param(
            claims_pod("placeholder"),
            QueueingHint.QUEUE,
            id="return a Queue when a deleted pod has a PVC",
        ),
        pytest.param(
            with_volumes(aws_inline("")),
            QueueingHint.QUEUE,
            id="return a Queue when a deleted pod has a inline migratable volume",
        ),
        pytest.param(
            make_pod("x").obj(),
            QueueingHint.SKIP,
            id="return a QueueSkip when a deleted pod doesn't have any volume",
        ),
    ],
)
def test_qhint_pod_deleted(deleted: Pod, hint: QueueingHint) -> None:
    placed = make_pod(deleted.name).node(NODE)
    for v in deleted.spec.volumes:
        placed = placed.volume(v)
    assert (
        PLUGIN.is_schedulable_after_pod_deleted(claims_pod(f"csi-{EBS}-2"), placed.obj(), None)
        is hint
    )


def test_qhint_deleted_pod_not_scheduled() -> None:
    deleted = claims_pod(f"csi-{EBS}-0")
    hint = PLUGIN.is_schedulable_after_pod_deleted(claims_pod(f"csi-{EBS}-2"), deleted, None)
    assert hint is QueueingHint.SKIP  # "return a QueueSkip when a deleted pod is not scheduled."


@pytest.mark.parametrize(
    ("pod", "added", "hint"),
    [
        pytest.param(
            make_pod("p", "ns1").obj(),
            pvc("", namespace="ns2"),
            QueueingHint.SKIP,
            id="a pod isn't in the same namespace as an added PVC",
        ),
        pytest.param(
            make_pod("p", "ns1").pvc("pvc1").obj(),
            pvc("pvc1", namespace="ns1"),
            QueueingHint.QUEUE,
            id="a pod is in the same namespace as an added PVC",
        ),
        pytest.param(
            with_volumes(ephemeral("ephemeral"), name="pod1", namespace="ns1"),
            pvc("pod1-ephemeral", namespace="ns1"),
            QueueingHint.QUEUE,
            id="a pod has an ephemeral volume related to an added PVC",
        ),
        pytest.param(
            make_pod("p", "ns1").pvc("pvc1").obj(),
            pvc("pvc2", namespace="ns1"),
            QueueingHint.SKIP,
            id="a pod doesn't have the same PVC as an added PVC",
        ),
        pytest.param(
            make_pod("p", "ns1").obj(),
            pvc("pvc2", namespace="ns1"),
            QueueingHint.SKIP,
            id="a pod doesn't have any PVC attached",
        ),
    ],
)
def test_qhint_pvc_added(pod: Pod, added: Any, hint: QueueingHint) -> None:
    assert PLUGIN.is_schedulable_after_pvc_added(pod, None, added) is hint
