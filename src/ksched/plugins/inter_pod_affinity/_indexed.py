"""PreFilter and PreScore counts read from the snapshot's pod index.

The same counts as the walks of ``_filtering`` and ``_scoring``: the incoming pod's terms
read the per-row counts of their selector's view (namespaces checked once each, not
once per pod), and existing pods' terms come grouped, equal terms together, so each
distinct term is matched against the incoming pod once. Counts then add up per domain
of the term's topology key.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import repeat
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ...api import Pod
from ...framework import MAX_NODE_SCORE
from ...framework.batch import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    IntArray,
    PodIndex,
    Requirement,
    TermGroup,
)
from ._filtering import Counts, PreFilterState
from ._scoring import TopologyScore
from ._terms import IncomingPod, IncomingTerm

__all__ = [
    "filter_rows",
    "indexed_pre_filter_state",
    "indexed_topology_score",
    "normalize_rows",
    "score_rows",
]

BoolArray = npt.NDArray[np.bool_]

_EXISTING, _AFFINITY, _ANTI_AFFINITY = range(3)
"""Kinds of counts in PreFilterState.present."""

_DENSE = 64
"""Above this many nodes a term group is summed with array operations."""


def _selected(index: PodIndex, terms: Sequence[IncomingTerm]) -> IntArray | None:
    """Per row, the pods that every term selects (None: none anywhere)."""
    requirements: list[Requirement] = []
    for term in terms:
        if term.requirements is None:
            return None  # a missing selector selects nothing
        requirements.extend(term.requirements)
    view = index.view(requirements)
    return view.selected(lambda ns: all(t.accepts_namespace(ns) for t in terms))


class _Totals(NamedTuple):
    """Pods per domain of one topology key: parallel lists, in domain-code order, and the
    domain codes when known."""

    values: list[str]
    amounts: list[int]
    codes: IntArray | None

    def items(self) -> Iterator[tuple[str, int]]:
        return zip(self.values, self.amounts, strict=True)


def _totals(index: PodIndex, key: str, rows: IntArray, counts: IntArray) -> _Totals:
    """Pods per domain of ``key`` for the pods counted at ``rows``."""
    d = index.domains(key)
    codes = d.codes[rows]
    keep = codes >= 0
    sums = np.bincount(codes[keep], weights=counts[keep], minlength=len(d.values))
    hit = np.flatnonzero(sums)
    amounts = sums[hit].astype(np.int64).tolist()
    return _Totals(list(map(d.values.__getitem__, hit.tolist())), amounts, hit)


def _row_totals(index: PodIndex, key: str, per_row: IntArray) -> _Totals:
    rows = np.flatnonzero(per_row)
    return _totals(index, key, rows, per_row[rows])


def _group_totals(index: PodIndex, group: TermGroup) -> _Totals:
    key = group.term.topology_key
    nodes = group.nodes
    infos, rows = index.infos, index.rows
    if len(nodes) > _DENSE:
        at = np.fromiter(map(rows.__getitem__, nodes), dtype=np.int64, count=len(nodes))
        counts = np.fromiter(nodes.values(), dtype=np.int64, count=len(nodes))
        return _totals(index, key, at, counts)
    out: dict[str, int] = {}
    for name, n in nodes.items():
        value = infos[rows[name]].node.metadata.labels.get(key)
        if value is not None:
            out[value] = out.get(value, 0) + n
    return _Totals(list(out), list(out.values()), None)


def _add_counts(counts: Counts, key: str, totals: _Totals) -> None:
    if not counts:
        counts.update(zip(zip(repeat(key), totals.values), totals.amounts, strict=True))
        return
    for value, n in totals.items():
        pair = (key, value)
        counts[pair] = counts.get(pair, 0) + n


def _mark(
    present: dict[tuple[int, str], BoolArray],
    index: PodIndex,
    kind: int,
    key: str,
    totals: _Totals,
) -> None:
    """Record the domains of ``totals`` (all with pods) under (kind, key)."""
    d = index.domains(key)
    marks = present.get((kind, key))
    if marks is None:
        marks = present[(kind, key)] = np.zeros(len(d.values) + 1, dtype=np.bool_)
    if totals.codes is not None:
        marks[totals.codes] = True
    else:
        code = d.code
        marks[[code[value] for value in totals.values]] = True


def indexed_pre_filter_state(
    pod: Pod, incoming: IncomingPod, namespace_labels: Mapping[str, str], index: PodIndex
) -> PreFilterState:
    """build_pre_filter_state over every node of the index's snapshot."""
    present: dict[tuple[int, str], BoolArray] = {}
    existing: Counts = {}
    for group in index.groups(REQUIRED_ANTI_AFFINITY):
        if group.term.matches(pod, namespace_labels):
            key = group.term.topology_key
            totals = _group_totals(index, group)
            _add_counts(existing, key, totals)
            _mark(present, index, _EXISTING, key, totals)
    affinity_counts: Counts = {}
    affinity = incoming.required_affinity
    if affinity:
        selected = _selected(index, affinity)
        if selected is not None:
            for term in affinity:
                key = term.topology_key
                totals = _row_totals(index, key, selected)
                _add_counts(affinity_counts, key, totals)
                _mark(present, index, _AFFINITY, key, totals)
    anti_affinity_counts: Counts = {}
    for term in incoming.required_anti_affinity:
        selected = _selected(index, (term,))
        if selected is not None:
            key = term.topology_key
            totals = _row_totals(index, key, selected)
            _add_counts(anti_affinity_counts, key, totals)
            _mark(present, index, _ANTI_AFFINITY, key, totals)
    state = PreFilterState(
        pod, incoming, namespace_labels, existing, affinity_counts, anti_affinity_counts
    )
    state.present = present
    return state


