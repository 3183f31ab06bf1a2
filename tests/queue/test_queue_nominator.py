"""The nominator (upstream nominator.go)."""

from __future__ import annotations

from ksched.queue._nominator import Nominator
from ksched.testing import make_pod


def test_nomination_from_status_and_override() -> None:
    n = Nominator()
    p = make_pod("p").nominated("node1").obj()
    n.add(p, None)
    assert [r.name for r in n.for_node("node1")] == ["p"]
    n.add(p, "node2")
    assert n.for_node("node1") == [] and n.node_of(p.uid) == "node2"
    n.add(p, "")
    assert n.node_of(p.uid) is None and n.for_node("node2") == []


def test_pod_without_nominated_node_name_is_not_added() -> None:
    """TestPriorityQueue_NominatedPodDeleted/"pod without .status.nominatedPodName
    specified shouldn't be added into PodNominator"."""
    n = Nominator()
    n.add(make_pod("p").obj(), None)
    assert n.node_of("default/p") is None


def test_update_keeps_in_memory_nomination_only_without_names() -> None:
    n = Nominator()
    old = make_pod("p").obj()
    n.add(old, "node3")
    n.update(old, make_pod("p").label("a", "b").obj())
    assert n.node_of(old.uid) == "node3"
    n.update(old, make_pod("p").nominated("node4").obj())
    assert n.node_of(old.uid) == "node4"
    n.update(make_pod("p").nominated("node4").obj(), make_pod("p").obj())
    assert n.node_of(old.uid) is None


def test_delete_keeps_other_pods_in_order() -> None:
    n = Nominator()
    pods = [make_pod(f"p{i}").obj() for i in range(3)]
    for p in pods:
        n.add(p, "node1")
    n.delete(pods[1])
    n.delete(pods[1])
    assert [r.name for r in n.for_node("node1")] == ["p0", "p2"]
