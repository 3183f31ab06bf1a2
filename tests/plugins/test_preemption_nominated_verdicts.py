"""Filter verdicts on nodes holding nominated pods, kept between scheduling cycles.

A node with a higher-or-equal priority pod nominated to it is filtered twice per cycle
(upstream RunFilterPluginsWithNominatedPods). When every Filter that runs for the pod
reads only the node, the verdict is kept and read back in the next cycle while the node,
its nominated pods and what those Filters read of the pod stay the same; a change to any
of them, a Filter that reads other nodes, or timed plugin calls mean both passes run.

# pkg/scheduler/framework/runtime/framework.go (RunFilterPluginsWithNominatedPods)
"""

from __future__ import annotations

from typing import Any

import pytest

from ksched import FitError, InMemoryCluster, Scheduler
from ksched.api import Pod
from ksched.framework import CycleState
from ksched.framework._nominated_verdicts import NominatedVerdicts
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio


def _cluster() -> InMemoryCluster:
    cluster = InMemoryCluster()
    for i in range(3):
        cluster.apply(make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods=110).obj())
        cpu = "3" if i == 0 else "3500m"  # only n0 fits the pod, and only without "nom"
        cluster.apply(make_pod(f"low{i}").node(f"n{i}").req(cpu=cpu, memory="1Gi").obj())
    cluster.apply(make_pod("nom").priority(100).req(cpu="1", memory="1Gi").nominated("n0").obj())
    return cluster


async def _cycles(
    cluster: InMemoryCluster, pod: Pod, monkeypatch: pytest.MonkeyPatch, *, metrics: bool = False
) -> tuple[list[bool], list[Any]]:
    """Two cycles of ``pod``: whether each nominated-node check read a kept verdict, and
    the Filter statuses of both."""
    hits: list[bool] = []
    get = NominatedVerdicts.get

    def counting(self: NominatedVerdicts, *args: Any) -> Any:
        status = get(self, *args)
        hits.append(status is not None)
        return status

    monkeypatch.setattr(NominatedVerdicts, "get", counting)
    scheduler = Scheduler(cluster=cluster, seed=1)
    fw = scheduler.frameworks["default-scheduler"]
    assert [p.pod.name for p in scheduler.queue.nominated_pods_for_node("n0")] == ["nom"]
    outcomes = []
    for _ in range(2):
        scheduler.cache.update_snapshot(scheduler.snapshot)
        state = CycleState()
        state.record_plugin_metrics = metrics
        found = await scheduler._schedule_pod(fw, state, pod, None)
        assert isinstance(found, FitError)
        outcomes.append([(n, s.code, s.reasons, s.plugin) for n, s in found.statuses.items()])
    return hits, outcomes


async def test_second_cycle_reads_the_kept_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _cluster()
    pod = make_pod("p").priority(50).req(cpu="1", memory="1Gi").obj()
    cluster.apply(pod)
    hits, outcomes = await _cycles(cluster, pod, monkeypatch)
    assert hits == [False, True]
    assert outcomes[0] == outcomes[1]
    # n0 holds 3 cpu and the 1-cpu nominated pod: the first pass rejects it.
    assert ("n0", outcomes[0][0][1], ("Insufficient cpu",), "NodeResourcesFit") in outcomes[0]


async def test_filters_reading_other_nodes_run_both_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = _cluster()
    pod = make_pod("p").priority(50).req(cpu="1", memory="1Gi")
    pod = pod.pod_affinity("kubernetes.io/hostname", {"app": "x"}, anti=True).obj()
    cluster.apply(pod)
    hits, outcomes = await _cycles(cluster, pod, monkeypatch)
    assert hits == []
    assert outcomes[0] == outcomes[1]


async def test_timed_plugin_calls_run_both_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _cluster()
    pod = make_pod("p").priority(50).req(cpu="1", memory="1Gi").obj()
    cluster.apply(pod)
    hits, _ = await _cycles(cluster, pod, monkeypatch, metrics=True)
    assert hits == []


async def test_a_changed_node_is_filtered_again(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _cluster()
    pod = make_pod("p").priority(50).req(cpu="1", memory="1Gi").obj()
    cluster.apply(pod)
    hits: list[bool] = []
    get = NominatedVerdicts.get

    def counting(self: NominatedVerdicts, *args: Any) -> Any:
        status = get(self, *args)
        hits.append(status is not None)
        return status

    monkeypatch.setattr(NominatedVerdicts, "get", counting)
    scheduler = Scheduler(cluster=cluster, seed=1)
    fw = scheduler.frameworks["default-scheduler"]
    assert [p.pod.name for p in scheduler.queue.nominated_pods_for_node("n0")] == ["nom"]
    verdicts = []
    for step in range(2):
        if step == 1:  # the low pod on n0 goes: the node now fits both pods
            await cluster.evict(cluster.get_pod("default/low0"))  # type: ignore[arg-type]
        scheduler.cache.update_snapshot(scheduler.snapshot)
        found = await scheduler._schedule_pod(fw, CycleState(), pod, None)
        verdicts.append(found)
    assert hits == [False, False]
    assert isinstance(verdicts[0], FitError)
    assert verdicts[1] == "n0"
