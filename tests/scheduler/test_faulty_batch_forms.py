"""Batch forms that misbehave, and faults outside any plugin, do not take the engine down.

A batch Filter that returns something other than a mask over the node table is ignored (the
per-node method decides); a batch Score that raises or returns the wrong shape fails the pod
with a SchedulerError, which is retried; an unexpected exception in a scheduling cycle fails
that pod and the loop goes on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_scheduler import config, factory, node, until

from ksched import FitError, InMemoryCluster, Pod, Scheduler, SchedulingEvent
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.framework.batch import IntArray, NodeTable
from ksched.framework.runtime import Framework
from ksched.scheduler._observer import Attempt
from ksched.testing import make_pod


class WrongShapeFilter:
    """Keeps pods off n1; its batch form returns a mask of the wrong length."""

    name = "WrongShapeFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name == "n1":
            return Status(Code.UNSCHEDULABLE, ("not n1",))
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> Any:
        return np.ones(len(table) + 3, dtype=np.bool_)


class BadBatchScore:
    """Scores 0 per node; its batch form raises for pods named bad-*, and returns a list
    (not an int64 array) for pods named odd-*."""

    name = "BadBatchScore"

    def __init__(self) -> None:
        self.calls = 0

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0

    def score_extensions(self) -> None:
        return None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> Any:
        self.calls += 1
        if pod.name.startswith("bad-") and self.calls == 1:
            raise RuntimeError("batch exploded")
        if pod.name.startswith("odd-"):
            return [0] * len(rows)
        return np.zeros(len(rows), dtype=np.int64)


@pytest.mark.anyio
async def test_a_batch_filter_that_is_not_a_mask_is_ignored() -> None:
    cluster = InMemoryCluster()
    for name in ("n1", "n2", "n3"):
        await cluster.add_node(node(name))
    async with Scheduler.open(
        config("WrongShapeFilter"),
        cluster,
        registry={"WrongShapeFilter": factory(WrongShapeFilter())},
    ):
        for i in range(6):
            await cluster.add_pod(make_pod(f"p{i}").req(cpu="100m").obj())
        for i in range(6):
            pod = await cluster.wait_bound(f"default/p{i}", timeout=10)
            assert pod.spec.node_name in ("n2", "n3")


@pytest.mark.anyio
async def test_a_faulty_batch_score_fails_the_pod_and_the_engine_goes_on() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1"))
    await cluster.add_node(node("n2"))
    events: list[SchedulingEvent] = []
    plugin = BadBatchScore()
    async with Scheduler.open(
        config("BadBatchScore"),
        cluster,
        registry={"BadBatchScore": factory(plugin)},
        observer=events.append,
    ):
        await cluster.add_pod(make_pod("bad-1").req(cpu="100m").obj())
        await cluster.add_pod(make_pod("odd-1").req(cpu="100m").obj())
        await until(lambda: sum(e.kind == "SchedulerError" for e in events) >= 2)
        messages = {e.pod: e.details["message"] for e in events if e.kind == "SchedulerError"}
        assert (
            'running "BadBatchScore" Score plugin: RuntimeError: batch exploded'
            in (messages["default/bad-1"])
        )
        assert "not 2 int64 scores" in messages["default/odd-1"]
        # the engine goes on, and bad-1 (whose batch form works the second time) is retried
        await cluster.add_pod(make_pod("good").req(cpu="100m").obj())
        await cluster.wait_bound("default/good", timeout=10)
        await cluster.wait_bound("default/bad-1", timeout=10)


@pytest.mark.anyio
async def test_an_unexpected_fault_in_a_cycle_fails_only_that_attempt() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(node("n1"))
    events: list[SchedulingEvent] = []
    async with Scheduler.open(config(), cluster, observer=events.append) as sched:
        original = sched.algorithm.schedule_pod
        failures: list[int] = []

        async def flaky(
            fw: Framework, state: CycleState, pod: Pod, attempt: Attempt
        ) -> str | FitError | Status:
            if not failures:
                failures.append(1)
                raise KeyError("lost")
            return await original(fw, state, pod, attempt)

        sched.algorithm.schedule_pod = flaky  # type: ignore[method-assign]  # a fault, injected
        await cluster.add_pod(make_pod("p").req(cpu="100m").obj())
        pod = await cluster.wait_bound("default/p", timeout=10)
        assert pod.spec.node_name == "n1"
    error = next(e for e in events if e.kind == "SchedulerError")
    assert error.details["message"] == "scheduling cycle failed: KeyError: 'lost'"
    assert sched.records[pod.uid].attempts == 2
