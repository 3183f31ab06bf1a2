"""A Score plugin that gives every node the same score is left out of the scoring when
only the totals are asked for: the totals must still be the ones scoring gives.

TaintToleration gives every node 100 while no node has a PreferNoSchedule taint
(every raw count is 0, reversed by NormalizeScore); ImageLocality gives every node the
empty sum's 0 while no node holds one of the pod's images.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest

from ksched import InMemoryCluster, Node, Pod, Scheduler
from ksched.framework import CycleState
from ksched.plugins.image_locality import ImageLocality
from ksched.plugins.taint_toleration import TaintToleration
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

MB = 1024 * 1024


def _node(i: int, *, soft_taint: bool = False, image: bool = False) -> Node:
    node = make_node(f"n{i}").resources({"cpu": str(2 + i % 3), "memory": "8Gi", "pods": 110})
    if soft_taint:
        node = node.taint("dedicated", "batch", effect="PreferNoSchedule")
    if image:
        node = node.image("registry.local/app:1", 3000 * MB)
    return node.obj()


def _scheduler(nodes: int) -> Scheduler:
    scheduler = Scheduler(cluster=InMemoryCluster(), seed=3)
    for i in range(nodes):
        scheduler.cache.add_node(_node(i))
    return scheduler


def _pod(image: str = "registry.local/app:1") -> Pod:
    pod = make_pod("p").req(cpu="500m", memory="1Gi").obj()
    container = pod.spec.containers[0]
    return attrs.evolve(
        pod, spec=attrs.evolve(pod.spec, containers=(attrs.evolve(container, image=image),))
    )


async def _both(scheduler: Scheduler, pod: Pod) -> tuple[Any, Any]:
    """The pod's scores over every node: every plugin's, and the totals only."""
    fw = scheduler.frameworks["default-scheduler"]
    scheduler.cache.update_snapshot(scheduler.snapshot)
    table = scheduler.snapshot.table
    infos = scheduler.snapshot.list()
    rows = np.arange(len(infos), dtype=np.int64)
    state = CycleState()
    assert (await fw.run_pre_score(state, pod, infos)).is_success
    key = fw.row_key(pod)
    whole = await fw.run_score(state, pod, infos, table=table, rows=rows, row_key=key)
    totals = await fw.run_score(
        state, pod, infos, table=table, rows=rows, row_key=key, plugin_scores=False
    )
    assert whole.error is None and totals.error is None
    return whole, totals


def _anyio_only(anyio_backend: str) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("pure computation: one backend is enough")


async def test_uniform_plugins_are_left_out_and_the_totals_stay(anyio_backend: str) -> None:
    _anyio_only(anyio_backend)
    scheduler = _scheduler(30)
    pod = _pod()
    whole, totals = await _both(scheduler, pod)
    assert totals.total.tolist() == whole.total.tolist()
    # Every node: TaintToleration 100 (weight 3), ImageLocality 0.
    assert set(whole.scores["TaintToleration"].tolist()) == {100}
    assert set(whole.scores["ImageLocality"].tolist()) == {0}
    assert not {"TaintToleration", "ImageLocality"} & set(totals.scores)


async def test_a_soft_taint_or_a_held_image_brings_the_scoring_back(anyio_backend: str) -> None:
    _anyio_only(anyio_backend)
    scheduler = _scheduler(30)
    pod = _pod()
    await _both(scheduler, pod)  # the plugins have looked at the table once
    # A node gains a PreferNoSchedule taint and another the pod's image (rows refreshed,
    # same table epoch).
    scheduler.cache.add_node(_node(4, soft_taint=True))
    scheduler.cache.add_node(_node(9, image=True))
    whole, totals = await _both(scheduler, pod)
    assert totals.total.tolist() == whole.total.tolist()
    taint = whole.scores["TaintToleration"].tolist()
    assert taint[4] == 0 and set(taint[:4] + taint[5:]) == {100}
    assert whole.scores["ImageLocality"].tolist()[9] > 0
    assert {"TaintToleration", "ImageLocality"} <= set(totals.scores)
    # The taint gone again: the scores are uniform again, and the totals still right.
    scheduler.cache.add_node(_node(4))
    scheduler.cache.add_node(_node(9))
    whole, totals = await _both(scheduler, pod)
    assert totals.total.tolist() == whole.total.tolist()


async def test_a_pod_image_no_node_holds_scores_uniformly_beside_a_held_one(
    anyio_backend: str,
) -> None:
    _anyio_only(anyio_backend)
    scheduler = _scheduler(12)
    scheduler.cache.add_node(_node(3, image=True))
    whole, totals = await _both(scheduler, _pod("registry.local/other:2"))
    assert totals.total.tolist() == whole.total.tolist()
    assert "ImageLocality" not in totals.scores
    whole, totals = await _both(scheduler, _pod())
    assert totals.total.tolist() == whole.total.tolist()
    assert "ImageLocality" in totals.scores


@pytest.mark.parametrize("answer", ["raise", 101, -1, "not a number"])
async def test_a_failing_or_out_of_range_answer_falls_back_to_scoring(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch, answer: object
) -> None:
    _anyio_only(anyio_backend)

    def uniform(self: TaintToleration, state: CycleState, pod: Pod, table: Any) -> int:
        if answer == "raise":
            raise RuntimeError("boom")
        return answer  # type: ignore[return-value]  # a wrong answer, on purpose

    # Patched before the profile is built: the framework binds the methods then.
    monkeypatch.setattr(TaintToleration, "uniform_score", uniform)
    monkeypatch.setattr(ImageLocality, "uniform_score", uniform)
    scheduler = _scheduler(10)
    whole, totals = await _both(scheduler, _pod())
    assert totals.total.tolist() == whole.total.tolist()
    assert {"TaintToleration", "ImageLocality"} <= set(totals.scores)
