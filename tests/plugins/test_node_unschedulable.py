"""NodeUnschedulable: upstream node_unschedulable_test.go (TestNodeUnschedulable,
TestIsSchedulableAfterNodeChange, TestIsSchedulableAfterPodTolerationChange)."""

from __future__ import annotations

from typing import Any

import pytest

from ksched.api import Node, NodeSpec, ObjectMeta, Pod, PodSpec, Taint, Toleration
from ksched.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    QueueingHint,
    Status,
)
from ksched.plugins.node_unschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable
from ksched.testing import make_pod

UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"


def node(unschedulable: bool, *taints: Taint) -> Node:
    return Node(
        metadata=ObjectMeta(name="n", namespace=""),
        spec=NodeSpec(unschedulable=unschedulable, taints=taints),
    )


EMPTY_POD = Pod(metadata=ObjectMeta(name="p"))
TOLERATING_POD = Pod(
    metadata=ObjectMeta(name="p"),
    spec=PodSpec(tolerations=(Toleration(key=UNSCHEDULABLE_KEY, effect="NoSchedule"),)),
)

FILTER = [
    ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", EMPTY_POD,
     node(True), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,))),
    ("Schedule pod to normal node", EMPTY_POD, node(False), None),
    ("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
     TOLERATING_POD, node(True), None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "node", "want"), [r[1:] for r in FILTER], ids=[r[0] for r in FILTER]
)
def test_node_unschedulable(pod: Pod, node: Node, want: Status | None) -> None:
    assert NodeUnschedulable().filter(CycleState(), pod, NodeInfo.of(node)) == want


NOT_READY = Taint(key="node.kubernetes.io/not-ready", effect="NoExecute")
Q, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP
NODE_CHANGE = [
    ("error-wrong-new-object", None, "not-a-node", Q),
    ("error-wrong-old-object", "not-a-node", node(True), Q),
    ("skip-queue-on-unschedulable-node-added", None, node(True), SKIP),
    ("queue-on-schedulable-node-added", None, node(False), Q),
    ("skip-unrelated-change-unschedulable-true", node(True), node(True, NOT_READY), SKIP),
    ("skip-unrelated-change-unschedulable-false", node(False), node(False, NOT_READY), SKIP),
    ("queue-on-unschedulable-field-change", node(True), node(False), Q),
]


@pytest.mark.parametrize(
    ("old", "new", "want"), [r[1:] for r in NODE_CHANGE], ids=[r[0] for r in NODE_CHANGE]
)
def test_is_schedulable_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeUnschedulable().is_schedulable_after_node_change(EMPTY_POD, old, new) is want


def tolerating(uid: str, key: str) -> Pod:
    """st.MakePod().UID(uid).Toleration(key): operator Exists, effect NoSchedule."""
    return make_pod("p").uid(uid).toleration(key=key, effect="NoSchedule", operator="Exists").obj()


TOLERATION_CHANGE = [
    ("error-wrong-new-object", EMPTY_POD, None, "not-a-pod", Q),
    ("error-wrong-old-object", EMPTY_POD, "not-a-pod", EMPTY_POD, Q),
    ("skip-different-pod-update", make_pod("p").uid("uid").obj(),
     make_pod("p").uid("different-uid").obj(), tolerating("different-uid", UNSCHEDULABLE_KEY),
     SKIP),
    ("queue-when-the-unsched-pod-gets-toleration", make_pod("p").uid("uid").obj(),
     make_pod("p").uid("uid").obj(), tolerating("uid", UNSCHEDULABLE_KEY), Q),
    ("skip-when-the-unsched-pod-gets-unrelated-toleration", make_pod("p").uid("uid").obj(),
     make_pod("p").uid("uid").obj(), tolerating("uid", "unrelated-key"), SKIP),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [r[1:] for r in TOLERATION_CHANGE],
    ids=[r[0] for r in TOLERATION_CHANGE],
)
def test_is_schedulable_after_pod_toleration_change(
    pod: Pod, old: Any, new: Any, want: QueueingHint
) -> None:
    got = NodeUnschedulable().is_schedulable_after_pod_toleration_change(pod, old, new)
    assert got is want


def test_events_to_register() -> None:
    events = NodeUnschedulable().events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
    ]
    assert all(e.hint is not None for e in events)
