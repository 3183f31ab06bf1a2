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
from ksched.framework.runtime import Framework
from ksched.scheduler._observer import UNOBSERVED
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


def _counting_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts, in its last item, the two-pass Filter runs on nominated nodes (the verdicts
    made, not read back)."""
    runs = [0]
    run = Framework.run_filter_with_nominated_pods_sync

    def counting(self: Framework, *args: Any) -> Any:
        runs[-1] += 1
        return run(self, *args)

    monkeypatch.setattr(Framework, "run_filter_with_nominated_pods_sync", counting)
    return runs


async def _cycles(
    cluster: InMemoryCluster, pod: Pod, monkeypatch: pytest.MonkeyPatch, *, metrics: bool = False
) -> tuple[list[int], list[Any]]:
    """Two cycles of ``pod``: per cycle the two-pass Filter runs on the nominated node,
    and the Filter statuses."""
    runs = _counting_runs(monkeypatch)
    scheduler = Scheduler(cluster=cluster, seed=1)
    fw = scheduler.frameworks["default-scheduler"]
    assert [p.pod.name for p in scheduler.queue.nominated_pods_for_node("n0")] == ["nom"]
    outcomes = []
    for step in range(2):
        if step:
            runs.append(0)
        scheduler.cache.update_snapshot(scheduler.snapshot)
        state = CycleState()
        state.record_plugin_metrics = metrics
        found = await scheduler.algorithm.schedule_pod(fw, state, pod, UNOBSERVED)
        assert isinstance(found, FitError)
        outcomes.append([(n, s.code, s.reasons, s.plugin) for n, s in found.statuses.items()])
    return runs, outcomes


async def test_second_cycle_reads_the_kept_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _cluster()
    pod = make_pod("p").priority(50).req(cpu="1", memory="1Gi").obj()
    cluster.apply(pod)
    runs, outcomes = await _cycles(cluster, pod, monkeypatch)
    assert runs == [1, 0]
    assert outcomes[0] == outcomes[1]
    # n0 holds 3 cpu and the 1-cpu nominated pod: the first pass rejects it.
    assert ("n0", outcomes[0][0][1], ("Insufficient cpu",), "NodeResourcesFit") in outcomes[0]


async def test_filters_reading_other_nodes_run_both_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = _cluster()
    builder = make_pod("p").priority(50).req(cpu="1", memory="1Gi")
    pod = builder.pod_affinity("kubernetes.io/hostname", {"app": "x"}, anti=True).obj()
    cluster.apply(pod)
    runs, outcomes = await _cycles(cluster, pod, monkeypatch)
    assert runs == [1, 1]
    assert outcomes[0] == outcomes[1]


async def test_timed_plugin_calls_run_both_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _cluster()
    pod = make_pod("p").priority(50).req(cpu="1", memory="1Gi").obj()
    cluster.apply(pod)
    runs, _ = await _cycles(cluster, pod, monkeypatch, metrics=True)
    assert runs == [1, 1]


async def test_a_changed_node_is_filtered_again(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _cluster()
    pod = make_pod("p").priority(50).req(cpu="1", memory="1Gi").obj()
    cluster.apply(pod)
    runs = _counting_runs(monkeypatch)
    scheduler = Scheduler(cluster=cluster, seed=1)
    fw = scheduler.frameworks["default-scheduler"]
    assert [p.pod.name for p in scheduler.queue.nominated_pods_for_node("n0")] == ["nom"]
    verdicts = []
    for step in range(2):
        if step == 1:  # the low pod on n0 goes: the node now fits both pods
            runs.append(0)
            low0 = cluster.get_pod("default/low0")
            assert low0 is not None
            await cluster.evict(low0)
        scheduler.cache.update_snapshot(scheduler.snapshot)
        found = await scheduler.algorithm.schedule_pod(fw, CycleState(), pod, UNOBSERVED)
        verdicts.append(found)
    assert runs == [1, 1]
    assert isinstance(verdicts[0], FitError)
    assert verdicts[1] == "n0"


def _two_equal_pods(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Scheduler, Framework, list[Pod], list[int]]:
    """A scheduler over ``_cluster()`` with two equal pending pods, its snapshot taken,
    and the count of nominated-node Filter runs."""
    cluster = _cluster()
    pods = [make_pod(f"p{i}").priority(50).req(cpu="1", memory="1Gi").obj() for i in range(2)]
    for pod in pods:
        cluster.apply(pod)
    runs = _counting_runs(monkeypatch)
    scheduler = Scheduler(cluster=cluster, seed=1)
    fw = scheduler.frameworks["default-scheduler"]
    scheduler.cache.update_snapshot(scheduler.snapshot)
    return scheduler, fw, pods, runs


async def test_a_nominated_pod_back_from_flight_counts_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While "nom" is in flight the queue hands it out bare (upstream: not in the queue,
    name only), so it does not count on n0 and "p" fits there. Back in the queue it
    counts again: an equal pod after it must not read the verdict kept meanwhile."""
    scheduler, fw, pods, runs = _two_equal_pods(monkeypatch)
    popped = await scheduler.queue.pop()
    assert popped.pod.name == "nom"  # the highest priority first: now in flight
    found = await scheduler.algorithm.schedule_pod(fw, CycleState(), pods[0], UNOBSERVED)
    assert found == "n0"
    popped.unschedulable_plugins = {"NodeResourcesFit"}
    scheduler.queue.add_unschedulable_if_not_present(popped, scheduler.queue.scheduling_cycle)
    assert [p.pod.name for p in scheduler.queue.nominated_pods_for_node("n0")] == ["nom"]
    found = await scheduler.algorithm.schedule_pod(fw, CycleState(), pods[1], UNOBSERVED)
    assert isinstance(found, FitError)
    assert found.statuses.get("n0").reasons == ("Insufficient cpu",)
    assert runs == [2]


async def test_a_nominated_pod_popped_into_flight_counts_no_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The other way round: the verdict kept while "nom" waits in the queue is not read
    once it is in flight (handed out bare)."""
    scheduler, fw, pods, runs = _two_equal_pods(monkeypatch)
    found = await scheduler.algorithm.schedule_pod(fw, CycleState(), pods[0], UNOBSERVED)
    assert isinstance(found, FitError)
    popped = await scheduler.queue.pop()
    assert popped.pod.name == "nom"
    assert await scheduler.algorithm.schedule_pod(fw, CycleState(), pods[1], UNOBSERVED) == "n0"
    assert runs == [2]
