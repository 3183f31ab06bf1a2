"""Candidates, victims, the order of pods by importance, and the pick of one node.

# pkg/scheduler/framework/preemption/preemption.go (pickOneNodeForPreemption)
# pkg/scheduler/util/utils.go (MoreImportantPod, GetEarliestPodStartTime)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import attrs

from ...api import Pod
from ...framework import PodInfo

__all__ = [
    "Candidate",
    "Victims",
    "by_importance",
    "earliest_start_of_highest_priority",
    "more_important_pod",
    "pick_one_node_for_preemption",
    "pod_start_time",
    "rank_of",
]

_MAX_INT32 = 2**31 - 1


# ---- candidates -----------------------------------------------------------------------


@attrs.frozen
class Victims:
    """The pods to evict on a node (most important first) and how many break a PDB."""

    pods: tuple[Pod, ...]
    num_pdb_violations: int = 0


@attrs.frozen
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone."""

    name: str
    victims: Victims


# ---- pod ordering ---------------------------------------------------------------------


def pod_start_time(pod: Pod, now: float) -> float:
    """``status.startTime``, or now for a pod that has not started (upstream GetPodStartTime)."""
    start = pod.status.start_time
    return now if start is None else start


def more_important_pod(a: Pod, b: Pod, now: float) -> bool:
    """Higher priority first; on a tie the pod that started earlier (MoreImportantPod)."""
    pa, pb = a.priority, b.priority
    if pa != pb:
        return pa > pb
    return pod_start_time(a, now) < pod_start_time(b, now)


def by_importance(now: float) -> Callable[[PodInfo], tuple[int, float]]:
    """Sort key: most important first, the same order as :func:`more_important_pod`."""

    def key(info: PodInfo) -> tuple[int, float]:
        pod = info.pod
        start = pod.status.start_time
        return -pod.priority, now if start is None else start

    return key


def earliest_start_of_highest_priority(pods: Sequence[Pod], now: float) -> float | None:
    """The earliest start time among the highest-priority pods (GetEarliestPodStartTime)."""
    if not pods:
        return None
    best_priority = pods[0].priority
    earliest = pod_start_time(pods[0], now)
    for pod in pods:
        priority = pod.priority
        if priority == best_priority:
            earliest = min(earliest, pod_start_time(pod, now))
        elif priority > best_priority:
            best_priority = priority
            earliest = pod_start_time(pod, now)
    return earliest


# ---- choosing a node ---------------------------------------------------------------------


def _rank(victims: Victims) -> tuple[int, int, int, int, float, bool]:
    """What pickOneNodeForPreemption compares, but the clock: (-PDB violations,
    -highest victim priority, -sum of priorities, -victims, the earliest start among the
    highest-priority victims that started, whether one of them has not started)."""
    pods = victims.pods
    offset = _MAX_INT32 + 1
    total = 0
    top = pods[0].priority
    earliest = math.inf
    unstarted = False
    for pod in pods:
        priority = pod.priority
        total += priority + offset
        start = pod.status.start_time
        if priority > top:
            top, earliest, unstarted = priority, math.inf, False
        if priority == top:
            if start is None:
                unstarted = True
            elif start < earliest:
                earliest = start
    return -victims.num_pdb_violations, -pods[0].priority, -total, -len(pods), earliest, unstarted


_RANKS: dict[int, tuple[Victims, tuple[int, int, int, int, float, bool]]] = {}
"""Ranks by Victims object (dry-run outcomes are kept between preemptors, and so are
their victims): computed once per object."""


def rank_of(victims: Victims) -> tuple[int, int, int, int, float, bool]:
    """:func:`_rank`, computed once per Victims object."""
    kept = _RANKS.get(id(victims))
    if kept is not None and kept[0] is victims:
        return kept[1]
    rank = _rank(victims)
    if len(_RANKS) >= 50_000:
        _RANKS.clear()
    _RANKS[id(victims)] = (victims, rank)
    return rank


def pick_one_node_for_preemption(candidates: Sequence[Candidate], now: float) -> str:
    """The best node, by upstream's criteria in order; ties go to the first candidate.

    Fewest PDB violations, lowest highest-victim priority, lowest sum of priorities,
    fewest victims, latest start of the highest-priority victims (a pod that has not
    started counts as starting now).
    """
    # Filtering by each criterion in turn keeps, after the k-th, the nodes whose first k
    # scores are the lexicographic maximum: the answer is the first node (in candidate
    # order) with the greatest score tuple, found in one pass.
    best_name = ""
    best_key: tuple[float, ...] = ()
    for c in candidates:
        first, top, total, count, earliest, unstarted = rank_of(c.victims)
        if unstarted and now < earliest:
            earliest = now
        key = (first, top, total, count, earliest)
        if not best_key or key > best_key:
            best_name, best_key = c.name, key
    return best_name
