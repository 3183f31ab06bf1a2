"""PreFilter state, its incremental updates and the Filter rule (DoNotSchedule).

# pkg/scheduler/framework/plugins/podtopologyspread/filtering.go
"""

from __future__ import annotations

from collections.abc import Sequence

from ...api import Node, Pod
from ...framework import NodeInfo
from ._common import CountMemo, NodeInclusion, SpreadConstraint, has_all_keys

__all__ = ["MAX_INT32", "CriticalPaths", "PreFilterState", "compute_pre_filter_state"]

MAX_INT32 = 2**31 - 1


class CriticalPaths:
    """The two domains with the fewest matching pods seen so far for one constraint.

    ``num0`` is always the minimum; ``num1`` is at least ``num0`` but not necessarily
    the second smallest. Two entries are enough because preemption only ever changes
    pods on one node of a cloned state at a time.
    """

    __slots__ = ("num0", "num1", "value0", "value1")

    def __init__(
        self, value0: str = "", num0: int = MAX_INT32, value1: str = "", num1: int = MAX_INT32
    ) -> None:
        self.value0, self.num0, self.value1, self.num1 = value0, num0, value1, num1

    def update(self, value: str, num: int) -> None:
        """upstream criticalPaths.update."""
        if value == self.value0:
            self.num0 = num
        elif value == self.value1:
            self.num1 = num
        else:
            if num < self.num0:
                self.value1, self.num1 = self.value0, self.num0
                self.value0, self.num0 = value, num
            elif num < self.num1:
                self.value1, self.num1 = value, num
            return
        if self.num0 > self.num1:
            self.value0, self.num0, self.value1, self.num1 = (
                self.value1,
                self.num1,
                self.value0,
                self.num0,
            )

    def as_tuple(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (self.value0, self.num0), (self.value1, self.num1)

    def copy(self) -> CriticalPaths:
        return CriticalPaths(self.value0, self.num0, self.value1, self.num1)

    def __repr__(self) -> str:
        return f"CriticalPaths({self.as_tuple()!r})"


class PreFilterState:
    """What PreFilter computed for the pod's DoNotSchedule constraints, by constraint index:
    matching pods per topology value and the critical paths."""

    __slots__ = ("checks", "constraints", "critical_paths", "self_match", "tp_value_to_match_num")

    def __init__(
        self,
        constraints: Sequence[SpreadConstraint],
        self_match: Sequence[int],
        tp_value_to_match_num: list[dict[str, int]],
        critical_paths: list[CriticalPaths],
    ) -> None:
        self.constraints = constraints
        self.self_match = self_match
        self.tp_value_to_match_num = tp_value_to_match_num
        self.critical_paths = critical_paths
        # What Filter reads per constraint, flattened once (the dicts and paths are shared).
        self.checks = [
            (c.topology_key, c.max_skew, own, c.min_domains, counts, paths)
            for c, own, counts, paths in zip(
                constraints, self_match, tp_value_to_match_num, critical_paths, strict=True
            )
        ]

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.constraints,
            self.self_match,
            [dict(m) for m in self.tp_value_to_match_num],
            [p.copy() for p in self.critical_paths],
        )

    def update_with_pod(self, updated: Pod, preemptor: Pod, node: Node | None, delta: int) -> None:
        """Count ``updated`` in (``delta`` 1) or out (-1) on ``node`` (upstream updateWithPod)."""
        if node is None or updated.namespace != preemptor.namespace:
            return
        labels = node.metadata.labels
        if not has_all_keys(labels, self.constraints):
            return
        inclusion: NodeInclusion | None = None
        pod_labels = updated.labels
        for i, c in enumerate(self.constraints):
            if not c.selector.matches(pod_labels):
                continue
            if inclusion is None:
                inclusion = NodeInclusion(preemptor)
            if not inclusion.includes(c, node):
                continue
            value = labels[c.topology_key]
            counts = self.tp_value_to_match_num[i]
            counts[value] = counts.get(value, 0) + delta
            self.critical_paths[i].update(value, counts[value])


def compute_pre_filter_state(
    pod: Pod, constraints: Sequence[SpreadConstraint], nodes: Sequence[NodeInfo], memo: CountMemo
) -> PreFilterState:
    """Count matching pods per topology value over ``nodes`` (upstream calPreFilterState).

    A node counts only when it carries every constraint's topology key and, per
    constraint, passes the nodeAffinityPolicy / nodeTaintsPolicy inclusion check.
    """
    inclusion = NodeInclusion(pod)
    n = len(constraints)
    counts: list[dict[str, int]] = [{} for _ in range(n)]
    checks = [inclusion.can_exclude(c) for c in constraints]
    tables = [memo.table(c.selector, pod.namespace) for c in constraints]

    # The memo lookups below are inlined on purpose: no call per node on the hot path.
    if n == 1:
        c0 = constraints[0]
        key, check, tally = c0.topology_key, checks[0], counts[0]
        table, count = tables[0]
        seen, tally_get = table.get, tally.get
        for info in nodes:
            node = info.node
            value = node.metadata.labels.get(key)
            if value is None or (check and not inclusion.includes(c0, node)):
                continue
            pods = info.pods
            if pods:
                entry = seen(info.name)
                if entry is not None and entry[0] is info and entry[1] == info.generation:
                    found = entry[2]
                else:
                    found = count(pods)
                    table[info.name] = (info, info.generation, found)
                tally[value] = tally_get(value, 0) + found
            elif value not in tally:
                tally[value] = 0
    else:
        indexed = [
            (c, c.topology_key, check, table, count, tally)
            for c, check, (table, count), tally in zip(
                constraints, checks, tables, counts, strict=True
            )
        ]
        keys = [c.topology_key for c in constraints]
        for info in nodes:
            node = info.node
            labels = node.metadata.labels
            for key in keys:
                if key not in labels:
                    break
            else:
                pods, name, generation = info.pods, info.name, info.generation
                for c, key, check, table, count, tally in indexed:
                    if check and not inclusion.includes(c, node):
                        continue
                    found = 0
                    if pods:
                        entry = table.get(name)
                        if entry is not None and entry[0] is info and entry[1] == generation:
                            found = entry[2]
                        else:
                            found = count(pods)
                            table[name] = (info, generation, found)
                    value = labels[key]
                    tally[value] = tally.get(value, 0) + found

    paths = []
    for tally in counts:
        p = CriticalPaths()
        for value, num in tally.items():
            p.update(value, num)
        paths.append(p)
    own = pod.labels
    self_match = tuple(1 if c.selector.matches(own) else 0 for c in constraints)
    return PreFilterState(constraints, self_match, counts, paths)
