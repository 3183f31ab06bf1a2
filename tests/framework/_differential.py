"""Shared by the differential tests: one pod's cycle three ways on the same state.

Per node only, batch with full diagnosis, and batch as the hot path runs it (no statuses
for a schedulable pod) must give the same placement, filter statuses, evaluated nodes,
scores, totals and rotating start index.
"""

from __future__ import annotations

from typing import Any

from ksched import Pod, Scheduler
from ksched.framework import CycleState, Status
from ksched.scheduler import AttemptReport, FitError
from ksched.scheduler._observer import UNOBSERVED, ObservedAttempt


def status_key(s: Status) -> tuple[Any, ...]:
    return (s.code, s.reasons, s.plugin)


def _outcome(found: Any) -> Any:
    if isinstance(found, FitError):
        return ("fit-error", found.message())
    if isinstance(found, Status):
        return ("status", status_key(found))
    return found


async def _attempt(
    scheduler: Scheduler, pod: Pod, *, batching: bool, report: AttemptReport | None
) -> tuple[Any, int]:
    fw = scheduler.frameworks["default-scheduler"]
    fw.fast.batching = batching
    attempt = (
        UNOBSERVED
        if report is None
        else ObservedAttempt(scheduler.observer, fw.profile_name, 0.0, report)
    )
    found = await scheduler.algorithm.schedule_pod(fw, CycleState(), pod, attempt)
    return _outcome(found), scheduler.state.next_start_node_index


async def compare_paths(scheduler: Scheduler, pod: Pod) -> tuple[Any, AttemptReport]:
    """Assert the three paths agree for ``pod``; returns (outcome, per-node report).

    The outcome is the chosen node name, or a tuple ("fit-error", message) / ("status", ...).
    """
    scheduler.cache.update_snapshot(scheduler.snapshot)
    start, rng_state = scheduler.state.next_start_node_index, scheduler.rng.getstate()

    per_node = AttemptReport()
    want = await _attempt(scheduler, pod, batching=False, report=per_node)
    scheduler.state.next_start_node_index = start
    scheduler.rng.setstate(rng_state)
    batched = AttemptReport()
    got = await _attempt(scheduler, pod, batching=True, report=batched)
    assert got == want, pod.name
    assert {k: status_key(v) for k, v in batched.filter.items()} == {
        k: status_key(v) for k, v in per_node.filter.items()
    }, pod.name
    assert batched.evaluated == per_node.evaluated, pod.name
    assert batched.scores == per_node.scores, pod.name
    assert batched.totals == per_node.totals, pod.name
    scheduler.state.next_start_node_index = start
    scheduler.rng.setstate(rng_state)
    assert await _attempt(scheduler, pod, batching=True, report=None) == want, pod.name
    return want[0], per_node
