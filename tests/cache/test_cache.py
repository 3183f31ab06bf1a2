"""The cache (backend/cache/cache.go, snapshot.go, node_tree.go): assumed pods, bound
pods, incremental snapshots, zone-interleaved node order and image states."""

from __future__ import annotations

import pytest

from ksched.api import Node
from ksched.cache import Cache, Snapshot
from ksched.framework.batch import ImageStateSummary
from ksched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def _node(name: str, zone: str = "", region: str = "") -> Node:
    b = make_node(name).capacity(cpu="4", memory="8Gi", pods=110)
    if zone:
        b = b.label(ZONE, zone)
    if region:
        b = b.label(REGION, region)
    return b.obj()


def test_assume_then_forget() -> None:
    cache = Cache()
    cache.add_node(_node("n1"))
    pod = make_pod("p").req(cpu="1").node("n1").obj()
    cache.assume_pod(pod)
    assert cache.is_assumed(pod.uid)
    info = cache.node_info("n1")
    assert info is not None and info.requested.milli_cpu == 1000
    with pytest.raises(ValueError, match="already in the cache"):
        cache.assume_pod(pod)
    cache.forget_pod(pod)
    assert not cache.is_assumed(pod.uid)
    assert info.requested.milli_cpu == 0
    assert cache.pod_count == 0


def test_add_confirms_assumed_pod() -> None:
    cache = Cache()
    cache.add_node(_node("n1"))
    pod = make_pod("p").req(cpu="1").node("n1").obj()
    cache.assume_pod(pod)
    cache.finish_binding(pod)
    cache.add_pod(pod)
    assert not cache.is_assumed(pod.uid)
    info = cache.node_info("n1")
    assert info is not None and info.requested.milli_cpu == 1000 and len(info.pods) == 1
    cache.forget_pod(pod)  # no-op for a bound pod
    assert info.requested.milli_cpu == 1000
    cache.remove_pod(pod)
    assert info.requested.milli_cpu == 0 and cache.pod_count == 0


def test_add_of_assumed_pod_on_other_node_moves_it() -> None:
    cache = Cache()
    cache.add_node(_node("n1"))
    cache.add_node(_node("n2"))
    cache.assume_pod(make_pod("p").req(cpu="1").node("n1").obj())
    cache.add_pod(make_pod("p").req(cpu="1").node("n2").obj())
    n1, n2 = cache.node_info("n1"), cache.node_info("n2")
    assert n1 is not None and n2 is not None
    assert (n1.requested.milli_cpu, n2.requested.milli_cpu) == (0, 1000)


def test_remove_node_with_pods_keeps_them_accounted() -> None:
    cache = Cache()
    node = _node("n1")
    cache.add_node(node)
    pod = make_pod("p").req(cpu="1").node("n1").obj()
    cache.add_pod(pod)
    cache.remove_node(node)
    assert cache.node_count == 0
    assert cache.node_info("n1") is None
    snap = Snapshot()
    cache.update_snapshot(snap)
    assert len(snap) == 0
    cache.remove_pod(pod)
    assert cache.pod_count == 0


def test_snapshot_refreshes_only_changed_nodes() -> None:
    cache = Cache()
    for name in ("n1", "n2", "n3"):
        cache.add_node(_node(name))
    snap = Snapshot()
    cache.update_snapshot(snap)
    before = {name: snap.get(name) for name in ("n1", "n2", "n3")}
    assert [i.name for i in snap.list()] == ["n1", "n2", "n3"]

    cache.add_pod(make_pod("p").req(cpu="1").node("n2").obj())
    cache.update_snapshot(snap)
    assert snap.get("n1") is before["n1"]
    assert snap.get("n3") is before["n3"]
    n2 = snap.get("n2")
    assert n2 is not before["n2"]
    assert n2 is not None and n2.requested.milli_cpu == 1000
    assert before["n2"] is not None and before["n2"].requested.milli_cpu == 0

    # nothing changed: the same objects, same list
    listed = snap.list()
    cache.update_snapshot(snap)
    assert snap.list() is listed


def test_the_cache_copies_a_node_a_snapshot_holds_before_changing_it() -> None:
    cache = Cache()
    cache.add_node(_node("n1"))
    cache.add_node(_node("n2"))
    snap = Snapshot()
    cache.update_snapshot(snap)
    held = snap.get("n1")
    assert held is cache.node_info("n1")  # shared while nothing changes the node
    for pod in (make_pod("a").req(cpu="1").node("n1").obj(), make_pod("b").node("n1").obj()):
        cache.add_pod(pod)
    cache.remove_pod(make_pod("a").node("n1").obj())
    cache.update_node(make_node("n1").capacity(cpu="8", memory="8Gi", pods=110).obj())
    # every change went to the cache's copy: the snapshot sees none until refreshed
    assert held is snap.get("n1") and held is not None
    assert (held.requested.milli_cpu, len(held.pods), held.allocatable.milli_cpu) == (0, 0, 4000)
    other = Snapshot()
    cache.update_snapshot(other)
    n1 = other.get("n1")
    assert n1 is not None and n1 is not held
    assert ([p.pod.name for p in n1.pods], n1.allocatable.milli_cpu) == (["b"], 8000)
    cache.update_snapshot(snap)
    assert snap.get("n1") is n1 and snap.get("n2") is other.get("n2")


