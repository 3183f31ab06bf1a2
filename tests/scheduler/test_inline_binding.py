"""Binding cycles that cannot wait run in the scheduling loop; the rest run as tasks.

PreBindPreFlight (runtime/framework.go RunPreBindPreFlights, on by default since 1.35):
a PreBind plugin that says SKIP is not run at PreBind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from ksched.api import Pod
from ksched.cluster import InMemoryCluster
from ksched.config import PluginRef, PluginSet, Profile, SchedulerConfig
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.plugins.default_binder import DefaultBinder
from ksched.scheduler import Scheduler, SchedulingEvent
from ksched.testing import FakeHandle, make_node, make_pod

pytestmark = pytest.mark.anyio


def _task() -> int:
    return anyio.get_current_task().id


class Probe:
    """A plain Filter and, as configured, a PreBind (plain or async, with a pre-flight
    answer) and a plain Bind that may raise once: each records the task it ran in."""

    name = "Probe"

    def __init__(self, *, pre_flight: Code | None = None, async_pre_bind: bool = False) -> None:
        self.pre_flight = pre_flight
        self.raise_once: set[str] = set()
        self.filter_tasks: dict[str, int] = {}
        self.bind_tasks: dict[str, int] = {}
        self.pre_binds: list[str] = []
        if async_pre_bind:
            self.pre_bind = self._async_pre_bind  # type: ignore[method-assign,assignment]  # async here

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.filter_tasks[pod.name] = _task()
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None if self.pre_flight is None else Status(self.pre_flight)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.pre_binds.append(pod.name)
        return None

    async def _async_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        await anyio.lowlevel.checkpoint()
        self.pre_binds.append(pod.name)
        return None

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.bind_tasks[pod.name] = _task()
        if pod.name in self.raise_once:
            self.raise_once.discard(pod.name)
            raise RuntimeError("bind exploded")
        return Status(Code.SKIP)  # DefaultBinder binds


def _config() -> SchedulerConfig:
    refs = (PluginRef("PrioritySort"), PluginRef("Probe"), PluginRef("DefaultBinder"))
    return SchedulerConfig(profiles=(Profile(plugins={"multiPoint": PluginSet(enabled=refs)}),))


def _factory(plugin: Any) -> Callable[..., Any]:
    return lambda args, handle: plugin


async def _schedule(probe: Probe, *names: str, events: list[SchedulingEvent] | None = None) -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())
    observer = events.append if events is not None else None
    async with Scheduler.open(
        _config(), cluster, registry={"Probe": _factory(probe)}, observer=observer
    ):
        for name in names:
            await cluster.add_pod(make_pod(name).obj())
        for name in names:
            await cluster.wait_bound(f"default/{name}", timeout=10)


async def test_a_plain_binding_cycle_runs_in_the_scheduling_loop() -> None:
    probe = Probe()
    await _schedule(probe, "a", "b")
    assert probe.pre_binds == ["a", "b"]
    assert probe.bind_tasks == probe.filter_tasks  # the same task: the scheduling loop


async def test_an_async_pre_bind_runs_the_binding_cycle_as_its_own_task() -> None:
    probe = Probe(async_pre_bind=True)
    await _schedule(probe, "a")
    assert probe.pre_binds == ["a"]
    assert probe.bind_tasks["a"] != probe.filter_tasks["a"]


async def test_an_async_pre_bind_that_says_skip_at_pre_flight_is_not_run() -> None:
    probe = Probe(pre_flight=Code.SKIP, async_pre_bind=True)
    await _schedule(probe, "a")
    assert probe.pre_binds == []
    assert probe.bind_tasks["a"] == probe.filter_tasks["a"]


async def test_a_pre_flight_error_leaves_pre_bind_to_run() -> None:
    probe = Probe(pre_flight=Code.ERROR)
    await _schedule(probe, "a")
    assert probe.pre_binds == ["a"]


@pytest.mark.parametrize(
    "anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})]
)  # the retry waits out its backoff
async def test_a_raising_plain_bind_requeues_the_pod_and_the_loop_goes_on() -> None:
    probe = Probe()
    probe.raise_once.add("a")
    events: list[SchedulingEvent] = []
    await _schedule(probe, "a", "b", events=events)
    errors = [e for e in events if e.kind == "SchedulerError"]
    assert [e.pod for e in errors] == ["default/a"]
    assert "bind exploded" in errors[0].details["message"]
    assert [e.pod for e in events if e.kind == "Bound"] == ["default/b", "default/a"]


class _SlowCluster(InMemoryCluster):
    async def bind(self, pod: Pod, node_name: str) -> None:
        await anyio.lowlevel.checkpoint()
        await super().bind(pod, node_name)


def test_default_binder_binds_through_an_overridden_bind() -> None:
    plain = DefaultBinder.new(None, FakeHandle())
    overridden = DefaultBinder.new(None, FakeHandle(cluster=_SlowCluster()))
    assert plain.name == overridden.name == "DefaultBinder"
    assert not isinstance(plain, DefaultBinder)  # a plain ``def bind``
    assert isinstance(overridden, DefaultBinder)  # awaits the subclass's bind
