"""PreFilter and PreScore counts read from the snapshot's pod index.

The same counts as the per-node walks of ``_filtering`` and ``_scoring``: the selector's
view gives the matching pods per node row, the domain codes of each topology key give
the node's domain, and the eligible rows (every key present, inclusion policies) sum up
per domain in a few array operations. Domains appear in the order the walk meets them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from ...api import Pod
from ...framework import NodeInfo
from ...framework.batch import IntArray, NodeRows, NodeTable, PodIndex
from ._common import (
    HONOR,
    LABEL_HOSTNAME,
    Counter,
    NodeInclusion,
    SpreadConstraint,
    counter,
)
from ._filtering import CriticalPaths, PreFilterState
from ._scoring import HostCount, PreScoreState, scored_domains, topology_normalizing_weight

__all__ = [
    "IndexedHostCount",
    "filter_rows",
    "indexed_pre_filter_state",
    "indexed_pre_score_state",
    "score_rows",
]

BoolArray = npt.NDArray[np.bool_]


def _matching(index: PodIndex, c: SpreadConstraint, namespace: str) -> IntArray | None:
    """Per row, the pods of ``namespace``, not terminating, that ``c`` selects."""
    requirements = c.selector.requirements
    if requirements is None:
        return None
    return index.view(requirements).live.get(namespace)


class _Inclusion:
    """Rows that pass a constraint's nodeAffinityPolicy / nodeTaintsPolicy, per constraint
    kind, computed once per attempt over the candidate rows."""

    __slots__ = ("_affinity", "_inclusion", "_index", "_table", "_taints")

    def __init__(self, pod: Pod, index: PodIndex, table: NodeTable | None) -> None:
        self._inclusion = NodeInclusion(pod)
        self._index = index
        self._table = table
        self._affinity: BoolArray | None = None
        self._taints: BoolArray | None = None

    def mask(self, c: SpreadConstraint, candidates: BoolArray) -> BoolArray:
        inclusion = self._inclusion
        if not inclusion.can_exclude(c):
            return candidates
        out = candidates
        if c.node_affinity_policy == HONOR and inclusion.has_affinity:
            if self._affinity is None:
                self._affinity = self._rows_passing(inclusion.affinity_matches, None)
            out = out & self._affinity
        if c.node_taints_policy == HONOR:
            if self._taints is None:
                table = self._table
                tainted = None
                if table is not None and table.exact and table.infos is self._index.infos:
                    tainted = table.hard_tainted
                self._taints = self._rows_passing(inclusion.taints_tolerated, tainted)
            out = out & self._taints
        return out

    def _rows_passing(self, check: Callable[..., bool], suspects: BoolArray | None) -> BoolArray:
        infos = self._index.infos
        if suspects is None:
            return np.fromiter(
                (check(info.node) for info in infos), dtype=np.bool_, count=len(infos)
            )
        passing = np.ones(len(infos), dtype=np.bool_)
        for row in np.flatnonzero(suspects).tolist():
            passing[row] = check(infos[row].node)
        return passing


def indexed_pre_filter_state(
    pod: Pod, constraints: Sequence[SpreadConstraint], index: PodIndex, table: NodeTable | None
) -> PreFilterState:
    """compute_pre_filter_state over every node of the index's snapshot."""
    domains = [index.domains(c.topology_key) for c in constraints]
    size = len(index.infos)
    has_all = np.ones(size, dtype=np.bool_)
    for d in domains:
        has_all &= d.codes >= 0
    inclusion = _Inclusion(pod, index, table)
    counts: list[dict[str, int]] = []
    for c, d in zip(constraints, domains, strict=True):
        rows = np.flatnonzero(inclusion.mask(c, has_all))
        codes = d.codes[rows]
        present, first = np.unique(codes, return_index=True)
        in_order = present[np.argsort(first, kind="stable")].tolist()
        matching = _matching(index, c, pod.namespace)
        values = d.values
        if matching is None:
            counts.append(dict.fromkeys([values[code] for code in in_order], 0))
            continue
        sums = np.bincount(codes, weights=matching[rows], minlength=len(values)).tolist()
        counts.append({values[code]: int(sums[code]) for code in in_order})
    paths = []
    for tally in counts:
        p = CriticalPaths()
        for value, num in tally.items():
            p.update(value, num)
        paths.append(p)
    own = pod.labels
    self_match = tuple(1 if c.selector.matches(own) else 0 for c in constraints)
    return PreFilterState(constraints, self_match, counts, paths)


def _scored_rows(
    constraints: Sequence[SpreadConstraint],
    rows: IntArray,
    require_all_topologies: bool,
    index: PodIndex,
) -> tuple[list[dict[str, int]], set[str], list[float]]:
    """scored_domains for the scored nodes given as snapshot rows, with array operations."""
    keep = np.ones(len(rows), dtype=np.bool_)
    if require_all_topologies:
        for c in constraints:
            keep &= index.domains(c.topology_key).codes[rows] >= 0
    infos = index.infos
    ignored = {infos[row].name for row in rows[~keep].tolist()}
    kept = rows[keep]
    counts: list[dict[str, int]] = []
    weights = []
    for c in constraints:
        if c.topology_key == LABEL_HOSTNAME:
            counts.append({})
            weights.append(topology_normalizing_weight(len(rows) - len(ignored)))
            continue
        d = index.domains(c.topology_key)
        # Code -1 (no such label) is the value "", as the walk's labels.get(key, "").
        present, first = np.unique(d.codes[kept], return_index=True)
        values = d.values
        tally: dict[str, int] = {}
        for code in present[np.argsort(first, kind="stable")].tolist():
            tally.setdefault("" if code < 0 else values[code], 0)
        counts.append(tally)
        weights.append(topology_normalizing_weight(len(tally)))
    return counts, ignored, weights