def test_snapshot_drops_removed_nodes_and_adds_new_ones() -> None:
    cache = Cache()
    n1, n2 = _node("n1"), _node("n2")
    cache.add_node(n1)
    cache.add_node(n2)
    snap = Snapshot()
    cache.update_snapshot(snap)
    kept = snap.get("n2")
    cache.remove_node(n1)
    cache.add_node(_node("n3"))
    cache.update_snapshot(snap)
    assert [i.name for i in snap.list()] == ["n2", "n3"]
    assert snap.get("n1") is None
    assert snap.get("n2") is kept


def test_zone_interleaved_node_order() -> None:
    # node_tree.go: zones in order of first appearance, nodes taken round-robin.
    cache = Cache()
    for name, zone in [
        ("a1", "za"),
        ("a2", "za"),
        ("a3", "za"),
        ("b1", "zb"),
        ("c1", "zc"),
        ("c2", "zc"),
    ]:
        cache.add_node(_node(name, zone))
    assert cache.node_names() == ["a1", "b1", "c1", "a2", "c2", "a3"]
    snap = Snapshot()
    cache.update_snapshot(snap)
    assert [i.name for i in snap.list()] == ["a1", "b1", "c1", "a2", "c2", "a3"]


def test_zone_key_includes_region() -> None:
    cache = Cache()
    cache.add_node(_node("x1", "z", "r1"))
    cache.add_node(_node("x2", "z", "r1"))
    cache.add_node(_node("y1", "z", "r2"))
    assert cache.node_names() == ["x1", "y1", "x2"]


def test_node_changing_zone_moves_in_order() -> None:
    cache = Cache()
    cache.add_node(_node("a1", "za"))
    cache.add_node(_node("a2", "za"))
    cache.add_node(_node("b1", "zb"))
    cache.update_node(_node("a1", "zb"))
    assert cache.node_names() == ["a2", "b1", "a1"]


def test_pod_on_unknown_node_is_held_until_node_arrives() -> None:
    cache = Cache()
    pod = make_pod("p").req(cpu="1").node("late").obj()
    cache.add_pod(pod)
    assert cache.node_info("late") is None
    cache.add_node(_node("late"))
    info = cache.node_info("late")
    assert info is not None and info.requested.milli_cpu == 1000


def _imaged(name: str, *images: tuple[str, int]) -> Node:
    b = make_node(name).capacity(cpu="4", memory="8Gi", pods=110)
    for image, size in images:
        b = b.image(image, size)
    return b.obj()


def test_one_image_summary_per_name_shared_by_the_nodes_listing_it() -> None:
    cache = Cache()
    cache.add_node(_imaged("n1", ("web:v1", 300), ("web:v1", 900)))  # the first entry counts
    cache.add_node(_imaged("n2", ("web:v1", 800), ("db:v3", 60)))
    cache.add_node(_imaged("n3"))
    snap = Snapshot()
    cache.update_snapshot(snap)
    n1, n2, n3 = (snap.get(name) for name in ("n1", "n2", "n3"))
    assert n1 is not None and n2 is not None and n3 is not None
    assert n1.image_states["web:v1"] is n2.image_states["web:v1"]
    assert n2.image_states == {
        "web:v1": ImageStateSummary(size=300, num_nodes=2),
        "db:v3": ImageStateSummary(size=60, num_nodes=1),
    }
    assert n3.image_states == {}

    # An update that lists the same images changes nobody else's view: n1 is not copied.
    cache.update_node(_imaged("n2", ("web:v1", 800), ("db:v3", 60)))
    cache.update_snapshot(snap)
    assert snap.get("n1") is n1

    # A node joining the name changes its count for every node listing it.
    cache.update_node(_imaged("n3", ("web:v1", 100)))
    cache.update_snapshot(snap)
    assert snap.get("n1") is not n1 and snap.get("n2") is not n2
    for name in ("n1", "n2", "n3"):
        info = snap.get(name)
        assert info is not None
        assert info.image_states["web:v1"] == ImageStateSummary(size=300, num_nodes=3)
    # The copy taken before keeps what it showed then.
    assert n1.image_states["web:v1"] == ImageStateSummary(size=300, num_nodes=2)


def test_removed_node_with_pods_leaves_its_images() -> None:
    cache = Cache()
    cache.add_node(_imaged("n1", ("web:v1", 300)))
    cache.add_node(_imaged("n2", ("web:v1", 800)))
    cache.add_pod(make_pod("p").node("n1").obj())
    cache.remove_node(_imaged("n1", ("web:v1", 300)))
    snap = Snapshot()
    cache.update_snapshot(snap)
    n2 = snap.get("n2")
    assert n2 is not None
    assert n2.image_states == {"web:v1": ImageStateSummary(size=300, num_nodes=1)}
    # The node comes back (its pods kept it as a ghost): it joins the name again.
    cache.add_node(_imaged("n1", ("web:v1", 500)))
    cache.update_snapshot(snap)
    for name in ("n1", "n2"):
        info = snap.get(name)
        assert info is not None
        assert info.image_states == {"web:v1": ImageStateSummary(size=300, num_nodes=2)}
