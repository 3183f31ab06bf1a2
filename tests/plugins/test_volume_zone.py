"""VolumeZone: upstream volume_zone_test.go (TestSingleZone, TestMultiZone, TestWithBinding,
TestIsSchedulableAfter*)."""

from __future__ import annotations

from typing import Any

import pytest
from storage_fixtures import pv, pvc, storage_class

from ksched.api import Node, Pod
from ksched.framework import Code, CycleState, NodeInfo, QueueingHint, Status
from ksched.plugins.volume_zone import ERR_REASON_CONFLICT, VolumeZone
from ksched.testing import FakeHandle, make_node, make_pod

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,))
SKIP = Status(Code.SKIP)

SINGLE_ZONE_OBJECTS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("PVC_1", volume="Vol_1"),
    pvc("PVC_2", volume="Vol_2"),
    pvc("PVC_3", volume="Vol_3"),
    pvc("PVC_4", volume="Vol_not_exist"),
    pvc("PVC_Stable_1", volume="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume="Vol_Stable_2"),
    pvc("PVC_Stable_3", volume="Vol_Stable_3"),
]


def pod_with(claim: str | None) -> Pod:
    builder = make_pod("pod_1")
    return (builder.pvc(claim) if claim else builder).obj()


def host(labels: dict[str, str]) -> Node:
    return make_node("host1").labels(labels).obj()


def run(objects: list[Any], pod: Pod, node: Node) -> tuple[Status | None, Status | None]:
    plugin = VolumeZone.new(None, FakeHandle(objects))
    state = CycleState()
    info = NodeInfo(node=node, name=node.name)
    pre = plugin.pre_filter(state, pod, [info])
    return pre, plugin.filter(state, pod, info)


