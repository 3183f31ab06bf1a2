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


def test_changed_nodes_are_logged() -> None:
    """Every change to a node's nominated pods, and every touch of a nominated pod (the
    queue hands it out differently), names the node in the log."""
    n = Nominator()
    nodes = n.nodes()
    start = nodes.cursor
    p, q = make_pod("p").obj(), make_pod("q").obj()
    n.add(p, "node1")
    n.add(q, "node2")
    n.add(p, "node3")  # moves: both nodes change
    n.touch(q.uid)
    n.touch("default/unknown")  # not nominated: nothing to log
    n.delete(q)
    assert nodes.changed_since(start) == ["node1", "node2", "node1", "node3", "node2", "node2"]
    assert nodes.changed_since(nodes.cursor) == []
    assert set(nodes) == {"node3"} and "node3" in nodes and nodes.node_of(p.uid) == "node3"


def test_a_reader_behind_the_trimmed_log_is_told_to_start_over() -> None:
    n = Nominator()
    nodes = n.nodes()
    start = nodes.cursor
    p = make_pod("p").obj()
    for i in range(5000):
        n.add(p, f"node{i % 7}")
    assert nodes.changed_since(start) is None
    recent = nodes.cursor - 10
    assert nodes.changed_since(recent) is not None
    assert len(nodes.changed_since(recent) or ()) == 10
    assert nodes.changed_since(nodes.cursor + 1) is None
