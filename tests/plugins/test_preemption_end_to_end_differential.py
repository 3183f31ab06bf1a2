"""Preemptors run through the real scheduling loop give the same story with the kept
verdicts, sweeps and outcomes as without any of them.

The other differential tests call the cycle directly; here the queue pops the pods (a
nominated pod is handed out bare while in flight, as upstream), victims leave, the
preemptors come back from backoff and bind, some preemptors arrive while others wait.
Random PreemptionBasic-like clusters (full nodes, lower-priority pods, a few pods
nominated from the start) are run twice under a virtual clock: with every shortcut, and
with none (both Filter passes on every nominated node, Filter-run dry runs, the nominator
asked about every node). Every event (attempts, messages, nominations, victims, binds)
must be the same, in the same order.

# pkg/scheduler/schedule_one.go, framework/runtime/framework.go
# (RunFilterPluginsWithNominatedPods), framework/preemption/preemption.go
"""

from __future__ import annotations

import random
from typing import Any

import anyio
import pytest
import trio
from _preemption_clusters import full_nodes
from trio.testing import MockClock

from ksched import InMemoryCluster, Scheduler, SchedulingEvent
from ksched.framework._fast._nominated_verdicts import Sweep
from ksched.framework.runtime import Framework
from ksched.plugins.default_preemption import DefaultPreemption
from ksched.testing import make_pod

SEEDS = range(24)


def _arrivals(rng: random.Random) -> tuple[list[Any], list[list[Any]]]:
    """The cluster's objects, and the preemptors in waves."""
    objects = full_nodes(
        rng, most_nodes=16, leave_room=[0, 300, 600], started=lambda _, p: p.start_time(1.0)
    )
    waves = []
    for w in range(rng.randint(1, 3)):
        wave = []
        for i in range(rng.randint(3, 10)):
            p = make_pod(f"pre{w}-{i}").priority(rng.choice([10, 10, 50, 100]))
            wave.append(p.req(cpu=rng.choice(["1", "1", "2", "3"]), memory="256Mi").obj())
        waves.append(wave)
    return objects, waves


async def _story(seed: int, shortcuts: bool) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    objects, waves = _arrivals(rng)
    cluster = InMemoryCluster()
    for obj in objects:
        cluster.apply(obj)
    events: list[tuple[Any, ...]] = []

    def observe(event: SchedulingEvent) -> None:
        details = tuple(sorted((k, repr(v)) for k, v in event.details.items()))
        events.append((event.kind, event.pod, event.time, details))

    async with Scheduler.open(cluster=cluster, observer=observe, seed=seed) as scheduler:
        for fw in scheduler.frameworks.values():
            fw.fast.verdict_cache = shortcuts
        for wave in waves:
            for pod in wave:
                cluster.apply(pod)
            await anyio.sleep(rng.choice([0.0, 0.5, 3.0]))
        await anyio.sleep(120)
    events.append(("evicted", tuple(cluster.evicted)))
    return events


def _run(seed: int, shortcuts: bool) -> list[tuple[Any, ...]]:
    """One story under a virtual clock, the run order of ready tasks seeded (trio shuffles
    it; seeded, both runs interleave their tasks alike)."""
    trio_run = trio._core._run  # the scheduler's random source
    trio_run._r.seed(seed)
    return trio.run(_story, seed, shortcuts, clock=MockClock(autojump_threshold=0))


def test_shortcuts_tell_the_same_story(monkeypatch: pytest.MonkeyPatch) -> None:
    swept = [0]
    run = Framework.run_filter_with_nominated_pods_sync

    def counting(self: Framework, *args: Any) -> Any:
        swept[0] += 1
        return run(self, *args)

    monkeypatch.setattr(Framework, "run_filter_with_nominated_pods_sync", counting)
    merged = [0]
    scatter = Sweep.scatter

    def counting_scatter(self: Sweep, *args: Any) -> Any:
        merged[0] += 1
        return scatter(self, *args)

    monkeypatch.setattr(Sweep, "scatter", counting_scatter)
    preempted = made_fast = made_slow = 0
    for seed in SEEDS:
        swept[0] = 0
        fast = _run(seed, True)
        made_fast += swept[0]
        with monkeypatch.context() as patch:
            patch.setattr(DefaultPreemption, "arithmetic_dry_runs", False)
            patch.setattr(DefaultPreemption, "fast_nominated_lookup", False)
            patch.setattr(DefaultPreemption, "row_visits", False)
            swept[0] = 0
            slow = _run(seed, False)
            made_slow += swept[0]
        assert fast == slow, seed
        assert not [e for e in fast if e[0] == "SchedulerError"], seed
        preempted += sum(1 for e in fast if e[0] == "Preempted")
    # The sample preempts, and the shortcuts spare two-pass Filter runs: kept
    # rejections are taken by table row. (About a fifth of them here: the loop takes
    # pods in runs while no binding cycle is in flight, so waves meet fuller queues.)
    assert preempted > 50
    assert 5 * made_fast < 4 * made_slow
    assert merged[0] > 60
