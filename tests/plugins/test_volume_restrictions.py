"""VolumeRestrictions: upstream volume_restrictions_test.go (TestGCEDiskConflicts,
TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts)
and the PreFilter extensions preemption uses."""

from __future__ import annotations

import pytest
from storage_fixtures import pvc

from ksched.api import (
    AWSElasticBlockStoreVolumeSource,
    GCEPersistentDiskVolumeSource,
    ISCSIVolumeSource,
    PersistentVolumeClaim,
    Pod,
    RBDVolumeSource,
    Volume,
)
from ksched.framework import Code, CycleState, NodeInfo, PodInfo, QueueingHint, Status
from ksched.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)
from ksched.testing import FakeHandle, make_node, make_pod

SKIP = Status(Code.SKIP)
DISK_CONFLICT = Status(Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,))
RWOP_CONFLICT = Status(Code.UNSCHEDULABLE, (ERR_REASON_RWOP_CONFLICT,))

GCE = (
    Volume(
        name="v",
        kind="gcePersistentDisk",
        gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="foo"),
    ),
    Volume(
        name="v",
        kind="gcePersistentDisk",
        gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="bar"),
    ),
)
AWS = (
    Volume(
        name="v",
        kind="awsElasticBlockStore",
        aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="foo"),
    ),
    Volume(
        name="v",
        kind="awsElasticBlockStore",
        aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="bar"),
    ),
)
RBD = (
    Volume(name="v", kind="rbd", rbd=RBDVolumeSource(monitors=("a", "b"), pool="foo", image="bar")),
    Volume(name="v", kind="rbd", rbd=RBDVolumeSource(monitors=("c", "d"), pool="foo", image="bar")),
)
ISCSI = (
    Volume(
        name="v",
        kind="iscsi",
        iscsi=ISCSIVolumeSource(
            target_portal="127.0.0.1:3260", iqn="iqn.2016-12.server:storage.target01"
        ),
    ),
    Volume(
        name="v",
        kind="iscsi",
        iscsi=ISCSIVolumeSource(
            target_portal="127.0.0.1:3260", iqn="iqn.2017-12.server:storage.target01"
        ),
    ),
)


def with_volumes(name: str, *volumes: Volume, node: str = "", claims: tuple[str, ...] = ()) -> Pod:
    builder = make_pod(name)
    for v in volumes:
        builder = builder.volume(v)
    for c in claims:
        builder = builder.pvc(c)
    if node:
        builder = builder.node(node)
    return builder.obj()


def node_info(*pods: Pod) -> NodeInfo:
    info = NodeInfo(node=make_node("node-1").obj(), name="node-1")
    for p in pods:
        info.add_pod(PodInfo.of(p))
    return info


def run(
    pod: Pod, info: NodeInfo, handle: FakeHandle | None = None
) -> tuple[Status | None, Status | None]:
    plugin = VolumeRestrictions.new(None, handle or FakeHandle(nodes=[info]))
    state = CycleState()
    pre = plugin.pre_filter(state, pod, [info])
    if pre is not None:  # upstream runs Filter only when PreFilter succeeded
        return pre, None
    return pre, plugin.filter(state, pod, info)


def disk_cases() -> list[object]:
    out: list[object] = []
    for kind, (first, second) in {"GCE": GCE, "AWS": AWS, "RBD": RBD, "ISCSI": ISCSI}.items():
        out += [
            pytest.param(None, (), SKIP, None, id=f"Test{kind}DiskConflicts/nothing"),
            pytest.param(None, (first,), SKIP, None, id=f"Test{kind}DiskConflicts/one state"),
            pytest.param(
                first, (first,), None, DISK_CONFLICT, id=f"Test{kind}DiskConflicts/same state"
            ),
            pytest.param(
                second, (first,), None, None, id=f"Test{kind}DiskConflicts/different state"
            ),
        ]
    out.append(
        pytest.param(
            Volume(name="volume with no restriction"),
            (),
            SKIP,
            None,
            id="TestGCEDiskConflicts/pod with a volume that doesn't have restrictions",
        )
    )
    return out


@pytest.mark.parametrize(("volume", "existing", "pre", "filt"), disk_cases())
def test_disk_conflicts(
    volume: Volume | None, existing: tuple[Volume, ...], pre: Status | None, filt: Status | None
) -> None:
    pod = with_volumes("p", *((volume,) if volume else ()))
    info = node_info(*(with_volumes(f"e{i}", v, node="node-1") for i, v in enumerate(existing)))
    assert run(pod, info) == (pre, filt)


def test_gce_read_only_mounts_do_not_conflict() -> None:
    ro = Volume(
        name="v",
        kind="gcePersistentDisk",
        gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="foo", read_only=True),
    )
    info = node_info(with_volumes("e", ro, node="node-1"))
    assert run(with_volumes("p", ro), info) == (None, None)


