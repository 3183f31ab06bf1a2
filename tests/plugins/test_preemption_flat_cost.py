"""A preemptor late in a PreemptionBasic run costs what an early one costs.

PreemptionBasic (scheduler_perf, misc/performance-config.yaml): nodes of 4 CPUs each
full with four 900m low-priority pods, then as many 3-CPU high-priority pods as nodes.
Each preemptor evicts three pods from one node, so the candidate nodes thin out as the
run goes: the last preemptors find one or two candidates among nodes that are all passed
over. The work of each preemption attempt is counted in executed lines of ksched's own
code (a deterministic count, unlike a timer on a shared machine): the attempts of the
last tenth must not cost much more than those of the second tenth, whose candidates are
still dense.

# pkg/scheduler/framework/preemption/preemption.go (DryRunPreemption: candidates
# from a random offset until enough are found)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import pytest
import trio
from trio.testing import MockClock

import ksched
from ksched import InMemoryCluster, Scheduler, SchedulingEvent
from ksched.framework import QueuedPodInfo
from ksched.testing import make_node, make_pod

NODES = 300
PACKAGE = str(Path(ksched.__file__).parent)


def _bound_high(cluster: InMemoryCluster) -> int:
    return sum(1 for p in cluster.pods() if p.name.startswith("high-") and p.spec.node_name)


async def _lines_per_preemption() -> list[int]:
    """Lines of ksched executed per failed (preempting) attempt, in attempt order."""
    cluster = InMemoryCluster()
    for i in range(NODES):
        cluster.apply(make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj())
        for j in range(4):
            low = make_pod(f"low-{i}-{j}").node(f"node-{i}").req(cpu="900m", memory="500Mi")
            cluster.apply(low.obj())
    counts: list[int] = []
    current = [0]
    failed: list[bool] = [False]

    def observe(event: SchedulingEvent) -> None:
        if event.kind == "Unschedulable":
            failed[0] = True

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            current[0] += 1
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    async with Scheduler.open(cluster=cluster, observer=observe, seed=3) as scheduler:
        pop = scheduler.queue.pop

        async def counted_pop(*, eager: bool = False) -> QueuedPodInfo:
            # The loop is serial: asking for the next pod ends the previous attempt.
            sys.settrace(None)
            if failed[0]:
                counts.append(current[0])
            current[0], failed[0] = 0, False
            qpi = await pop(eager=eager)
            sys.settrace(tracer)
            return qpi

        scheduler.queue.pop = counted_pop  # type: ignore[method-assign]  # this queue only
        try:
            for i in range(NODES):
                high = make_pod(f"high-{i}").priority(10).req(cpu="3000m", memory="500Mi")
                cluster.apply(high.obj())
            with anyio.fail_after(600):
                while _bound_high(cluster) < NODES:
                    await anyio.sleep(1)
        finally:
            sys.settrace(None)
    assert len(cluster.evicted) == 3 * NODES
    return counts


def test_late_preemptors_cost_as_early_ones() -> None:
    if sys.gettrace() is not None:
        pytest.skip("another tracer (coverage, a debugger) owns sys.settrace")
    counts = trio.run(_lines_per_preemption, clock=MockClock(autojump_threshold=0))
    assert len(counts) == NODES
    tenth = NODES // 10
    early = statistics.median(counts[tenth : 2 * tenth])
    late = statistics.median(counts[-tenth:])
    # Before the visit stopped listing the nodes it passed over, the last tenth ran
    # about nine lines per node more than the second tenth (5699 against 3017 here).
    assert late < 1.3 * early, (early, late)
