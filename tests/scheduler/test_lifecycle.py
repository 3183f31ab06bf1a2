"""Shutdown: plugins' close() once, last started first, within the grace; Events the
scheduler records through its cluster (schedule_one.go: Scheduled, FailedScheduling)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from ksched import InMemoryCluster, RecordedEvent, Scheduler
from ksched.config import SchedulerConfig, parse_config
from ksched.framework import Handle
from ksched.scheduler._failure import NOTE_LENGTH_LIMIT, truncate_note
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio


class Closing:
    """A Filter plugin that says when it is closed; ``hang`` makes close() never return."""

    closed: list[str] = []

    def __init__(self, name: str, *, hang: bool = False, fail: bool = False) -> None:
        self.name = name
        self.hang = hang
        self.fail = fail

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None

    async def close(self) -> None:
        if self.fail:
            raise RuntimeError("close failed")
        if self.hang:
            await anyio.sleep_forever()
        Closing.closed.append(self.name)


def _config(*names: str) -> SchedulerConfig:
    enabled = [{"name": n} for n in names]
    return parse_config({"profiles": [{"plugins": {"multiPoint": {"enabled": enabled}}}]})


def _registry(**plugins: Closing) -> Mapping[str, Any]:
    def factory(plugin: Closing) -> Any:
        return lambda args, handle: plugin

    return {name: factory(plugin) for name, plugin in plugins.items()}


async def test_plugins_are_closed_once_in_reverse_order() -> None:
    Closing.closed = []
    first, second = Closing("First"), Closing("Second", fail=True)
    third = Closing("Third")
    registry = _registry(First=first, Second=second, Third=third)
    config = _config("First", "Second", "Third")
    async with Scheduler.open(config, InMemoryCluster(), registry=registry) as scheduler:
        pass
    await scheduler.aclose()  # a second close is a no-op
    # Second raised: logged, and the others are still closed; Third started last.
    assert Closing.closed == ["Third", "First"]


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
async def test_a_hanging_close_is_bounded_by_the_grace() -> None:
    Closing.closed = []
    registry = _registry(Stuck=Closing("Stuck", hang=True), Other=Closing("Other"))
    scheduler = Scheduler(_config("Stuck", "Other"), InMemoryCluster(), registry=registry)
    async with anyio.create_task_group() as tg:
        await tg.start(scheduler.serve)
        start = anyio.current_time()
        await scheduler.aclose(grace=3.0)
        assert anyio.current_time() - start == pytest.approx(3.0)
        tg.cancel_scope.cancel()
    assert Closing.closed == ["Other"]  # closed first (last started), Stuck cut off


async def test_scheduled_and_failed_scheduling_events() -> None:
    cluster = InMemoryCluster()
    async with Scheduler.open(cluster=cluster) as scheduler:
        await cluster.add_node(make_node("n1").capacity(cpu="1", memory="1Gi", pods=10).obj())
        await cluster.add_pod(make_pod("web").req(cpu="500m").obj())
        await cluster.add_pod(make_pod("huge").req(cpu="4").obj())
        await cluster.wait_bound("default/web", timeout=5)
        with anyio.fail_after(5):
            while not any(e.reason == "FailedScheduling" for e in cluster.events):
                await anyio.sleep(0.01)
        assert scheduler.records
    assert RecordedEvent(
        "default/web", None, "Normal", "Scheduled", "Binding",
        "Successfully assigned default/web to n1",
    ) in cluster.events  # fmt: skip
    failed = [e for e in cluster.events if e.reason == "FailedScheduling"]
    assert failed[0] == RecordedEvent(
        "default/huge", None, "Warning", "FailedScheduling", "Scheduling",
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling.",
    )  # fmt: skip


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
async def test_a_cluster_that_keeps_no_events_is_given_none() -> None:
    cluster = InMemoryCluster(keep_events=False)
    async with Scheduler.open(cluster=cluster):
        await cluster.add_node(make_node("n1").capacity(cpu="1", memory="1Gi", pods=10).obj())
        await cluster.add_pod(make_pod("web").req(cpu="500m").obj())
        await cluster.add_pod(make_pod("huge").req(cpu="4").obj())
        await cluster.wait_bound("default/web", timeout=5)
        await anyio.sleep(1)
    assert cluster.events == []


def test_truncate_note_keeps_the_limit() -> None:
    assert truncate_note("short") == "short"
    long = "x" * (NOTE_LENGTH_LIMIT + 10)
    cut = truncate_note(long)
    assert len(cut) == NOTE_LENGTH_LIMIT and cut.endswith(" ...")


def test_handle_is_the_declared_protocol() -> None:
    """Every member of the framework Handle is implemented by the engine's handle."""
    from ksched.scheduler._handle import FrameworkHandle

    declared = {n for n in vars(Handle) if not n.startswith("_")}
    assert declared <= set(dir(FrameworkHandle))
