"""PreScore state, Score and NormalizeScore (ScheduleAnyway).

# pkg/scheduler/framework/plugins/podtopologyspread/scoring.go
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...api import Pod
from ...framework import MAX_NODE_SCORE, NodeInfo
from ._common import (
    LABEL_HOSTNAME,
    Counter,
    NodeInclusion,
    SpreadConstraint,
    counter,
    has_all_keys,
)

__all__ = ["PreScoreState", "compute_pre_score_state", "normalize", "round_half_away", "score"]


class PreScoreState:
    """By constraint index: matching pods per topology value of the scored nodes (hostname
    constraints count on the node itself in Score) and each topology's weight; and the
    scored nodes that lack a topology key (scored 0)."""

    __slots__ = (
        "constraints",
        "ignored_nodes",
        "terms",
        "topology_normalizing_weight",
        "topology_value_to_pod_counts",
    )

    def __init__(
        self,
        constraints: Sequence[SpreadConstraint],
        ignored_nodes: set[str],
        topology_value_to_pod_counts: list[dict[str, int]],
        topology_normalizing_weight: list[float],
        namespace: str,
    ) -> None:
        self.constraints = constraints
        self.ignored_nodes = ignored_nodes
        self.topology_value_to_pod_counts = topology_value_to_pod_counts
        self.topology_normalizing_weight = topology_normalizing_weight
        # What Score needs per constraint, flattened once.
        self.terms: list[tuple[str, Counter | None, dict[str, int], float, int]] = [
            (
                c.topology_key,
                counter(c.selector, namespace) if c.topology_key == LABEL_HOSTNAME else None,
                counts,
                weight,
                c.max_skew - 1,
            )
            for c, counts, weight in zip(
                constraints, topology_value_to_pod_counts, topology_normalizing_weight, strict=True
            )
        ]

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore


def topology_normalizing_weight(size: int) -> float:
    """ln(size + 2): keeps the counts of small topologies from being drowned by big ones."""
    return math.log(size + 2)


def compute_pre_score_state(
    pod: Pod,
    constraints: Sequence[SpreadConstraint],
    filtered_nodes: Sequence[NodeInfo],
    all_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
) -> PreScoreState:
    """upstream initPreScoreState + the counting pass of PreScore."""
    n = len(constraints)
    counts: list[dict[str, int]] = [{} for _ in range(n)]
    ignored: set[str] = set()
    zonal = [i for i, c in enumerate(constraints) if c.topology_key != LABEL_HOSTNAME]
    for info in filtered_nodes:
        labels = info.node.metadata.labels
        if require_all_topologies and not has_all_keys(labels, constraints):
            ignored.add(info.name)
            continue
        for i in zonal:
            counts[i].setdefault(labels.get(constraints[i].topology_key, ""), 0)

    weights = []
    for i, c in enumerate(constraints):
        size = (
            len(filtered_nodes) - len(ignored)
            if c.topology_key == LABEL_HOSTNAME
            else len(counts[i])
        )
        weights.append(topology_normalizing_weight(size))

    if zonal:
        inclusion = NodeInclusion(pod)
        terms = [
            (
                constraints[i],
                constraints[i].topology_key,
                inclusion.can_exclude(constraints[i]),
                counter(constraints[i].selector, pod.namespace),
                counts[i],
            )
            for i in zonal
        ]
        for info in all_nodes:
            node = info.node
            labels = node.metadata.labels
            if require_all_topologies and not has_all_keys(labels, constraints):
                continue
            pods = info.pods
            for c, key, check, count, tally in terms:
                value = labels.get(key, "")
                if value not in tally or (check and not inclusion.includes(c, node)):
                    continue
                if pods:
                    tally[value] += count(pods)
    return PreScoreState(constraints, ignored, counts, weights, pod.namespace)


def round_half_away(x: float) -> int:
    """Go's math.Round (halves away from zero), for the non-negative raw scores."""
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def score(s: PreScoreState, info: NodeInfo) -> int:
    """sum over constraints of count * weight + (maxSkew - 1), rounded."""
    if info.name in s.ignored_nodes:
        return 0
    labels = info.node.metadata.labels
    total = 0.0
    for key, count, counts, weight, extra in s.terms:
        value = labels.get(key)
        if value is None:
            continue
        cnt = count(info.pods) if count is not None else counts.get(value, 0)
        total += cnt * weight + extra
    return round_half_away(total)


def normalize(s: PreScoreState, scores: dict[str, int]) -> None:
    """Fewer matching pods score higher: 100 * (max + min - score) / max; ignored nodes 0."""
    ignored = s.ignored_nodes
    lowest: int | None = None
    highest = 0
    for name, value in scores.items():
        if name in ignored:
            continue
        if lowest is None or value < lowest:
            lowest = value
        if value > highest:
            highest = value
    for name, value in scores.items():
        if name in ignored:
            scores[name] = 0
        elif highest == 0:
            scores[name] = MAX_NODE_SCORE
        else:
            assert lowest is not None
            scores[name] = MAX_NODE_SCORE * (highest + lowest - value) // highest
