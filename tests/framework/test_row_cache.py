"""Kept Filter masks and Score columns must give what the batch forms give every cycle.

Two schedulers see the same random cluster and the same random pods, drawn from a small
pool of shapes so equal pods come again and again (the case the kept views are for):
one reads kept masks and columns, the other runs the batch forms on every cycle. Between
cycles pods are placed and forgotten, nodes are tainted, cordoned, relabelled and resized,
and new nodes join (the table is then rebuilt). Each cycle must choose the same node
(or fail with the same message) and leave the same rotating start index.
"""

from __future__ import annotations

import os
import random
from typing import Any

import attrs
import numpy as np
import pytest
from _differential import _outcome
from test_batch_equivalence_affinity import random_node, random_pod

from ksched import InMemoryCluster, Node, Pod, Scheduler
from ksched.framework import CycleState, NodeInfo
from ksched.framework._fast._row_cache import RowCache
from ksched.framework.batch import NodeTable
from ksched.scheduler._observer import UNOBSERVED
from ksched.testing import make_node, make_pod

CYCLES = int(os.environ.get("KSCHED_DIFFERENTIAL_PODS", "1200"))
NODES = int(os.environ.get("KSCHED_DIFFERENTIAL_NODES", "150"))


def _changed_node(rng: random.Random, node: Node) -> Node:
    """The node with one thing changed that a node-local Filter or a Score reads."""
    roll = rng.random()
    spec, labels = node.spec, dict(node.labels)
    if roll < 0.25:
        effect = rng.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])
        taints = () if spec.taints else (attrs.evolve(_TAINT, effect=effect),)
        spec = attrs.evolve(spec, taints=taints)
    elif roll < 0.4:
        spec = attrs.evolve(spec, unschedulable=not spec.unschedulable)
    elif roll < 0.7:
        labels["topology.kubernetes.io/zone"] = rng.choice(["zone-a", "zone-b", "zone-c"])
    else:
        cpu = rng.choice(["2", "4", "8", "16"])
        resized = make_node(node.name).resources({"cpu": cpu, "memory": "32Gi", "pods": 110})
        status = resized.obj().status
        return attrs.evolve(node, status=status, spec=spec)
    return attrs.evolve(node, spec=spec, metadata=attrs.evolve(node.metadata, labels=labels))


_TAINT = make_node("t").taint("dedicated", "infra").obj().spec.taints[0]


async def _cycle(scheduler: Scheduler, pod: Pod) -> tuple[Any, int]:
    fw = scheduler.frameworks["default-scheduler"]
    scheduler.cache.update_snapshot(scheduler.snapshot)
    found = await scheduler.algorithm.schedule_pod(fw, CycleState(), pod, UNOBSERVED)
    return _outcome(found), scheduler.state.next_start_node_index


@pytest.mark.anyio
async def test_kept_masks_and_columns_equal_batch_forms(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("pure computation: one backend is enough")
    hits = {"mask": 0, "column": 0, "summed": 0}
    mask, scores = RowCache.mask, RowCache.scores

    def counted_mask(self: RowCache, *args: Any) -> Any:
        out = mask(self, *args)
        hits["mask"] += out is not None
        return out

    def counted_scores(self: RowCache, *args: Any) -> Any:
        out = scores(self, *args)
        # A tuple of plugin names: the one column of several plugins' weighted sums.
        hits["summed" if isinstance(args[1], tuple) else "column"] += out is not None
        return out

    monkeypatch.setattr(RowCache, "mask", counted_mask)
    monkeypatch.setattr(RowCache, "scores", counted_scores)
    rng = random.Random(41)
    nodes = {n.name: n for n in (random_node(rng, i) for i in range(NODES))}
    names = list(nodes)
    shapes = [random_pod(rng, i, names) for i in range(12)]
    kept, fresh = (Scheduler(cluster=InMemoryCluster(), seed=3) for _ in range(2))
    fresh.frameworks["default-scheduler"].fast.use_row_cache = False
    both = (kept, fresh)
    for node in nodes.values():
        for s in both:
            s.cache.add_node(node)
    placed: list[Pod] = []
    scheduled = 0
    for i in range(CYCLES):
        shape = rng.choice(shapes)
        pod = attrs.evolve(shape, metadata=attrs.evolve(shape.metadata, name=f"p{i}", uid=f"u{i}"))
        got, want = await _cycle(kept, pod), await _cycle(fresh, pod)
        assert got == want, (i, pod.name)
        if isinstance(got[0], str):
            scheduled += 1
            bound = attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=got[0]))
            placed.append(bound)
            for s in both:
                s.cache.assume_pod(bound)
        roll = rng.random()
        if placed and roll < 0.15:
            gone = placed.pop(rng.randrange(len(placed)))
            for s in both:
                s.cache.forget_pod(gone)
        elif roll < 0.25:
            name = rng.choice(names)
            nodes[name] = _changed_node(rng, nodes[name])
            for s in both:
                s.cache.update_node(nodes[name])
        elif roll < 0.26:
            node = random_node(rng, len(names))
            names.append(node.name)
            nodes[node.name] = node
            for s in both:
                s.cache.add_node(node)
    assert scheduled > CYCLES // 3
    # Kept masks and columns did the work on many cycles.
    assert hits["mask"] > CYCLES // 4 and hits["column"] > CYCLES // 4, hits
    assert hits["summed"] > CYCLES // 4, hits