def indexed_topology_score(
    pod: Pod,
    incoming: IncomingPod,
    namespace_labels: Mapping[str, str],
    index: PodIndex,
    hard_pod_affinity_weight: int,
) -> TopologyScore:
    """build_topology_score over every pod of the index's snapshot."""
    scores: TopologyScore = {}

    def add(key: str, totals: _Totals, weight: int) -> None:
        if not totals.values:
            return
        by_value = scores.setdefault(key, {})
        for value, n in totals.items():
            by_value[value] = by_value.get(value, 0) + n * weight

    for weight, term in incoming.preferred_affinity:
        selected = _selected(index, (term,))
        if selected is not None:
            add(term.topology_key, _row_totals(index, term.topology_key, selected), weight)
    for weight, term in incoming.preferred_anti_affinity:
        selected = _selected(index, (term,))
        if selected is not None:
            add(term.topology_key, _row_totals(index, term.topology_key, selected), -weight)
    kinds = [(PREFERRED_AFFINITY, 1), (PREFERRED_ANTI_AFFINITY, -1)]
    if hard_pod_affinity_weight > 0:
        kinds.insert(0, (REQUIRED_AFFINITY, 0))
    for kind, sign in kinds:
        for group in index.groups(kind):
            if group.term.matches(pod, namespace_labels):
                weight = hard_pod_affinity_weight if sign == 0 else sign * group.weight
                add(group.term.topology_key, _group_totals(index, group), weight)
    return scores


def _positive(state: PreFilterState, index: PodIndex, kind: int, key: str) -> BoolArray:
    """By domain code of ``key`` (the last slot standing for "no such label"), whether
    the counts of ``kind`` hold pods there."""
    d = index.domains(key)
    present = state.present
    if present is not None:
        marks: BoolArray | None = present.get((kind, key))
        if marks is not None and len(marks) == len(d.values) + 1:
            return marks
        if marks is None:
            return np.zeros(len(d.values) + 1, dtype=np.bool_)
    counts = (
        state.existing_anti_affinity_counts,
        state.affinity_counts,
        state.anti_affinity_counts,
    )[kind]
    out = np.zeros(len(d.values) + 1, dtype=np.bool_)
    for (k, value), n in counts.items():
        if k == key and n > 0:
            code = d.code.get(value)
            if code is not None:
                out[code] = True
    return out


def filter_rows(state: PreFilterState, index: PodIndex) -> BoolArray:
    """filter_node over every row of the index's snapshot: True where it passes."""
    size = len(index.infos)
    ok = np.ones(size, dtype=np.bool_)
    affinity = state.incoming.required_affinity
    if affinity:
        has_keys = np.ones(size, dtype=np.bool_)
        pods_exist = np.ones(size, dtype=np.bool_)
        for term in affinity:
            codes = index.domains(term.topology_key).codes
            has_keys &= codes >= 0
            pods_exist &= _positive(state, index, _AFFINITY, term.topology_key)[codes]
        if not state.affinity_counts and state.self_match:
            ok &= has_keys
        else:
            ok &= has_keys & pods_exist
    if state.anti_affinity_counts:
        for term in state.incoming.required_anti_affinity:
            codes = index.domains(term.topology_key).codes
            ok &= ~_positive(state, index, _ANTI_AFFINITY, term.topology_key)[codes]
    counts = state.existing_anti_affinity_counts
    if counts:
        keys = (
            {k for kind, k in state.present if kind == _EXISTING}
            if state.present is not None
            else {k for k, _ in counts}
        )
        for key in keys:
            ok &= ~_positive(state, index, _EXISTING, key)[index.domains(key).codes]
    return ok


def score_rows(topology_score: TopologyScore, index: PodIndex, rows: IntArray) -> IntArray:
    """PreScoreState.score for the given rows of the index's snapshot."""
    total = np.zeros(len(rows), dtype=np.int64)
    for key, by_value in topology_score.items():
        d = index.domains(key)
        by_code = np.zeros(len(d.values) + 1, dtype=np.int64)  # last slot: no such label
        for value, score in by_value.items():
            code = d.code.get(value)
            if code is not None:
                by_code[code] = score
        total += by_code[d.codes[rows]]
    return total


def normalize_rows(scores: IntArray) -> None:
    """normalize over an array, in place: lowest to 0, highest to 100, truncating."""
    if not len(scores):
        return
    lowest = int(scores.min())
    spread = int(scores.max()) - lowest
    if spread > 0:
        scores[:] = (MAX_NODE_SCORE * ((scores - lowest) / spread)).astype(np.int64)
    else:
        scores[:] = 0
