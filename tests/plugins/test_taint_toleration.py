"""TaintToleration: upstream taint_toleration_test.go tables (TestTaintTolerationScore,
TestTaintTolerationFilter, TestIsSchedulableAfterNodeChange, Test_isSchedulableAfterPodChange).

The pod-change hint follows the newest plugin (isSchedulableAfterPodTolerationChange): the
registration is for UpdatePodToleration only, so the hint just asks whether the updated pod
is the rejected one. The older table's row "skip-updates-not-toleration" (a label-only
update of the pod itself) is filtered by the event type instead and is not carried over.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pytest

from ksched.api import Node, NodeSpec, ObjectMeta, Pod, PodSpec, Taint, Toleration
from ksched.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    QueueingHint,
    Status,
)
from ksched.plugins import in_tree_factory
from ksched.plugins.taint_toleration import ERR_REASON_UNTOLERATED, TaintToleration

HANDLE = cast(Handle, None)  # TaintToleration never uses its handle


def node_with_taints(name: str, taints: Sequence[Taint]) -> Node:
    return Node(metadata=ObjectMeta(name=name, namespace=""), spec=NodeSpec(taints=tuple(taints)))


def pod_with_tolerations(name: str, tolerations: Sequence[Toleration]) -> Pod:
    return Pod(metadata=ObjectMeta(name=name), spec=PodSpec(tolerations=tuple(tolerations)))


def taint(key: str, value: str, effect: str) -> Taint:
    return Taint(key=key, value=value, effect=effect)


def tol(key: str, value: str = "", effect: str = "", operator: str = "Equal") -> Toleration:
    return Toleration(key=key, value=value, effect=effect, operator=operator)


PREFER = "PreferNoSchedule"
NO_SCHEDULE = "NoSchedule"

# ---- TestTaintTolerationScore ------------------------------------------------------------

SCORE_ROWS: list[tuple[Any, ...]] = [
    (
        "node with taints tolerated by the pod, gets a higher score than those node with "
        "intolerable taints",
        [tol("foo", "bar", PREFER)],
        [("nodeA", [taint("foo", "bar", PREFER)]), ("nodeB", [taint("foo", "blah", PREFER)])],
        {"nodeA": 100, "nodeB": 0},
    ),
    (
        "the nodes that all of their taints are tolerated by the pod, get the same score, no "
        "matter how many tolerable taints a node has",
        [tol("cpu-type", "arm64", PREFER), tol("disk-type", "ssd", PREFER)],
        [
            ("nodeA", []),
            ("nodeB", [taint("cpu-type", "arm64", PREFER)]),
            ("nodeC", [taint("cpu-type", "arm64", PREFER), taint("disk-type", "ssd", PREFER)]),
        ],
        {"nodeA": 100, "nodeB": 100, "nodeC": 100},
    ),
    (
        "the more intolerable taints a node has, the lower score it gets.",
        [tol("foo", "bar", PREFER)],
        [
            ("nodeA", []),
            ("nodeB", [taint("cpu-type", "arm64", PREFER)]),
            ("nodeC", [taint("cpu-type", "arm64", PREFER), taint("disk-type", "ssd", PREFER)]),
        ],
        {"nodeA": 100, "nodeB": 50, "nodeC": 0},
    ),
    (
        "only taints and tolerations that have effect PreferNoSchedule are checked by "
        "taints-tolerations priority function",
        [tol("cpu-type", "arm64", NO_SCHEDULE), tol("disk-type", "ssd", NO_SCHEDULE)],
        [
            ("nodeA", []),
            ("nodeB", [taint("cpu-type", "arm64", NO_SCHEDULE)]),
            ("nodeC", [taint("cpu-type", "arm64", PREFER), taint("disk-type", "ssd", PREFER)]),
        ],
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
    ),
    (
        "Default behaviour No taints and tolerations, lands on node with no taints",
        [],
        [("nodeA", []), ("nodeB", [taint("cpu-type", "arm64", PREFER)])],
        {"nodeA": 100, "nodeB": 0},
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "nodes", "expected"),
    [row[1:] for row in SCORE_ROWS],
    ids=[row[0] for row in SCORE_ROWS],
)
def test_taint_toleration_score(
    tolerations: list[Toleration],
    nodes: list[tuple[str, list[Taint]]],
    expected: dict[str, int],
) -> None:
    p = TaintToleration.new(None, HANDLE)
    pod = pod_with_tolerations("pod1", tolerations)
    infos = [NodeInfo.of(node_with_taints(name, taints)) for name, taints in nodes]
    state = CycleState()
    assert p.pre_score(state, pod, infos) is None
    scores = {info.name: p.score(state, pod, info) for info in infos}
    p.normalize_score(state, pod, scores)
    assert scores == expected


def test_score_without_pre_score_fails() -> None:
    p = TaintToleration.new(None, HANDLE)
    with pytest.raises(LookupError, match="PreScoreTaintToleration"):
        p.score(
            CycleState(), pod_with_tolerations("pod1", []), NodeInfo.of(node_with_taints("n", []))
        )


# ---- TestTaintTolerationFilter -----------------------------------------------------------


# Since v1.35 the reason no longer names the taint (upstream logs it instead).
UNTOLERATED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",))


FILTER_ROWS: list[tuple[Any, ...]] = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints",
     [], [taint("dedicated", "user1", NO_SCHEDULE)], UNTOLERATED),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     [tol("dedicated", "user1", NO_SCHEDULE, operator="")],
     [taint("dedicated", "user1", NO_SCHEDULE)], None),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     [tol("dedicated", "user2", NO_SCHEDULE)], [taint("dedicated", "user1", NO_SCHEDULE)],
     UNTOLERATED),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that "
     "tolerates the taints on the node",
     [tol("foo", effect=NO_SCHEDULE, operator="Exists")], [taint("foo", "bar", NO_SCHEDULE)],
     None),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, "
     "pod can be scheduled onto the node",
     [tol("dedicated", "user2", NO_SCHEDULE), tol("foo", effect=NO_SCHEDULE, operator="Exists")],
     [taint("dedicated", "user2", NO_SCHEDULE), taint("foo", "bar", NO_SCHEDULE)], None),
    ("A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
     "effect doesn't match, can't be scheduled onto the node",
     [tol("foo", "bar", PREFER)], [taint("foo", "bar", NO_SCHEDULE)], UNTOLERATED),
    ("The pod has a toleration that keys and values match the taint on the node, the effect of "
     "toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the "
     "node",
     [tol("foo", "bar")], [taint("foo", "bar", NO_SCHEDULE)], None),
    ("The pod has a toleration that key and value don't match the taint on the node, but the "
     "effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
     [tol("dedicated", "user2", NO_SCHEDULE)], [taint("dedicated", "user1", PREFER)], None),
    ("The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be "
     "scheduled onto the node",
     [], [taint("dedicated", "user1", PREFER)], None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("tolerations", "taints", "want"),
    [row[1:] for row in FILTER_ROWS],
    ids=[row[0] for row in FILTER_ROWS],
)
def test_taint_toleration_filter(
    tolerations: list[Toleration], taints: list[Taint], want: Status | None
) -> None:
    p = TaintToleration.new(None, HANDLE)
    node_info = NodeInfo.of(node_with_taints("nodeA", taints))
    assert p.filter(CycleState(), pod_with_tolerations("pod1", tolerations), node_info) == want


def test_filter_reason_is_the_same_whichever_taint_is_untolerated() -> None:
    p = TaintToleration.new(None, HANDLE)
    no_execute = node_with_taints(
        "nodeA",
        [taint("a", "1", PREFER), taint("b", "2", "NoExecute"), taint("c", "3", NO_SCHEDULE)],
    )
    no_schedule = node_with_taints("nodeB", [taint("c", "3", NO_SCHEDULE)])
    pod = pod_with_tolerations("pod1", [tol("c", "3", NO_SCHEDULE)])
    assert p.filter(CycleState(), pod, NodeInfo.of(no_execute)) == UNTOLERATED
    assert p.filter(CycleState(), pod, NodeInfo.of(no_schedule)) is None
    bare = pod_with_tolerations("pod2", [])
    assert p.filter(CycleState(), bare, NodeInfo.of(no_schedule)) == UNTOLERATED
    assert ERR_REASON_UNTOLERATED == "node(s) had untolerated taint(s)"


# ---- TestIsSchedulableAfterNodeChange ----------------------------------------------------

USER2 = [tol("dedicated", "user2", NO_SCHEDULE)]
NODE_HINT_ROWS: list[tuple[Any, ...]] = [
    ("backoff-wrong-new-object", [], None, "not-a-node", QueueingHint.QUEUE),
    ("backoff-wrong-old-object", [], "not-a-node",
     node_with_taints("nodeA", [taint("dedicated", "user1", NO_SCHEDULE)]), QueueingHint.QUEUE),
    ("skip-queue-on-untoleratedtaint-node-added", USER2, None,
     node_with_taints("nodeA", [taint("dedicated", "user1", NO_SCHEDULE)]), QueueingHint.SKIP),
    ("queue-on-toleratedtaint-node-added", USER2, None,
     node_with_taints("nodeA", [taint("dedicated", "user2", NO_SCHEDULE)]), QueueingHint.QUEUE),
    ("skip-unrelated-change", USER2,
     node_with_taints("nodeA", [taint("dedicated", "user1", NO_SCHEDULE)]),
     node_with_taints("nodeA", [taint("dedicated", "user1", NO_SCHEDULE),
                                taint("dedicated", "user3", NO_SCHEDULE)]),
     QueueingHint.SKIP),
    ("queue-on-taint-change", USER2,
     node_with_taints("nodeA", [taint("dedicated", "user1", NO_SCHEDULE)]),
     node_with_taints("nodeA", [taint("dedicated", "user2", NO_SCHEDULE)]), QueueingHint.QUEUE),
]  # fmt: skip


def _hints() -> dict[EventResource, Any]:
    return {
        r.event.resource: r.hint for r in TaintToleration.new(None, HANDLE).events_to_register()
    }


@pytest.mark.parametrize(
    ("tolerations", "old", "new", "expected"),
    [row[1:] for row in NODE_HINT_ROWS],
    ids=[row[0] for row in NODE_HINT_ROWS],
)
def test_is_schedulable_after_node_change(
    tolerations: list[Toleration], old: Any, new: Any, expected: QueueingHint
) -> None:
    hint = _hints()[EventResource.NODE]
    assert hint(pod_with_tolerations("pod1", tolerations), old, new) is expected


# ---- Test_isSchedulableAfterPodChange (newest: isSchedulableAfterPodTolerationChange) ---------


def meta_pod(name: str, uid: str, tolerations: Sequence[Toleration] = ()) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="ns-1", uid=uid),
        spec=PodSpec(tolerations=tuple(tolerations)),
    )


POD_HINT_ROWS: list[tuple[Any, ...]] = [
    ("backoff-wrong-new-object", meta_pod("p", ""), None, "not-a-pod", QueueingHint.QUEUE),
    ("backoff-wrong-old-object", meta_pod("p", ""), "not-a-pod", meta_pod("p", ""),
     QueueingHint.QUEUE),
    ("skip-updates-other-pod", meta_pod("pod-1", "uid0"), meta_pod("pod-2", "uid1"),
     meta_pod("pod-2", "uid1", [tol("foo", effect=NO_SCHEDULE)]), QueueingHint.SKIP),
    ("queue-on-toleration-added", meta_pod("pod-1", ""), meta_pod("pod-1", ""),
     meta_pod("pod-1", "", [tol("foo", effect=NO_SCHEDULE)]), QueueingHint.QUEUE),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "old", "new", "expected"),
    [row[1:] for row in POD_HINT_ROWS],
    ids=[row[0] for row in POD_HINT_ROWS],
)
def test_is_schedulable_after_pod_toleration_change(
    pod: Pod, old: Any, new: Any, expected: QueueingHint
) -> None:
    hint = _hints()[EventResource.POD]
    assert hint(pod, old, new) is expected


def test_events_to_register() -> None:
    events = [r.event for r in TaintToleration.new(None, HANDLE).events_to_register()]
    assert events == [
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
    ]


def test_registry_builds_the_plugin() -> None:
    factory = in_tree_factory("TaintToleration")
    assert factory is not None
    assert isinstance(factory(None, HANDLE), TaintToleration)
