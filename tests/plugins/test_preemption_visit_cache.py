"""DefaultPreemption's per-node dry-run outcomes: read back only while nothing they were
decided from has changed (node, generation, nominated pods, preemptor, budgets, clock)."""

from __future__ import annotations

from ksched.api import ObjectMeta, PodDisruptionBudget
from ksched.framework import Code, NodeInfo, PodInfo, Status
from ksched.plugins.default_preemption._visit_cache import VisitCache, preemptor_key
from ksched.testing import make_node, make_pod

OUTCOME = (None, Status(Code.UNSCHEDULABLE, ("x",)))


def _setup() -> tuple[
    VisitCache, NodeInfo, list[PodInfo], object, list[tuple[PodDisruptionBudget, int]]
]:
    node = NodeInfo.of(make_node("n1").capacity(cpu="4").obj(), [])
    nominated = [PodInfo.of(make_pod("nom").priority(10).req(cpu="1").obj())]
    pod = make_pod("p").priority(10).req(cpu="3").obj()
    key = preemptor_key(pod, ("cpu", 3000), ())
    pdb = PodDisruptionBudget(metadata=ObjectMeta(name="b", namespace="default"))
    cache = VisitCache()
    cache.put(node, nominated, False, key, [(pdb, 1)], None, OUTCOME)
    return cache, node, nominated, key, [(pdb, 1)]


def test_an_unchanged_node_reads_back() -> None:
    cache, node, nominated, key, pdbs = _setup()
    assert cache.get(node, list(nominated), False, key, pdbs, now=5.0) is OUTCOME


def test_any_change_misses() -> None:
    cache, node, nominated, key, pdbs = _setup()
    other_pod = make_pod("q").priority(10).req(cpu="3").toleration("k", "v").obj()
    changed_key = preemptor_key(other_pod, ("cpu", 3000), ())
    clone = node.clone()
    bumped = node.clone()
    bumped.generation += 1
    fresh_nominated = [PodInfo.of(nominated[0].pod)]
    assert cache.get(clone, nominated, False, key, pdbs, 0.0) is None  # another NodeInfo
    assert cache.get(node, fresh_nominated, False, key, pdbs, 0.0) is None  # other objects
    assert cache.get(node, [], False, key, pdbs, 0.0) is None
    assert cache.get(node, nominated, True, key, pdbs, 0.0) is None  # the pod itself
    assert cache.get(node, nominated, False, changed_key, pdbs, 0.0) is None  # tolerations
    assert cache.get(node, nominated, False, key, [(pdbs[0][0], 0)], 0.0) is None
    assert cache.get(node, nominated, False, key, [], 0.0) is None
    node.generation += 1
    assert cache.get(node, nominated, False, key, pdbs, 0.0) is None


def test_an_outcome_that_read_the_clock_holds_only_at_that_time() -> None:
    cache, node, nominated, key, pdbs = _setup()
    cache.put(node, nominated, False, key, pdbs, 7.0, OUTCOME)
    assert cache.get(node, nominated, False, key, pdbs, 7.0) is OUTCOME
    assert cache.get(node, nominated, False, key, pdbs, 8.0) is None


def test_preemptor_key_reads_priority_request_and_node_only_fields() -> None:
    base = make_pod("a").priority(10).req(cpu="3").obj()
    assert preemptor_key(base, 1, ()) == preemptor_key(make_pod("b").priority(10).obj(), 1, ())
    assert preemptor_key(base, 1, ()) != preemptor_key(base, 2, ())
    higher = make_pod("c").priority(11).obj()
    assert preemptor_key(base, 1, ()) != preemptor_key(higher, 1, ())
    selected = make_pod("d").priority(10).node_selector({"zone": "a"}).obj()
    assert preemptor_key(base, 1, ()) != preemptor_key(selected, 1, ())