RWOP_1 = pvc("claim-with-rwop-1", modes=("ReadWriteOncePod",))
RWOP_2 = pvc("claim-with-rwop-2", modes=("ReadWriteOncePod",))
RWX = pvc("claim-with-rwx", modes=("ReadWriteMany",))
WITH_ONE = with_volumes("pod-with-one-pvc", claims=("claim-with-rwop-1",), node="node-1")
WITH_TWO = with_volumes(
    "pod-with-two-pvcs", claims=("claim-with-rwop-1", "claim-with-rwop-2"), node="node-1"
)
ONE_CONFLICT = with_volumes("pod-with-one-conflict", claims=("claim-with-rwop-1",))
TWO_CONFLICTS = with_volumes(
    "pod-with-two-conflicts", claims=("claim-with-rwop-1", "claim-with-rwop-2")
)
WITH_RWX = with_volumes("pod-with-rwx", claims=("claim-with-rwx",), node="node-1")


@pytest.mark.parametrize(
    ("pod", "existing", "claims", "pre", "filt"),
    [
        pytest.param(make_pod("p").obj(), (), (), SKIP, None, id="nothing"),
        pytest.param(
            WITH_ONE,
            (),
            (),
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ('persistentvolumeclaim "claim-with-rwop-1" not found',),
            ),
            None,
            id="failed to get PVC",
        ),
        pytest.param(
            WITH_ONE, (WITH_RWX,), (RWOP_1, RWX), SKIP, None, id="no access mode conflict"
        ),
        pytest.param(
            ONE_CONFLICT,
            (WITH_ONE, WITH_RWX),
            (RWOP_1, RWX),
            None,
            RWOP_CONFLICT,
            id="access mode conflict, unschedulable",
        ),
        pytest.param(
            TWO_CONFLICTS,
            (WITH_TWO, WITH_RWX),
            (RWOP_1, RWOP_2, RWX),
            None,
            RWOP_CONFLICT,
            id="two conflicts, unschedulable",
        ),
    ],
)
def test_access_mode_conflicts(
    pod: Pod,
    existing: tuple[Pod, ...],
    claims: tuple[PersistentVolumeClaim, ...],
    pre: Status | None,
    filt: Status | None,
) -> None:
    info = node_info(*existing)
    assert run(pod, info, FakeHandle(claims, nodes=[info])) == (pre, filt)


def test_preemption_removing_the_claim_user_clears_the_conflict() -> None:
    # The PreFilter extensions keep the count right in preemption's what-if runs.
    info = node_info(WITH_ONE, WITH_RWX)
    plugin = VolumeRestrictions.new(None, FakeHandle((RWOP_1, RWX), nodes=[info]))
    state = CycleState()
    assert plugin.pre_filter(state, ONE_CONFLICT, [info]) is None
    ext = plugin.pre_filter_extensions()
    victim = info.pods[0]
    assert ext.remove_pod(state, ONE_CONFLICT, victim, info) is None
    assert plugin.filter(state, ONE_CONFLICT, info) is None
    assert ext.add_pod(state, ONE_CONFLICT, victim, info) is None
    assert plugin.filter(state, ONE_CONFLICT, info) == RWOP_CONFLICT


def test_state_clone_is_independent() -> None:
    info = node_info(WITH_ONE)
    plugin = VolumeRestrictions.new(None, FakeHandle((RWOP_1,), nodes=[info]))
    state = CycleState()
    plugin.pre_filter(state, ONE_CONFLICT, [info])
    copy = state.clone()
    plugin.pre_filter_extensions().remove_pod(copy, ONE_CONFLICT, info.pods[0], info)
    assert plugin.filter(copy, ONE_CONFLICT, info) is None
    assert plugin.filter(state, ONE_CONFLICT, info) == RWOP_CONFLICT


@pytest.mark.parametrize(
    ("pod", "deleted", "hint"),
    [
        pytest.param(
            with_volumes("p", GCE[0]),
            with_volumes("d", GCE[0], node="n"),
            QueueingHint.QUEUE,
            id="queue on conflicting disk released",
        ),
        pytest.param(
            with_volumes("p", GCE[1]),
            with_volumes("d", GCE[0], node="n"),
            QueueingHint.SKIP,
            id="skip on unrelated disk",
        ),
        pytest.param(ONE_CONFLICT, WITH_ONE, QueueingHint.QUEUE, id="queue on same PVC"),
        pytest.param(ONE_CONFLICT, WITH_RWX, QueueingHint.SKIP, id="skip on other PVC"),
        pytest.param(
            ONE_CONFLICT,
            make_pod("x", "other").pvc("claim-with-rwop-1").obj(),
            QueueingHint.SKIP,
            id="skip on other namespace",
        ),
    ],
)
def test_is_schedulable_after_pod_deleted(pod: Pod, deleted: Pod, hint: QueueingHint) -> None:
    plugin = VolumeRestrictions.new(None, FakeHandle())
    assert plugin.is_schedulable_after_pod_deleted(pod, deleted, None) is hint


@pytest.mark.parametrize(
    ("new", "hint"),
    [
        pytest.param(pvc("claim-with-rwop-1"), QueueingHint.QUEUE, id="the pod's claim"),
        pytest.param(pvc("claim-with-rwx"), QueueingHint.SKIP, id="another claim"),
        pytest.param(pvc("claim-with-rwop-1", namespace="other"), QueueingHint.SKIP, id="other ns"),
    ],
)
def test_is_schedulable_after_pvc_added(new: object, hint: QueueingHint) -> None:
    plugin = VolumeRestrictions.new(None, FakeHandle())
    assert plugin.is_schedulable_after_pvc_added(ONE_CONFLICT, None, new) is hint