def test_a_column_is_built_the_second_time_a_key_asks() -> None:
    table = NodeTable([])
    cache = RowCache()
    calls: list[int] = []

    def score_rows(rows: Any) -> Any:
        calls.append(len(rows))
        return np.asarray(rows, dtype=np.int64) * 2

    rows = np.array([], dtype=np.int64)
    assert cache.scores("k", "P", table, rows, score_rows, int) is None
    assert calls == []
    assert cache.scores("k", "P", table, rows, score_rows, int) is not None
    assert calls == [0]


def test_a_kept_mask_counts_its_passing_rows_as_rows_change() -> None:
    infos = [
        NodeInfo(make_node(f"n{i}").resources({"cpu": "2", "pods": 110}).obj()) for i in range(40)
    ]
    table = NodeTable(infos)
    rng = random.Random(5)
    verdicts = [rng.random() < 0.5 for _ in infos]
    cache = RowCache()
    cache.keep_mask("k", table, np.array(verdicts))
    for _ in range(200):
        for row in rng.sample(range(len(infos)), rng.randint(0, 3)):
            verdicts[row] = rng.random() < 0.5
            table.update_row(row, infos[row])  # logged as changed: judged again
        kept = cache.mask("k", table, lambda row: verdicts[row])
        assert kept is not None
        mask, count = kept
        assert mask.tolist() == verdicts
        assert count == sum(verdicts)


def test_pods_with_equal_spec_share_a_key() -> None:
    a = make_pod("a").req(cpu="1", memory="1Gi").toleration("k", "v").obj()
    b = make_pod("b").req(cpu="1", memory="1Gi").toleration("k", "v").obj()
    c = make_pod("c").req(cpu="2", memory="1Gi").toleration("k", "v").obj()
    pod_row_key = Scheduler(cluster=InMemoryCluster()).frameworks["default-scheduler"].row_key
    assert pod_row_key(a) == pod_row_key(b) != pod_row_key(c)


async def _summed_scheduler(nodes: int) -> Scheduler:
    scheduler = Scheduler(cluster=InMemoryCluster(), seed=3)
    for i in range(nodes):
        node = make_node(f"n{i}").resources({"cpu": str(2 + i % 3), "memory": "8Gi", "pods": 110})
        scheduler.cache.add_node(node.obj())
    return scheduler


@pytest.mark.anyio
async def test_summed_column_gives_the_totals_of_the_plugins_one_by_one(
    anyio_backend: str,
) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("pure computation: one backend is enough")
    scheduler = await _summed_scheduler(40)
    fw = scheduler.frameworks["default-scheduler"]
    scheduler.cache.update_snapshot(scheduler.snapshot)
    table = scheduler.snapshot.table
    pod = make_pod("p").req(cpu="500m", memory="1Gi").obj()
    infos = scheduler.snapshot.list()
    rows = np.arange(len(infos), dtype=np.int64)
    key = fw.row_key(pod)
    for attempt in range(3):  # asked, built, then read
        state = CycleState()
        assert (await fw.run_pre_score(state, pod, infos)).is_success
        whole = await fw.run_score(state, pod, infos, table=table, rows=rows, row_key=key)
        summed = await fw.run_score(
            state, pod, infos, table=table, rows=rows, row_key=key, plugin_scores=False
        )
        assert whole.error is None and summed.error is None
        assert summed.total.tolist() == whole.total.tolist(), attempt
    # The summed plugins' own scores are left out when only the total is asked for.
    assert {"NodeResourcesFit", "NodeResourcesBalancedAllocation"} <= set(whole.scores)
    assert not {"NodeResourcesFit", "NodeResourcesBalancedAllocation"} & set(summed.scores)


@pytest.mark.anyio
async def test_a_summed_plugin_out_of_range_is_reported_by_its_own_scoring(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("pure computation: one backend is enough")
    from ksched.plugins.node_resources_fit import NodeResourcesFit

    # Patched before the profile is built: the framework binds the methods then.
    monkeypatch.setattr(
        NodeResourcesFit, "score_batch", lambda *a: np.full(len(a[-1]), 101, dtype=np.int64)
    )
    monkeypatch.setattr(NodeResourcesFit, "score", lambda *a: 101)
    scheduler = await _summed_scheduler(10)
    fw = scheduler.frameworks["default-scheduler"]
    scheduler.cache.update_snapshot(scheduler.snapshot)
    table = scheduler.snapshot.table
    pod = make_pod("p").req(cpu="500m").obj()
    infos = scheduler.snapshot.list()
    rows = np.arange(len(infos), dtype=np.int64)
    for _ in range(3):
        state = CycleState()
        assert (await fw.run_pre_score(state, pod, infos)).is_success
        out = await fw.run_score(
            state, pod, infos, table=table, rows=rows, row_key=fw.row_key(pod), plugin_scores=False
        )
        assert out.error is not None and out.error.plugin == "NodeResourcesFit"
        assert "invalid score 101" in out.error.message
