"""``timings``: the time of each extension point, without the metrics registry."""

from __future__ import annotations

import anyio
import pytest
from trio.testing import MockClock

from ksched.cluster import InMemoryCluster
from ksched.scheduler import Scheduler, SchedulingEvent
from ksched.testing import make_node, make_pod


@pytest.mark.trio
async def test_post_filter_time_is_the_preemptions_own_without_metrics(
    autojump_clock: MockClock,
) -> None:
    # The loop's clock reads far from zero; every step takes no simulated time, so each
    # extension point's total is zero (PostFilter's was once counted from time zero).
    autojump_clock.jump(5000.0)
    cluster = InMemoryCluster()
    cluster.apply(make_node("n1").capacity(cpu="1", pods=10).obj())
    cluster.apply(make_pod("low").req(cpu="1").node("n1").obj())
    events: list[SchedulingEvent] = []
    async with Scheduler.open(cluster=cluster, observer=events.append, timings=True) as s:
        cluster.apply(make_pod("high").priority(10).req(cpu="1").obj())
        with anyio.fail_after(60):
            while not any(e.kind == "Bound" and e.pod == "default/high" for e in events):
                await anyio.sleep(0.1)
        seconds = dict(s.extension_point_seconds)
    assert any(e.kind == "Preempted" for e in events)
    assert "PostFilter" in seconds
    assert all(value < 1.0 for value in seconds.values()), seconds
