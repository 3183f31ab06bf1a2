"""Metrics after a known scenario, with upstream's names and labels (metrics.go)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from prometheus_client import CollectorRegistry, generate_latest

from ksched import InMemoryCluster, Scheduler, SchedulerMetrics
from ksched.observability._metrics import exponential_buckets
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

PROFILE = "default-scheduler"


def value(metrics: SchedulerMetrics, name: str, **labels: str) -> float:
    got = metrics.registry.get_sample_value(name, labels)
    return 0.0 if got is None else got


async def _until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(10):
        while not condition():
            await anyio.sleep(0.01)


async def test_one_scheduled_one_unschedulable() -> None:
    metrics = SchedulerMetrics()
    cluster = InMemoryCluster()
    async with Scheduler.open(cluster=cluster, metrics=metrics) as sched:
        await cluster.add_node(make_node("n1").capacity(cpu="2", memory="4Gi", pods=10).obj())
        await cluster.add_pod(make_pod("web").req(cpu="1").obj())
        await cluster.add_pod(make_pod("huge").req(cpu="8").obj())
        await cluster.wait_bound("default/web", timeout=5)
        await _until(lambda: "default/huge" in cluster.conditions and sched.idle)
        m = "scheduler_schedule_attempts_total"
        assert value(metrics, m, result="scheduled", profile=PROFILE) == 1
        assert value(metrics, m, result="unschedulable", profile=PROFILE) == 1
        assert value(metrics, m, result="error", profile=PROFILE) == 0
        pending = "scheduler_pending_pods"
        assert value(metrics, pending, queue="unschedulable") == 1
        assert value(metrics, pending, queue="active") == 0
        assert value(metrics, pending, queue="backoff") == 0
        assert value(metrics, pending, queue="gated") == 0
        assert (
            value(
                metrics, "scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile=PROFILE
            )
            == 1
        )
        cache = "scheduler_cache_size"
        assert value(metrics, cache, type="nodes") == 1
        assert value(metrics, cache, type="pods") == 1
        assert value(metrics, cache, type="assumed_pods") == 0
        assert value(metrics, "scheduler_preemption_attempts_total") == 1
        assert value(metrics, "scheduler_preemption_victims_count") == 0
        incoming = "scheduler_queue_incoming_pods_total"
        assert value(metrics, incoming, queue="active", event="PodAdd") == 2
        assert value(metrics, incoming, queue="unschedulable", event="ScheduleAttemptFailure") == 1
        assert value(metrics, "scheduler_pod_scheduling_attempts_count") == 1
        assert (
            value(metrics, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") == 1
        )
        point = "scheduler_framework_extension_point_duration_seconds_count"
        assert (
            value(metrics, point, extension_point="PreFilter", status="Success", profile=PROFILE)
            == 2
        )
        assert value(metrics, point, extension_point="Bind", status="Success", profile=PROFILE) == 1
        assert value(metrics, "scheduler_scheduling_algorithm_duration_seconds_count") == 2
        assert value(metrics, "scheduler_tasks", operation="binding") == 0


async def test_preemption_victims_are_observed() -> None:
    metrics = SchedulerMetrics()
    cluster = InMemoryCluster()
    async with Scheduler.open(cluster=cluster, metrics=metrics):
        await cluster.add_node(make_node("n1").capacity(cpu="2", memory="4Gi", pods=10).obj())
        for name in ("low-a", "low-b"):
            await cluster.add_pod(make_pod(name).priority(1).req(cpu="1").obj())
            await cluster.wait_bound(f"default/{name}", timeout=5)
        await cluster.add_pod(make_pod("high").priority(100).req(cpu="2").obj())
        await cluster.wait_bound("default/high", timeout=10)
    assert value(metrics, "scheduler_preemption_attempts_total") == 1
    assert value(metrics, "scheduler_preemption_victims_count") == 1
    assert value(metrics, "scheduler_preemption_victims_sum") == 2


async def test_two_schedulers_keep_their_own_registries() -> None:
    first, second = SchedulerMetrics(), SchedulerMetrics()
    a, b = InMemoryCluster(), InMemoryCluster()
    async with Scheduler.open(cluster=a, metrics=first), Scheduler.open(cluster=b, metrics=second):
        await a.add_node(make_node("n1").capacity(cpu="2", pods=10).obj())
        await a.add_pod(make_pod("p").req(cpu="1").obj())
        await a.wait_bound("default/p", timeout=5)
    scheduled = "scheduler_schedule_attempts_total"
    assert value(first, scheduled, result="scheduled", profile=PROFILE) == 1
    assert value(second, scheduled, result="scheduled", profile=PROFILE) == 0


def test_an_embedders_registry_and_upstream_buckets() -> None:
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)
    assert metrics.registry is registry
    text = generate_latest(registry).decode()
    assert "# TYPE scheduler_schedule_attempts_total counter" in text
    assert exponential_buckets(0.001, 2, 15)[-1] == pytest.approx(16.384)
    assert exponential_buckets(0.0001, 2, 12)[-1] == pytest.approx(0.2048)
