"""The snapshot's pod index follows the cache: views, term groups and domain codes equal a
recount of the snapshot's NodeInfos after every refresh."""

from __future__ import annotations

import random

import attrs

from ksched.api import Pod, compile_requirements
from ksched.cache import Cache, Snapshot
from ksched.framework._pod_index import REQUIRED_ANTI_AFFINITY, Requirement
from ksched.framework.batch import PodIndex
from ksched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
APP_A: tuple[Requirement, ...] = (("app", "In", frozenset({"a"})),)
NOT_B: tuple[Requirement, ...] = (
    ("app", "NotIn", frozenset({"b"})),
    ("tier", "Exists", frozenset()),
)


def _recount(
    snapshot: Snapshot, requirements: tuple[Requirement, ...]
) -> dict[tuple[str, bool, int], int]:
    match = compile_requirements(requirements)
    out: dict[tuple[str, bool, int], int] = {}
    for row, info in enumerate(snapshot.list()):
        for p in info.pods:
            meta = p.pod.metadata
            if match(meta.labels):
                key = (meta.namespace, meta.deletion_timestamp is not None, row)
                out[key] = out.get(key, 0) + 1
    return out


def _counted(
    index: PodIndex, requirements: tuple[Requirement, ...]
) -> dict[tuple[str, bool, int], int]:
    view = index.view(requirements)
    out = {}
    for terminating, table in ((False, view.live), (True, view.terminating)):
        for namespace, counts in table.items():
            for row, n in enumerate(counts.tolist()):
                if n:
                    out[(namespace, terminating, row)] = n
    return out


def _pod(rng: random.Random, i: int, node: str) -> Pod:
    b = make_pod(f"p{i}", rng.choice(("ns0", "ns1"))).node(node)
    b = b.labels(
        {k: rng.choice(v) for k, v in {"app": "abc", "tier": "xy"}.items() if rng.random() < 0.7}
    )
    if rng.random() < 0.2:
        b = b.terminating()
    if rng.random() < 0.3:
        b = b.pod_affinity(rng.choice(("kubernetes.io/hostname", ZONE)), {"app": "a"}, anti=True)
    return b.obj()


def test_views_groups_and_domains_follow_the_cache() -> None:
    rng = random.Random(7)
    cache = Cache()
    names = [f"n{i}" for i in range(8)]
    for name in names:
        cache.add_node(make_node(name).label(ZONE, rng.choice(("z0", "z1"))).obj())
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    index = snapshot.pod_index
    index.view(APP_A)  # kept up to date from here on
    for step in range(300):
        roll = rng.random()
        pods = list(cache.pods())
        if roll < 0.5 or not pods:
            cache.add_pod(_pod(rng, step, rng.choice([*names, "ghost"])))
        elif roll < 0.7:
            # The oldest pod too: a node's head cut, as deletions of old pods make it.
            cache.remove_pod(rng.choice(pods) if roll < 0.6 else pods[0])
        elif roll < 0.85:
            old = rng.choice(pods)
            new = attrs.evolve(old, metadata=attrs.evolve(old.metadata, labels={"app": "a"}))
            cache.update_pod(old, new)
        elif roll < 0.95:
            cache.update_node(
                make_node(rng.choice(names)).label(ZONE, rng.choice(("z0", "z2"))).obj()
            )
        else:
            name = f"m{step}"
            cache.add_node(make_node(name).label(ZONE, "z3").obj())
            names.append(name)
        if step % 7 == 0:
            cache.update_snapshot(snapshot)
            assert len(index) == sum(len(info.pods) for info in snapshot.list())
            assert _counted(index, APP_A) == _recount(snapshot, APP_A)
            assert _counted(index, NOT_B) == _recount(snapshot, NOT_B)
            zones = index.domains(ZONE)
            assert [None if c < 0 else zones.values[c] for c in zones.codes.tolist()] == [
                info.node.labels.get(ZONE) for info in snapshot.list()
            ]
            expected: dict[str, int] = {}
            for info in snapshot.list():
                for p in info.pods_with_required_anti_affinity:
                    expected[info.name] = expected.get(info.name, 0) + len(
                        p.required_anti_affinity_terms
                    )
            got: dict[str, int] = {}
            for group in index.groups(REQUIRED_ANTI_AFFINITY):
                for name, n in group.nodes.items():
                    got[name] = got.get(name, 0) + n
            assert got == expected


def test_pods_on_a_node_without_a_node_object_are_not_indexed() -> None:
    cache = Cache()
    cache.add_node(make_node("n0").obj())
    cache.add_pod(make_pod("a").labels({"app": "a"}).node("n0").obj())
    cache.add_pod(make_pod("b").labels({"app": "a"}).node("ghost").obj())
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    assert len(snapshot.pod_index) == 1
    assert snapshot.pod_index.view(APP_A).live["default"].tolist() == [1]
    cache.add_node(make_node("ghost").obj())  # the node object arrives: its pod counts
    cache.update_snapshot(snapshot)
    assert len(snapshot.pod_index) == 2
    view = snapshot.pod_index.view(APP_A).live["default"]
    assert sorted(view.tolist()) == [1, 1]
