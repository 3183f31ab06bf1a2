"""PreScore state, Score and NormalizeScore (ScheduleAnyway).

# pkg/scheduler/framework/plugins/podtopologyspread/scoring.go
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ...api import Pod
from ...framework import MAX_NODE_SCORE, NodeInfo
from ._common import (
    LABEL_HOSTNAME,
    Counter,
    CountMemo,
    NodeInclusion,
    SpreadConstraint,
)

__all__ = [
    "HostCount",
    "MemoHostCount",
    "PreScoreState",
    "compute_pre_score_state",
    "normalize",
    "round_half_away",
    "score",
    "scored_domains",
]


MemoTable = dict[str, tuple[NodeInfo, int, int]]
HostCount = Callable[[NodeInfo], int]
"""Matching pods on one node, for a hostname constraint scored node by node."""


class MemoHostCount:
    """Counts a node's matching pods, reusing the count while the NodeInfo is unchanged."""

    __slots__ = ("_count", "_table")

    def __init__(self, table: MemoTable, count: Counter) -> None:
        self._table = table
        self._count = count

    def __call__(self, info: NodeInfo) -> int:
        if not info.pods:
            return 0
        entry = self._table.get(info.name)
        if entry is not None and entry[0] is info and entry[1] == info.generation:
            return entry[2]
        cnt = self._count(info.pods)
        self._table[info.name] = (info, info.generation, cnt)
        return cnt


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
        host_counts: Sequence[HostCount | None],
    ) -> None:
        self.constraints = constraints
        self.ignored_nodes = ignored_nodes
        self.topology_value_to_pod_counts = topology_value_to_pod_counts
        self.topology_normalizing_weight = topology_normalizing_weight
        # What Score needs per constraint, flattened once: key, the per-node counter of a
        # hostname constraint (None: read the domain counts), counts, weight, maxSkew-1.
        self.terms: list[tuple[str, HostCount | None, dict[str, int], float, int]] = [
            (c.topology_key, host, counts, weight, c.max_skew - 1)
            for c, counts, weight, host in zip(
                constraints,
                topology_value_to_pod_counts,
                topology_normalizing_weight,
                host_counts,
                strict=True,
            )
        ]

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore


def topology_normalizing_weight(size: int) -> float:
    """ln(size + 2): keeps the counts of small topologies from being drowned by big ones."""
    return math.log(size + 2)


def scored_domains(
    constraints: Sequence[SpreadConstraint],
    filtered_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
) -> tuple[list[dict[str, int]], set[str], list[float]]:
    """upstream initPreScoreState: per constraint the domains of the scored nodes (counts
    at 0; none for hostname), the scored nodes lacking a key, and each topology's weight."""
    counts: list[dict[str, int]] = [{} for _ in constraints]
    ignored: set[str] = set()
    required = [c.topology_key for c in constraints] if require_all_topologies else []
    zonal = [
        (c.topology_key, counts[i])
        for i, c in enumerate(constraints)
        if c.topology_key != LABEL_HOSTNAME
    ]
    for info in filtered_nodes:
        labels = info.node.metadata.labels
        for key in required:
            if key not in labels:
                ignored.add(info.name)
                break
        else:
            for key, tally in zonal:
                tally.setdefault(labels.get(key, ""), 0)
    weights = []
    for i, c in enumerate(constraints):
        size = (
            len(filtered_nodes) - len(ignored)
            if c.topology_key == LABEL_HOSTNAME
            else len(counts[i])
        )
        weights.append(topology_normalizing_weight(size))
    return counts, ignored, weights


def compute_pre_score_state(
    pod: Pod,
    constraints: Sequence[SpreadConstraint],
    filtered_nodes: Sequence[NodeInfo],
    all_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
    memo: CountMemo,
) -> PreScoreState:
    """upstream initPreScoreState + the counting pass of PreScore."""
    counts, ignored, weights = scored_domains(constraints, filtered_nodes, require_all_topologies)
    required = [c.topology_key for c in constraints] if require_all_topologies else []
    zonal = [
        (c, c.topology_key, counts[i])
        for i, c in enumerate(constraints)
        if c.topology_key != LABEL_HOSTNAME
    ]
    if zonal:
        inclusion = NodeInclusion(pod)
        # The memo lookups are inlined on purpose: no call per node on the hot path.
        terms = [
            (c, key, inclusion.can_exclude(c), tally, *memo.table(c.selector, pod.namespace))
            for c, key, tally in zonal
        ]
        for info in all_nodes:
            pods = info.pods
            if not pods:
                continue
            node = info.node
            labels = node.metadata.labels
            for key in required:
                if key not in labels:
                    break
            else:
                name, generation = info.name, info.generation
                for c, key, check, tally, table, count in terms:
                    value = labels.get(key, "")
                    if value not in tally or (check and not inclusion.includes(c, node)):
                        continue
                    entry = table.get(name)
                    if entry is not None and entry[0] is info and entry[1] == generation:
                        tally[value] += entry[2]
                    else:
                        found = count(pods)
                        table[name] = (info, generation, found)
                        tally[value] += found

    hosts: list[HostCount | None] = [
        MemoHostCount(*memo.table(c.selector, pod.namespace))
        if c.topology_key == LABEL_HOSTNAME
        else None
        for c in constraints
    ]
    return PreScoreState(constraints, ignored, counts, weights, hosts)


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
    for key, host, counts, weight, extra in s.terms:
        value = labels.get(key)
        if value is None:
            continue
        cnt = counts.get(value, 0) if host is None else host(info)
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