@pytest.mark.parametrize(
    ("claim", "labels", "pre", "filt"),
    [
        pytest.param(None, {BETA_ZONE: "us-west1-a"}, SKIP, None, id="pod without volume"),
        pytest.param("PVC_1", {}, None, None, id="node without labels"),
        pytest.param(
            "PVC_1",
            {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
            None,
            None,
            id="beta zone label matched",
        ),
        pytest.param(
            "PVC_2",
            {BETA_REGION: "us-west1", "uselessLabel": "none"},
            None,
            None,
            id="beta region label matched",
        ),
        pytest.param(
            "PVC_2",
            {BETA_REGION: "no_us-west1", "uselessLabel": "none"},
            None,
            CONFLICT,
            id="beta region label doesn't match",
        ),
        pytest.param(
            "PVC_1",
            {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"},
            None,
            CONFLICT,
            id="beta zone label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_1",
            {ZONE: "us-west1-a", "uselessLabel": "none"},
            None,
            None,
            id="zone label matched",
        ),
        pytest.param(
            "PVC_Stable_2",
            {REGION: "us-west1", "uselessLabel": "none"},
            None,
            None,
            id="region label matched",
        ),
        pytest.param(
            "PVC_Stable_2",
            {REGION: "no_us-west1", "uselessLabel": "none"},
            None,
            CONFLICT,
            id="region label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_1",
            {ZONE: "no_us-west1-a", "uselessLabel": "none"},
            None,
            CONFLICT,
            id="zone label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_3",
            {ZONE: "us-west1-a"},
            None,
            CONFLICT,
            id="pv with zone and region, node with only zone",
        ),
        pytest.param(
            "PVC_Stable_1",
            {BETA_ZONE: "us-west1-a"},
            None,
            CONFLICT,
            id="pv with zone,node with beta zone",
        ),
        pytest.param(
            "PVC_1",
            {ZONE: "us-west1-a"},
            None,
            None,
            id="pv with beta label,node with ga label, matched",
        ),
        pytest.param(
            "PVC_1",
            {ZONE: "us-west1-b"},
            None,
            CONFLICT,
            id="pv with beta label,node with ga label, don't match",
        ),
    ],
)
def test_single_zone(
    claim: str | None, labels: dict[str, str], pre: Status | None, filt: Status | None
) -> None:
    assert run(SINGLE_ZONE_OBJECTS, pod_with(claim), host(labels)) == (pre, filt)


MULTI_ZONE_OBJECTS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={ZONE: "us-west1-c__us-west1-a"}),
    pvc("PVC_1", volume="Vol_1"),
    pvc("PVC_2", volume="Vol_2"),
    pvc("PVC_3", volume="Vol_3"),
    pvc("PVC_4", volume="Vol_not_exist"),
    pvc("PVC_Stable_1", volume="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume="Vol_Stable_2"),
]


@pytest.mark.parametrize(
    ("claim", "labels", "filt"),
    [
        pytest.param("PVC_3", {}, None, id="node without labels"),
        pytest.param(
            "PVC_3",
            {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
            None,
            id="beta zone label matched",
        ),
        pytest.param(
            "PVC_1",
            {BETA_ZONE: "us-west1-b", "uselessLabel": "none"},
            CONFLICT,
            id="beta zone label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_2",
            {ZONE: "us-west1-a", "uselessLabel": "none"},
            None,
            id="zone label matched",
        ),
        pytest.param(
            "PVC_Stable_1",
            {ZONE: "us-west1-b", "uselessLabel": "none"},
            CONFLICT,
            id="zone label doesn't match",
        ),
    ],
)
def test_multi_zone(claim: str, labels: dict[str, str], filt: Status | None) -> None:
    assert run(MULTI_ZONE_OBJECTS, pod_with(claim), host(labels)) == (None, filt)


def unresolvable(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


WITH_BINDING_OBJECTS = [
    storage_class("Class_Immediate", mode=None),  # upstream's fake lister leaves the mode unset
    storage_class("Class_Wait", mode="WaitForFirstConsumer"),
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", volume="Vol_1"),
    pvc("PVC_NoSC", storage_class="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", storage_class="Class_Wait"),
    pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
]


@pytest.mark.parametrize(
    ("claim", "pre", "filt"),
    [
        pytest.param("PVC_1", None, None, id="label zone failure domain matched"),
        pytest.param(
            "PVC_EmptySC",
            unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            id="unbound volume empty storage class",
        ),
        pytest.param(
            "PVC_NoSC",
            # The real lister's wording (upstream's fake lister says "storageclasses").
            unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
            unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
            id="unbound volume no storage class",
        ),
        pytest.param(
            "PVC_ImmediateSC",
            unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
            unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
            id="unbound volume immediate binding mode",
        ),
        pytest.param("PVC_WaitSC", SKIP, None, id="unbound volume wait binding mode"),
    ],
)
def test_with_binding(claim: str, pre: Status | None, filt: Status | None) -> None:
    node = host({BETA_ZONE: "us-west1-a", "uselessLabel": "none"})
    assert run(WITH_BINDING_OBJECTS, pod_with(claim), node) == (pre, filt)


def test_immediate_class_with_unbound_claim_has_no_pv_name() -> None:
    # As the API server defaults volumeBindingMode to Immediate, a manifest's class gets here.
    objects = [storage_class("fast"), pvc("data", storage_class="fast")]
    pre, _ = run(objects, pod_with("data"), host({ZONE: "a"}))
    assert pre == unresolvable("PersistentVolume had no name")


PLUGIN = VolumeZone.new(None, FakeHandle())


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"),
    [
        pytest.param(
            pod_with(None),
            None,
            pvc("PVC_1", volume="Vol_1"),
            QueueingHint.SKIP,
            id="pvc-was-added-but-pod-refers-no-pvc",
        ),
        pytest.param(
            pod_with("PVC_2"),
            None,
            pvc("PVC_1", volume="Vol_1"),
            QueueingHint.SKIP,
            id="pvc-was-added-and-pod-was-bound-to-different-pvc",
        ),
        pytest.param(
            pod_with("PVC_1"),
            None,
            pvc("PVC_1", volume="Vol_1", namespace="ns1"),
            QueueingHint.SKIP,
            id="pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns",
        ),
        pytest.param(
            pod_with("PVC_1"),
            None,
            pvc("PVC_1", volume="Vol_1"),
            QueueingHint.QUEUE,
            id="pvc-was-added-and-pod-was-bound-to-the-pvc",
        ),
        pytest.param(
            pod_with("PVC_1"),
            pvc("PVC_1"),
            pvc("PVC_1", volume="Vol_1"),
            QueueingHint.QUEUE,
            id="pvc-was-updated-and-pod-was-bound-to-the-pvc",
        ),
        pytest.param(
            pod_with(None),
            pvc("PVC_1"),
            pvc("PVC_1", volume="Vol_1"),
            QueueingHint.SKIP,
            id="pvc-was-updated-but-pod-refers-no-pvc",
        ),
    ],
)
def test_is_schedulable_after_pvc_change(pod: Pod, old: Any, new: Any, hint: QueueingHint) -> None:
    assert PLUGIN.is_schedulable_after_pvc_change(pod, old, new) is hint


@pytest.mark.parametrize(
    ("mode", "hint"),
    [
        pytest.param(None, QueueingHint.SKIP, id="sc-doesn't-have-volume-binding-mode"),
        pytest.param(
            "WaitForFirstConsumer", QueueingHint.QUEUE, id="new-sc-is-wait-for-first-consumer-mode"
        ),
    ],
)
def test_is_schedulable_after_storage_class_added(mode: str | None, hint: QueueingHint) -> None:
    new = storage_class("SC_1", mode=mode)
    assert PLUGIN.is_schedulable_after_storage_class_added(pod_with("PVC_1"), None, new) is hint


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        pytest.param(
            None,
            pv("Vol_1", labels={BETA_ZONE: "us-west1-b"}),
            QueueingHint.QUEUE,
            id="new-pv-was-added",
        ),
        pytest.param(
            pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", labels={BETA_ZONE: "us-west1-b"}),
            QueueingHint.QUEUE,
            id="pv-was-updated-and-changed-topology",
        ),
        pytest.param(
            pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", labels={BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            QueueingHint.QUEUE,
            id="pv-was-updated-and-added-topology-label",
        ),
        pytest.param(
            pv("Vol_1", labels={BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            pv("Vol_1", labels={BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            QueueingHint.SKIP,
            id="pv-was-updated-but-no-topology-is-changed",
        ),
    ],
)
def test_is_schedulable_after_pv_change(old: Any, new: Any, hint: QueueingHint) -> None:
    assert PLUGIN.is_schedulable_after_pv_change(pod_with("PVC_1"), old, new) is hint
