"""pickOneNodeForPreemption in one pass chooses what upstream's criterion-by-criterion
filter chooses.

Upstream keeps, criterion after criterion, the nodes with the best score and stops when
one is left: fewest PDB violations, lowest highest-victim priority, lowest sum of
priorities (each shifted by MaxInt32 + 1), fewest victims, latest earliest-start of the
highest-priority victims. Ties end on the first node (ksched keeps candidate order).

# pkg/scheduler/framework/preemption/preemption.go (pickOneNodeForPreemption)
# pkg/scheduler/util/utils.go (GetEarliestPodStartTime)
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from ksched.plugins.default_preemption import Candidate, Victims, pick_one_node_for_preemption
from ksched.testing import make_pod

NOW = 50.0
MAX_INT32 = 2**31 - 1


def criterion_by_criterion(candidates: Sequence[Candidate], now: float) -> str:
    """Upstream's loop, spelled out."""
    victims = {c.name: c.victims for c in candidates}

    def start(pod_start: float | None) -> float:
        return now if pod_start is None else pod_start

    def latest_start(node: str) -> float:
        pods = victims[node].pods
        top = max(p.priority for p in pods)
        return min(start(p.status.start_time) for p in pods if p.priority == top)

    scores: list[Callable[[str], float]] = [
        lambda n: -victims[n].num_pdb_violations,
        lambda n: -victims[n].pods[0].priority,
        lambda n: -sum(p.priority + MAX_INT32 + 1 for p in victims[n].pods),
        lambda n: -len(victims[n].pods),
        latest_start,
    ]
    remaining = [c.name for c in candidates]
    for score in scores:
        best = -math.inf
        kept: list[str] = []
        for node in remaining:
            s = score(node)
            if s > best:
                best, kept = s, [node]
            elif s == best:
                kept.append(node)
        if len(kept) == 1:
            return kept[0]
        remaining = kept
    return remaining[0]


def _candidate(rng: random.Random, name: str) -> Candidate:
    pods = []
    for i in range(rng.randint(1, 4)):
        b = make_pod(f"{name}-v{i}").priority(rng.choice([-5, 0, 0, 3, 10]))
        if rng.random() < 0.6:
            b = b.start_time(float(rng.choice([10, 20, 50, 60])))
        pods.append(b.obj())
    # Victims come most important first, as the dry run leaves them.
    pods.sort(
        key=lambda p: (-p.priority, NOW if p.status.start_time is None else p.status.start_time)
    )
    return Candidate(name, Victims(tuple(pods), rng.choice([0, 0, 1, 2])))


def test_one_pass_matches_criterion_by_criterion() -> None:
    rng = random.Random(4)
    decided_late = 0
    for _ in range(2000):
        candidates = [_candidate(rng, f"n{i}") for i in range(rng.randint(1, 8))]
        want = criterion_by_criterion(candidates, NOW)
        assert pick_one_node_for_preemption(candidates, NOW) == want
        if len(candidates) > 1 and want != candidates[0].name:
            decided_late += 1
    assert decided_late > 500


def test_ties_on_every_criterion_go_to_the_first_candidate() -> None:
    pods = (make_pod("v").obj(),)
    candidates = [Candidate(f"n{i}", Victims(pods)) for i in range(5)]
    assert pick_one_node_for_preemption(candidates, NOW) == "n0"
    # A later start of the highest-priority victims wins the last criterion.
    late = make_pod("late").start_time(NOW + 1).obj()
    candidates.append(Candidate("n-late", Victims((late,))))
    assert pick_one_node_for_preemption(candidates, NOW) == "n-late"
