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
    CountMemo,
    NodeInclusion,
    SpreadConstraint,
)

__all__ = ["PreScoreState", "compute_pre_score_state", "normalize", "round_half_away", "score"]


MemoTable = dict[str, tuple[NodeInfo, int, int]]


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
        hostname_tables: Sequence[tuple[MemoTable, Counter] | None],
    ) -> None:
        self.constraints = constraints
        self.ignored_nodes = ignored_nodes
        self.topology_value_to_pod_counts = topology_value_to_pod_counts
        self.topology_normalizing_weight = topology_normalizing_weight
        # What Score needs per constraint, flattened once: key, the memo table and counter
        # of a hostname constraint (None: read the domain counts), counts, weight, maxSkew-1.
        self.terms: list[
            tuple[str, MemoTable | None, Counter | None, dict[str, int], float, int]
        ] = [
            (
                c.topology_key,
                None if host is None else host[0],
                None if host is None else host[1],
                counts,
                weight,
                c.max_skew - 1,
            )
            for c, counts, weight, host in zip(
                constraints,
                topology_value_to_pod_counts,
                topology_normalizing_weight,
                hostname_tables,
                strict=True,
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
    memo: CountMemo,
) -> PreScoreState:
    """upstream initPreScoreState + the counting pass of PreScore."""
    n = len(constraints)
    counts: list[dict[str, int]] = [{} for _ in range(n)]
    ignored: set[str] = set()
    required = [c.topology_key for c in constraints] if require_all_topologies else []
    zonal = [
        (c, c.topology_key, counts[i])
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
            for _, key, tally in zonal:
                tally.setdefault(labels.get(key, ""), 0)

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

    hostname_tables = [
        memo.table(c.selector, pod.namespace) if c.topology_key == LABEL_HOSTNAME else None
        for c in constraints
    ]
    return PreScoreState(constraints, ignored, counts, weights, hostname_tables)


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
    for key, table, count, counts, weight, extra in s.terms:
        value = labels.get(key)
        if value is None:
            continue
        if count is None or table is None:
            cnt = counts.get(value, 0)
        elif not info.pods:
            cnt = 0
        else:
            entry = table.get(info.name)
            if entry is not None and entry[0] is info and entry[1] == info.generation:
                cnt = entry[2]
            else:
                cnt = count(info.pods)
                table[info.name] = (info, info.generation, cnt)
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