class IndexedHostCount:
    """Matching pods on a node from a view's per-row counts (a NodeInfo that is not the
    snapshot's is counted pod by pod)."""

    __slots__ = ("_count", "_counts", "_rows", "infos")

    def __init__(self, index: PodIndex, counts: IntArray | None, count: Counter) -> None:
        self.infos = index.infos
        self._rows = index.rows
        self._counts = counts
        self._count = count

    def at(self, rows: IntArray) -> IntArray:
        """The counts of snapshot rows ``rows``."""
        if self._counts is None:
            return np.zeros(len(rows), dtype=np.int64)
        return self._counts[rows]

    def __call__(self, info: NodeInfo) -> int:
        row = self._rows.get(info.name)
        if row is not None and self.infos[row] is info:
            return 0 if self._counts is None else int(self._counts[row])
        return self._count(info.pods) if info.pods else 0


def indexed_pre_score_state(
    pod: Pod,
    constraints: Sequence[SpreadConstraint],
    filtered_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
    index: PodIndex,
    table: NodeTable | None,
) -> PreScoreState:
    """compute_pre_score_state with every node of the index's snapshot as all nodes."""
    if isinstance(filtered_nodes, NodeRows) and filtered_nodes.infos is (index.infos):
        counts, ignored, weights = _scored_rows(
            constraints, filtered_nodes.rows, require_all_topologies, index
        )
    else:
        counts, ignored, weights = scored_domains(
            constraints, filtered_nodes, require_all_topologies
        )
    size = len(index.infos)
    has_all = np.ones(size, dtype=np.bool_)
    if require_all_topologies:
        for c in constraints:
            has_all &= index.domains(c.topology_key).codes >= 0
    inclusion = _Inclusion(pod, index, table)
    hosts: list[HostCount | None] = []
    for c, tally in zip(constraints, counts, strict=True):
        matching = _matching(index, c, pod.namespace)
        if c.topology_key == LABEL_HOSTNAME:
            hosts.append(IndexedHostCount(index, matching, counter(c.selector, pod.namespace)))
            continue
        hosts.append(None)
        if matching is None or not tally:
            continue
        d = index.domains(c.topology_key)
        rows = np.flatnonzero(inclusion.mask(c, has_all & (matching > 0)))
        # Code -1 (no such label) counts as the value "", as the walk's labels.get(key, "").
        sums = np.bincount(d.codes[rows] + 1, weights=matching[rows], minlength=len(d.values) + 1)
        for value in tally:
            code = d.code.get(value)
            total = 0.0 if code is None else sums[code + 1]
            if value == "":
                total += sums[0]
            tally[value] += int(total)
    return PreScoreState(constraints, ignored, counts, weights, hosts)


def filter_rows(s: PreFilterState, index: PodIndex) -> BoolArray:
    """Filter over every row of the index's snapshot: True where it passes."""
    ok = np.ones(len(index.infos), dtype=np.bool_)
    for key, max_skew, self_match, min_domains, counts, paths in s.checks:
        d = index.domains(key)
        # The global minimum counts as 0 while there are fewer domains than minDomains.
        minimum = paths.num0 if len(counts) >= min_domains else 0
        by_code = np.zeros(len(d.values) + 1, dtype=np.int64)  # last slot: no such label
        for value, n in counts.items():
            code = d.code.get(value)
            if code is not None:
                by_code[code] = n
        codes = d.codes
        ok &= (codes >= 0) & (by_code[codes] + (self_match - minimum) <= max_skew)
    return ok


def score_rows(s: PreScoreState, index: PodIndex, rows: IntArray) -> IntArray | None:
    """score for the given rows of the index's snapshot (None: a counter it cannot read)."""
    total = np.zeros(len(rows), dtype=np.float64)
    for key, host, counts, weight, extra in s.terms:
        d = index.domains(key)
        codes = d.codes[rows]
        if host is None:
            by_code = np.zeros(len(d.values) + 1, dtype=np.int64)  # last slot: no label
            for value, n in counts.items():
                code = d.code.get(value)
                if code is not None:
                    by_code[code] = n
            found = by_code[codes]
        elif isinstance(host, IndexedHostCount) and host.infos is index.infos:
            found = host.at(rows)
        else:
            return None
        # Added in the same order as score does, so the sums round alike.
        total += np.where(codes >= 0, found * weight + extra, 0.0)
    whole = np.floor(total)
    out = whole.astype(np.int64) + (total - whole >= 0.5)
    if s.ignored_nodes:
        infos, ignored = index.infos, s.ignored_nodes
        out[[infos[row].name in ignored for row in rows.tolist()]] = 0
    return out
